//! What a test does to a running server, or to one of its sandboxes
//! ([`Controls`]): move its clock, read its transactions and journal, play
//! the payer, queue and script faults, read its coverage, reset it. A
//! [`crate::MockServer`] and a [`crate::Sandbox`] both dereference to it.

use chrono::{DateTime, Utc};
use std::time::Duration;

use crate::domain::journal::{CAPACITY, JournalEntry};
use crate::domain::payer::{PayerError, PayerOutcome, play_payer};
use crate::domain::port::{PageQuery, PaymentPageKey, Store as _, StoreError};
use crate::domain::transaction::{PayerAction, Status};
use crate::fault_rules::{FaultRule, RuleError, RuleView};
use crate::faults::Fault;
use crate::mock_server::StoredTransaction;
use crate::state::AppState;

/// The test controls of one sandbox of a running server (the root is the
/// default sandbox): the in-process side of `/_mock/`.
#[derive(Debug, Clone)]
pub struct Controls {
    pub(super) state: AppState,
    base_url: String,
}

impl Controls {
    pub(super) fn new(state: AppState, base_url: String) -> Self {
        Self { state, base_url }
    }

    /// The base URL to give the application under test: the server's,
    /// followed by `/sandboxes/{id}` for a sandbox; no trailing slash.
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// Moves the virtual clock forward (as `POST /_mock/clock/advance`),
    /// for every replica of the store.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone): the HTTP control
    /// answers 503 instead. When the clock would go past its end, about
    /// 292 years ahead of real time (the HTTP control answers 400
    /// `VALIDATION_ERROR`): a clock that stopped there while the test went
    /// on would be a test that passes for the wrong reason.
    pub async fn advance_clock(&self, by: Duration) {
        // The check and the add are one step of the store: a test's
        // advances racing each other cannot together pass the end.
        if let Err(refused) = expect_store(self.state.store.advance_clock_within(by).await) {
            let e = crate::domain::invalid::Invalid::from(refused);
            panic!("payments-mock-server: advance_clock({by:?}): {e}");
        }
    }

    /// Virtual now.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn now(&self) -> DateTime<Utc> {
        expect_store(self.state.store.now().await)
    }

    /// Every transaction, oldest first, as the API would show it now.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn transactions(&self) -> Vec<StoredTransaction> {
        let now = self.now().await;
        let page = self
            .state
            .store
            .page(
                &PageQuery::oldest_first(None, usize::MAX),
                |_| true,
                |r| {
                    // The test's look: no coverage (the application met
                    // nothing of it).
                    let view = r.view(now);
                    let confirmation = r.confirmation.as_deref();
                    StoredTransaction {
                        transaction_id: r.id.to_string(),
                        merchant_id: r.fields.merchant_id,
                        reference_no: r.fields.reference_no.to_string(),
                        product_code: r.fields.product_code.to_string(),
                        amount_minor: r.fields.amount_minor,
                        currency_code: r.fields.currency_code.to_string(),
                        status: view.status.as_str().to_owned(),
                        created_at: r.created_at,
                        last_modified_at: view.last_modified_at,
                        confirmed_at: confirmation.map(|c| c.confirmed_at),
                        provider_reference: confirmation.and_then(|c| c.provider_reference.clone()),
                        error_message: (view.status == Status::Failed)
                            .then(|| view.message.map(str::to_owned))
                            .flatten(),
                        payment_url: r.payment_page().map(|page| {
                            crate::domain::redirect::payment_url(
                                &self.state.public_url,
                                &page.token,
                            )
                        }),
                    }
                },
            )
            .await;
        expect_store(page)
            .map(|page| page.items)
            .unwrap_or_default()
    }

    /// Plays the payer of a confirmed redirect-based transaction (CONTRACT
    /// section 13) without a browser: what the payment page's **Pay**,
    /// **Decline** or **Cancel** button does, at the virtual clock's now.
    /// Same as `POST /_mock/transactions/{id}/payer`.
    ///
    /// # Errors
    ///
    /// [`PayerError::NotFound`] for an unknown id;
    /// [`PayerError::NotWaiting`] when the transaction has no payment page
    /// (not a redirect product, not confirmed) or the payer has already
    /// decided or the window has passed.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_mock_server::{MockServer, PayerAction};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = MockServer::start().await;
    /// let api = |path: &str| format!("{}/api/payments/{path}", server.base_url());
    /// let http = reqwest::Client::new();
    /// let initiated: serde_json::Value = http.post(api("initiate"))
    ///     .json(&serde_json::json!({
    ///         "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
    ///         "referenceNo": "ORDER-17", "amount": 4990, "productCode": "ONLINEBANKING",
    ///         "storeId": "S1", "returnUrl": "https://shop.example/back",
    ///     }))
    ///     .send().await?.json().await?;
    /// let id = initiated["data"]["transactionId"].as_str().unwrap_or_default().to_owned();
    /// http.post(api("confirm"))
    ///     .json(&serde_json::json!({ "transactionId": id, "referenceNo": "ORDER-17" }))
    ///     .send().await?;
    /// assert!(server.payment_url(&id).await.is_some());
    ///
    /// let paid = server.payer(&id, PayerAction::Pay).await?;
    /// assert_eq!(paid.status, "SUCCESSFUL");
    /// assert!(paid.redirect_to.starts_with("https://shop.example/back?transactionId="));
    /// // Decided once: the page's buttons do nothing more.
    /// assert!(server.payer(&id, PayerAction::Cancel).await.is_err());
    /// # server.shutdown().await;
    /// # Ok(()) }
    /// ```
    pub async fn payer(
        &self,
        transaction_id: &str,
        action: PayerAction,
    ) -> Result<PayerOutcome, PayerError> {
        let played = expect_store(play_payer(&self.state.store, transaction_id, action).await);
        if let Ok((outcome, _)) = &played {
            self.state
                .coverage
                .transition(Some(Status::Confirmed), outcome.record.recorded_status());
        }
        played.map(|(outcome, _)| outcome)
    }

    /// The payment page address of a confirmed redirect-based transaction
    /// (as in its confirm's `extraProperties`), under the public URL.
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn payment_url(&self, transaction_id: &str) -> Option<String> {
        let public_url = &self.state.public_url;
        expect_store(
            self.state
                .store
                .with_payment_page(PaymentPageKey::Transaction(transaction_id), |_, page| {
                    crate::domain::redirect::payment_url(public_url, &page.token)
                })
                .await,
        )
    }

    /// Queues faults: each next `/api/` request takes one, in order (an
    /// [`Fault::AnswerOther`] that met a request with no other transaction
    /// to show stays first in the queue for the next one).
    ///
    /// # Panics
    ///
    /// When a fault is out of the limits a fault rule has (and
    /// [`Controls::add_fault_rule`] refuses with a [`RuleError`]): a
    /// `Delay` over 60 s or not a whole number of milliseconds, a
    /// `SlowBody` of 0 or over 999,999,999 bytes a second, a `Gateway`
    /// status other than 502, 503 or 504. Nothing is queued then. This
    /// method returns nothing, so a mistake in the test panics rather than
    /// pass for a fault injected.
    pub fn inject_faults(&self, faults: impl IntoIterator<Item = Fault>) {
        if let Err((fault, problem)) = self.state.faults.inject(faults) {
            panic!("payments-mock-server: inject_faults({fault:?}): {problem}");
        }
    }

    /// Adds a scripted fault rule (CONTRACT section 19), as
    /// `POST /_mock/faults` does: requests it matches meet its fault
    /// instead of an answer, after its `after` and up to its `times`.
    ///
    /// ```
    /// # async fn demo(server: &payments_mock_server::MockServer) {
    /// use payments_mock_server::{Endpoint, Fault, FaultRule};
    /// // The first confirm commits and never answers: the client times out.
    /// let rule = server
    ///     .add_fault_rule(FaultRule::new(Fault::CommitThenHang).on(Endpoint::Confirm))
    ///     .expect("a valid rule");
    /// assert_eq!(rule.fired, 0);
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`RuleError`] naming the field, for what `POST /_mock/faults`
    /// refuses: a probability outside 0..1 (`-0.0` is taken as 0), an
    /// `after` or `times` over 4,294,967,295, a reference empty, over 64
    /// characters or with a control character, a `Delay` over 60 s or not
    /// a whole number of milliseconds, a `SlowBody` of 0 or over
    /// 999,999,999, a gateway status other than 502, 503 or 504, or more
    /// than 1,000 rules. What [`Controls::fault_rules`] lists of a rule,
    /// `POST /_mock/faults` takes back.
    pub fn add_fault_rule(&self, rule: FaultRule) -> Result<RuleView, RuleError> {
        self.state.fault_rules.add(rule)
    }

    /// The fault rules, in the order requests meet them, with how often
    /// each met a request and fired.
    pub fn fault_rules(&self) -> Vec<RuleView> {
        self.state.fault_rules.list()
    }

    /// Removes every fault rule; how many there were.
    pub fn clear_fault_rules(&self) -> usize {
        self.state.fault_rules.clear()
    }

    /// The request journal, oldest first (at most the last 1,000; of
    /// every replica of the store).
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn requests(&self) -> Vec<JournalEntry> {
        expect_store(self.state.store.requests_since(0, CAPACITY).await)
    }

    /// What the application under test met of this server since it
    /// started or was last reset: the interface's answers and
    /// transitions, the faults per endpoint, and whether it came back
    /// after each fault that committed (as `GET /_mock/coverage`). See
    /// [`CoverageReport::assert_covered`](crate::CoverageReport::assert_covered).
    pub async fn coverage(&self) -> crate::CoverageReport {
        self.state.coverage()
    }

    /// How many `/api/` requests this server has answered since it
    /// started: every one its journal records, faults included (the
    /// journal itself keeps the last 1,000, and [`Controls::reset`]
    /// empties it; this count goes on).
    pub fn answered(&self) -> u64 {
        self.state.answered()
    }

    /// Waits until [`Controls::answered`] reaches `count`: for a test
    /// that acts once another task or process has made its requests,
    /// without polling the journal.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use payments_mock_server::MockServer;
    ///
    /// let server = MockServer::start().await;
    /// let before = server.answered();
    /// let url = format!("{}/api/payments/reference/INV-1/status", server.base_url());
    /// let request = tokio::spawn(async move { reqwest::get(url).await.map(|r| r.status()) });
    /// server.answered_reach(before + 1).await;
    /// assert_eq!(request.await.unwrap().unwrap(), 404);
    /// # }
    /// ```
    pub async fn answered_reach(&self, count: u64) {
        self.state.answered_reach(count).await;
    }

    /// Forgets transactions, journal, queued faults, fault rules (as
    /// [`Controls::clear_fault_rules`]), how often each request was
    /// drawn for (so the same requests draw the same fail-rate faults and
    /// latency again), and the coverage; real time again (for every
    /// replica of the store; the faults, rules and coverage are this
    /// process's).
    ///
    /// # Panics
    ///
    /// When the store fails (its database is gone).
    pub async fn reset(&self) {
        expect_store(self.state.reset().await);
    }

    /// The shared state (store, clock, catalogue…), for this workspace's
    /// white-box tests (feature `test-support`).
    #[cfg(feature = "test-support")]
    #[doc(hidden)]
    pub fn state(&self) -> &AppState {
        &self.state
    }
}

/// A store's answer in the embedded server's test helpers, which panic on
/// a store failure (the HTTP controls answer 503 instead).
fn expect_store<T>(result: Result<T, StoreError>) -> T {
    match result {
        Ok(value) => value,
        Err(e) => panic!("payments-mock-server: {e}"),
    }
}
