//! `payments tail --proxy --follow` and exchanges the proxy no longer
//! keeps by the next poll (more than 1,000 judged since the last one
//! read): said once, with how many, from the places in the order judged
//! the proxy's listing gives (`firstJudged`, `oldestJudged`), never from
//! a gap in seqs (a slow exchange judged after later ones is no loss:
//! `proxy_restart.rs`).

use std::process::Command as StdCommand;

use payments_contract_proxy::{Proxy, ProxyConfig};
use serde_json::Value;

use crate::common::Sandbox;

use super::follow::{follow, line_reader, next_line};
use super::restart::stop;
use super::{KEY_A, PROXY_KEY, UNKNOWN, mock};

/// `signal` (`STOP`, `CONT`) to the process `pid`.
fn signal(signal: &str, pid: u32) {
    let sent = StdCommand::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -{signal}");
}

/// `count` status reads through the proxy at `base`, one after another
/// (judged in the order of their seqs).
async fn reads(base: &str, count: usize) {
    let client = reqwest::Client::new();
    let url = format!("{base}/api/payments/{UNKNOWN}/status");
    for _ in 0..count {
        let sent = client.get(&url).bearer_auth(KEY_A).send().await;
        assert!(sent.is_ok_and(|r| r.status() == 404));
    }
}

/// The seq of a line of `tail -o json`.
fn seq_of(line: &str) -> u64 {
    let item: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    item["seq"].as_u64().unwrap_or_else(|| panic!("{item}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn exchanges_the_proxy_no_longer_keeps_by_the_next_poll_are_said_once_with_how_many() {
    let server = mock().await;
    let mut config = ProxyConfig::new(server.base_url().parse().expect("a URL"));
    config.admin_keys = vec![PROXY_KEY.parse().expect("an admin key")];
    let proxy = Proxy::start(config).await.expect("a proxy");
    let base = proxy.base_url();
    reads(&base, 3).await;
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, PROXY_KEY, &["--proxy"]);
    let mut lines = line_reader(&mut child);
    for seq in 1..=3 {
        assert_eq!(seq_of(&next_line(&mut lines).await), seq);
    }

    // Stopped (no poll) while 1,100 are judged: the proxy keeps the last
    // 1,000 (104..=1103), so 4..=103 are lost.
    let pid = child.id();
    signal("STOP", pid);
    reads(&base, 1100).await;
    signal("CONT", pid);
    let mut shown = vec![3];
    while shown.last() != Some(&1103) {
        shown.push(seq_of(&next_line(&mut lines).await));
    }
    // And on from there, with no other note.
    reads(&base, 1).await;
    assert_eq!(seq_of(&next_line(&mut lines).await), 1104);
    let (err, rest) = stop(child, lines).await;
    assert_eq!(rest, Vec::<String>::new(), "nothing more");

    // One gap in what was shown, and the note says how many it is (a poll
    // the stop caught under way may have read a few of them before it).
    let gaps: Vec<(u64, u64)> = shown
        .windows(2)
        .filter(|w| w[1] != w[0] + 1)
        .map(|w| (w[0], w[1] - w[0] - 1))
        .collect();
    let [(after, lost)] = gaps[..] else {
        panic!("one gap: {gaps:?}");
    };
    assert_eq!(after + lost, 103, "the proxy keeps 104 on: {gaps:?}");
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        [format!(
            "note: {lost} exchanges judged after seq {after} are no longer kept by the proxy \
             (it keeps the last 1,000)"
        )],
        "once: {err}"
    );
    proxy.shutdown().await;
    server.shutdown().await;
}
