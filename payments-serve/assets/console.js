// The console's one script: rows that refresh themselves. A <tbody> with
// data-live-url polls that URL every data-poll milliseconds:
//   data-live-mode="replace": the answer is the rows; they replace the old
//     ones when they differ (the transactions list, first page), keeping
//     the keyboard's focus on the same link when it is still there.
//   data-live-mode="prepend": the answer is the oldest rows that came
//     after data-after, newest first (the feed's X-Journal-Seq says the
//     newest of them, so a burst arrives over the next polls, a page at a
//     time, none skipped); they go on top and the oldest beyond data-max
//     are dropped (the request journal), the keyboard's focus moved to
//     the nearest row left when its row goes. data-after-id is the request
//     id of the row numbered data-after, sent as `id` (the feed answers the
//     next one in X-Journal-Request-Id): a journal whose entry there is
//     another request started again, and the feed says so.
// Above the table: a Pause updates button (aria-pressed; WCAG 2.2.2) and
// a status line (role="status", made when the page loads so it is
// announced). The line says, at most every ANNOUNCE_MS, how many new rows
// came (data-live-noun names them); when a poll fails the table is marked
// data-stale and the line says that updates stopped and what to do (once:
// a line that does not change is not written again); the next good poll
// clears it. Two announcements in the same words are both said (the line
// is emptied and written again).
// Everything in the answers was rendered and escaped by the server.
(function () {
  "use strict";
  // The fewest milliseconds between two "N new rows" lines.
  var ANNOUNCE_MS = 10000;
  // Rows as the browser writes them back: the server's text and the
  // page's parsed rows compare equal when nothing changed.
  function normal(html) {
    var scratch = document.createElement("tbody");
    scratch.innerHTML = html;
    return scratch.innerHTML.trim();
  }
  function links(root) {
    return Array.prototype.map.call(root.querySelectorAll("a[href]"), function (a) {
      return a.getAttribute("href");
    });
  }
  function live(body) {
    var every = Number(body.dataset.poll) || 1000;
    var noun = body.dataset.liveNoun || "row";
    var busy = false;
    var paused = false;
    var shown = normal(body.innerHTML);
    var table = body.closest("table") || body;
    var controls = document.createElement("div");
    controls.className = "live-controls";
    var pause = document.createElement("button");
    pause.type = "button";
    pause.className = "button live-pause";
    pause.setAttribute("aria-pressed", "false");
    pause.textContent = "Pause updates";
    var note = document.createElement("p");
    note.className = "live-note";
    note.setAttribute("role", "status");
    controls.appendChild(pause);
    controls.appendChild(note);
    table.parentNode.insertBefore(controls, table);
    // The status line: written only when what it says changes (a line
    // that stays, "Updates stopped…", is announced once).
    function say(text) {
      if (note.textContent !== text) note.textContent = text;
    }
    // An announcement, said again when its words are the same as the last
    // one's ("20 new requests" twice): the line is emptied, then written a
    // moment later, so a screen reader hears a change; unless something
    // else was said in between.
    function tell(text) {
      if (note.textContent !== text) {
        note.textContent = text;
        return;
      }
      note.textContent = "";
      setTimeout(function () {
        if (note.textContent === "") note.textContent = text;
      }, 100);
    }
    // New rows, said politely and at most every ANNOUNCE_MS.
    var pending = 0;
    var saidAt = 0;
    var timer = null;
    function announce() {
      timer = null;
      if (pending === 0 || paused || body.hasAttribute("data-stale")) return;
      tell(pending + " new " + noun + (pending === 1 ? "" : "s"));
      pending = 0;
      saidAt = Date.now();
    }
    function arrived(n) {
      if (n <= 0) return;
      pending += n;
      var wait = saidAt + ANNOUNCE_MS - Date.now();
      if (wait <= 0) announce();
      else if (timer === null) timer = setTimeout(announce, wait);
    }
    pause.addEventListener("click", function () {
      paused = !paused;
      pause.setAttribute("aria-pressed", String(paused));
      document.documentElement.classList.toggle("live-paused", paused);
      pending = 0;
      say(paused
        ? "Updates paused: rows stay as they are until you press Pause updates again."
        : "Updates resumed.");
      if (!paused) tick();
    });
    function stopped(status) {
      body.setAttribute("data-stale", "");
      document.documentElement.classList.add("live-stale");
      say(status === 401 || status === 403
        ? "Updates stopped: the session ended. Sign in again (reload the page) to see new rows."
        : "Updates stopped: the server cannot be reached (stopped or restarting). Rows shown may be out of date; they update again by themselves when it is back, or reload the page.");
    }
    function replace(html) {
      var focused = document.activeElement;
      var href = focused && body.contains(focused) ? focused.getAttribute("href") : null;
      var before = links(body);
      body.innerHTML = html;
      arrived(links(body).filter(function (h) { return before.indexOf(h) < 0; }).length);
      if (href !== null) {
        var same = Array.prototype.find.call(body.querySelectorAll("a[href]"), function (a) {
          return a.getAttribute("href") === href;
        });
        var next = same || body.querySelector("a[href]");
        if (next) next.focus();
      }
    }
    function prepend(html) {
      var max = Number(body.dataset.max) || 200;
      body.querySelectorAll("tr.empty").forEach(function (row) { row.remove(); });
      var before = body.rows.length;
      body.insertAdjacentHTML("afterbegin", html);
      var added = Array.prototype.slice.call(body.rows, 0, body.rows.length - before);
      arrived(added.filter(function (row) { return !row.classList.contains("gap"); }).length);
      var focused = document.activeElement;
      var lost = false;
      while (body.rows.length > max) {
        var last = body.rows[body.rows.length - 1];
        if (last.contains(focused)) lost = true;
        body.deleteRow(-1);
      }
      if (lost) {
        // The focused row went: the nearest row left takes the focus,
        // or the table when no row has a link.
        var left = body.querySelectorAll("a[href]");
        if (left.length > 0) {
          left[left.length - 1].focus();
        } else {
          table.setAttribute("tabindex", "-1");
          table.focus();
        }
      }
    }
    function tick() {
      if (busy || paused || document.hidden) return;
      busy = true;
      var url = new URL(body.dataset.liveUrl, document.baseURI);
      if (body.dataset.liveMode === "prepend") {
        url.searchParams.set("after", body.dataset.after || "0");
        // The request id of the row numbered `after`: the feed says the
        // journal started again when its entry there is another request.
        if (body.dataset.afterId) url.searchParams.set("id", body.dataset.afterId);
      }
      fetch(url, { cache: "no-store", headers: { Accept: "text/html" } })
        .then(function (response) {
          if (!response.ok) {
            var failed = new Error("HTTP " + response.status);
            failed.status = response.status;
            throw failed;
          }
          var seq = response.headers.get("X-Journal-Seq");
          var id = response.headers.get("X-Journal-Request-Id");
          return response.text().then(function (html) { return [html, seq, id]; });
        })
        .then(function (answer) {
          // Paused while the poll was on its way: its rows wait for the
          // next poll after resuming (the position is not moved).
          if (paused) return;
          var html = answer[0];
          if (body.hasAttribute("data-stale")) {
            body.removeAttribute("data-stale");
            document.documentElement.classList.remove("live-stale");
            say("Updates resumed.");
          }
          if (body.dataset.liveMode === "prepend") {
            if (html.trim() !== "") prepend(html);
            if (answer[1]) {
              body.dataset.after = answer[1];
              if (answer[2]) body.dataset.afterId = answer[2];
              else delete body.dataset.afterId;
            }
          } else {
            var now = normal(html);
            if (now !== shown) {
              replace(html);
              shown = now;
            }
          }
        })
        .catch(function (failed) {
          // The mock stopped, restarts, or the session ended: say so, and
          // try again at the next tick.
          stopped(failed && failed.status);
        })
        .then(function () { busy = false; });
    }
    setInterval(tick, every);
  }
  document.querySelectorAll("[data-live-url]").forEach(live);
})();
