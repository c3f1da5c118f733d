//! `payments tail --follow` and a mock restarted on the same address (its
//! journal numbered from 1 again) that, by the next poll, numbers past
//! the last entry read: said once, and every new entry shown once; and a
//! follow with no restart shows each entry once (each page starts with
//! the last entry read again), a merchant's key that no longer sees it
//! included.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::process::Child;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::common::{MERCHANT, Sandbox};

use super::follow::{exit_of, follow, follow_every, interrupt, line_reader, next_line};
use super::{ADMIN, KEY_A, KEY_B, KEY_UNBOUND, MERCHANT_B, api, initiate, mock, mock_on};

pub(super) const RESTARTED: &str =
    "note: the server's journal started again (restarted or reset?); reading from its start";

/// The next line's seq and the reference its body names (if any).
async fn next_entry(lines: &mut UnboundedReceiver<String>) -> (u64, String) {
    let line = next_line(lines).await;
    let entry: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let body: Value = entry["body"]
        .as_str()
        .and_then(|b| serde_json::from_str(b).ok())
        .unwrap_or(Value::Null);
    let seq = entry["seq"].as_u64().unwrap_or_else(|| panic!("{entry}"));
    (seq, body["referenceNo"].as_str().unwrap_or("").to_owned())
}

/// Interrupts `child` (exit 0); its stderr, and what it printed that was
/// not read yet.
pub(super) async fn stop(
    child: Child,
    mut lines: UnboundedReceiver<String>,
) -> (String, Vec<String>) {
    interrupt(&child);
    let (code, err) = exit_of(child).await;
    assert_eq!(code, Some(0), "{err}");
    let mut rest = Vec::new();
    while let Some(line) = lines.recv().await {
        rest.push(line);
    }
    (err, rest)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mock_restarted_past_the_last_entry_read_is_said_and_its_entries_shown_once() {
    let server = mock().await;
    let base = server.base_url();
    let addr = server.addr();
    for n in 1..=5 {
        initiate(&base, KEY_A, MERCHANT, &format!("OLD-{n}")).await;
    }
    let sandbox = Sandbox::new();
    // A poll every 3 s: the restart and the new requests happen between
    // two (after the first read's last line).
    let mut children = Vec::new();
    for key in [ADMIN, KEY_A] {
        let mut child = follow_every(&sandbox, &base, key, "3", &[]);
        let mut lines = line_reader(&mut child);
        for n in 1..=5 {
            assert_eq!(
                next_entry(&mut lines).await,
                (n, format!("OLD-{n}")),
                "{key}"
            );
        }
        children.push((key, child, lines));
    }

    // Restarted on the same address: a fresh journal, and 20 requests
    // (numbered past 5) before the next poll.
    server.shutdown().await;
    let listener = std::net::TcpListener::bind(addr).expect("the same address again");
    let server = mock_on(listener).await;
    for n in 1..=20 {
        initiate(&base, KEY_A, MERCHANT, &format!("NEW-{n}")).await;
    }
    for (key, _, lines) in &mut children {
        for n in 1..=20 {
            assert_eq!(next_entry(lines).await, (n, format!("NEW-{n}")), "{key}");
        }
    }
    // And on from there.
    initiate(&base, KEY_A, MERCHANT, "NEW-21").await;
    for (key, child, mut lines) in children {
        assert_eq!(
            next_entry(&mut lines).await,
            (21, "NEW-21".to_owned()),
            "{key}"
        );
        let (err, rest) = stop(child, lines).await;
        assert_eq!(rest, Vec::<String>::new(), "{key}: nothing more");
        assert_eq!(
            err.lines().collect::<Vec<_>>(),
            [RESTARTED],
            "{key}: once: {err}"
        );
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follow_without_a_restart_shows_each_entry_once() {
    let server = mock().await;
    let base = server.base_url();
    for n in 1..=3 {
        initiate(&base, KEY_A, MERCHANT, &format!("R-{n}")).await;
    }
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, ADMIN, &[]);
    let mut lines = line_reader(&mut child);
    let mut shown = BTreeMap::new();
    let mut expect = |(seq, reference): (u64, String), n: u64| {
        assert_eq!((seq, reference.as_str()), (n, format!("R-{n}").as_str()));
        assert!(shown.insert(seq, ()).is_none(), "seq {seq} twice");
    };
    for n in 1..=3 {
        expect(next_entry(&mut lines).await, n);
    }
    // Polls that find nothing new, then more than a page (100) at once,
    // then one at a time.
    for n in 4..=160 {
        initiate(&base, KEY_A, MERCHANT, &format!("R-{n}")).await;
    }
    for n in 4..=160 {
        expect(next_entry(&mut lines).await, n);
    }
    for n in 161..=163 {
        initiate(&base, KEY_A, MERCHANT, &format!("R-{n}")).await;
        expect(next_entry(&mut lines).await, n);
    }
    let (err, rest) = stop(child, lines).await;
    assert_eq!(rest, Vec::<String>::new(), "nothing more");
    assert_eq!(err, "", "no note");
    server.shutdown().await;
}

/// The child's stderr, line by line, as it comes.
fn stderr_reader(child: &mut Child) -> UnboundedReceiver<String> {
    let err = child.stderr.take().expect("stderr is piped");
    let (send, receive) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// Waits for `count` answers said by `-v` on `err` (each within 20 s);
/// every line read is kept in `said`.
async fn answers(err: &mut UnboundedReceiver<String>, said: &mut Vec<String>, count: usize) {
    let mut seen = 0;
    while seen < count {
        let line = next_line(err).await;
        seen += usize::from(line.starts_with("< "));
        said.push(line);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_merchants_entry_out_of_its_sight_is_no_restart() {
    let server = mock().await;
    let base = server.base_url();
    initiate(&base, KEY_A, MERCHANT, "SHARED").await;
    let sandbox = Sandbox::new();
    // -v: each read said on stderr, to know when a poll came.
    let mut child = follow(&sandbox, &base, KEY_A, &["-v"]);
    let mut lines = line_reader(&mut child);
    let mut err = stderr_reader(&mut child);
    let mut said = Vec::new();
    assert_eq!(next_entry(&mut lines).await.0, 1);
    // A status read, sent with a key bound to no merchant, of a
    // reference merchant A alone holds: merchant A's to see, by what it
    // names. (A request sent with A's own key would stay A's whatever
    // happened later.)
    let read = api(
        &base,
        KEY_UNBOUND,
        "GET",
        "/api/payments/reference/SHARED/status",
        None,
    )
    .await;
    assert_eq!(read["isSuccess"], true, "{read}");
    assert_eq!(next_entry(&mut lines).await.0, 2);
    // Merchant B takes the same reference: the read (seq 2, the last one
    // read) is no longer merchant A's alone to see.
    initiate(&base, KEY_B, MERCHANT_B, "SHARED").await;
    let journal = api(&base, KEY_A, "GET", "/_mock/requests", None).await;
    let items = journal["data"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(super::seqs(&items), [1], "{journal}");
    // A whole poll (at most three reads) after that.
    answers(&mut err, &mut said, 4).await;
    initiate(&base, KEY_A, MERCHANT, "LATER").await;
    assert_eq!(next_entry(&mut lines).await, (4, "LATER".to_owned()));
    let (_, rest) = stop(child, lines).await;
    assert_eq!(rest, Vec::<String>::new(), "nothing twice");
    while let Some(line) = err.recv().await {
        said.push(line);
    }
    let notes: Vec<&String> = said
        .iter()
        .filter(|l| !l.starts_with("> ") && !l.starts_with("< "))
        .collect();
    assert_eq!(notes, Vec::<&String>::new(), "no note");
    server.shutdown().await;
}
