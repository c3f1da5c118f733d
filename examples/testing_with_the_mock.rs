//! Testing your own application against the embedded mock service.
//!
//! The "application" here is one function, `checkout`, that pays for an order:
//! it initiates a transaction and confirms it. Its tests (at the bottom, in
//! `mod tests`) each start their own `MockServer` on a free loopback port,
//! point a `Client` at it, run `checkout`, and assert on four things:
//!
//! - what `checkout` returned;
//! - what the mock stored (`server.transactions().await`);
//! - what the application sent (`server.requests().await`, the request journal);
//! - what the application met (`server.coverage().await`): which of the
//!   interface's answers and transitions, which faults, and whether it came
//!   back for a transaction after an ambiguous failure.
//!   `assert_covered([...])` fails a test that did not exercise the cells it
//!   names, so a suite can demand that it survived a `commit-then-error`.
//!
//! The mock's default catalogue gives every outcome without set-up:
//! `TOPUP` succeeds, `DECLINED` is declined by the provider, `EWALLET` needs
//! the OTP `123456` and fails with any other. `server.inject_faults` makes the
//! service misbehave on cue (`server.add_fault_rule` on the requests a rule
//! matches: a confirm that commits and never answers, a gateway's page, a
//! truncated body), and `server.advance_clock` moves its time.
//!
//! Tests that share one mock take a sandbox each (`server.sandbox()`): its
//! own base URL, transactions, references, clock, faults and journal, so
//! they run in parallel without touching each other (the last two tests).
//! On a mock that keeps its state in PostgreSQL, shared by replicas, take
//! it with `server.create_sandbox().await?` instead: it waits for the
//! database, so every replica serves it at once, and reports the
//! `--max-sandboxes` limit as an error.
//!
//! Run the scenario, then the tests:
//!
//! ```sh
//! cargo run --example testing_with_the_mock
//! cargo test -p payments-examples --example testing_with_the_mock
//! ```
//!
//! (`cargo test --workspace` runs the tests too: the example's `[[example]]`
//! entry sets `test = true`.) With `PAYMENTS_BASE_URL` set, `main` runs the
//! scenario against that service and skips the look into the mock's store.

use std::env;

use payments_client::{
    Client, ConfirmRequest, Currency, Decimal, Error, InitiateRequest, MinorAmount, TransactionId,
    TransactionStatus, Uuid,
};
use payments_mock_server::MockServer;

/// Any merchant will do for the mock; a real service knows yours (`main`
/// reads `PAYMENTS_MERCHANT_ID`, the tests use this one).
const DEMO_MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);

/// An order as the shop knows it.
#[derive(Debug, Clone)]
struct Order {
    reference: String,
    product: String,
    /// MYR sen: 1050 is MYR 10.50.
    amount_minor: u64,
    payer_id: Option<String>,
    otp: Option<String>,
}

impl Order {
    fn new(reference: impl Into<String>, product: &str, amount_minor: u64) -> Self {
        Self {
            reference: reference.into(),
            product: product.to_owned(),
            amount_minor,
            payer_id: None,
            otp: None,
        }
    }

    fn payer_id(mut self, payer_id: &str) -> Self {
        self.payer_id = Some(payer_id.to_owned());
        self
    }

    fn otp(mut self, otp: &str) -> Self {
        self.otp = Some(otp.to_owned());
        self
    }
}

/// What checkout tells the shop.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Receipt {
    transaction_id: TransactionId,
    status: TransactionStatus,
    /// MYR, as the service reported it (`10.50`).
    amount: Decimal,
    /// Why the payment failed, when it did.
    reason: Option<String>,
}

/// The application code under test: pays for `order` in MYR, as `merchant`.
async fn checkout(client: &Client, merchant: Uuid, order: &Order) -> Result<Receipt, Error> {
    let amount = MinorAmount::new(order.amount_minor)?;
    let mut request = InitiateRequest::builder(
        merchant,
        &order.reference,
        amount,
        &order.product,
        "WEBSHOP",
    )
    .currency(Currency::MYR);
    if let Some(payer_id) = &order.payer_id {
        request = request.payer_id(payer_id);
    }
    let initiated = client.initiate(request.build()?).await?.into_data();

    let mut confirm = ConfirmRequest::builder(&initiated.transaction_id, &order.reference);
    if let Some(otp) = &order.otp {
        confirm = confirm.confirmation_code(otp);
    }
    let confirmed = client.confirm(confirm.build()?).await?.into_data();
    Ok(Receipt {
        transaction_id: confirmed.transaction_id,
        status: confirmed.status,
        amount: confirmed.amount,
        reason: confirmed.error_message,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (server, base_url) = match env::var("PAYMENTS_BASE_URL") {
        Ok(url) => (None, url),
        Err(_) => {
            let server = MockServer::start().await;
            let url = server.base_url();
            (Some(server), url)
        }
    };
    let mut builder = Client::builder(&base_url);
    if let Ok(key) = env::var("PAYMENTS_API_KEY") {
        builder = builder.api_key(key);
    }
    let client = builder.build()?;
    let merchant = match env::var("PAYMENTS_MERCHANT_ID") {
        Ok(id) => id.parse()?,
        Err(_) => DEMO_MERCHANT,
    };
    let run = &Uuid::new_v4().simple().to_string()[..8];
    println!("Checkout against {base_url}\n");

    let orders = [
        (
            "TOPUP MYR 10.50",
            Order::new(format!("SHOP-{run}-1"), "TOPUP", 1050).payer_id("60123456789"),
        ),
        (
            "DECLINED MYR 5.00",
            Order::new(format!("SHOP-{run}-2"), "DECLINED", 500),
        ),
        (
            "EWALLET MYR 25.00, wrong OTP 000000",
            Order::new(format!("SHOP-{run}-3"), "EWALLET", 2500).otp("000000"),
        ),
    ];
    for (step, (what, order)) in orders.iter().enumerate() {
        println!("{}. checkout {}: {what}", step + 1, order.reference);
        let receipt = checkout(&client, merchant, order).await?;
        println!(
            "   -> {} MYR {}, transaction {}",
            receipt.status, receipt.amount, receipt.transaction_id
        );
        if let Some(reason) = &receipt.reason {
            println!("      reason: {reason}");
        }
    }

    match &server {
        Some(server) => {
            println!("\nWhat a test can check afterwards, from the mock itself:");
            for t in server.transactions().await {
                println!(
                    "   stored  {} {} {} {} sen",
                    t.reference_no, t.product_code, t.status, t.amount_minor
                );
            }
            for r in server.requests().await {
                let status = r.status.map_or("reset".into(), |s| s.to_string());
                println!("   request {} {} -> {status}", r.method, r.path);
            }
            let coverage = server.coverage().await;
            let met: Vec<String> = coverage
                .matrix()
                .cells()
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(cell, n)| format!("{cell} ({n})"))
                .collect();
            println!(
                "   coverage {:.0} % of the interface's cells: {}",
                coverage.percent(),
                met.join(", ")
            );
        }
        None => println!("\n(skipped the look into the mock's store: PAYMENTS_BASE_URL is set)"),
    }
    println!(
        "\nThe same scenarios as tests: cargo test -p payments-examples --example testing_with_the_mock"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use payments_mock_server::Fault;

    use super::*;

    /// A fresh mock per test: own port, store, clock and journal.
    async fn start() -> (MockServer, Client) {
        let server = MockServer::start().await;
        let client = Client::builder(server.base_url())
            .build()
            .expect("the mock's base URL is valid");
        (server, client)
    }

    /// The JSON body the application sent in request `index` of the journal.
    async fn sent_body(server: &MockServer, index: usize) -> serde_json::Value {
        let requests = server.requests().await;
        serde_json::from_str(&requests[index].body).expect("the client sends JSON")
    }

    #[tokio::test]
    async fn checkout_pays_a_topup_once() {
        let (server, client) = start().await;
        let order = Order::new("ORDER-1", "TOPUP", 1050).payer_id("60123456789");

        let receipt = checkout(&client, DEMO_MERCHANT, &order)
            .await
            .expect("checkout succeeds");

        assert_eq!(receipt.status, TransactionStatus::Successful);
        assert_eq!(receipt.amount, Decimal::new(1050, 2));
        let stored = server.transactions().await;
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].transaction_id, receipt.transaction_id.as_str());
        assert_eq!(stored[0].reference_no, "ORDER-1");
        assert_eq!(stored[0].amount_minor, 1050);
        assert_eq!(stored[0].currency_code, "MYR");
        assert_eq!(stored[0].status, "SUCCESSFUL");

        let calls: Vec<_> = server
            .requests()
            .await
            .into_iter()
            .map(|r| (r.method, r.path, r.status))
            .collect();
        assert_eq!(
            calls,
            [
                ("POST".into(), "/api/payments/initiate".into(), Some(200)),
                ("POST".into(), "/api/payments/confirm".into(), Some(200)),
            ]
        );
        let initiate = sent_body(&server, 0).await;
        assert_eq!(initiate["payerId"], "60123456789");
        assert_eq!(initiate["storeId"], "WEBSHOP");
        assert_eq!(initiate["amount"].to_string(), "1050");
    }

    #[tokio::test]
    async fn checkout_reports_a_provider_decline() {
        let (server, client) = start().await;
        let order = Order::new("ORDER-2", "DECLINED", 500);

        let receipt = checkout(&client, DEMO_MERCHANT, &order)
            .await
            .expect("a decline is an answer");

        assert_eq!(receipt.status, TransactionStatus::Failed);
        assert_eq!(receipt.reason.as_deref(), Some("declined by provider"));
        let stored = server.transactions().await;
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].status, "FAILED");
        assert_eq!(stored[0].provider_reference, None);
    }

    #[tokio::test]
    async fn checkout_with_a_wrong_otp_fails_the_ewallet_payment() {
        let (server, client) = start().await;
        let order = Order::new("ORDER-3", "EWALLET", 2500).otp("000000");

        let receipt = checkout(&client, DEMO_MERCHANT, &order)
            .await
            .expect("a wrong OTP is an answer");

        assert_eq!(receipt.status, TransactionStatus::Failed);
        assert_eq!(server.transactions().await[0].status, "FAILED");
        assert_eq!(server.requests().await.len(), 2);
        assert_eq!(sent_body(&server, 1).await["confirmationCode"], "000000");
    }

    #[tokio::test]
    async fn checkout_with_the_right_otp_pays_the_ewallet_payment() {
        let (server, client) = start().await;
        let order = Order::new("ORDER-4", "EWALLET", 2500).otp("123456");

        let receipt = checkout(&client, DEMO_MERCHANT, &order)
            .await
            .expect("checkout succeeds");

        assert_eq!(receipt.status, TransactionStatus::Successful);
        assert_eq!(server.transactions().await[0].status, "SUCCESSFUL");
    }

    #[tokio::test]
    async fn checkout_survives_a_server_error_without_paying_twice() {
        let (server, client) = start().await;
        // The service stores the transaction, then answers 500.
        server.inject_faults([Fault::CommitThenError]);
        let order = Order::new("ORDER-5", "TOPUP", 1050).payer_id("60123456789");

        let receipt = checkout(&client, DEMO_MERCHANT, &order)
            .await
            .expect("the client recovers");

        assert_eq!(receipt.status, TransactionStatus::Successful);
        assert_eq!(server.transactions().await.len(), 1);
        let statuses: Vec<_> = server.requests().await.iter().map(|r| r.status).collect();
        assert_eq!(statuses[0], Some(500));
        // The client came back for the transaction the 500 hid: its retry
        // was answered as a duplicate, which it reconciled. A test that
        // demands it fails, naming the cell, if the application gave up.
        server.coverage().await.assert_covered([
            "initiate commit-then-error",
            "initiate commit-then-error recovered",
            "initiate 400 DUPLICATE_REFERENCE_NO",
            "transition INITIATED -> SUCCESSFUL",
        ]);
    }

    /// A fault rule (what `POST /_mock/faults` installs over HTTP): the
    /// confirm of ORDER-10 is carried out, and then the service never
    /// answers. The client gives up on the attempt after its timeout and
    /// reads the payment back by its reference: paid once, not twice.
    #[tokio::test]
    async fn checkout_survives_a_confirm_that_never_answers() {
        use payments_mock_server::{Endpoint, FaultRule};
        let server = MockServer::start().await;
        let client = Client::builder(server.base_url())
            .timeout(std::time::Duration::from_millis(500))
            .build()
            .expect("the mock's base URL is valid");
        server
            .add_fault_rule(
                FaultRule::new(Fault::CommitThenHang)
                    .on(Endpoint::Confirm)
                    .reference("ORDER-10"),
            )
            .expect("a valid rule");
        let order = Order::new("ORDER-10", "TOPUP", 1050).payer_id("60123456789");

        let receipt = checkout(&client, DEMO_MERCHANT, &order)
            .await
            .expect("the client recovers");

        assert_eq!(receipt.status, TransactionStatus::Successful);
        assert_eq!(server.transactions().await.len(), 1);
        assert_eq!(server.fault_rules()[0].fired, 1);
        let confirm = &server.requests().await[1];
        assert_eq!(confirm.fault.as_deref(), Some("commit-then-hang"));
        assert_eq!(confirm.status, None, "never answered");
        server
            .coverage()
            .await
            .assert_covered(["confirm commit-then-hang recovered"]);
    }

    /// A suite can demand that it met the answers that matter to the
    /// shop: each outcome of checkout, and the provider's decline.
    #[tokio::test]
    async fn the_checkout_tests_meet_every_outcome() {
        let (server, client) = start().await;
        for order in [
            Order::new("ORDER-6", "TOPUP", 1050).payer_id("60123456789"),
            Order::new("ORDER-7", "DECLINED", 500),
            Order::new("ORDER-8", "EWALLET", 2500).otp("000000"),
            Order::new("ORDER-9", "EWALLET", 2500).otp("123456"),
        ] {
            checkout(&client, DEMO_MERCHANT, &order)
                .await
                .expect("an answer");
        }
        let coverage = server.coverage().await;
        coverage.assert_covered([
            "initiate 200",
            "confirm 200",
            "transition created -> INITIATED",
            "transition created -> PENDING",
            "transition INITIATED -> SUCCESSFUL",
            "transition INITIATED -> FAILED",
            "transition PENDING -> FAILED",
            "transition PENDING -> SUCCESSFUL",
        ]);
        // Not met here: what a test of its own would drive.
        assert_eq!(
            coverage.uncovered(["confirm 400 TRANSACTION_EXPIRED"]),
            ["\"confirm 400 TRANSACTION_EXPIRED\": not exercised"]
        );
    }

    /// One mock for the tests below, on a runtime of its own: each
    /// `#[tokio::test]` has its own runtime, which ends with its test.
    fn shared() -> &'static MockServer {
        static SHARED: std::sync::OnceLock<MockServer> = std::sync::OnceLock::new();
        SHARED.get_or_init(|| {
            let (started, server) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                    .expect("a runtime");
                runtime.block_on(async move {
                    let _ = started.send(MockServer::start().await);
                    std::future::pending::<()>().await;
                });
            });
            server.recv().expect("the shared mock started")
        })
    }

    /// A client for a sandbox's base URL.
    fn client_of(base_url: String) -> Client {
        Client::builder(base_url)
            .build()
            .expect("the sandbox's base URL is valid")
    }

    /// Two tests on the shared mock use the same order reference: each in
    /// its sandbox, each pays once, and neither sees the other.
    #[tokio::test]
    async fn a_sandbox_of_a_shared_mock_is_a_tests_own() {
        let sandbox = shared().sandbox();
        let client = client_of(sandbox.base_url());
        let order = Order::new("SHARED-1", "TOPUP", 1050).payer_id("60123456789");

        let receipt = checkout(&client, DEMO_MERCHANT, &order)
            .await
            .expect("checkout succeeds");

        assert_eq!(receipt.status, TransactionStatus::Successful);
        assert_eq!(sandbox.transactions().await.len(), 1);
        assert_eq!(sandbox.requests().await.len(), 2);
    }

    /// Faults queued in one sandbox meet that sandbox's requests alone.
    #[tokio::test]
    async fn a_fault_in_one_sandbox_leaves_the_others_alone() {
        let faulty = shared().sandbox();
        let calm = shared().sandbox();
        faulty.inject_faults([Fault::CommitThenError]);
        let order = Order::new("SHARED-1", "TOPUP", 1050).payer_id("60123456789");

        let (faulty_client, calm_client) =
            (client_of(faulty.base_url()), client_of(calm.base_url()));
        let (a, b) = tokio::join!(
            checkout(&faulty_client, DEMO_MERCHANT, &order),
            checkout(&calm_client, DEMO_MERCHANT, &order),
        );

        assert_eq!(a.expect("recovers").status, TransactionStatus::Successful);
        assert_eq!(b.expect("pays").status, TransactionStatus::Successful);
        let first = |requests: Vec<payments_mock_server::JournalEntry>| requests[0].status;
        assert_eq!(first(faulty.requests().await), Some(500));
        assert_eq!(first(calm.requests().await), Some(200));
        assert_eq!(calm.requests().await.len(), 2);
    }
}
