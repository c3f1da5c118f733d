//! The verified fake (issue 24): the client's end-to-end scenarios through
//! the contract proxy in front of the mock. Every product, both status
//! reads, the refusals, injected faults with retries and reconciliation,
//! a redirect payment, exotic references and currencies, and bulk reads:
//! the proxy finds no violation in what the mock answers.

use std::time::Duration;

use payments_client::{
    Client, ConfirmRequest, Currency, ErrorCode, ReturnAddress, TransactionStatus,
};
use payments_contract_proxy::{Level, Proxy, ProxyConfig};
use payments_mock_server::{Fault, MockServer, PayerAction};

use crate::support::*;

/// A client of the proxy in front of `server`.
async fn through(server: &MockServer) -> (Proxy, Client) {
    let proxy = Proxy::start(ProxyConfig::new(server.base_url().parse().expect("a URL")))
        .await
        .expect("a proxy");
    let client = Client::builder(proxy.base_url())
        .retry_policy(fast_retries())
        .timeout(Duration::from_secs(5))
        .build()
        .expect("a client");
    (proxy, client)
}

fn api_code(error: &payments_client::Error) -> Option<ErrorCode> {
    match error {
        payments_client::Error::Api(e) => Some(e.code.clone()),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_scenarios_through_the_proxy_find_no_violation() {
    let server = MockServer::start().await;
    let (proxy, client) = through(&server).await;

    // Every product, both status reads.
    for (n, (product, extra)) in [
        ("TOPUP", Some("60123456789")),
        ("BILLPAY", Some("ACC-1")),
        ("GIFTCARD", None),
        ("EWALLET", None),
        ("DECLINED", None),
    ]
    .into_iter()
    .enumerate()
    {
        let reference = format!("PX-{n} INV/2026 ?#%");
        let mut builder = request(&reference, 15000 + n as u64, product);
        if let Some(payer) = extra {
            builder = builder.payer_id(payer);
        }
        let tx = client
            .initiate(builder.build().expect("valid"))
            .await
            .expect("initiated")
            .into_data();
        let mut confirm = ConfirmRequest::builder(&tx.transaction_id, reference.clone());
        if product == "EWALLET" {
            confirm = confirm.confirmation_code("123456");
        }
        let confirmed = client
            .confirm(confirm.build().expect("valid"))
            .await
            .expect("confirmed");
        assert_ne!(confirmed.data().status, TransactionStatus::Initiated);
        server.advance_clock(Duration::from_secs(3)).await;
        let by_id = client
            .status(&tx.transaction_id)
            .await
            .expect("by id")
            .into_data();
        let by_reference = client
            .status_by_reference(&reference, Some(merchant()))
            .await
            .expect("by reference")
            .into_data();
        assert_eq!(by_id.transaction_id, by_reference.transaction_id);
    }

    // A wrong OTP fails the payment; refusals of every kind.
    let wallet = client
        .initiate(request("PX-OTP", 500, "EWALLET").build().expect("valid"))
        .await
        .expect("initiated")
        .into_data();
    let failed = client
        .confirm(
            ConfirmRequest::builder(&wallet.transaction_id, "PX-OTP")
                .confirmation_code("000000")
                .build()
                .expect("valid"),
        )
        .await
        .expect("answered");
    assert_eq!(failed.data().status, TransactionStatus::Failed);
    let again = client
        .confirm(
            ConfirmRequest::builder(&wallet.transaction_id, "PX-OTP")
                .build()
                .expect("valid"),
        )
        .await
        .expect_err("already confirmed");
    assert_eq!(
        api_code(&again),
        Some(ErrorCode::TransactionAlreadyConfirmed)
    );
    let duplicate = client
        .initiate(topup("PX-0 INV/2026 ?#%"))
        .await
        .expect_err("the reference is taken");
    assert_eq!(api_code(&duplicate), Some(ErrorCode::DuplicateReferenceNo));
    let missing = client
        .status("01a20813-0000-7000-8000-000000000000")
        .await
        .expect_err("unknown");
    assert_eq!(api_code(&missing), Some(ErrorCode::TransactionNotFound));
    let expiring = client
        .initiate(topup("PX-EXP"))
        .await
        .expect("initiated")
        .into_data();
    server.advance_clock(Duration::from_secs(16 * 60)).await;
    let expired = client
        .confirm(
            ConfirmRequest::builder(&expiring.transaction_id, "PX-EXP")
                .build()
                .expect("valid"),
        )
        .await
        .expect_err("expired");
    assert_eq!(api_code(&expired), Some(ErrorCode::TransactionExpired));

    // Injected faults: committed then 500, committed then the connection
    // dropped (the proxy answers 502 of its own); retried and reconciled.
    for (n, fault) in [
        Fault::CommitThenError,
        Fault::CommitThenReset,
        Fault::InternalError,
        Fault::RateLimit,
    ]
    .into_iter()
    .enumerate()
    {
        server.inject_faults([fault.clone()]);
        let reply = client
            .initiate(topup(&format!("PX-F{n}")))
            .await
            .expect("carried out once");
        assert!(reply.attempts() >= 2, "{fault:?}");
    }

    // Currencies of every scale.
    for (n, currency) in [Currency::JPY, Currency::KWD, Currency::MYR]
        .into_iter()
        .enumerate()
    {
        let tx = client
            .initiate(
                request_for(merchant(), &format!("PX-C{n}"), 1500, "TOPUP")
                    .currency(currency)
                    .payer_id("1")
                    .build()
                    .expect("valid"),
            )
            .await
            .expect("initiated")
            .into_data();
        client.status(&tx.transaction_id).await.expect("read");
    }

    // A redirect payment: the page, the payer, the verified return.
    let online = client
        .initiate(
            request("PX-OB", 4990, "ONLINEBANKING")
                .return_url("https://shop.example/back?order=17")
                .build()
                .expect("valid"),
        )
        .await
        .expect("initiated")
        .into_data();
    let confirmed = client
        .confirm(
            ConfirmRequest::builder(&online.transaction_id, "PX-OB")
                .build()
                .expect("valid"),
        )
        .await
        .expect("confirmed");
    assert!(confirmed.data().payment_url().is_some());
    let paid = server
        .payer(online.transaction_id.as_str(), PayerAction::Pay)
        .await
        .expect("paid");
    let address: ReturnAddress = paid.redirect_to.parse().expect("an address");
    let verified = client.verify_return(&address).await.expect("verified");
    assert_eq!(*verified.status(), TransactionStatus::Successful);

    // Many reads at once.
    let mut ids = Vec::new();
    for n in 0..40 {
        ids.push(
            client
                .initiate(topup(&format!("PX-BULK-{n}")))
                .await
                .expect("initiated")
                .into_data()
                .transaction_id,
        );
    }
    let reads = client
        .status_many(ids.iter().map(|id| id.as_str().to_owned()), 8)
        .await;
    assert!(reads.iter().all(Result::is_ok));

    let summary = proxy.shutdown().await;
    eprintln!(
        "verified fake (client): {} exchanges, {} violations, {} undocumented",
        summary.exchanges,
        summary.count(Level::Violation),
        summary.count(Level::Undocumented)
    );
    assert_eq!(summary.count(Level::Violation), 0, "{}", summary.table());
    assert!(summary.exchanges > 100, "{}", summary.exchanges);
}
