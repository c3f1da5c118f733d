//! What `tail` could miss, said or avoided: entries the mock's journal
//! dropped before they were read (a note, never for what a filter or a
//! merchant's key leaves out), a journal that started again (a note, then
//! its start), the proxy's `--since` by seq while its listing is in the
//! order judged, and a method too long for its column.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use payments_contract_proxy::{Proxy, ProxyConfig};
use serde_json::{Value, json};
use unicode_width::UnicodeWidthStr as _;

use crate::common::{Sandbox, run, snapshot_settings, stderr, stdout};

use super::follow::{exit_of, follow, interrupt, line_reader, next_line};
use super::{
    ADMIN, KEY_A, KEY_B, PROXY_KEY, UNKNOWN, lines, mock, read_unknown, seqs, story, tail,
};

/// Waits (at most 20 s, looking every 10 ms) until `ready` holds.
pub(super) async fn until<F, Fut>(what: &str, mut ready: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        let mut every = tokio::time::interval(Duration::from_millis(10));
        loop {
            every.tick().await;
            if ready().await {
                return;
            }
        }
    })
    .await;
    assert!(waited.is_ok(), "not within 20 s: {what}");
}

#[tokio::test(flavor = "multi_thread")]
async fn entries_the_journal_dropped_before_they_were_read_are_said() {
    let server = mock().await;
    let base = server.base_url();
    // 1,100 requests: the journal keeps 101..=1100.
    let client = reqwest::Client::new();
    let url = format!("{base}/api/payments/{UNKNOWN}/status");
    for _ in 0..1100 {
        let sent = client.get(&url).bearer_auth(KEY_A).send().await;
        assert!(sent.is_ok_and(|r| r.status() == 404));
    }
    let sandbox = Sandbox::new();
    let note = "note: seq 6–100 are no longer kept by the server (it keeps the last 1,000)";

    // Read once, after seq 5.
    let once = run(tail(&sandbox, &base, ADMIN, "json", &["--since", "5"]))
        .await
        .success();
    let read = lines(&stdout(&once));
    assert_eq!(read.len(), 1000);
    assert_eq!(read[0]["seq"], 101);
    let err = stderr(&once);
    assert_eq!(err.lines().collect::<Vec<_>>(), [note], "{err}");

    // Followed: the note, and it goes on.
    let mut child = follow(&sandbox, &base, ADMIN, &["--since", "5"]);
    let mut out = line_reader(&mut child);
    let first: Value = serde_json::from_str(&next_line(&mut out).await).expect("JSON");
    assert_eq!(first["seq"], 101);
    for _ in 102..=1100 {
        next_line(&mut out).await;
    }
    read_unknown(&base).await;
    let later: Value = serde_json::from_str(&next_line(&mut out).await).expect("JSON");
    assert_eq!(later["seq"], 1101);
    interrupt(&child);
    let (code, err) = exit_of(child).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.lines().collect::<Vec<_>>(), [note], "once: {err}");

    // From the start (no --since), what the journal no longer keeps was
    // never asked for.
    let all = run(tail(&sandbox, &base, ADMIN, "json", &[]))
        .await
        .success();
    assert_eq!(stderr(&all), "");
    // An explicit --since 0 asked for seq 1 on: what is lost is said (it
    // was taken for no --since, and said nothing). The journal keeps
    // 102..=1101 now (1101: the read while followed).
    let zero = run(tail(&sandbox, &base, ADMIN, "json", &["--since", "0"]))
        .await
        .success();
    assert_eq!(lines(&stdout(&zero)).len(), 1000);
    assert_eq!(
        stderr(&zero),
        "note: seq 1–101 are no longer kept by the server (it keeps the last 1,000)\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_filter_or_a_merchants_key_leaves_out_is_no_gap() {
    let server = mock().await;
    let base = server.base_url();
    story(&base).await;
    let sandbox = Sandbox::new();
    for (key, args, shown) in [
        (ADMIN, &["--path", "/api/payments/confirm"][..], &[3][..]),
        (ADMIN, &["--status", "404"][..], &[6][..]),
        (ADMIN, &["--reference-no", "INV-B1"][..], &[7][..]),
        // Merchant B sees its own initiate (7) only.
        (KEY_B, &[][..], &[7][..]),
    ] {
        let mut cmd = tail(&sandbox, &base, key, "json", &["--since", "1"]);
        cmd.args(args);
        let done = run(cmd).await.success();
        assert_eq!(seqs(&lines(&stdout(&done))), shown, "{args:?}");
        assert_eq!(stderr(&done), "", "{key} {args:?}");
    }
}

/// A journal of `GET /_mock/requests` that pages as the mock does and can
/// be replaced (a mock restarted on the same address).
#[derive(Clone)]
struct Journal(Arc<Mutex<Vec<Value>>>);

impl Journal {
    fn set(&self, run: &str, seqs: std::ops::RangeInclusive<u64>) {
        let items = seqs
            .map(|seq| json!({"seq": seq, "method": "GET", "path": format!("/api/{run}/{seq}"), "status": 200}))
            .collect();
        *self.0.lock().expect("the journal") = items;
    }
}

impl wiremock::Respond for Journal {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let query: Vec<(String, String)> = request.url.query_pairs().into_owned().collect();
        let value = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.parse::<u64>().ok())
        };
        let limit = usize::try_from(value("limit").unwrap_or(1000)).unwrap_or(1000);
        let items = self.0.lock().expect("the journal").clone();
        let page: Vec<Value> = match value("after") {
            Some(after) => items
                .into_iter()
                .filter(|i| i["seq"].as_u64() > Some(after))
                .take(limit)
                .collect(),
            None => {
                let skip = items.len().saturating_sub(limit);
                items.into_iter().skip(skip).collect()
            }
        };
        wiremock::ResponseTemplate::new(200)
            .set_body_json(json!({"isSuccess": true, "data": {"items": page}}))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_journal_that_started_again_is_said_and_read_from_its_start() {
    let journal = Journal(Arc::new(Mutex::new(Vec::new())));
    journal.set("first", 1..=5);
    let stub = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path("/_mock/requests"))
        .respond_with(journal.clone())
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &stub.uri(), ADMIN, &[]);
    let mut out = line_reader(&mut child);
    for seq in 1..=5 {
        let line: Value = serde_json::from_str(&next_line(&mut out).await).expect("JSON");
        assert_eq!(line["seq"], seq);
    }
    // The server restarts: a fresh journal, numbered from 1.
    journal.set("second", 1..=2);
    for seq in 1..=2 {
        let line: Value = serde_json::from_str(&next_line(&mut out).await).expect("JSON");
        assert_eq!(line["path"], format!("/api/second/{seq}"), "{line}");
    }
    journal.set("second", 1..=3);
    let line: Value = serde_json::from_str(&next_line(&mut out).await).expect("JSON");
    assert_eq!(line["path"], "/api/second/3", "then on from there");
    interrupt(&child);
    let (code, err) = exit_of(child).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        ["note: the server's journal started again (restarted or reset?); reading from its start"],
        "{err}"
    );
}

/// The proxy's listing: `[2, 1]`, exchange 1 slow (it arrived first and
/// was judged last).
async fn judged_out_of_order() -> (wiremock::MockServer, Proxy) {
    use wiremock::matchers::path;
    use wiremock::{Mock, MockServer as Stub, ResponseTemplate};
    let upstream = Stub::start().await;
    let envelope = json!({"isSuccess": true, "data": null});
    Mock::given(path("/api/payments/reference/SLOW/status"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(envelope.clone())
                .set_delay(Duration::from_secs(2)),
        )
        .mount(&upstream)
        .await;
    Mock::given(path("/api/payments/reference/FAST/status"))
        .respond_with(ResponseTemplate::new(200).set_body_json(envelope))
        .mount(&upstream)
        .await;
    let mut config = ProxyConfig::new(upstream.uri().parse().expect("a URL"));
    config.admin_keys = vec![PROXY_KEY.parse().expect("an admin key")];
    let proxy = Proxy::start(config).await.expect("a proxy");
    let base = proxy.base_url();
    let slow = tokio::spawn(reqwest::get(format!(
        "{base}/api/payments/reference/SLOW/status"
    )));
    // The slow one reached the upstream (so the proxy numbered it) first.
    until("the slow request reaches the upstream", || async {
        upstream
            .received_requests()
            .await
            .is_some_and(|r| r.len() == 1)
    })
    .await;
    let fast = reqwest::get(format!("{base}/api/payments/reference/FAST/status")).await;
    assert!(fast.is_ok_and(|r| r.status() == 200));
    assert!(slow.await.expect("the slow request").is_ok());
    let listing: Value = reqwest::Client::new()
        .get(format!("{base}/_proxy/exchanges"))
        .bearer_auth(PROXY_KEY)
        .send()
        .await
        .expect("the proxy answers")
        .bytes()
        .await
        .ok()
        .and_then(|body| serde_json::from_slice(&body).ok())
        .expect("an envelope");
    let items = listing["data"]["items"].as_array().expect("items").clone();
    assert_eq!(seqs(&items), [2, 1], "judged out of order: {listing}");
    (upstream, proxy)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_proxys_since_is_by_seq_not_by_the_order_judged() {
    let (_upstream, proxy) = judged_out_of_order().await;
    let base = proxy.base_url();
    let sandbox = Sandbox::new();
    for (since, shown) in [("0", &[2, 1][..]), ("1", &[2][..]), ("2", &[][..])] {
        let done = run(tail(
            &sandbox,
            &base,
            PROXY_KEY,
            "json",
            &["--proxy", "--since", since],
        ))
        .await
        .success();
        assert_eq!(seqs(&lines(&stdout(&done))), shown, "--since {since}");
    }

    // Followed from --since 1: exchange 2 (judged before 1) at once, then
    // what comes, each once.
    let mut child = follow(&sandbox, &base, PROXY_KEY, &["--proxy", "--since", "1"]);
    let mut out = line_reader(&mut child);
    let first: Value = serde_json::from_str(&next_line(&mut out).await).expect("JSON");
    assert_eq!(first["seq"], 2);
    let third = reqwest::get(format!("{base}/api/payments/reference/FAST/status")).await;
    assert!(third.is_ok());
    let next: Value = serde_json::from_str(&next_line(&mut out).await).expect("JSON");
    assert_eq!(next["seq"], 3);
    interrupt(&child);
    let (code, err) = exit_of(child).await;
    assert_eq!(code, Some(0), "{err}");
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_method_is_cut_to_fit_the_width() {
    let server = mock().await;
    let mut config = ProxyConfig::new(server.base_url().parse().expect("a URL"));
    config.admin_keys = vec![PROXY_KEY.parse().expect("an admin key")];
    let proxy = Proxy::start(config).await.expect("a proxy");
    let method = reqwest::Method::from_bytes("LONGMETHOD".repeat(20).as_bytes()).expect("a token");
    let answered = reqwest::Client::new()
        .request(
            method,
            format!("{}/api/payments/initiate", proxy.base_url()),
        )
        .bearer_auth(KEY_A)
        .send()
        .await;
    assert!(answered.is_ok());
    let sandbox = Sandbox::new();
    let mut settings = snapshot_settings();
    // Beside the other snapshots (this file is a level deeper).
    settings.set_snapshot_path("../../snapshots");
    settings.add_filter(r"\d{2}:\d{2}:\d{2}", "hh:mm:ss");
    settings.add_filter(r" [0-9a-f]{8} ", " xxxxxxxx ");
    for (name, base, key, args) in [
        (
            "tail_long_method_80_columns",
            server.base_url(),
            ADMIN,
            &[][..],
        ),
        (
            "tail_proxy_long_method_80_columns",
            proxy.base_url(),
            PROXY_KEY,
            &["--proxy"][..],
        ),
    ] {
        let mut cmd = tail(&sandbox, &base, key, "table", args);
        cmd.env("COLUMNS", "80");
        let table = stdout(&run(cmd).await.success());
        for line in table.lines() {
            assert!(line.width() <= 80, "{} columns: {line}", line.width());
        }
        // The method gives way before the path does.
        assert!(
            table.contains(" LONGMET") && table.contains("…  405 "),
            "{table}"
        );
        assert!(table.contains(" /api/payments/initiate"), "{table}");
        settings.bind(|| insta::assert_snapshot!(name, table));
    }
    proxy.shutdown().await;
}
