//! The payer's side of a redirect-based transaction (CONTRACT section 13)
//! in the memory store: reading a payment page and deciding it, exactly
//! once.
//!
//! The decision is checked and recorded under the store's one write lock,
//! like a confirm, so of many concurrent submits exactly one decides; the
//! rest see the decision already made.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::memory::{Inner, MemoryStore};
use crate::domain::port::{Decided, PayerRefusal, PaymentPageKey};
use crate::domain::transaction::{
    ConfirmResult, PayerAction, PayerDecision, PaymentPage, Record, issued_id,
};

impl Inner {
    pub(super) fn position_of_page(&self, key: PaymentPageKey<'_>) -> Option<usize> {
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

    pub(crate) fn payment_page_mut(&mut self) -> Option<&mut PaymentPage> {
        match &mut self.confirmation.as_deref_mut()?.result {
            ConfirmResult::AwaitingPayer(page) => Some(page),
            _ => None,
        }
    }
}

impl MemoryStore {
    /// `f` of the transaction behind a payment page and its page, under the
    /// read lock. `None` for an unknown key, and for a transaction without
    /// a page.
    pub(super) fn payment_page_now<T>(
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
    pub(super) fn decide_now(
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
        // The window at the clock's now under the lock, never earlier
        // than the caller's (as confirm's expiry).
        let now = now.max(self.clock.now());
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
