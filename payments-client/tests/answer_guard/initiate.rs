//! Initiate: `referenceNo`, `amount`, `productCode`, `currencyCode` as sent
//! and a non-empty `transactionId`; a disagreeing answer is settled by
//! reading the sent reference back.

use payments_client::error::{Disagreement, ReadBack};
use payments_client::{Currency, Error, ErrorCode, TransactionStatus};

use super::*;

/// Sends the standard request against an initiate answered with `data`
/// and a read-back answered 404; returns the error and the server.
async fn initiate_answered_with(data: &str) -> (Error, MockServer, String) {
    let server = MockServer::start().await;
    answer_initiate(&server, data).await;
    answer_read_back(&server, "INV-1", not_found()).await;
    let err = client(&server)
        .initiate(initiate_request())
        .await
        .expect_err("the answer disagrees");
    (err, server, ok_envelope(data))
}

/// An initiate answered with `initiate_data()` whose `from` is replaced by
/// `to` is a mismatch of `expected` alone, of unknown outcome; returns
/// the error.
async fn assert_a_mismatch_of_only(from: &str, to: &str, expected: Disagreement) -> Error {
    let data = initiate_data().replace(from, to);
    let (err, server, body) = initiate_answered_with(&data).await;
    assert_eq!(mismatch(&err).disagreements, [expected]);
    assert_is_an_unknown_outcome_of(&err, &server, &body).await;
    err
}

#[tokio::test]
async fn an_initiate_answered_with_another_reference_no_is_a_mismatch() {
    let err = assert_a_mismatch_of_only(
        r#""referenceNo":"INV-1""#,
        r#""referenceNo":"INV-2026-0001""#,
        field("referenceNo", "INV-1", "INV-2026-0001"),
    )
    .await;
    let m = mismatch(&err);
    assert!(m.has("referenceNo") && !m.has("amount"));
}

#[tokio::test]
async fn an_initiate_answered_with_another_amount_is_a_mismatch_shown_in_major_units() {
    assert_a_mismatch_of_only(
        r#""amount":15000"#,
        r#""amount":2500"#,
        field("amount", "150.00", "25.00"),
    )
    .await;
}

#[tokio::test]
async fn an_initiate_answered_with_another_product_code_is_a_mismatch() {
    assert_a_mismatch_of_only(
        r#""productCode":"TOPUP""#,
        r#""productCode":"EWALLET""#,
        field("productCode", "TOPUP", "EWALLET"),
    )
    .await;
}

#[tokio::test]
async fn an_initiate_answered_with_another_currency_is_a_mismatch() {
    // The request left the currency out: the service's default, MYR, is
    // what it sent.
    assert_a_mismatch_of_only(
        r#""currencyCode":"MYR""#,
        r#""currencyCode":"USD""#,
        field("currencyCode", "MYR", "USD"),
    )
    .await;
}

#[tokio::test]
async fn an_absent_currency_code_is_myr_so_it_disagrees_with_a_usd_request() {
    let server = MockServer::start().await;
    let data = initiate_data().replace(r#""currencyCode":"MYR","#, "");
    answer_initiate(&server, &data).await;
    answer_read_back(&server, "INV-1", not_found()).await;
    let err = client(&server)
        .initiate(initiate_request_with("INV-1", 15000, Some(Currency::USD)))
        .await
        .unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [field("currencyCode", "USD", "MYR")]
    );
}

#[tokio::test]
async fn an_initiate_answered_with_an_empty_transaction_id_is_a_mismatch() {
    let err = assert_a_mismatch_of_only(TX_ID, "", Disagreement::EmptyTransactionId).await;
    assert!(mismatch(&err).has("transactionId"));
}

#[tokio::test]
async fn every_disagreeing_field_of_an_initiate_is_named_in_one_error() {
    let data = format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV-2026-0001","status":"INITIATED","amount":15000,"currencyCode":"JPY","productCode":"EWALLET","createdAt":"2026-11-22T08:15:30.123Z"}}"#
    );
    let (err, _server, _body) = initiate_answered_with(&data).await;
    let m = mismatch(&err);
    assert_eq!(
        m.disagreements,
        [
            field("referenceNo", "INV-1", "INV-2026-0001"),
            field("productCode", "TOPUP", "EWALLET"),
            field("currencyCode", "MYR", "JPY"),
        ]
    );
    assert_eq!(
        err.to_string(),
        "initiate of INV-1: the service answered for another request: \
         referenceNo sent INV-1, answered INV-2026-0001; productCode sent TOPUP, answered EWALLET; \
         currencyCode sent MYR, answered JPY; reading INV-1 back failed: service answered 404 \
         TRANSACTION_NOT_FOUND: no transaction with that referenceNo"
    );
}

#[tokio::test]
async fn the_issues_example_names_reference_amount_and_product() {
    // Issue 32: a generated mock answered every initiate with the
    // document's example transaction.
    let server = MockServer::start().await;
    let data = format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV-2026-0001","status":"PENDING","amount":15000,"currencyCode":"MYR","productCode":"TOPUP","createdAt":"2026-11-22T08:15:30Z","extraProperties":null}}"#
    );
    answer_initiate(&server, &data).await;
    answer_read_back(&server, "ORDER-77", not_found()).await;
    let req = InitiateRequest::builder(
        merchant(),
        "ORDER-77",
        MinorAmount::new(2500).unwrap(),
        "EWALLET",
        "S1",
    )
    .build()
    .unwrap();
    let err = client(&server).initiate(req).await.unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [
            field("referenceNo", "ORDER-77", "INV-2026-0001"),
            field("amount", "25.00", "150.00"),
            field("productCode", "EWALLET", "TOPUP"),
        ]
    );
}

#[tokio::test]
async fn a_mismatch_whose_read_back_matches_the_request_is_a_reconciled_success() {
    let server = MockServer::start().await;
    let lie = initiate_data()
        .replace(TX_ID, "0192f7c4-0000-7000-8000-000000000000")
        .replace(
            r#""referenceNo":"INV-1""#,
            r#""referenceNo":"INV-2026-0001""#,
        );
    answer_initiate(&server, &lie).await;
    // The sent reference holds the request's transaction: 150.00, TOPUP.
    let truth = status_data_with("INITIATED", "150.0", "TOPUP");
    answer_read_back(&server, "INV-1", json(200, ok_envelope(&truth))).await;
    let reply = client(&server).initiate(initiate_request()).await.unwrap();
    assert_eq!(
        reply.reconciled(),
        Some(payments_client::Reconciled::AnswerAboutAnotherRequest)
    );
    assert_eq!(reply.attempts(), 1);
    let d = reply.data();
    assert_eq!(d.transaction_id, TX_ID);
    assert_eq!(d.reference_no, "INV-1");
    assert_eq!(d.amount.get(), 15000);
    assert_eq!(d.currency_code, Currency::MYR);
    assert_eq!(d.status, TransactionStatus::Initiated);
    // The read-back is the reply's envelope, under the call's request id.
    assert_eq!(reply.raw_envelope(), ok_envelope(&truth));
    let ids = request_ids(&server).await;
    assert_eq!(ids.len(), 2, "one initiate, one read-back, no retry");
    assert!(ids.iter().all(|id| id == reply.request_id()));
}

/// An answer in another currency (here none, which is MYR, for a USD
/// request) is never settled by a read-back: a status read has no currency,
/// and 150.00 MYR reads as 150.00 USD. The mismatch stands, saying the read
/// found a transaction it cannot tell apart.
#[tokio::test]
async fn a_mismatch_of_currency_stands_whatever_the_read_back_shows() {
    for answered in [r#""currencyCode":"MYR","#, r#""currencyCode":"EUR","#] {
        let server = MockServer::start().await;
        let data = initiate_data().replace(r#""currencyCode":"MYR","#, answered);
        let data = if answered.contains("MYR") {
            data.replace(answered, "")
        } else {
            data
        };
        answer_initiate(&server, &data).await;
        let same = status_data_with("INITIATED", "150.00", "TOPUP");
        answer_read_back(&server, "INV-1", json(200, ok_envelope(&same))).await;
        let err = client(&server)
            .initiate(initiate_request_with("INV-1", 15000, Some(Currency::USD)))
            .await
            .expect_err("never a success in USD");
        let m = mismatch(&err);
        assert!(m.has("currencyCode"), "{m}");
        assert!(
            matches!(
                &m.read_back,
                Some(ReadBack::Unsettled {
                    field: "currencyCode",
                    ..
                })
            ),
            "{m:?}"
        );
        assert!(
            err.to_string().contains("does not show its currencyCode"),
            "{err}"
        );
        assert_eq!(err.outcome(), payments_client::Outcome::Unknown);
    }
}

#[tokio::test]
async fn a_mismatch_whose_read_back_disagrees_stands_and_says_what_was_found() {
    let server = MockServer::start().await;
    let lie = initiate_data().replace(r#""amount":15000"#, r#""amount":2500"#);
    answer_initiate(&server, &lie).await;
    let other = status_data_with("INITIATED", "99.00", "EWALLET");
    answer_read_back(&server, "INV-1", json(200, ok_envelope(&other))).await;
    let err = client(&server)
        .initiate(initiate_request())
        .await
        .unwrap_err();
    let m = mismatch(&err);
    assert_eq!(m.disagreements, [field("amount", "150.00", "25.00")]);
    match &m.read_back {
        Some(ReadBack::Disagrees {
            found,
            disagreements,
        }) => {
            assert_eq!(found.data().transaction_id, TX_ID);
            assert_eq!(
                disagreements,
                &[
                    field("amount", "150.00", "99.00"),
                    field("productCode", "TOPUP", "EWALLET"),
                ]
            );
        }
        other => panic!("expected a disagreeing read-back, got {other:?}"),
    }
    assert_eq!(err.outcome(), Outcome::Unknown);
    // The error's envelope is the initiate's, not the read-back's.
    assert_eq!(err.raw_envelope(), Some(ok_envelope(&lie).as_str()));
    assert!(
        err.to_string().ends_with(
            "; reading INV-1 back found another transaction: amount sent 150.00, answered 99.00; \
             productCode sent TOPUP, answered EWALLET"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_mismatch_whose_read_back_fails_stands_with_the_read_backs_error() {
    let lie = initiate_data().replace(r#""productCode":"TOPUP""#, r#""productCode":"BILLPAY""#);
    let (err, _server, _body) = initiate_answered_with(&lie).await;
    match &mismatch(&err).read_back {
        Some(ReadBack::Failed(e)) => {
            assert_eq!(e.error_code(), Some(&ErrorCode::TransactionNotFound));
        }
        other => panic!("expected a failed read-back, got {other:?}"),
    }
    assert_eq!(err.outcome(), Outcome::Unknown);
}

#[tokio::test]
async fn a_mismatch_whose_read_back_answers_another_reference_stands() {
    let server = MockServer::start().await;
    let lie = initiate_data().replace(r#""referenceNo":"INV-1""#, r#""referenceNo":"INV-9""#);
    answer_initiate(&server, &lie).await;
    let also_a_lie = status_data().replace(r#""referenceNo":"INV-1""#, r#""referenceNo":"INV-9""#);
    answer_read_back(&server, "INV-1", json(200, ok_envelope(&also_a_lie))).await;
    let err = client(&server)
        .initiate(initiate_request())
        .await
        .unwrap_err();
    let Some(ReadBack::Failed(read_back)) = &mismatch(&err).read_back else {
        panic!("expected a failed read-back: {err:?}");
    };
    assert_eq!(
        mismatch(read_back).disagreements,
        [field("referenceNo", "INV-1", "INV-9")]
    );
}

#[tokio::test]
async fn a_mismatch_whose_read_back_meets_a_server_error_stands_after_the_read_backs_retries() {
    let server = MockServer::start().await;
    let lie = initiate_data().replace(r#""referenceNo":"INV-1""#, r#""referenceNo":"INV-9""#);
    answer_initiate(&server, &lie).await;
    Mock::given(method("GET"))
        .respond_with(json(500, err_envelope("INTERNAL_ERROR", "boom")))
        .expect(3)
        .mount(&server)
        .await;
    let err = client(&server)
        .initiate(initiate_request())
        .await
        .unwrap_err();
    let Some(ReadBack::Failed(read_back)) = &mismatch(&err).read_back else {
        panic!("expected a failed read-back: {err:?}");
    };
    assert_eq!(read_back.http_status(), Some(500));
}

#[tokio::test]
async fn a_retry_that_reconciles_through_a_read_back_answering_another_reference_fails() {
    // CONTRACT 12's read-back is checked too: a retried initiate meeting
    // DUPLICATE_REFERENCE_NO reads INV-1 back and gets INV-9.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json(500, err_envelope("INTERNAL_ERROR", "committed")))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(json(400, err_envelope("DUPLICATE_REFERENCE_NO", "used")))
        .mount(&server)
        .await;
    let lie = status_data().replace(r#""referenceNo":"INV-1""#, r#""referenceNo":"INV-9""#);
    answer_read_back(&server, "INV-1", json(200, ok_envelope(&lie))).await;
    let err = client(&server)
        .initiate(initiate_request())
        .await
        .unwrap_err();
    let Error::Reconciliation {
        source, outcome, ..
    } = &err
    else {
        panic!("expected a failed reconciliation: {err:?}");
    };
    assert_eq!(*outcome, Outcome::Unknown);
    let source = source.as_deref().expect("the read-back's error");
    assert_eq!(
        mismatch(source).disagreements,
        [field("referenceNo", "INV-1", "INV-9")]
    );
}
