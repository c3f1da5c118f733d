// The console's one script: rows that refresh themselves. A <tbody> with
// data-live-url polls that URL every data-poll milliseconds:
//   data-live-mode="replace": the answer is the rows; they replace the old
//     ones when they differ (the transactions list, first page), keeping
//     the keyboard's focus on the same link when it is still there.
//   data-live-mode="prepend": the answer is the rows that came after
//     data-after (the feed's X-Journal-Seq says the newest); they go on top
//     and the oldest beyond data-max are dropped (the request journal).
// When a poll fails the table is marked data-stale and a status line
// (role="status", made when the page loads so it is announced) says that
// updates stopped and what to do; the next good poll clears it.
// Everything in the answers was rendered and escaped by the server.
(function () {
  "use strict";
  // Rows as the browser writes them back: the server's text and the
  // page's parsed rows compare equal when nothing changed.
  function normal(html) {
    var scratch = document.createElement("tbody");
    scratch.innerHTML = html;
    return scratch.innerHTML.trim();
  }
  function live(body) {
    var every = Number(body.dataset.poll) || 1000;
    var max = Number(body.dataset.max) || 200;
    var busy = false;
    var shown = normal(body.innerHTML);
    var table = body.closest("table") || body;
    var note = document.createElement("p");
    note.className = "live-note";
    note.setAttribute("role", "status");
    table.parentNode.insertBefore(note, table);
    function stopped(status) {
      body.setAttribute("data-stale", "");
      document.documentElement.classList.add("live-stale");
      note.textContent = status === 401 || status === 403
        ? "Updates stopped: the session ended. Sign in again (reload the page) to see new rows."
        : "Updates stopped: the server cannot be reached (stopped or restarting). Rows shown may be out of date; they update again by themselves when it is back, or reload the page.";
    }
    function replace(html) {
      var focused = document.activeElement;
      var href = focused && body.contains(focused) ? focused.getAttribute("href") : null;
      body.innerHTML = html;
      if (href !== null) {
        var same = Array.prototype.find.call(body.querySelectorAll("a[href]"), function (a) {
          return a.getAttribute("href") === href;
        });
        var next = same || body.querySelector("a[href]");
        if (next) next.focus();
      }
    }
    function tick() {
      if (busy || document.hidden) return;
      busy = true;
      var url = new URL(body.dataset.liveUrl, document.baseURI);
      if (body.dataset.liveMode === "prepend") {
        url.searchParams.set("after", body.dataset.after || "0");
      }
      fetch(url, { cache: "no-store", headers: { Accept: "text/html" } })
        .then(function (response) {
          if (!response.ok) {
            var failed = new Error("HTTP " + response.status);
            failed.status = response.status;
            throw failed;
          }
          var seq = response.headers.get("X-Journal-Seq");
          return response.text().then(function (html) { return [html, seq]; });
        })
        .then(function (answer) {
          var html = answer[0];
          if (body.dataset.liveMode === "prepend") {
            if (html.trim() !== "") {
              body.querySelectorAll("tr.empty").forEach(function (row) { row.remove(); });
              body.insertAdjacentHTML("afterbegin", html);
              while (body.rows.length > max) body.deleteRow(-1);
            }
            if (answer[1]) body.dataset.after = answer[1];
          } else {
            var now = normal(html);
            if (now !== shown) {
              replace(html);
              shown = now;
            }
          }
          if (body.hasAttribute("data-stale")) {
            body.removeAttribute("data-stale");
            document.documentElement.classList.remove("live-stale");
            note.textContent = "Updates resumed.";
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
