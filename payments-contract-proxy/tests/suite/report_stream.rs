//! `/_proxy/report?format=junit|sarif` streamed: a client that stops
//! reading in the middle holds no exchange up, and what it then reads is
//! the document of the exchanges judged before its request, whole.

use std::time::Duration;

use axum::http::Method;
use serde_json::Value;

use crate::consumers::assert_valid_sarif;
use crate::rig::Rig;
use crate::upstream::Canned;

/// Exchanges with a violation each (an answer that is not JSON).
const EXCHANGES: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_pauses_reading_the_report_holds_no_exchange_up() {
    let rig = Rig::start().await;
    let status = |n: usize| format!("/api/payments/t{n}/status");
    for n in 0..EXCHANGES {
        let reply = rig
            .exchange(&Method::GET, &status(n), None, Canned::raw(502, "<html>"))
            .await;
        assert_eq!(reply.verdict(), "violation");
    }
    for format in ["sarif", "junit"] {
        let mut report = rig
            .client
            .get(rig.url(&format!("/_proxy/report?format={format}")))
            .send()
            .await
            .expect("answered");
        assert_eq!(report.status(), 200);
        let mut body = report
            .chunk()
            .await
            .expect("a piece")
            .expect("a first piece")
            .to_vec();
        // The client reads no more for now: an exchange goes through.
        let meanwhile = tokio::time::timeout(
            Duration::from_secs(30),
            rig.exchange(
                &Method::GET,
                &status(9999),
                None,
                Canned::raw(502, "<html>"),
            ),
        )
        .await
        .unwrap_or_else(|_| panic!("{format}: an exchange waits on the report's client"));
        assert_eq!(meanwhile.verdict(), "violation");
        while let Some(piece) = report.chunk().await.expect("a piece") {
            body.extend_from_slice(&piece);
        }
        let text = String::from_utf8(body).expect("UTF-8");
        // The exchanges judged before the request, and not the one after.
        match format {
            "sarif" => {
                let log: Value = serde_json::from_str(&text).expect("whole JSON");
                assert_valid_sarif(&log, "/_proxy/report?format=sarif streamed");
                let results = log["runs"][0]["results"].as_array().expect("results");
                let seqs: std::collections::BTreeSet<u64> = results
                    .iter()
                    .map(|r| r["properties"]["seq"].as_u64().expect("a seq"))
                    .collect();
                assert_eq!(seqs.len(), EXCHANGES, "{seqs:?}");
                assert_eq!(seqs.last(), Some(&(EXCHANGES as u64)), "{seqs:?}");
            }
            _ => {
                assert!(text.ends_with("</testsuites>\n"), "whole XML");
                let cases = text.matches("<testcase ").count();
                assert_eq!(cases, EXCHANGES + 1, "the exchanges before the request");
            }
        }
    }
}
