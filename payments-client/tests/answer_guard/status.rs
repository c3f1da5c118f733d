//! Status reads: the id or reference in the path, for the plain calls and
//! for `wait_for_final`, `status_many` and `status_stream`.

use std::time::Duration;

use futures::StreamExt as _;
use payments_client::WaitOptions;

use super::*;

const OTHER_ID: &str = "0192f7c4-aaaa-7aaa-baaa-aaaaaaaaaaaa";

#[tokio::test]
async fn a_status_by_id_answered_for_another_transaction_is_a_mismatch() {
    let server = MockServer::start().await;
    let data = status_data().replace(TX_ID, OTHER_ID);
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&data)))
        .expect(1)
        .mount(&server)
        .await;
    let err = client(&server).status(TX_ID).await.unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [field("transactionId", TX_ID, OTHER_ID)]
    );
    assert_is_an_unknown_outcome_of(&err, &server, &ok_envelope(&data)).await;
    assert_eq!(
        err.to_string(),
        format!(
            "status of {TX_ID}: the service answered for another request: transactionId sent \
             {TX_ID}, answered {OTHER_ID}"
        )
    );
}

#[tokio::test]
async fn a_status_by_reference_answered_for_another_reference_is_a_mismatch() {
    let server = MockServer::start().await;
    let data = status_data().replace(r#""referenceNo":"INV-1""#, r#""referenceNo":"INV-10""#);
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&data)))
        .expect(1)
        .mount(&server)
        .await;
    let err = client(&server)
        .status_by_reference("INV-1", Some(merchant()))
        .await
        .unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [field("referenceNo", "INV-1", "INV-10")]
    );
    assert!(
        err.to_string().starts_with("status of reference INV-1: "),
        "{err}"
    );
    assert_is_an_unknown_outcome_of(&err, &server, &ok_envelope(&data)).await;
}

#[tokio::test]
async fn a_reference_that_differs_only_in_case_or_spaces_is_another_reference() {
    for answered in ["inv-1", "INV-1 ", " INV-1"] {
        let server = MockServer::start().await;
        let data = status_data().replace(
            r#""referenceNo":"INV-1""#,
            &format!(r#""referenceNo":"{answered}""#),
        );
        Mock::given(method("GET"))
            .respond_with(json(200, ok_envelope(&data)))
            .mount(&server)
            .await;
        let err = client(&server)
            .status_by_reference("INV-1", None)
            .await
            .unwrap_err();
        assert!(mismatch(&err).has("referenceNo"), "{answered:?}: {err}");
    }
}

#[tokio::test]
async fn wait_for_final_ends_at_the_first_answer_for_another_transaction() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(
            200,
            ok_envelope(&status_data_with("PENDING", "150.00", "TOPUP").replace(TX_ID, OTHER_ID)),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let options = WaitOptions::default()
        .timeout(Duration::from_secs(5))
        .poll_interval(Duration::from_millis(5));
    let err = client(&server)
        .wait_for_final(TX_ID, options)
        .await
        .unwrap_err();
    assert!(mismatch(&err).has("transactionId"), "{err}");
}

#[tokio::test]
async fn status_many_and_status_stream_report_the_one_lying_answer() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/payments/liar/status"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(echoing_status)
        .mount(&server)
        .await;
    let client = client(&server);
    let ids = ["a", "liar", "b"];
    let results = client.status_many(ids, 2).await;
    assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
    let err = results[1].as_ref().unwrap_err();
    assert_eq!(
        mismatch(err).disagreements,
        [field("transactionId", "liar", TX_ID)]
    );

    let mut streamed: Vec<_> = client.status_stream(ids, 2).collect().await;
    streamed.sort_by_key(|(i, _)| *i);
    let verdicts: Vec<bool> = streamed.iter().map(|(_, r)| r.is_ok()).collect();
    assert_eq!(verdicts, [true, false, true]);
}
