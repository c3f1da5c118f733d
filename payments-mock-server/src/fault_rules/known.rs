//! What a rule book remembers of the transactions it looked up: their
//! merchant and reference, which never change, so a status polled by id
//! meets the rules without a second read of the store.

use std::collections::HashMap;
use std::sync::PoisonError;

use uuid::Uuid;

use super::{Facts, RuleBook};

/// The most transactions [`RuleBook::remember`] holds before it starts
/// afresh.
const KNOWN: usize = 4096;

impl RuleBook {
    pub(super) fn known_lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, (Uuid, String)>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes the merchant and reference of the stored transaction `id`,
    /// looked up for a rule.
    pub(crate) fn remember(&self, id: Uuid, merchant: Uuid, reference: &str) {
        let mut known = self.known_lock();
        if known.len() >= KNOWN {
            known.clear();
        }
        known.insert(id, (merchant, reference.to_owned()));
    }

    /// Fills `facts` from a transaction [`RuleBook::remember`] noted, as a
    /// look-up in `scope` would (another merchant's is not found);
    /// whether it knew the transaction.
    pub(crate) fn recall(&self, facts: &mut Facts, scope: Option<Uuid>) -> bool {
        let Some(id) = facts.transaction_id else {
            return false;
        };
        let known = self.known_lock();
        let Some((merchant, reference)) = known.get(&id) else {
            return false;
        };
        if scope.is_none_or(|m| m == *merchant) {
            facts.merchant_id = Some(*merchant);
            facts.reference_no = Some(reference.clone());
        }
        facts.complete = true;
        true
    }
}
