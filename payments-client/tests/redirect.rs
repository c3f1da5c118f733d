//! Redirect-based payments against wiremock stubs (CONTRACT section 13):
//! the payment URL of a confirm or a status read in every shape, return
//! addresses read from URLs and queries, and the verify call.

mod common;

use common::{TX_ID, client, err_envelope, json, ok_envelope};
use payments_client::{ConfirmRequest, Error, ErrorCode, ReturnAddress, TransactionStatus};
use proptest::prelude::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

const PAGE: &str = "http://127.0.0.1:8080/pay/aZ09aZ09aZ09aZ09aZ09aZ09aZ09aZ09";

fn confirm_data(extra: &str) -> String {
    format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV/17","status":"CONFIRMED","amount":49.90,"providerReference":"PRV-1","confirmedAt":"2026-11-22T08:16:00.000Z","errorMessage":null,"extraProperties":{extra}}}"#
    )
}

fn status_data(reference: &str, status: &str, message: &str) -> String {
    format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"{reference}","status":"{status}","amount":49.90,"productCode":"ONLINEBANKING","createdAt":"2026-11-22T08:15:30.123Z","lastModifiedAt":"2026-11-22T08:16:00.000Z","providerReference":"PRV-1","message":{message},"extraProperties":"{{\"paymentUrl\":\"{PAGE}\"}}"}}"#
    )
}

async fn confirmed_with(extra: &str) -> Option<url::Url> {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(200, ok_envelope(&confirm_data(extra))))
        .mount(&server)
        .await;
    let request = ConfirmRequest::builder(TX_ID, "INV/17")
        .build()
        .expect("valid");
    let reply = client(&server).confirm(request).await.expect("confirmed");
    reply.data().payment_url()
}

#[tokio::test]
async fn a_confirm_hands_over_its_payment_page_as_a_string_or_an_object() {
    let as_string = format!(r#""{{\"paymentUrl\":\"{PAGE}\"}}""#);
    assert_eq!(
        confirmed_with(&as_string)
            .await
            .map(String::from)
            .as_deref(),
        Some(PAGE)
    );
    let as_object = format!(r#"{{"paymentUrl":"{PAGE}","other":1}}"#);
    assert_eq!(
        confirmed_with(&as_object)
            .await
            .map(String::from)
            .as_deref(),
        Some(PAGE)
    );
}

#[tokio::test]
async fn no_or_a_malformed_payment_url_is_none_never_a_panic() {
    for extra in [
        "null",
        r#""{\"pins\":[\"1234\"]}""#,
        r#""not json""#,
        r#"{"paymentUrl":null}"#,
        r#"{"paymentUrl":42}"#,
        r#"{"paymentUrl":"javascript:alert(1)"}"#,
        r#"{"paymentUrl":"/pay/relative"}"#,
        r#"{"paymentUrl":"http://"}"#,
    ] {
        assert_eq!(confirmed_with(extra).await, None, "{extra}");
    }
}

#[tokio::test]
async fn a_confirm_without_extra_properties_has_no_payment_page() {
    let server = MockServer::start().await;
    let data = format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV/17","status":"SUCCESSFUL","amount":49.90,"providerReference":"PRV-1","confirmedAt":"2026-11-22T08:16:00.000Z","errorMessage":null}}"#
    );
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(200, ok_envelope(&data)))
        .mount(&server)
        .await;
    let request = ConfirmRequest::builder(TX_ID, "INV/17")
        .build()
        .expect("valid");
    let reply = client(&server).confirm(request).await.expect("confirmed");
    assert_eq!(reply.data().payment_url(), None);
}

#[tokio::test]
async fn a_status_read_while_the_payer_decides_is_confirmed_with_its_payment_page() {
    let body = ok_envelope(&status_data(
        "INV/17",
        "CONFIRMED",
        r#""awaiting the payer""#,
    ));
    let server = status_server(body).await;
    let reply = client(&server).status(TX_ID).await.expect("read");
    let data = reply.data();
    assert_eq!(data.status, TransactionStatus::Confirmed);
    assert!(!data.status.is_final(), "the payer has not decided yet");
    assert_eq!(data.message.as_deref(), Some("awaiting the payer"));
    assert_eq!(data.payment_url().map(String::from).as_deref(), Some(PAGE));
}

#[test]
fn a_return_address_names_the_transaction_and_what_it_claims() {
    let address: ReturnAddress = format!(
        "https://shop.example/back?order=17&transactionId={TX_ID}&referenceNo=INV%2F17+a&status=FAILED#top"
    )
    .parse()
    .expect("valid");
    assert_eq!(address.transaction_id().as_str(), TX_ID);
    assert_eq!(address.reference_no(), "INV/17 a");
    assert_eq!(address.claimed_status(), &TransactionStatus::Failed);
    let same = ReturnAddress::from_query(&format!(
        "?transactionId={TX_ID}&referenceNo=INV%2F17%20a&status=FAILED"
    ))
    .expect("valid");
    assert_eq!(same, address);
    let unknown = ReturnAddress::from_query(&format!(
        "transactionId={TX_ID}&referenceNo=R&status=REFUNDED"
    ))
    .expect("an unknown status is kept");
    assert_eq!(
        unknown.claimed_status(),
        &TransactionStatus::Other("REFUNDED".to_owned())
    );
}

fn problems(err: &Error) -> Vec<String> {
    match err {
        Error::InvalidInput(v) => v.errors().iter().map(|e| e.message.clone()).collect(),
        other => panic!("not a local problem: {other:?}"),
    }
}

#[test]
fn a_bad_return_address_names_every_problem() {
    let err = ReturnAddress::from_query("order=17").expect_err("nothing there");
    assert_eq!(
        problems(&err),
        [
            "transactionId is missing from the return address",
            "referenceNo is missing from the return address",
            "status is missing from the return address",
        ]
    );
    let err =
        ReturnAddress::from_query("transactionId=&referenceNo=a&status=%20").expect_err("bad");
    assert_eq!(
        problems(&err),
        [
            "transactionId is empty in the return address",
            "status is empty in the return address",
        ]
    );
    // An empty appended value is empty, whatever the merchant's own said before it.
    let err = ReturnAddress::from_query(&format!(
        "status=SUCCESSFUL&referenceNo=mine&transactionId={TX_ID}&referenceNo=R&status="
    ))
    .expect_err("empty status");
    assert_eq!(problems(&err), ["status is empty in the return address"]);
    let err = ReturnAddress::parse("shop.example/back?transactionId=x").expect_err("relative");
    assert!(problems(&err)[0].contains("not an absolute URL"), "{err}");
    let huge = format!(
        "https://shop.example/back?transactionId={TX_ID}&referenceNo=R&status=FAILED&pad={}",
        "x".repeat(33_000)
    );
    let err = ReturnAddress::parse(&huge).expect_err("too long");
    assert!(problems(&err)[0].contains("more than the 32768"), "{err}");
    assert!(ReturnAddress::parse("").is_err());
    assert!(ReturnAddress::parse("https://shop.example/back?%ZZ=%FF").is_err());
}

#[test]
fn encoded_values_are_decoded_once_as_a_form_would() {
    let read = |query: &str| {
        ReturnAddress::from_query(&format!("transactionId={TX_ID}&{query}&status=SUCCESSFUL"))
            .expect("valid")
            .reference_no()
            .to_owned()
    };
    assert_eq!(read("referenceNo=INV%2F2026%2F17"), "INV/2026/17");
    assert_eq!(read("referenceNo=INV/2026/17"), "INV/2026/17");
    assert_eq!(read("referenceNo=ORDER+17"), "ORDER 17", "+ is a space");
    assert_eq!(read("referenceNo=A%2BB"), "A+B", "an encoded + is a plus");
    assert_eq!(read("referenceNo=100%25"), "100%");
    assert_eq!(read("referenceNo=%2541"), "%41", "decoded once, not twice");
    assert_eq!(read("referenceNo=a%26status%3DFAILED"), "a&status=FAILED");
    assert_eq!(read("referenceNo=%E6%B3%A8%E6%96%87-17"), "注文-17");
    assert_eq!(read("referenceNo=caf%C3%A9%20%F0%9F%9B%92"), "café 🛒");
    // A browser's address bar may show the unicode itself.
    let typed: ReturnAddress = format!(
        "https://shop.example/戻る?transactionId={TX_ID}&referenceNo=注文/17&status=FAILED"
    )
    .parse()
    .expect("valid");
    assert_eq!(typed.reference_no(), "注文/17");
}

#[test]
fn the_fragment_and_the_merchants_own_parameters_are_left_alone() {
    let address: ReturnAddress = format!(
        "https://shop.example/back?order=17&lang=en&transactionId={TX_ID}&referenceNo=INV-1&status=SUCCESSFUL#status=FAILED"
    )
    .parse()
    .expect("valid");
    assert_eq!(address.claimed_status(), &TransactionStatus::Successful);
    assert_eq!(address.reference_no(), "INV-1");
}

/// A returnUrl that already has the three names in its own query, as the
/// page appends the real ones after it (CONTRACT section 13).
fn with_the_merchants_own_parameters(fragment: &str) -> String {
    format!(
        "https://shop.example/back?transactionId=cart-5&status=new&referenceNo=mine\
         &transactionId={TX_ID}&referenceNo=INV%2F17&status=SUCCESSFUL{fragment}"
    )
}

#[test]
fn the_appended_parameters_win_over_the_merchants_own() {
    let address = ReturnAddress::parse(&with_the_merchants_own_parameters("")).expect("valid");
    assert_eq!(address.transaction_id().as_str(), TX_ID);
    assert_eq!(address.reference_no(), "INV/17");
    assert_eq!(address.claimed_status(), &TransactionStatus::Successful);
    let query = url::Url::parse(&with_the_merchants_own_parameters(""))
        .expect("a URL")
        .query()
        .map(str::to_owned)
        .expect("a query");
    assert_eq!(
        ReturnAddress::from_query(&query).expect("valid"),
        address,
        "the query alone reads the same"
    );
    // Only the three names are overridden; other repeated names are the merchant's business.
    let lone = ReturnAddress::from_query(&format!(
        "order=1&order=2&status=new&transactionId={TX_ID}&referenceNo=R&status=FAILED"
    ))
    .expect("valid");
    assert_eq!(lone.claimed_status(), &TransactionStatus::Failed);
}

#[test]
fn a_fragment_after_the_query_is_ignored() {
    let plain = ReturnAddress::parse(&with_the_merchants_own_parameters("")).expect("valid");
    for fragment in [
        "#top",
        "#status=FAILED&referenceNo=frag&transactionId=frag",
        "#",
    ] {
        let address =
            ReturnAddress::parse(&with_the_merchants_own_parameters(fragment)).expect("valid");
        assert_eq!(address, plain, "{fragment}");
    }
}

#[tokio::test]
async fn verify_uses_the_appended_transaction_id_over_the_merchants_own() {
    let server = MockServer::start().await;
    // Only the appended id is answered; a read of `cart-5` would be a 404.
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX_ID}/status")))
        .respond_with(json(
            200,
            ok_envelope(&status_data("INV/17", "SUCCESSFUL", "null")),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let address =
        ReturnAddress::parse(&with_the_merchants_own_parameters("#status=FAILED")).expect("valid");
    let verified = client(&server)
        .verify_return(&address)
        .await
        .expect("verified by the appended parameters");
    assert_eq!(verified.status(), &TransactionStatus::Successful);
    assert_eq!(verified.claimed_status(), &TransactionStatus::Successful);
    assert!(verified.status_matches());
    assert_eq!(verified.reply().data().transaction_id.as_str(), TX_ID);
}

#[test]
fn hostile_return_addresses_are_read_literally_or_refused() {
    // Broken escapes stay as written; bytes that are not UTF-8 become U+FFFD.
    let address = ReturnAddress::from_query(&format!(
        "transactionId={TX_ID}&referenceNo=%ZZ%%FF%00%1B[2J&status=SUCCESSFUL"
    ))
    .expect("read as data");
    assert_eq!(address.reference_no(), "%ZZ%\u{fffd}\0\u{1b}[2J");
    let odd_status = ReturnAddress::from_query(&format!(
        "transactionId={TX_ID}&referenceNo=R&status=%3Cscript%3E"
    ))
    .expect("an unknown status is kept, not trusted");
    assert_eq!(
        odd_status.claimed_status(),
        &TransactionStatus::Other("<script>".to_owned())
    );
    for refused in [
        "&&&&==&=",
        "transactionId&referenceNo&status",
        "transactionId=%20%09&referenceNo=+&status=+",
        "javascript:alert(1)",
    ] {
        assert!(ReturnAddress::from_query(refused).is_err(), "{refused}");
        assert!(ReturnAddress::parse(refused).is_err(), "{refused}");
    }
    let many = format!(
        "transactionId={TX_ID}&referenceNo=R&status=FAILED&{}",
        "x=1&".repeat(8300)
    );
    let err = ReturnAddress::from_query(&many).expect_err("over 32 KiB");
    assert!(problems(&err)[0].contains("more than the 32768"), "{err}");
}

#[test]
fn an_address_of_exactly_the_limit_is_read() {
    let head =
        format!("https://shop.example/back?transactionId={TX_ID}&referenceNo=R&status=FAILED&pad=");
    let at_limit = format!("{head}{}", "x".repeat(ReturnAddress::MAX_LEN - head.len()));
    assert!(ReturnAddress::parse(&at_limit).is_ok());
    let over = format!("{at_limit}x");
    assert!(ReturnAddress::parse(&over).is_err());
}

#[test]
fn a_bad_address_reads_as_one_sentence() {
    let err = ReturnAddress::from_query("transactionId=&status=SUCCESSFUL&status=FAILED")
        .expect_err("bad");
    insta::assert_snapshot!(err.to_string(), @"invalid request: transactionId is empty in the return address; referenceNo is missing from the return address");
    let err = ReturnAddress::parse("/back?transactionId=x").expect_err("relative");
    insta::assert_snapshot!(err.to_string(), @"invalid request: the return address is not an absolute URL (relative URL without a base); pass the whole address the browser arrived at");
}

/// A value the mock could append: not blank (CONTRACT section 1 allows no
/// leading or trailing whitespace in a referenceNo; a blank one is refused).
const VALUE: &str = "[^\\x00-\\x1f\\s]([^\\x00-\\x1f]{0,62}[^\\x00-\\x1f\\s])?";

proptest! {
    #[test]
    fn any_input_is_read_or_refused_never_a_panic(input in ".{0,300}") {
        let _ = ReturnAddress::parse(&input);
        let _ = ReturnAddress::from_query(&input);
    }

    #[test]
    fn any_bytes_are_read_or_refused_never_a_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let input = String::from_utf8_lossy(&bytes);
        let _ = ReturnAddress::parse(&input);
        let _ = ReturnAddress::from_query(&input);
    }

    #[test]
    fn any_address_the_mock_could_build_is_read_back(
        id in VALUE,
        reference in VALUE,
        status in VALUE,
        // The returnUrl's own query may use the three names too.
        query in "((transactionId|referenceNo|status|[a-z]{1,8})=[a-z0-9]{0,8}&){0,3}",
        fragment in proptest::option::of("[a-zA-Z0-9=&]{0,12}"),
    ) {
        let mut url = url::Url::parse(&format!("https://shop.example/back?{query}"))
            .expect("a URL");
        url.query_pairs_mut()
            .append_pair("transactionId", &id)
            .append_pair("referenceNo", &reference)
            .append_pair("status", &status);
        url.set_fragment(fragment.as_deref());
        let address = ReturnAddress::parse(url.as_str()).expect("valid");
        prop_assert_eq!(address.transaction_id().as_str(), id.as_str());
        prop_assert_eq!(address.reference_no(), reference.as_str());
        prop_assert_eq!(address.claimed_status().as_str(), status.as_str());
        let query_only = ReturnAddress::from_query(url.query().unwrap_or_default())
            .expect("valid");
        prop_assert_eq!(query_only, address);
    }
}

async fn status_server(body: String) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX_ID}/status")))
        .respond_with(json(200, body))
        .mount(&server)
        .await;
    server
}

fn address(reference: &str, status: &str) -> ReturnAddress {
    ReturnAddress::from_query(&format!(
        "transactionId={TX_ID}&referenceNo={reference}&status={status}"
    ))
    .expect("valid")
}

#[tokio::test]
async fn verify_returns_the_services_status() {
    let server = status_server(ok_envelope(&status_data("INV/17", "SUCCESSFUL", "null"))).await;
    let verified = client(&server)
        .verify_return(&address("INV%2F17", "SUCCESSFUL"))
        .await
        .expect("verified");
    assert_eq!(verified.status(), &TransactionStatus::Successful);
    assert!(verified.status_matches());
    assert_eq!(
        verified
            .reply()
            .data()
            .payment_url()
            .map(String::from)
            .as_deref(),
        Some(PAGE)
    );
}

#[tokio::test]
async fn a_forged_status_is_answered_with_the_services() {
    let body = ok_envelope(&status_data("INV/17", "FAILED", r#""declined by bank""#));
    let server = status_server(body).await;
    let verified = client(&server)
        .verify_return(&address("INV%2F17", "SUCCESSFUL"))
        .await
        .expect("verified");
    assert_eq!(verified.status(), &TransactionStatus::Failed);
    assert_eq!(verified.claimed_status(), &TransactionStatus::Successful);
    assert!(!verified.status_matches());
    assert_eq!(
        verified.reply().data().message.as_deref(),
        Some("declined by bank")
    );
}

#[tokio::test]
async fn another_reference_is_a_return_mismatch() {
    let server = status_server(ok_envelope(&status_data("INV/17", "SUCCESSFUL", "null"))).await;
    let err = client(&server)
        .verify_return(&address("INV-99", "SUCCESSFUL"))
        .await
        .expect_err("forged");
    match &err {
        Error::ReturnMismatch { claimed, found } => {
            assert_eq!(claimed, "INV-99");
            assert_eq!(found.data().reference_no, "INV/17");
            assert_eq!(err.request_id(), Some(found.request_id()));
            assert_eq!(err.raw_envelope(), Some(found.raw_envelope()));
        }
        other => panic!("{other:?}"),
    }
    insta::assert_snapshot!(err.to_string(), @r#"the return address names referenceNo "INV-99", but transaction 0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01 is "INV/17" at the service"#);
}

#[tokio::test]
async fn an_unknown_transaction_is_not_found() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(
            404,
            err_envelope("TRANSACTION_NOT_FOUND", "no transaction"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let err = client(&server)
        .verify_return(&address("INV-1", "SUCCESSFUL"))
        .await
        .expect_err("unknown");
    assert_eq!(err.error_code(), Some(&ErrorCode::TransactionNotFound));
}

#[tokio::test]
async fn the_verify_read_is_retried_like_any_status_read() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(500, err_envelope("INTERNAL_ERROR", "boom")))
        .up_to_n_times(1)
        .expect(1)
        .named("a 500 first")
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json(
            200,
            ok_envelope(&status_data("INV-1", "SUCCESSFUL", "null")),
        ))
        .expect(1)
        .named("then the status")
        .mount(&server)
        .await;
    let verified = client(&server)
        .verify_return(&address("INV-1", "SUCCESSFUL"))
        .await
        .expect("verified after a retry");
    assert_eq!(verified.reply().attempts(), 2);
}
