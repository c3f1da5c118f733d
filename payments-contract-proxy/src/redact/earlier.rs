//! The secrets an initiate carried (its payer id, as its token), kept by
//! the transaction it was answered with and by its reference, so that the
//! later exchanges of that transaction (its status reads, its confirm),
//! which carry no `payerId` of their own, replace them the same way where
//! they echo them (a `referenceNo` such as `TOPUP-60123456789-1`).
//!
//! Bounded as the rules' memory is ([`crate::memory::CAPACITY`]
//! transactions and references, the least recently seen forgotten
//! first): an exchange of a transaction forgotten here is redacted by
//! what it carries alone.

use std::borrow::Cow;
use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use lru::LruCache;

use super::Secrets;
use crate::exchange::{Endpoint, Parsed};

/// The most secrets kept under one reference (initiated by several
/// merchants, each with a payer).
const MERGED: usize = 16;

/// The secrets of initiates, by transaction id and by reference.
pub(crate) struct Earlier {
    /// Whether anything was kept yet: until then (a run without payer
    /// ids) no exchange takes the lock.
    any: AtomicBool,
    kept: Mutex<Kept>,
}

struct Kept {
    ids: LruCache<Box<str>, Arc<Secrets>>,
    references: LruCache<Box<str>, Arc<Secrets>>,
}

impl std::fmt::Debug for Earlier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Earlier { [redacted] }")
    }
}

impl Default for Earlier {
    fn default() -> Self {
        let capacity = NonZeroUsize::new(crate::memory::CAPACITY).unwrap_or(NonZeroUsize::MIN);
        Self {
            any: AtomicBool::new(false),
            kept: Mutex::new(Kept {
                ids: LruCache::new(capacity),
                references: LruCache::new(capacity),
            }),
        }
    }
}

/// The transaction ids and the references `parsed` names: its path's,
/// its request's, its successful answer's.
fn named<'a>(parsed: &'a Parsed<'a>) -> (Vec<Cow<'a, str>>, Vec<Cow<'a, str>>) {
    let data = parsed.success_data();
    let mut ids: Vec<Cow<'a, str>> = Vec::with_capacity(2);
    let mut references: Vec<Cow<'a, str>> = Vec::with_capacity(2);
    match &parsed.endpoint {
        Endpoint::StatusById(id) => ids.push(Cow::Borrowed(id.as_str())),
        Endpoint::StatusByReference(reference) => {
            references.push(Cow::Borrowed(reference.as_str()));
        }
        _ => {}
    }
    ids.extend(parsed.request_text("transactionId"));
    ids.extend(data.and_then(|d| d.text("transactionId")));
    references.extend(parsed.request_text("referenceNo"));
    references.extend(data.and_then(|d| d.text("referenceNo")));
    (ids, references)
}

/// `found` with the secrets of `more` it lacks (`listed`: the values
/// `found` holds, a set so that thousands are merged in linear time).
fn add<'a>(found: &mut Secrets, listed: &mut HashSet<&'a str>, more: &'a Secrets) {
    for (value, shown) in more {
        if listed.insert(value.as_str()) {
            found.push((value.clone(), shown.clone()));
        }
    }
}

impl Earlier {
    /// Forgets everything, as a long run forgets the least recent.
    #[cfg(test)]
    pub(crate) fn forget(&self) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.ids.clear();
        kept.references.clear();
    }

    /// The secrets kept of the transactions and references `parsed`
    /// names, each once.
    pub(crate) fn of(&self, parsed: &Parsed<'_>) -> Secrets {
        let mut found = Secrets::new();
        if !self.any.load(Ordering::Acquire) || parsed.endpoint == Endpoint::Other {
            return found;
        }
        let (ids, references) = named(parsed);
        let mut lists: Vec<Arc<Secrets>> = Vec::with_capacity(ids.len() + references.len());
        {
            let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            for id in &ids {
                lists.extend(kept.ids.get(id.as_ref()).cloned());
            }
            for reference in &references {
                lists.extend(kept.references.get(reference.as_ref()).cloned());
            }
        }
        // Merged outside the lock.
        let mut listed = HashSet::new();
        for secrets in &lists {
            add(&mut found, &mut listed, secrets);
        }
        found
    }

    /// Keeps `secrets` of an initiate answered 200 (`parsed`) under the
    /// transaction its answer names and the reference it was initiated
    /// with (and the one its answer names); nothing of any other exchange,
    /// or when there are none.
    pub(crate) fn keep(&self, parsed: &Parsed<'_>, secrets: Secrets) {
        if parsed.endpoint != Endpoint::Initiate || secrets.is_empty() {
            return;
        }
        let Some(id) = parsed.success_data().and_then(|d| d.text("transactionId")) else {
            return;
        };
        let (_, references) = named(parsed);
        let secrets = Arc::new(secrets);
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.ids.put(id.as_ref().into(), Arc::clone(&secrets));
        for reference in references {
            // A reference other merchants initiated too keeps theirs
            // beside (a few at most).
            let merged = match kept.references.get(reference.as_ref()) {
                Some(before) => {
                    let mut both = Secrets::clone(&secrets);
                    let room = MERGED.saturating_sub(both.len());
                    let earlier: Secrets = before.iter().take(room).cloned().collect();
                    let mut listed = secrets.iter().map(|(v, _)| v.as_str()).collect();
                    add(&mut both, &mut listed, &earlier);
                    Arc::new(both)
                }
                None => Arc::clone(&secrets),
            };
            kept.references.put(reference.as_ref().into(), merged);
        }
        self.any.store(true, Ordering::Release);
    }
}
