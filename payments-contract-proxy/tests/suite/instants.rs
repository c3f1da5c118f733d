//! `status.agree` compares `createdAt` as the instant it names: the two
//! status reads of one transaction, through a proxy with `--enforce`,
//! each pair of spellings the reviewers sent (`/tmp/rv/time/ts2.json`).
//! Two spellings of one instant are answered as they came; two instants
//! a millisecond apart are 502 `CONTRACT_VIOLATION`.

use axum::http::Method;
use serde_json::json;

use crate::deviations::{by_id, by_reference, with};
use crate::rig::{Rig, Setup, status_data};
use crate::upstream::Canned;

/// `createdAt` by id, by reference, and whether they name one instant.
const PAIRS: [(&str, &str, bool); 12] = [
    ("2026-11-29T23:00:00Z", "2026-11-29T23:00:00.000Z", true),
    (
        "2026-11-29T23:00:00.000Z",
        "2026-11-29T23:00:00+00:00",
        true,
    ),
    (
        "2026-11-30T10:00:00.000+11:00",
        "2026-11-29T23:00:00.000Z",
        true,
    ),
    (
        "2026-11-29T23:00:00.000Z",
        "2026-11-29T23:00:00.001Z",
        false,
    ),
    // Spelled alike: one value, whether or not it is a timestamp.
    ("2026-02-30T00:00:00Z", "2026-02-30T00:00:00Z", true),
    ("20261129T230000Z", "20261129T230000Z", true),
    ("2026-11-29T24:00:00Z", "2026-11-29T24:00:00Z", true),
    ("2026-11-29T23:59:60Z", "2026-11-29T23:59:60Z", true),
    (
        "2026-11-29T23:00:00+14:30",
        "2026-11-29T23:00:00+14:30",
        true,
    ),
    (
        "2026-11-29T23:00:00.1234567890123Z",
        "2026-11-29T23:00:00.1234567890123Z",
        true,
    ),
    ("2026-11-29", "2026-11-29", true),
    ("+10000-01-01T00:00:00Z", "+10000-01-01T00:00:00Z", true),
];

#[tokio::test]
async fn two_spellings_of_one_created_at_agree_and_two_instants_do_not() {
    let rig = Rig::with(Setup {
        enforce: true,
        ..Setup::default()
    })
    .await;
    for (n, (first, second, agree)) in PAIRS.into_iter().enumerate() {
        let (id, reference) = (format!("t-instant-{n}"), format!("R-instant-{n}"));
        let read = |created: &str| {
            Canned::ok(with(
                status_data(&id, &reference, "SUCCESSFUL", "10.50"),
                "createdAt",
                json!(created),
            ))
        };
        rig.upstream.push(read(first));
        let by_id = rig.send(&Method::GET, &by_id(&id), None).await;
        rig.upstream.push(read(second));
        let by_reference = rig
            .send(&Method::GET, &by_reference(&reference), None)
            .await;
        let exchanges = rig.proxy.exchanges();
        let (_, _, findings) = exchanges.last().expect("the read by reference");
        let rules: Vec<&str> = findings.iter().map(|f| f.rule).collect();
        assert_eq!(
            rules.contains(&"status.agree"),
            !agree,
            "{first} then {second}: {findings:?}"
        );
        // What data.fields finds (not a timestamp) is the same both times.
        let clean = !rules.contains(&"data.fields");
        assert_eq!(by_id.verdict() == "pass", clean, "{first}");
        match (agree, clean) {
            (true, true) => {
                assert_eq!((by_reference.status, by_reference.verdict()), (200, "pass"));
            }
            _ => {
                assert_eq!(by_reference.status, 502, "{first} then {second}");
                assert_eq!(by_reference.code(), "CONTRACT_VIOLATION");
            }
        }
    }
}
