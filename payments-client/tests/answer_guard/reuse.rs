//! A transactionId answered for one reference is never answered for
//! another within one client; the memory behind it is bounded.

use payments_client::error::ReadBack;
use payments_client::{Client, ConfirmRequest, Uuid};

use super::*;

const OTHER_MERCHANT: &str = "b7e2c0d4-91a3-4f55-8e0b-2d6c7a1f9e30";

/// Status data of transaction `id` with reference `reference`.
fn status_of(id: &str, reference: &str) -> String {
    status_data().replace(TX_ID, id).replace(
        r#""referenceNo":"INV-1""#,
        &format!(r#""referenceNo":"{reference}""#),
    )
}

/// Answers status by id `id` with reference `reference`, from now on.
async fn answer_status(server: &MockServer, id: &str, reference: &str) {
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{id}/status")))
        .respond_with(json(200, ok_envelope(&status_of(id, reference))))
        .mount(server)
        .await;
}

fn reused(id: &str, earlier: &str, now: &str) -> Disagreement {
    Disagreement::TransactionIdReused {
        transaction_id: id.into(),
        earlier_reference_no: earlier.to_owned(),
        earlier_merchant_id: None,
        reference_no: now.to_owned(),
        merchant_id: None,
    }
}

#[tokio::test]
async fn a_second_initiate_answered_with_the_first_ones_transaction_id_is_a_mismatch() {
    // Issue 32: ORDER-78 got ORDER-77's transactionId. Each answer echoes
    // its own request, so only the memory can tell.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json(200, ok_envelope(&initiate_data())))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    let second = initiate_data().replace(r#""referenceNo":"INV-1""#, r#""referenceNo":"INV-2""#);
    Mock::given(method("POST"))
        .respond_with(json(200, ok_envelope(&second)))
        .mount(&server)
        .await;
    // Reading INV-2 back shows the same transaction again: still refused.
    answer_read_back(
        &server,
        "INV-2",
        json(200, ok_envelope(&status_of(TX_ID, "INV-2"))),
    )
    .await;
    let client = client(&server);
    client.initiate(initiate_request()).await.unwrap();
    let err = client
        .initiate(initiate_request_with("INV-2", 15000, None))
        .await
        .unwrap_err();
    let m = mismatch(&err);
    assert_eq!(
        m.disagreements,
        [Disagreement::TransactionIdReused {
            transaction_id: TX_ID.into(),
            earlier_reference_no: "INV-1".to_owned(),
            earlier_merchant_id: Some(merchant()),
            reference_no: "INV-2".to_owned(),
            merchant_id: Some(merchant()),
        }]
    );
    let Some(ReadBack::Failed(read_back)) = &m.read_back else {
        panic!("the read-back reuses the id too: {err:?}");
    };
    assert!(mismatch(read_back).has("transactionId"), "{read_back}");
    assert!(
        err.to_string().contains(&format!(
            "transactionId {TX_ID} answered for referenceNo INV-2, earlier for INV-1"
        )),
        "{err}"
    );
}

#[tokio::test]
async fn an_id_seen_by_reference_and_then_by_id_for_another_reference_is_a_mismatch() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/INV-1/status"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    answer_status(&server, TX_ID, "INV-9").await;
    let client = client(&server);
    client.status_by_reference("INV-1", None).await.unwrap();
    let err = client.status(TX_ID).await.unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [reused(TX_ID, "INV-1", "INV-9")]
    );
}

#[tokio::test]
async fn a_confirm_answered_with_an_id_seen_for_another_reference_is_a_mismatch() {
    // The confirm echoes what it was sent, but this client saw TX_ID for
    // INV-1: the service should have refused INV-2.
    let server = MockServer::start().await;
    answer_status(&server, TX_ID, "INV-1").await;
    Mock::given(method("POST"))
        .respond_with(json(
            200,
            ok_envelope(
                &confirm_data().replace(r#""referenceNo":"INV-1""#, r#""referenceNo":"INV-2""#),
            ),
        ))
        .mount(&server)
        .await;
    let client = client(&server);
    client.status(TX_ID).await.unwrap();
    let err = client
        .confirm(ConfirmRequest::builder(TX_ID, "INV-2").build().unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [reused(TX_ID, "INV-1", "INV-2")]
    );
}

#[tokio::test]
async fn one_reference_of_two_merchants_answered_with_one_id_is_a_mismatch() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    let other = Uuid::parse_str(OTHER_MERCHANT).unwrap();
    let client = client(&server);
    client
        .status_by_reference("INV-1", Some(merchant()))
        .await
        .unwrap();
    // Without a merchant, the same answer proves nothing new.
    client.status_by_reference("INV-1", None).await.unwrap();
    let err = client
        .status_by_reference("INV-1", Some(other))
        .await
        .unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [Disagreement::TransactionIdReused {
            transaction_id: TX_ID.into(),
            earlier_reference_no: "INV-1".to_owned(),
            earlier_merchant_id: Some(merchant()),
            reference_no: "INV-1".to_owned(),
            merchant_id: Some(other),
        }]
    );
    assert!(
        err.to_string().contains(&format!(
            "answered for merchant {OTHER_MERCHANT} referenceNo INV-1"
        )),
        "{err}"
    );
}

#[tokio::test]
async fn an_answer_that_was_refused_is_not_remembered() {
    // A refused answer never becomes the reference for later checks.
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_of(TX_ID, "INV-LIE"))))
        .mount(&server)
        .await;
    let client = client(&server);
    let err = client.status_by_reference("INV-1", None).await.unwrap_err();
    assert!(mismatch(&err).has("referenceNo"), "{err}");
    server.reset().await;
    answer_status(&server, TX_ID, "INV-1").await;
    client.status(TX_ID).await.unwrap();
}

#[tokio::test]
async fn two_clients_do_not_share_a_memory_but_clones_do() {
    let server = MockServer::start().await;
    answer_status(&server, TX_ID, "INV-1").await;
    let first = client(&server);
    first.status(TX_ID).await.unwrap();
    server.reset().await;
    answer_status(&server, TX_ID, "INV-2").await;
    assert!(
        first.clone().status(TX_ID).await.is_err(),
        "a clone shares the memory"
    );
    client(&server).status(TX_ID).await.unwrap();
}

/// A client that remembers at most `n` transactions.
fn remembering(server: &MockServer, n: usize) -> Client {
    Client::builder(server.uri())
        .retry_policy(fast_retries())
        .answer_memory(n)
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_memory_keeps_the_most_recently_seen_transactions_up_to_its_bound() {
    let server = MockServer::start().await;
    for id in ["A", "B", "C"] {
        answer_status(&server, id, &format!("REF-{id}")).await;
    }
    let client = remembering(&server, 2);
    client.status("A").await.unwrap();
    client.status("B").await.unwrap();
    client.status("A").await.unwrap(); // A is now the most recently seen
    client.status("C").await.unwrap(); // B, the least recently seen, leaves

    server.reset().await;
    for id in ["A", "B", "C"] {
        answer_status(&server, id, "REF-Z").await;
    }
    for kept in ["A", "C"] {
        let err = client.status(kept).await.unwrap_err();
        assert_eq!(
            mismatch(&err).disagreements,
            [reused(kept, &format!("REF-{kept}"), "REF-Z")],
            "{kept} is still remembered"
        );
    }
    client.status("B").await.unwrap(); // forgotten: nothing to contradict
}

#[tokio::test]
async fn a_memory_of_zero_keeps_the_per_call_checks_only() {
    let server = MockServer::start().await;
    answer_status(&server, TX_ID, "INV-1").await;
    let client = remembering(&server, 0);
    client.status(TX_ID).await.unwrap();
    server.reset().await;
    answer_status(&server, TX_ID, "INV-2").await;
    client.status(TX_ID).await.unwrap();
    // The answer must still be about the id asked for.
    server.reset().await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    let err = client.status("asked").await.unwrap_err();
    assert!(mismatch(&err).has("transactionId"), "{err}");
}

#[tokio::test]
async fn the_default_memory_holds_many_transactions() {
    // Not the whole 10,000 (that is the bound test's job, at 2): enough to
    // show the default is not a handful.
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(echoing_status)
        .mount(&server)
        .await;
    let client = client(&server);
    let ids: Vec<String> = (0..300).map(|i| format!("T{i}")).collect();
    for result in client.status_many(&ids, 8).await {
        result.unwrap();
    }
    server.reset().await;
    answer_status(&server, "T0", "REF-ELSEWHERE").await;
    let err = client.status("T0").await.unwrap_err();
    assert!(mismatch(&err).has("transactionId"), "{err}");
}
