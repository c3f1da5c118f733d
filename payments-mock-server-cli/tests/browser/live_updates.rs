//! Live rows under a burst and for a keyboard or screen reader user: a
//! burst larger than a feed page arrives whole, the focus survives its
//! row being dropped, the updates can be paused (WCAG 2.2.2), new rows
//! are announced, and a line that says updates stopped is written once.

use payments_mock_server::MockServer;

use crate::harness::Browser;
use crate::live::{COUNT_POLLS, polls};
use crate::shop::call;

async fn status_read(server: &MockServer, n: usize) {
    call(
        server,
        "GET",
        &format!(
            "/api/payments/reference/LIVE{n}/status?merchantId=00000000-0000-4000-8000-000000000001"
        ),
        None,
    )
    .await;
}

/// The journal seqs the requests page links to, newest first.
const SHOWN: &str = "return Array.prototype.map.call(document.querySelectorAll('#requests tr a'), \
    a => Number(a.getAttribute('href').split('/').pop()))";

#[tokio::test]
async fn a_burst_arrives_whole_and_is_announced() {
    let Some(browser) = Browser::start("live burst").await else {
        return;
    };
    let server = MockServer::start().await;
    browser
        .open(&format!("{}/_mock/ui/requests", server.base_url()))
        .await;
    browser.wait_for("[role=status].live-note").await;
    // More than a feed page (50) between two polls: all of them at once.
    let burst = futures::future::join_all((1..=130).map(|n| status_read(&server, n)));
    burst.await;
    browser
        .wait_for_text("#requests", |t| {
            t.matches("/api/payments/reference/").count() >= 130
        })
        .await;
    let shown = browser.script(SHOWN).await;
    let expected: Vec<u64> = (1..=130).rev().collect();
    assert_eq!(
        shown,
        serde_json::json!(expected),
        "every request, newest first"
    );
    // Said politely, in the status line (at most every 10 s).
    let said = browser
        .wait_for_text(".live-note", |t| t.contains("new request"))
        .await;
    assert!(
        said.ends_with(" new requests") || said == "1 new request",
        "{said}"
    );
    browser.check_page("the requests page after a burst").await;
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn the_focus_survives_its_row_being_dropped() {
    let Some(browser) = Browser::start("live dropped focus").await else {
        return;
    };
    let server = MockServer::start().await;
    status_read(&server, 1).await;
    status_read(&server, 2).await;
    browser
        .open(&format!("{}/_mock/ui/requests", server.base_url()))
        .await;
    browser.wait_for("#requests a").await;
    // The page keeps two rows; the oldest has the focus.
    browser
        .script(
            "const b = document.querySelector('#requests'); b.dataset.max = '2'; \
                 b.rows[b.rows.length - 1].querySelector('a').focus()",
        )
        .await;
    status_read(&server, 3).await;
    browser
        .wait_for_text("#requests", |t| t.contains("LIVE3"))
        .await;
    let focused = browser
        .script("const e = document.activeElement; return [e.tagName, e.closest('#requests') !== null, e.getAttribute('href')]")
        .await;
    assert_eq!(focused[0], "A", "{focused}");
    assert_eq!(focused[1], true, "{focused}");
    assert!(
        focused[2].as_str().is_some_and(|h| h.ends_with("/2")),
        "the nearest row left: {focused}"
    );
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn updates_pause_and_resume_from_the_keyboard() {
    let Some(browser) = Browser::start("live pause").await else {
        return;
    };
    let server = MockServer::start().await;
    status_read(&server, 1).await;
    browser
        .open(&format!("{}/_mock/ui/requests", server.base_url()))
        .await;
    browser.script(COUNT_POLLS).await;
    let button = browser.wait_for("button.live-pause").await;
    assert_eq!(
        button.attr("aria-pressed").await.expect("read"),
        Some("false".to_owned())
    );
    assert_eq!(button.text().await.expect("read"), "Pause updates");
    browser
        .script("document.querySelector('button.live-pause').focus()")
        .await;
    button.send_keys("\u{e007}").await.expect("Enter pressed");
    let said = browser
        .wait_for_text(".live-note", |t| t.contains("Updates paused"))
        .await;
    assert!(said.contains("Pause updates again"), "{said}");
    assert_eq!(
        button.attr("aria-pressed").await.expect("read"),
        Some("true".to_owned())
    );
    browser.check_page("the requests page, paused").await;
    // Paused: three poll periods go by (counted by the page's own timer)
    // without a poll, and a new request is not shown.
    status_read(&server, 2).await;
    let polled = browser.text("#polls").await;
    browser
        .script("const t = document.createElement('output'); t.id = 'ticks'; t.textContent = '0'; \
                 document.body.append(t); const every = Number(document.querySelector('#requests').dataset.poll); \
                 setInterval(() => { t.textContent = String(Number(t.textContent) + 1); }, every);")
        .await;
    browser
        .wait_for_text("#ticks", |t| t.parse::<u64>().is_ok_and(|n| n >= 3))
        .await;
    assert_eq!(browser.text("#polls").await, polled, "no poll while paused");
    assert!(!browser.text("#requests").await.contains("LIVE2"));
    // Resumed (the keyboard again): the request arrives.
    button.send_keys(" ").await.expect("Space pressed");
    browser
        .wait_for_text("#requests", |t| t.contains("LIVE2"))
        .await;
    assert_eq!(
        button.attr("aria-pressed").await.expect("read"),
        Some("false".to_owned())
    );
    polls(&browser, 1).await;
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_stopped_line_is_written_once_not_at_every_poll() {
    let Some(browser) = Browser::start("live stopped once").await else {
        return;
    };
    let server = MockServer::start().await;
    browser
        .open(&format!("{}/_mock/ui/requests", server.base_url()))
        .await;
    browser.script(COUNT_POLLS).await;
    browser
        .script("window.writes = 0; new MutationObserver(m => { window.writes += m.length; }) \
                 .observe(document.querySelector('.live-note'), { childList: true, characterData: true, subtree: true });")
        .await;
    server.shutdown().await;
    browser
        .wait_for_text(".live-note", |t| t.contains("Updates stopped"))
        .await;
    let writes = browser.script("return window.writes").await;
    // Three more failed polls: the line is not written again (a screen
    // reader would read it out again each time).
    polls(&browser, 3).await;
    assert_eq!(browser.script("return window.writes").await, writes);
    assert_eq!(writes, 1, "written once");
    browser.close().await;
}

/// The sum of the counts the status line announced ("3 new requests"),
/// from the texts the page's observer saw written.
async fn announced(browser: &Browser) -> (u64, Vec<String>) {
    let said: Vec<String> =
        serde_json::from_value(browser.script("return window.said").await).expect("texts");
    let sum = said
        .iter()
        .filter_map(|t| {
            t.strip_suffix(" new requests")
                .or(t.strip_suffix(" new request"))
        })
        .filter_map(|n| n.parse::<u64>().ok())
        .sum();
    (sum, said)
}

/// Polls until the announced counts add up to `total` (the status line
/// says at most every 10 s, so up to 25 s).
async fn announced_up_to(browser: &Browser, total: u64) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(25);
    loop {
        let (sum, said) = announced(browser).await;
        if sum >= total {
            return said;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "announced {sum} of {total}: {said:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_same_count_twice_is_announced_twice() {
    let Some(browser) = Browser::start("live same count").await else {
        return;
    };
    let server = MockServer::start().await;
    browser
        .open(&format!("{}/_mock/ui/requests", server.base_url()))
        .await;
    browser.wait_for("[role=status].live-note").await;
    // Every non-empty text the line is given (a screen reader says each).
    browser
        .script("window.said = []; const note = document.querySelector('.live-note'); \
                 new MutationObserver(() => { if (note.textContent) window.said.push(note.textContent); }) \
                 .observe(note, { childList: true, characterData: true, subtree: true });")
        .await;
    futures::future::join_all((1..=3).map(|n| status_read(&server, n))).await;
    let said = announced_up_to(&browser, 3).await;
    // As many again as the last announcement said (steady traffic): the
    // same words, announced again.
    let last: u64 = said
        .last()
        .and_then(|t| t.split(' ').next()?.parse().ok())
        .expect("a count");
    futures::future::join_all((4..4 + last as usize).map(|n| status_read(&server, n))).await;
    let said = announced_up_to(&browser, 3 + last).await;
    assert_eq!(
        said.iter().rfind(|t| t.contains(" new request")),
        Some(&format!(
            "{last} new request{}",
            if last == 1 { "" } else { "s" }
        )),
        "{said:?}"
    );
    browser.close().await;
    server.shutdown().await;
}

/// A server that started again under the page, whose new journal already
/// numbers past the page's newest row when the page asks next, is told by
/// that row's request id: the page says the journal started again (by its
/// numbers alone, rows 4 and 5 of the new journal would look like the
/// old one's next).
#[tokio::test]
async fn a_journal_that_started_again_past_the_page_is_said() {
    let Some(browser) = Browser::start("live restart").await else {
        return;
    };
    let server = MockServer::start().await;
    let addr = server.addr();
    for n in 1..=3 {
        status_read(&server, n).await;
    }
    browser
        .open(&format!("{}/_mock/ui/requests", server.base_url()))
        .await;
    browser
        .wait_for_text("#requests", |t| t.contains("LIVE3"))
        .await;
    // Paused, so that no poll sees the server gone or its new journal
    // shorter than the page's.
    browser
        .script("document.querySelector('button.live-pause').click()")
        .await;
    browser
        .wait_for_text(".live-note", |t| t.contains("Updates paused"))
        .await;
    server.shutdown().await;
    let listener = std::net::TcpListener::bind(addr).expect("the same address again");
    let again = MockServer::builder()
        .listener(listener)
        .start()
        .await
        .expect("a server in its place");
    for n in 11..=15 {
        status_read(&again, n).await;
    }
    browser
        .script("document.querySelector('button.live-pause').click()")
        .await;
    let table = browser
        .wait_for_text("#requests", |t| t.contains("The journal started again"))
        .await;
    assert!(table.contains("LIVE15"), "{table}");
    browser.close().await;
    again.shutdown().await;
}
