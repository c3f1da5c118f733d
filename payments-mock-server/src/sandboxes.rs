//! Sandboxes (CONTRACT section 19): isolated worlds on one server, each
//! with its own transactions, clock, journal, fault rules, rate counter and
//! coverage, reached under `/sandboxes/{id}`. This module keeps the
//! registry: which sandboxes live, whose they are, and when each expires
//! (its time to live, renewed by every request). What a sandbox holds is
//! the state type `S` ([`crate::state::AppState`]).
//!
//! Time to live is real time (`tokio::time::Instant`, so a test on a
//! paused clock can move it), never a sandbox's virtual clock. An expired
//! sandbox is gone the moment it is asked for; the registry drops the
//! others that expired whenever it is listed or grows.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;
use uuid::Uuid;

use crate::metrics::SandboxTally;

/// Default of `--sandbox-ttl`: an hour.
pub const DEFAULT_SANDBOX_TTL: Duration = Duration::from_secs(3600);

/// Default of `--max-sandboxes`.
pub const DEFAULT_MAX_SANDBOXES: usize = 1000;

/// Longest time to live a sandbox may ask for (`ttlSeconds`): a week.
pub const MAX_SANDBOX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// Longest `label`, in characters.
pub const MAX_LABEL_CHARS: usize = 200;

/// What a sandbox is, as `GET /_mock/sandboxes` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxInfo {
    /// Its id: the path segment after `/sandboxes/`.
    pub id: Uuid,
    /// What its creator called it.
    pub label: Option<String>,
    /// The merchant whose key made it (`None`: the admin key, or an open
    /// admin side).
    pub owner: Option<Uuid>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it expires unless it is used before.
    pub expires_at: DateTime<Utc>,
    /// Its time to live.
    pub ttl: Duration,
}

/// Why a sandbox was not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// `max` sandboxes live already.
    TooMany {
        /// The limit.
        max: usize,
    },
}

struct Entry<S> {
    info: SandboxInfo,
    deadline: Instant,
    state: S,
}

/// The live sandboxes of one server.
pub(crate) struct Registry<S> {
    entries: Mutex<HashMap<Uuid, Entry<S>>>,
    ttl: Duration,
    max: usize,
    tally: Arc<SandboxTally>,
}

impl<S> std::fmt::Debug for Registry<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("live", &self.tally.live)
            .field("ttl", &self.ttl)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

/// `deadline` as a wall-clock time, seen at `now`.
fn wall(deadline: Instant, now: Instant) -> DateTime<Utc> {
    let left = deadline.saturating_duration_since(now);
    Utc::now() + chrono::Duration::from_std(left).unwrap_or(chrono::Duration::MAX)
}

impl<S: Clone> Registry<S> {
    /// No sandbox; each lives `ttl` unless renewed; at most `max` at once;
    /// counted in `tally`.
    pub(crate) fn new(ttl: Duration, max: usize, tally: Arc<SandboxTally>) -> Self {
        Self {
            entries: Mutex::default(),
            ttl,
            max,
            tally,
        }
    }

    /// Counts `gone` sandboxes no longer live, `expired` of them by time.
    fn gone(&self, gone: usize, expired: bool) {
        let gone = gone as u64;
        self.tally.live.fetch_sub(gone, Ordering::Relaxed);
        if expired {
            self.tally.expired.fetch_add(gone, Ordering::Relaxed);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Entry<S>>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Drops every expired sandbox; counts them.
    fn sweep(&self, entries: &mut HashMap<Uuid, Entry<S>>, now: Instant) {
        let before = entries.len();
        entries.retain(|_, e| e.deadline > now);
        let gone = before - entries.len();
        if gone > 0 {
            self.gone(gone, true);
        }
    }

    /// Makes a sandbox: `make` builds its state from its id. `ttl`: its own
    /// time to live (else the server's).
    ///
    /// # Errors
    ///
    /// [`Refused::TooMany`]: the limit is reached.
    pub(crate) fn create(
        &self,
        owner: Option<Uuid>,
        label: Option<String>,
        ttl: Option<Duration>,
        make: impl FnOnce(Uuid) -> S,
    ) -> Result<SandboxInfo, Refused> {
        let now = Instant::now();
        let ttl = ttl.unwrap_or(self.ttl);
        let mut entries = self.lock();
        if entries.len() >= self.max {
            self.sweep(&mut entries, now);
            if entries.len() >= self.max {
                return Err(Refused::TooMany { max: self.max });
            }
        }
        let id = Uuid::new_v4();
        let deadline = now + ttl;
        let info = SandboxInfo {
            id,
            label,
            owner,
            created_at: Utc::now(),
            expires_at: wall(deadline, now),
            ttl,
        };
        entries.insert(
            id,
            Entry {
                info: info.clone(),
                deadline,
                state: make(id),
            },
        );
        self.tally.created.fetch_add(1, Ordering::Relaxed);
        self.tally.live.fetch_add(1, Ordering::Relaxed);
        Ok(info)
    }

    /// The sandbox `id`, renewed (its time to live counts from now), with
    /// its owner; `None` when there is none, or it expired (then it is
    /// dropped).
    pub(crate) fn use_sandbox(&self, id: Uuid) -> Option<(Option<Uuid>, S)> {
        let now = Instant::now();
        let mut entries = self.lock();
        let entry = entries.get_mut(&id)?;
        if entry.deadline <= now {
            entries.remove(&id);
            self.gone(1, true);
            return None;
        }
        entry.deadline = now + entry.info.ttl;
        Some((entry.info.owner, entry.state.clone()))
    }

    /// The live sandboxes `scope` may see (all without a scope), oldest
    /// first, each with its state.
    pub(crate) fn list(&self, scope: Option<Uuid>) -> Vec<(SandboxInfo, S)> {
        let now = Instant::now();
        let mut entries = self.lock();
        self.sweep(&mut entries, now);
        let mut listed: Vec<(SandboxInfo, S)> = entries
            .values()
            .filter(|e| scope.is_none() || e.info.owner == scope)
            .map(|e| {
                let mut info = e.info.clone();
                info.expires_at = wall(e.deadline, now);
                (info, e.state.clone())
            })
            .collect();
        listed.sort_by_key(|(info, _)| (info.created_at, info.id));
        listed
    }

    /// Removes the sandbox `id` if `scope` may see it; whether it did.
    pub(crate) fn remove(&self, id: Uuid, scope: Option<Uuid>) -> bool {
        let now = Instant::now();
        let mut entries = self.lock();
        match entries.get(&id) {
            Some(e) if e.deadline <= now => {
                entries.remove(&id);
                self.gone(1, true);
                false
            }
            Some(e) if scope.is_none() || e.info.owner == scope => {
                entries.remove(&id);
                self.gone(1, false);
                true
            }
            _ => false,
        }
    }

    /// How many sandboxes are held (expired ones not yet dropped included).
    #[cfg(test)]
    pub(crate) fn live(&self) -> usize {
        self.lock().len()
    }

    /// How many sandboxes were made, and how many expired, since start.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.tally.created.load(Ordering::Relaxed),
            self.tally.expired.load(Ordering::Relaxed),
        )
    }
}

/// A sandbox id from its path segment: a UUID in any spelling the uuid
/// crate reads, else `None` (which is answered as an unknown sandbox).
pub(crate) fn parse_id(segment: &str) -> Option<Uuid> {
    // Hyphenated only: one spelling per sandbox, as its baseUrl gives it.
    if segment.len() != 36 {
        return None;
    }
    Uuid::try_parse(segment).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_sandbox_expires_after_its_ttl_unless_used() {
        let registry: Registry<u32> = Registry::new(Duration::from_secs(10), 5, Arc::default());
        let a = registry.create(None, None, None, |_| 1).expect("made");
        let b = registry
            .create(None, Some("b".into()), Some(Duration::from_secs(30)), |_| 2)
            .expect("made");
        tokio::time::advance(Duration::from_secs(8)).await;
        assert_eq!(registry.use_sandbox(a.id), Some((None, 1)), "renewed");
        tokio::time::advance(Duration::from_secs(8)).await;
        assert!(registry.use_sandbox(a.id).is_some(), "8 s after its use");
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(registry.use_sandbox(a.id), None, "11 s unused: gone");
        assert!(registry.use_sandbox(b.id).is_some(), "its own 30 s");
        assert_eq!(registry.counts(), (2, 1));
        assert_eq!(registry.live(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn the_limit_counts_live_sandboxes_only() {
        let registry: Registry<()> = Registry::new(Duration::from_secs(1), 2, Arc::default());
        registry.create(None, None, None, |_| ()).expect("one");
        registry.create(None, None, None, |_| ()).expect("two");
        assert_eq!(
            registry.create(None, None, None, |_| ()),
            Err(Refused::TooMany { max: 2 })
        );
        tokio::time::advance(Duration::from_secs(2)).await;
        registry
            .create(None, None, None, |_| ())
            .expect("the old expired");
        assert_eq!(registry.counts(), (3, 2));
    }

    #[tokio::test]
    async fn a_merchant_lists_and_removes_its_own_only() {
        let registry: Registry<()> = Registry::new(DEFAULT_SANDBOX_TTL, 10, Arc::default());
        let m = Uuid::new_v4();
        let n = Uuid::new_v4();
        let mine = registry.create(Some(m), None, None, |_| ()).expect("made");
        let theirs = registry.create(Some(n), None, None, |_| ()).expect("made");
        let listed: Vec<Uuid> = registry.list(Some(m)).iter().map(|(i, _)| i.id).collect();
        assert_eq!(listed, vec![mine.id]);
        assert_eq!(registry.list(None).len(), 2);
        assert!(!registry.remove(theirs.id, Some(m)), "not its own");
        assert!(registry.remove(mine.id, Some(m)));
        assert!(!registry.remove(mine.id, None), "already gone");
        assert!(registry.remove(theirs.id, None), "the admin's");
    }

    #[test]
    fn ids_are_hyphenated_uuids_only() {
        let id = Uuid::new_v4();
        assert_eq!(parse_id(&id.to_string()), Some(id));
        for bad in [
            "",
            "x",
            &id.simple().to_string(),
            &format!("{{{id}}}"),
            &"9".repeat(36),
            &format!("{id}/"),
        ] {
            assert_eq!(parse_id(bad), None, "{bad:?}");
        }
    }
}
