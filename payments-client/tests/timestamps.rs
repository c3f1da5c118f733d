//! The interface's timestamps (`createdAt`): the client reads them with
//! the interface's one reader, the one the contract proxy judges with, so
//! a timestamp the proxy passes the client reads, and one the client
//! refuses the proxy flags (`data.fields`). The table is the interface's
//! own (`payments_interface::timestamp::EXAMPLES`).

mod common;

use chrono::SecondsFormat;
use common::*;
use payments_client::wire::{decode_response, parse_timestamp};
use payments_client::{Error, PaymentStatus};
use payments_contract_proxy::{Proxy, ProxyConfig};
use payments_interface::timestamp::EXAMPLES;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

/// A status `data` of [`TX_ID`] created at `created_at` (JSON-quoted).
fn status_data_created(created_at: &str) -> String {
    let quoted = serde_json::to_string(created_at).expect("a JSON string");
    status_data().replace(r#""2026-11-22T08:15:30.123Z""#, &quoted)
}

fn utc_text(created_at: chrono::DateTime<chrono::Utc>) -> String {
    created_at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

#[test]
fn every_example_decodes_as_the_interface_table_says() {
    for example in EXAMPLES {
        let text = example.text;
        let read = parse_timestamp(text).map(utc_text);
        assert_eq!(read.as_deref(), example.utc, "{text:?}");
        let body = ok_envelope(&status_data_created(text));
        let decoded = decode_response::<PaymentStatus>(200, None, body.as_bytes());
        match (decoded, example.utc) {
            (Ok(status), Some(utc)) => assert_eq!(utc_text(status.data().created_at), utc),
            (Err(error), None) => {
                let shown = error.to_string();
                assert!(shown.contains("createdAt"), "{text:?}: {shown}");
                assert!(shown.contains("invalid timestamp"), "{text:?}: {shown}");
            }
            (decoded, utc) => panic!("{text:?}: decoded {decoded:?}, expected {utc:?}"),
        }
    }
}

/// The reviewers' cases: instants past 9999 or before 0000 once in UTC
/// are refused whatever the offset, with the reason.
#[test]
fn years_outside_0000_to_9999_in_utc_are_refused_with_any_offset() {
    for text in [
        "9999-12-31T23:59:59-01:00",
        "10000-01-01T00:00:00Z",
        "0000-01-01T00:00:00+01:00",
    ] {
        assert_eq!(parse_timestamp(text), None, "{text}");
        let body = ok_envelope(&status_data_created(text));
        let error =
            decode_response::<PaymentStatus>(200, None, body.as_bytes()).expect_err("refused");
        if text.starts_with("10000") {
            continue;
        }
        assert!(
            error
                .to_string()
                .contains("its year in UTC is outside 0000–9999"),
            "{error}"
        );
    }
    assert!(parse_timestamp("9999-12-31T23:59:59+01:00").is_some());
    assert!(parse_timestamp("0000-01-01T00:00:00-01:00").is_some());
}

/// Through the contract proxy in front of a service answering each
/// example: the proxy flags `data.fields` exactly where the example is not
/// ISO 8601, and never passes one the client cannot read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_proxy_passes_the_client_reads() {
    let service = MockServer::start().await;
    let proxy = Proxy::start(ProxyConfig::new(service.uri().parse().expect("a URL")))
        .await
        .expect("a proxy");
    let client = client_for(&proxy.base_url());
    for example in EXAMPLES {
        let text = example.text;
        service.reset().await;
        Mock::given(method("GET"))
            .respond_with(json(200, ok_envelope(&status_data_created(text))))
            .mount(&service)
            .await;
        let read = client.status(TX_ID).await;
        let (_, _, findings) = proxy.exchanges().pop().expect("an exchange");
        let flagged = findings.iter().any(|f| f.rule == "data.fields");
        assert_eq!(flagged, !example.iso8601, "{text:?}: {findings:?}");
        match read {
            Ok(status) => {
                assert_eq!(
                    Some(utc_text(status.data().created_at).as_str()),
                    example.utc,
                    "{text:?}"
                );
            }
            Err(Error::Decode { .. }) => {
                assert!(example.utc.is_none(), "{text:?}");
                assert!(
                    flagged,
                    "{text:?}: the client refuses what the proxy passed"
                );
            }
            Err(other) => panic!("{text:?}: {other}"),
        }
    }
    proxy.shutdown().await;
}
