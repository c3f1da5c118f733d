//! The payer's side of a redirect-based transaction (CONTRACT section 13):
//! reading a payment page and deciding it, exactly once.
//!
//! The decision is checked and recorded under the store's one write lock,
//! like a confirm, so of many concurrent submits exactly one decides; the
//! rest see the decision already made.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Inner, Store, issued_id};
use crate::domain::transaction::{ConfirmResult, PayerAction, PayerDecision, PaymentPage, Record};

/// How a payment page is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentPageKey<'a> {
    /// By its token, as the payer's browser does (`/pay/<token>`).
    Token(&'a str),
    /// By the transaction's id, as the admin control does
    /// (`POST /_mock/transactions/{id}/payer`).
    Transaction(&'a str),
}

/// Why no decision could even be looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayerRefusal {
    /// No such token or transaction.
    NotFound,
    /// The transaction exists but has no payment page: not a redirect
    /// product, or not confirmed yet.
    NoPaymentPage,
}

/// The result of a submit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    /// The transaction after the submit.
    pub record: Record,
    /// `true` when this submit decided; `false` when the payer had already
    /// decided or the window had passed (nothing changed).
    pub decided_now: bool,
}

impl Inner {
    fn position_of_page(&self, key: PaymentPageKey<'_>) -> Option<usize> {
        match key {
            PaymentPageKey::Token(token) => {
                if !crate::domain::redirect::is_token(token) {
                    return None;
                }
                let records = &self.records;
                self.by_token.find(self.by_token.hash(token), |p| {
                    records
                        .get(p)
                        .and_then(Record::payment_page)
                        .is_some_and(|page| &*page.token == token)
                })
            }
            PaymentPageKey::Transaction(id) => self.position_of_id(issued_id(id)?),
        }
    }
}

impl Record {
    /// The payment page, once a redirect-based transaction is confirmed.
    pub fn payment_page(&self) -> Option<&PaymentPage> {
        match &self.confirmation.as_deref()?.result {
            ConfirmResult::AwaitingPayer(page) => Some(page),
            _ => None,
        }
    }

    fn payment_page_mut(&mut self) -> Option<&mut PaymentPage> {
        match &mut self.confirmation.as_deref_mut()?.result {
            ConfirmResult::AwaitingPayer(page) => Some(page),
            _ => None,
        }
    }
}

impl Store {
    /// `f` of the transaction behind a payment page and its page, under the
    /// read lock. `None` for an unknown key, and for a transaction without
    /// a page.
    pub fn with_payment_page<T>(
        &self,
        key: PaymentPageKey<'_>,
        f: impl FnOnce(&Record, &PaymentPage) -> T,
    ) -> Option<T> {
        let inner = self.read();
        let record = inner.records.get(inner.position_of_page(key)?)?;
        record.payment_page().map(|page| f(record, page))
    }

    /// The payer's submit at `now`: the first one inside the window decides
    /// (`SUCCESSFUL`, or `FAILED` for decline and cancel); any later one,
    /// or one after the window, changes nothing. Check and change happen
    /// under one write lock.
    ///
    /// `scope` limits a transaction look-up to one merchant (a bound key);
    /// tokens need none, they are the capability.
    ///
    /// # Errors
    ///
    /// [`PayerRefusal`]: nothing to decide.
    pub fn decide(
        &self,
        key: PaymentPageKey<'_>,
        scope: Option<Uuid>,
        action: PayerAction,
        now: DateTime<Utc>,
    ) -> Result<Decided, PayerRefusal> {
        let mut inner = self.write();
        let position = inner.position_of_page(key).ok_or(PayerRefusal::NotFound)?;
        let record = inner
            .records
            .get_mut(position)
            .ok_or(PayerRefusal::NotFound)?;
        if scope.is_some_and(|m| m != record.fields.merchant_id) {
            return Err(PayerRefusal::NotFound);
        }
        let page = record
            .payment_page_mut()
            .ok_or(PayerRefusal::NoPaymentPage)?;
        let decided_now = page.is_open(now);
        if decided_now {
            page.decision = Some(PayerDecision { action, at: now });
        } else {
            page.later_submits = page.later_submits.saturating_add(1);
        }
        Ok(Decided {
            record: record.clone(),
            decided_now,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    use super::*;
    use crate::domain::catalog::{Catalog, InitialState};
    use crate::domain::clock::Clock;
    use crate::store::tests::fields;
    use crate::store::{ConfirmAttempt, Status};

    fn confirmed_online_banking(store: &Store, clock: &Clock) -> Record {
        let new = crate::store::NewTransaction {
            product_code: "ONLINEBANKING".to_owned(),
            return_url: Some("https://shop.example/back".to_owned()),
            ..fields("OB-1")
        };
        let record = store
            .initiate_now(
                new,
                InitialState::Initiated,
                clock,
                Duration::from_secs(900),
            )
            .expect("stored");
        let public_url = url::Url::parse("http://127.0.0.1:8080").expect("a URL");
        let id = record.id.to_string();
        let attempt = ConfirmAttempt {
            transaction_id: &id,
            reference_no: "OB-1",
            confirmation_code: None,
            scope: None,
            public_url: &public_url,
        };
        store
            .confirm(&attempt, &Catalog::default(), clock.now())
            .expect("confirmed")
    }

    #[test]
    fn racing_submits_decide_once() {
        let store = Arc::new(Store::new());
        let clock = Clock::new();
        let record = confirmed_online_banking(&store, &clock);
        let token = record.payment_page().expect("a page").token.to_string();
        let now = clock.now();
        let barrier = Arc::new(Barrier::new(16));
        let submits: Vec<_> = (0..16)
            .map(|n| {
                let (store, barrier, token) = (store.clone(), barrier.clone(), token.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let action = PayerAction::ALL[n % 3];
                    store
                        .decide(PaymentPageKey::Token(&token), None, action, now)
                        .map(|d| (d.decided_now, action))
                })
            })
            .collect();
        let results: Vec<_> = submits
            .into_iter()
            .map(|t| t.join().expect("no panic").expect("a page"))
            .collect();
        let winners: Vec<_> = results.iter().filter(|(now, _)| *now).collect();
        assert_eq!(winners.len(), 1, "{results:?}");
        let stored = store.get(&record.id.to_string(), None).expect("stored");
        let decision = stored.payment_page().and_then(|p| p.decision);
        assert_eq!(decision.map(|d| d.action), Some(winners[0].1));
    }

    #[test]
    fn the_window_closes_the_page_and_the_view_shows_why() {
        let store = Store::new();
        let clock = Clock::new();
        let record = confirmed_online_banking(&store, &clock);
        let id = record.id.to_string();
        assert_eq!(record.view(clock.now()).status, Status::Confirmed);
        clock.advance(Duration::from_secs(600));
        let late = store
            .decide(
                PaymentPageKey::Transaction(&id),
                None,
                PayerAction::Pay,
                clock.now(),
            )
            .expect("a page");
        assert!(!late.decided_now);
        let view = late.record.view(clock.now());
        assert_eq!(view.status, Status::Failed);
        assert_eq!(view.message, Some("payer did not complete the payment"));
        let deadline = record.payment_page().map(|p| p.deadline);
        assert_eq!(view.last_modified_at, deadline);
    }

    #[test]
    fn tokens_of_the_wrong_shape_and_other_products_have_no_page() {
        let store = Store::new();
        let clock = Clock::new();
        let record = confirmed_online_banking(&store, &clock);
        let token = record.payment_page().expect("a page").token.to_string();
        let action = PayerAction::Pay;
        let now = clock.now();
        for bad in [&token[1..], "", "../../etc/passwd", &token.to_lowercase()] {
            if bad == token {
                continue;
            }
            assert_eq!(
                store.decide(PaymentPageKey::Token(bad), None, action, now),
                Err(PayerRefusal::NotFound),
                "{bad}"
            );
        }
        let other = Uuid::from_u128(5);
        assert_eq!(
            store.decide(
                PaymentPageKey::Transaction(&record.id.to_string()),
                Some(other),
                action,
                now
            ),
            Err(PayerRefusal::NotFound)
        );
        let topup = store
            .initiate_now(
                fields("T-1"),
                InitialState::Initiated,
                &clock,
                Duration::from_secs(60),
            )
            .expect("stored");
        assert_eq!(
            store.decide(
                PaymentPageKey::Transaction(&topup.id.to_string()),
                None,
                action,
                now
            ),
            Err(PayerRefusal::NoPaymentPage)
        );
    }
}
