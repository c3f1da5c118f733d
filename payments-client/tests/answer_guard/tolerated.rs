//! What the contract lets a service choose never trips the guard: `150.0`
//! for `150.00`, amounts as numeric strings, offset timestamps,
//! `currencyCode` left out of an initiate answer. And the opt-out.

use chrono::{TimeZone as _, Utc};
use payments_client::{Client, ConfirmRequest};
use rust_decimal::Decimal;

use super::*;

/// An initiate answer in every tolerated spelling at once: the amount as a
/// numeric string, no currencyCode (MYR), createdAt with an offset.
fn initiate_data_spelled_differently() -> String {
    format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV-1","status":"INITIATED","amount":"15000","productCode":"TOPUP","createdAt":"2026-11-22T16:15:30.123+08:00"}}"#
    )
}

/// Fails the test if anything reads a reference back.
async fn no_read_back(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/INV-1/status"))
        .respond_with(not_found())
        .expect(0)
        .named("read-back that must not happen")
        .mount(server)
        .await;
}

#[tokio::test]
async fn an_initiate_answer_in_tolerated_spellings_is_accepted_as_is() {
    for currency in [None, Some(Currency::MYR)] {
        let server = MockServer::start().await;
        answer_initiate(&server, &initiate_data_spelled_differently()).await;
        no_read_back(&server).await;
        let reply = client(&server)
            .initiate(initiate_request_with("INV-1", 15000, currency.clone()))
            .await
            .unwrap();
        assert!(!reply.is_reconciled(), "{currency:?}");
        let d = reply.data();
        assert_eq!(d.amount.get(), 15000);
        assert_eq!(d.currency_code, Currency::MYR);
        assert_eq!(
            d.created_at,
            Utc.with_ymd_and_hms(2026, 11, 22, 8, 15, 30).unwrap()
                + chrono::Duration::milliseconds(123)
        );
    }
}

#[tokio::test]
async fn an_initiate_amount_written_with_fraction_zeros_is_the_same_amount() {
    let server = MockServer::start().await;
    answer_initiate(
        &server,
        &initiate_data().replace(r#""amount":15000"#, r#""amount":15000.00"#),
    )
    .await;
    no_read_back(&server).await;
    let reply = client(&server).initiate(initiate_request()).await.unwrap();
    assert_eq!(reply.data().amount.get(), 15000);
}

#[tokio::test]
async fn a_confirm_amount_in_any_exact_spelling_of_the_initiated_amount_is_accepted() {
    for amount in [
        "150.0",
        "150",
        "150.000",
        r#""150.00""#,
        r#""150.0""#,
        "1.5e2",
    ] {
        let server = MockServer::start().await;
        answer_initiate(&server, &initiate_data()).await;
        let data = confirm_data()
            .replace(r#""amount":150.00"#, &format!(r#""amount":{amount}"#))
            .replace("2026-11-22T08:16:00.000Z", "2026-11-22T09:16:00+01:00");
        Mock::given(method("POST"))
            .and(path("/api/payments/confirm"))
            .respond_with(json(200, ok_envelope(&data)))
            .mount(&server)
            .await;
        let client = client(&server);
        client.initiate(initiate_request()).await.unwrap();
        let reply = client
            .confirm(ConfirmRequest::builder(TX_ID, "INV-1").build().unwrap())
            .await
            .unwrap_or_else(|e| panic!("{amount}: {e}"));
        assert_eq!(reply.data().amount, Decimal::new(15000, 2), "{amount}");
    }
}

#[tokio::test]
async fn status_answers_in_tolerated_spellings_are_accepted() {
    let server = MockServer::start().await;
    let data = status_data_with("SUCCESSFUL", r#""150.0""#, "TOPUP")
        .replace(
            "2026-11-22T08:15:30.123Z",
            "2026-11-22T08:15:30.123456789-05:00",
        )
        .replace(r#","lastModifiedAt":null"#, "");
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&data)))
        .mount(&server)
        .await;
    let client = client(&server);
    client.status(TX_ID).await.unwrap();
    client
        .status_by_reference("INV-1", Some(merchant()))
        .await
        .unwrap();
    client.status_by_reference("INV-1", None).await.unwrap();
}

#[tokio::test]
async fn a_numeric_transaction_id_is_the_id_asked_for_in_its_text() {
    let server = MockServer::start().await;
    let data = status_data().replace(&format!(r#""{TX_ID}""#), "90071992547409911");
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&data)))
        .mount(&server)
        .await;
    let reply = client(&server).status("90071992547409911").await.unwrap();
    assert_eq!(reply.data().transaction_id, "90071992547409911");
}

#[tokio::test]
async fn with_the_check_off_a_lying_answer_is_handed_over_as_it_came() {
    let server = MockServer::start().await;
    no_read_back(&server).await;
    let lie = initiate_data()
        .replace(
            r#""referenceNo":"INV-1""#,
            r#""referenceNo":"INV-2026-0001""#,
        )
        .replace(r#""amount":15000"#, r#""amount":2500"#);
    Mock::given(method("POST"))
        .respond_with(json(200, ok_envelope(&lie)))
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json(
            200,
            ok_envelope(&status_data().replace(TX_ID, "else")),
        ))
        .mount(&server)
        .await;
    let trusting = Client::builder(server.uri())
        .check_answers(false)
        .build()
        .unwrap();
    let reply = trusting.initiate(initiate_request()).await.unwrap();
    assert_eq!(reply.data().reference_no, "INV-2026-0001");
    assert!(!reply.is_reconciled());
    // Nor is anything remembered: the same id for another reference passes.
    trusting
        .initiate(initiate_request_with("INV-2", 15000, None))
        .await
        .unwrap();
    trusting.status(TX_ID).await.unwrap();
}
