//! Redirect-based payments end to end: initiate ONLINEBANKING with a
//! returnUrl, confirm, read the payment page, play the payer on the mock,
//! and verify the return address the payer's browser would bring back.

use std::time::Duration;

use payments_client::{ConfirmRequest, Error, ReturnAddress, TransactionStatus, WaitOptions};
use payments_mock_server::{MockServer, PayerAction};

use crate::support::{client, request};

const RETURN_URL: &str = "https://shop.example/back?order=17#top";

/// Initiates and confirms ONLINEBANKING; the id and the payment page.
async fn confirmed(server: &MockServer, reference: &str) -> (String, url::Url) {
    let client = client(server);
    let initiated = client
        .initiate(
            request(reference, 4990, "ONLINEBANKING")
                .return_url(RETURN_URL)
                .build()
                .expect("valid"),
        )
        .await
        .expect("initiated");
    let id = initiated.data().transaction_id.clone();
    let confirmed = client
        .confirm(
            ConfirmRequest::builder(&id, reference)
                .build()
                .expect("valid"),
        )
        .await
        .expect("confirmed");
    assert_eq!(confirmed.data().status, TransactionStatus::Confirmed);
    let page = confirmed.data().payment_url().expect("a payment page");
    assert_eq!(
        server.payment_url(id.as_str()).await.as_deref(),
        Some(page.as_str())
    );
    (id.into_string(), page)
}

#[tokio::test]
async fn a_paid_return_is_verified_successful() {
    let server = MockServer::start().await;
    let (id, page) = confirmed(&server, "INV/2026/17").await;
    assert!(
        page.as_str()
            .starts_with(&format!("{}/pay/", server.base_url()))
    );
    let status = client(&server).status(&id).await.expect("read");
    assert_eq!(status.data().status, TransactionStatus::Confirmed);
    assert_eq!(status.data().message.as_deref(), Some("awaiting the payer"));
    assert_eq!(status.data().payment_url(), Some(page));

    let paid = server.payer(&id, PayerAction::Pay).await.expect("decided");
    let address: ReturnAddress = paid.redirect_to.parse().expect("a return address");
    assert_eq!(address.reference_no(), "INV/2026/17");
    let verified = client(&server)
        .verify_return(&address)
        .await
        .expect("verified");
    assert_eq!(verified.status(), &TransactionStatus::Successful);
    assert!(verified.status_matches());
}

#[tokio::test]
async fn declined_and_cancelled_returns_are_verified_failed_with_the_reason() {
    for (action, reason) in [
        (PayerAction::Decline, "declined by bank"),
        (PayerAction::Cancel, "cancelled by payer"),
    ] {
        let server = MockServer::start().await;
        let (id, _) = confirmed(&server, "INV-1").await;
        let decided = server.payer(&id, action).await.expect("decided");
        let address: ReturnAddress = decided.redirect_to.parse().expect("an address");
        assert_eq!(address.claimed_status(), &TransactionStatus::Failed);
        let verified = client(&server)
            .verify_return(&address)
            .await
            .expect("verified");
        assert_eq!(verified.status(), &TransactionStatus::Failed);
        assert_eq!(verified.reply().data().message.as_deref(), Some(reason));
    }
}

#[tokio::test]
async fn forged_returns_are_caught() {
    let server = MockServer::start().await;
    let (id, _) = confirmed(&server, "INV-1").await;
    let declined = server
        .payer(&id, PayerAction::Decline)
        .await
        .expect("decided");
    // The payer edits the address: the status says SUCCESSFUL.
    let forged = declined
        .redirect_to
        .replace("status=FAILED", "status=SUCCESSFUL");
    let verified = client(&server)
        .verify_return(&forged.parse().expect("an address"))
        .await
        .expect("read");
    assert_eq!(verified.claimed_status(), &TransactionStatus::Successful);
    assert_eq!(verified.status(), &TransactionStatus::Failed);
    assert!(!verified.status_matches());
    // Or names another payment's reference.
    let other = declined
        .redirect_to
        .replace("referenceNo=INV-1", "referenceNo=INV-2");
    let err = client(&server)
        .verify_return(&other.parse().expect("an address"))
        .await
        .expect_err("another reference");
    assert!(matches!(err, Error::ReturnMismatch { .. }), "{err:?}");
}

#[tokio::test]
async fn a_payer_who_never_decides_is_failed_when_the_window_ends() {
    let server = MockServer::start().await;
    let (id, _) = confirmed(&server, "INV-1").await;
    server.advance_clock(Duration::from_secs(600)).await;
    let status = client(&server).status(&id).await.expect("read");
    assert_eq!(status.data().status, TransactionStatus::Failed);
    assert_eq!(
        status.data().message.as_deref(),
        Some("payer did not complete the payment")
    );
}

/// Polls every few milliseconds, for a minute at most.
fn quick_waits() -> WaitOptions {
    WaitOptions::default()
        .timeout(Duration::from_secs(60))
        .poll_interval(Duration::from_millis(5))
        .max_poll_interval(Duration::from_millis(20))
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_for_final_waits_through_confirmed_until_the_payer_decides() {
    let server = MockServer::start().await;
    let (id, _) = confirmed(&server, "INV-1").await;
    let reads_before = server.answered();
    let mut waiting = {
        let (client, id) = (client(&server), id.clone());
        tokio::spawn(async move { client.wait_for_final(&id, quick_waits()).await })
    };
    // Two reads of CONFIRMED (the first and a poll) and still waiting. The
    // mock's count of answers says when the wait has read; a wait that
    // stopped at CONFIRMED ends the wait too, and fails the assertion.
    tokio::select! {
        () = server.answered_reach(reads_before + 2) => {}
        _ = &mut waiting => {}
    }
    assert!(!waiting.is_finished(), "CONFIRMED is not final");
    server
        .payer(&id, PayerAction::Cancel)
        .await
        .expect("decided");
    let reply = waiting.await.expect("no panic").expect("final");
    assert_eq!(reply.data().status, TransactionStatus::Failed);
    assert_eq!(reply.data().message.as_deref(), Some("cancelled by payer"));
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_for_final_ends_when_the_payer_window_does() {
    let server = MockServer::start().await;
    let (id, _) = confirmed(&server, "INV-1").await;
    let reads_before = server.answered();
    let mut waiting = {
        let (client, id) = (client(&server), id.clone());
        tokio::spawn(async move { client.wait_for_final(&id, quick_waits()).await })
    };
    tokio::select! {
        () = server.answered_reach(reads_before + 1) => {}
        _ = &mut waiting => {}
    }
    assert!(!waiting.is_finished(), "CONFIRMED is not final");
    server.advance_clock(Duration::from_secs(600)).await;
    let reply = waiting.await.expect("no panic").expect("final");
    assert_eq!(reply.data().status, TransactionStatus::Failed);
    assert_eq!(
        reply.data().message.as_deref(),
        Some("payer did not complete the payment")
    );
}

/// The longest non-ASCII `returnUrl` the mock accepts (2,048 characters,
/// each of `日` percent-encoded to 9 bytes in the return address) with a
/// 64-character non-ASCII referenceNo: the address the payer brings back
/// (about 19 KiB) is read and verified. An 8 KiB bound called it "not a
/// return address" for a payment that had succeeded.
#[tokio::test]
async fn the_return_from_the_longest_non_ascii_return_url_is_verified() {
    let server = MockServer::start().await;
    let head = "https://shop.example/back?d=";
    let return_url = format!("{head}{}", "日".repeat(2048 - head.len()));
    assert_eq!(return_url.chars().count(), 2048);
    let reference = "日".repeat(64);
    let client = client(&server);
    let initiated = client
        .initiate(
            request(&reference, 4990, "ONLINEBANKING")
                .return_url(&return_url)
                .build()
                .expect("valid"),
        )
        .await
        .expect("initiated");
    let id = initiated.data().transaction_id.clone();
    client
        .confirm(
            ConfirmRequest::builder(&id, &reference)
                .build()
                .expect("valid"),
        )
        .await
        .expect("confirmed");
    let paid = server
        .payer(id.as_str(), PayerAction::Pay)
        .await
        .expect("decided");
    assert!(
        paid.redirect_to.len() > 18 * 1024,
        "{}",
        paid.redirect_to.len()
    );
    assert!(paid.redirect_to.len() <= ReturnAddress::MAX_LEN);
    let address = ReturnAddress::parse(&paid.redirect_to).expect("a return address");
    assert_eq!(address.reference_no(), reference);
    let verified = client.verify_return(&address).await.expect("verified");
    assert_eq!(verified.status(), &TransactionStatus::Successful);
    assert!(verified.status_matches());
}
