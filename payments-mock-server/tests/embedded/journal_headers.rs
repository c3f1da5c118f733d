//! What the journal keeps of a request's headers: hyper takes a head of up
//! to 64 KiB, and 1,000 entries of it took 64 MB a journal. Each value
//! keeps up to 1 KiB (ended by `…[cut]`), an entry up to 8 KiB of names
//! and values, and says so (`headersLength`); ordinary headers stay whole,
//! secrets redacted before any cut.

use payments_mock_server::MockServer;
use serde_json::Value;

use super::{call, initiate};

/// What an entry keeps of header names and values (`HEADER_BUDGET`), and
/// of one value (`HEADER_CUT`).
const BUDGET: usize = 8 * 1024;
const CUT: usize = 1024;
const MARK: &str = "…[cut]";

/// The bytes of an item's header names and values.
fn kept(item: &Value) -> usize {
    let headers = item["headers"].as_object().expect("headers");
    headers
        .iter()
        .map(|(n, v)| n.len() + v.as_str().map_or(0, str::len))
        .sum()
}

#[tokio::test]
async fn large_headers_are_answered_and_kept_bounded_ordinary_ones_whole() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let client = reqwest::Client::new();
    let url = format!("{base}/api/payments/initiate");
    let send = |reference: &str| {
        client
            .post(&url)
            .header("content-type", "application/json")
            .header("authorization", "Bearer sk_test_canary")
            .body(initiate(reference, "TOPUP").to_string())
    };

    // One value of 60 KiB, and a cookie past 1 KiB whose session (the
    // console's) comes last: redacted, then cut.
    let big = "b".repeat(60 * 1024);
    let cookie = format!(
        "a={}; payments_mock_session=session_canary",
        "c".repeat(2000)
    );
    let answer = send("HDR-1")
        .header("x-big", &big)
        .header("cookie", &cookie)
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 200, "answered as usual");
    // Ninety headers of 650 bytes: 60 KiB in all, none long.
    let mut many = send("HDR-2");
    for n in 0..90 {
        many = many.header(format!("x-many-{n:02}"), "m".repeat(640));
    }
    let answer = many.send().await.expect("an answer");
    assert_eq!(answer.status(), 200, "answered as usual");
    let answer = send("HDR-3")
        .header("x-plain", "p".repeat(CUT))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 200);

    let (status, page) = call(
        &client,
        reqwest::Method::GET,
        format!("{base}/_mock/requests"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let text = page.to_string();
    assert!(!text.contains("canary"), "no secret shown: {text:.300}");
    let items = page["data"]["items"].as_array().expect("items");
    assert_eq!(items.len(), 3);

    let one = &items[0];
    let headers = &one["headers"];
    assert_eq!(headers["authorization"], "[redacted]");
    assert_eq!(headers["x-big"], format!("{}{MARK}", "b".repeat(CUT)));
    let cut_cookie = headers["cookie"].as_str().expect("a cookie");
    assert!(cut_cookie.ends_with(MARK) && cut_cookie.len() == CUT + MARK.len());
    assert!(headers.get("(cut)").is_none(), "said by headersLength");
    let whole = one["headersLength"].as_u64().expect("headersLength");
    assert!(whole > 60 * 1024 && whole < 64 * 1024, "{whole}");
    assert!(kept(one) <= BUDGET, "{}", kept(one));

    let two = &items[1];
    assert_eq!(two["headers"]["authorization"], "[redacted]");
    assert!(kept(two) <= BUDGET, "{}", kept(two));
    let whole = two["headersLength"].as_u64().expect("headersLength");
    assert!(whole > 90 * 650, "{whole}");
    let names = two["headers"].as_object().expect("headers");
    let many: Vec<&String> = names.keys().filter(|n| n.starts_with("x-many-")).collect();
    assert!(!many.is_empty() && many.len() < 90, "{}", many.len());
    assert_eq!(many[0], "x-many-00", "the first kept, in order");
    assert!(
        names
            .values()
            .all(|v| !v.as_str().is_some_and(|v| v.ends_with(MARK)))
    );

    let three = &items[2];
    assert_eq!(three["headers"]["x-plain"], "p".repeat(CUT), "whole");
    assert_eq!(three["headers"]["authorization"], "[redacted]");
    assert!(
        three.get("headersLength").is_none(),
        "absent when whole: {three}"
    );

    // The library's entries say the same, typed.
    let entries = server.requests().await;
    assert_eq!(entries.len(), 3);
    assert_eq!(
        entries[0].headers_length(),
        one["headersLength"].as_u64().map(|n| n as usize)
    );
    assert!(
        entries[0]
            .request_headers()
            .iter()
            .all(|(name, _)| name != payments_mock_server::HEADERS_CUT)
    );
    assert_eq!(
        entries[0].request_headers().len() + 1,
        entries[0].headers.len()
    );
    assert_eq!(entries[2].headers_length(), None);
    assert_eq!(entries[2].request_headers(), &entries[2].headers[..]);
}
