//! Reconciled results carry the same facts as direct ones, for every
//! product, currency and merchant scope.

use payments_client::{ConfirmRequest, Currency, ErrorCode, TransactionStatus};
use payments_mock_server::{Fault, MockServer};

use crate::support::*;

#[tokio::test]
async fn a_reconciled_confirm_keeps_each_products_outcome() {
    let server = MockServer::start().await;
    let client = client(&server);
    // (product, quantity, code, status, error message, pins)
    let cases = [
        ("BILLPAY", None, None, TransactionStatus::Confirmed, None, 0),
        (
            "GIFTCARD",
            Some(2),
            None,
            TransactionStatus::Successful,
            None,
            2,
        ),
        (
            "EWALLET",
            None,
            Some("123456"),
            TransactionStatus::Successful,
            None,
            0,
        ),
        (
            "EWALLET",
            None,
            Some("999999"),
            TransactionStatus::Failed,
            Some("invalid confirmation code"),
            0,
        ),
        (
            "DECLINED",
            None,
            None,
            TransactionStatus::Failed,
            Some("declined by provider"),
            0,
        ),
    ];
    for (i, (product, quantity, code, status, error_message, pins)) in cases.into_iter().enumerate()
    {
        let reference = format!("REC-{i}-{product}");
        let mut req = request(&reference, 1234, product).payer_id("P");
        if let Some(q) = quantity {
            req = req.quantity(q);
        }
        let tx = client
            .initiate(req.build().unwrap())
            .await
            .unwrap()
            .into_data();
        server.inject_faults([Fault::CommitThenError]);
        let mut confirm = ConfirmRequest::builder(&tx.transaction_id, reference.as_str());
        if let Some(code) = code {
            confirm = confirm.confirmation_code(code);
        }
        let reply = client.confirm(confirm.build().unwrap()).await.unwrap();
        assert!(reply.is_reconciled(), "{reference}");
        let c = reply.data();
        assert_eq!(c.status, status, "{reference}");
        assert_eq!(c.error_message.as_deref(), error_message, "{reference}");
        assert_eq!(c.amount.to_string(), "12.34", "{reference}");
        let found_pins = c
            .extra_properties
            .as_deref()
            .map(|e| {
                serde_json::from_str::<serde_json::Value>(e).unwrap()["pins"]
                    .as_array()
                    .map_or(0, Vec::len)
            })
            .unwrap_or(0);
        assert_eq!(found_pins, pins, "{reference}: {:?}", c.extra_properties);
        let stored = server
            .transactions()
            .await
            .into_iter()
            .find(|t| t.reference_no == reference)
            .unwrap();
        assert_eq!(
            c.provider_reference, stored.provider_reference,
            "{reference}"
        );
    }
}

#[tokio::test]
async fn a_reconciled_initiate_is_exact_in_every_currency_scale() {
    let server = MockServer::start().await;
    let client = client(&server);
    for (reference, currency, minor) in [
        ("REC-MYR-MAX", Currency::MYR, 9_007_199_254_740_991),
        ("REC-KWD-MAX", Currency::KWD, 9_007_199_254_740_991),
        ("REC-JPY-MAX", Currency::JPY, 9_007_199_254_740_991),
        ("REC-KWD-1", Currency::KWD, 1),
    ] {
        server.inject_faults([Fault::CommitThenReset]);
        let req = request(reference, minor, "TOPUP")
            .currency(currency.clone())
            .payer_id("P")
            .build()
            .unwrap();
        let reply = client.initiate(req).await.unwrap();
        assert!(reply.is_reconciled(), "{reference}");
        assert_eq!(reply.data().amount.get(), minor, "{reference}");
        assert_eq!(reply.data().currency_code, currency, "{reference}");
    }
    assert_eq!(server.transactions().await.len(), 4);
}

#[tokio::test]
async fn a_reconciled_initiate_finds_its_own_merchants_transaction() {
    let server = MockServer::start().await;
    let client = client(&server);
    let theirs = request_for(other_merchant(), "REC-SHARED", 15000, "TOPUP")
        .payer_id("P")
        .build()
        .unwrap();
    let theirs = client.initiate(theirs).await.unwrap().into_data();

    server.inject_faults([Fault::CommitThenError]);
    let mine = client.initiate(topup("REC-SHARED")).await.unwrap();
    assert!(mine.is_reconciled());
    assert_ne!(mine.data().transaction_id, theirs.transaction_id);
    let stored = server
        .transactions()
        .await
        .into_iter()
        .find(|t| t.merchant_id == merchant())
        .unwrap();
    assert_eq!(mine.data().transaction_id, stored.transaction_id.as_str());
}

#[tokio::test]
async fn every_attempt_and_the_read_back_share_one_request_id() {
    let server = MockServer::start().await;
    let client = client(&server);
    server.inject_faults([Fault::InternalError, Fault::CommitThenError]);
    let reply = client.initiate(topup("REC-RID")).await.unwrap();
    assert!(reply.is_reconciled());
    assert_eq!(reply.attempts(), 3);
    let journal = server.requests().await;
    let seen: Vec<(&str, &str)> = journal
        .iter()
        .map(|r| (r.method.as_str(), r.request_id.as_str()))
        .collect();
    assert_eq!(
        journal.len(),
        4,
        "three initiates and one read-back: {seen:?}"
    );
    assert!(
        journal.iter().all(|r| r.request_id == reply.request_id()),
        "{seen:?}"
    );
    assert_eq!(journal[3].method, "GET");
}

#[tokio::test]
async fn concurrent_confirms_of_one_transaction_succeed_once() {
    let server = MockServer::start().await;
    let client = client(&server);
    let tx = client
        .initiate(topup("REC-RACE"))
        .await
        .unwrap()
        .into_data();
    let confirms = (0..8).map(|_| {
        let req = ConfirmRequest::builder(&tx.transaction_id, "REC-RACE")
            .build()
            .unwrap();
        client.confirm(req)
    });
    let results = futures::future::join_all(confirms).await;
    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(ok, 1, "{results:?}");
    for err in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(
            err.error_code(),
            Some(&ErrorCode::TransactionAlreadyConfirmed)
        );
    }
}
