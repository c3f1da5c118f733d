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
//!
//! A store that keeps sandboxes across restarts (SQLite) hears of their
//! lives through [`Lifetime`]: an expiry moved on by use (at most once a
//! quarter of the time to live, so a restart may find a sandbox expiring
//! up to that much earlier than it would have), and an expiry reached.

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
    /// `live` sandboxes live already, `max` or more.
    TooMany {
        /// The limit.
        max: usize,
        /// How many live (more than `max` after a restart with a lower
        /// limit).
        live: usize,
    },
}

/// What a sandbox's state hears of its life, for a store that writes it
/// down. Called under the registry's lock: nothing here may wait.
pub(crate) trait Lifetime {
    /// Its expiry moved on to `expires_at`.
    fn renewed(&self, expires_at: DateTime<Utc>) {
        let _ = expires_at;
    }

    /// It expired and was dropped.
    fn expired(&self) {}

    /// Whether a request is being served in it now: a sandbox is never
    /// dropped under a request (its answer would describe a change no
    /// later request can see); its time to live starts again instead.
    fn in_use(&self) -> bool {
        false
    }
}

struct Entry<S> {
    info: SandboxInfo,
    deadline: Instant,
    /// The deadline its store last heard of.
    told: Instant,
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

impl<S: Clone + Lifetime> Registry<S> {
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
        entries.retain(|_, e| {
            if e.deadline > now {
                return true;
            }
            if e.state.in_use() {
                e.deadline = now + e.info.ttl;
                return true;
            }
            e.state.expired();
            false
        });
        let gone = before - entries.len();
        if gone > 0 {
            self.gone(gone, true);
        }
    }

    /// Makes a sandbox: `make` builds its state from its id. `ttl`: its own
    /// time to live (else the server's). Its description and its state.
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
    ) -> Result<(SandboxInfo, S), Refused> {
        let now = Instant::now();
        let ttl = ttl.unwrap_or(self.ttl);
        let mut entries = self.lock();
        if entries.len() >= self.max {
            self.sweep(&mut entries, now);
            if entries.len() >= self.max {
                return Err(Refused::TooMany {
                    max: self.max,
                    live: entries.len(),
                });
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
        let state = make(id);
        entries.insert(
            id,
            Entry {
                info: info.clone(),
                deadline,
                told: deadline,
                state: state.clone(),
            },
        );
        self.tally.created.fetch_add(1, Ordering::Relaxed);
        self.tally.live.fetch_add(1, Ordering::Relaxed);
        Ok((info, state))
    }

    /// Takes back a sandbox a store kept from an earlier run, as `info`
    /// says (live until `info.expires_at`, wall clock); whether it is
    /// still live (an expired one is dropped and counted as expired).
    pub(crate) fn restore(&self, info: SandboxInfo, state: S) -> bool {
        let now = Instant::now();
        let left = (info.expires_at - Utc::now()).to_std().unwrap_or_default();
        if left.is_zero() {
            state.expired();
            self.tally.expired.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let deadline = now + left.min(info.ttl);
        self.lock().insert(
            info.id,
            Entry {
                info,
                deadline,
                told: deadline,
                state,
            },
        );
        self.tally.live.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// The sandbox `info` describes, as a store the replicas share holds it
    /// (live until `info.expires_at`): the state this registry holds for
    /// it, its deadline moved on to that expiry if another replica renewed
    /// it; else a new entry with the state `make` builds (made on another
    /// replica, or dropped here as unused while others used it).
    pub(crate) fn adopt(&self, info: SandboxInfo, make: impl FnOnce() -> S) -> S {
        let now = Instant::now();
        let left = (info.expires_at - Utc::now()).to_std().unwrap_or_default();
        let deadline = now + left.min(info.ttl);
        let mut entries = self.lock();
        if let Some(entry) = entries.get_mut(&info.id) {
            if entry.deadline < deadline {
                entry.deadline = deadline;
                entry.told = entry.told.max(deadline);
            }
            return entry.state.clone();
        }
        let state = make();
        entries.insert(
            info.id,
            Entry {
                info,
                deadline,
                told: deadline,
                state: state.clone(),
            },
        );
        self.tally.live.fetch_add(1, Ordering::Relaxed);
        state
    }

    /// Drops the sandbox `id` from this registry without a word to its
    /// store (another replica removed it, or its time ran out there).
    pub(crate) fn drop_gone(&self, id: Uuid) {
        if self.lock().remove(&id).is_some() {
            self.gone(1, false);
        }
    }

    /// The most sandboxes live at once (`--max-sandboxes`).
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// The sandbox `id`, renewed (its time to live counts from now), with
    /// its owner; `None` when there is none, or it expired (then it is
    /// dropped).
    pub(crate) fn use_sandbox(&self, id: Uuid) -> Option<(Option<Uuid>, S)> {
        let now = Instant::now();
        let mut entries = self.lock();
        let entry = entries.get_mut(&id)?;
        if entry.deadline <= now && !entry.state.in_use() {
            entry.state.expired();
            entries.remove(&id);
            self.gone(1, true);
            return None;
        }
        entry.deadline = now + entry.info.ttl;
        if entry.deadline.saturating_duration_since(entry.told) >= entry.info.ttl / 4 {
            entry.told = entry.deadline;
            entry.state.renewed(wall(entry.deadline, now));
        }
        Some((entry.info.owner, entry.state.clone()))
    }

    /// Starts the sandbox `id`'s time to live again from now, if it is
    /// still here: a request that took longer than the time to live
    /// renews it as it is answered, so the change it answered stays.
    pub(crate) fn renew(&self, id: Uuid) {
        let now = Instant::now();
        if let Some(entry) = self.lock().get_mut(&id) {
            entry.deadline = entry.deadline.max(now + entry.info.ttl);
        }
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

    /// Removes the sandbox `id` if `scope` may see it: its state (for its
    /// store to forget it), or `None`.
    pub(crate) fn remove(&self, id: Uuid, scope: Option<Uuid>) -> Option<S> {
        let now = Instant::now();
        let mut entries = self.lock();
        match entries.get(&id) {
            Some(e) if e.deadline <= now => {
                e.state.expired();
                entries.remove(&id);
                self.gone(1, true);
                None
            }
            Some(e) if scope.is_none() || e.info.owner == scope => {
                let removed = entries.remove(&id).map(|e| e.state);
                self.gone(1, false);
                removed
            }
            _ => None,
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

    impl Lifetime for u32 {}
    impl Lifetime for () {}

    /// A state whose clones are requests being served.
    impl Lifetime for Arc<u8> {
        fn in_use(&self) -> bool {
            Arc::strong_count(self) > 1
        }
    }

    /// A request served past the sandbox's time to live keeps it: neither
    /// another request to it nor a sweep drops it while the first is
    /// served, and it lives a whole time to live from then.
    #[tokio::test(start_paused = true)]
    async fn a_sandbox_is_never_dropped_under_a_request() {
        let registry: Registry<Arc<u8>> = Registry::new(Duration::from_secs(1), 5, Arc::default());
        let (made, _) = registry
            .create(None, None, None, |_| Arc::new(0))
            .expect("made");
        let (_, serving) = registry.use_sandbox(made.id).expect("live");
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert_eq!(registry.list(None).len(), 1, "a sweep keeps it");
        assert!(
            registry.use_sandbox(made.id).is_some(),
            "another request too"
        );
        registry.renew(made.id);
        drop(serving);
        tokio::time::advance(Duration::from_millis(900)).await;
        assert!(
            registry.use_sandbox(made.id).is_some(),
            "renewed when in use"
        );
        tokio::time::advance(Duration::from_millis(1100)).await;
        assert!(registry.use_sandbox(made.id).is_none(), "unused: gone");
    }

    #[tokio::test(start_paused = true)]
    async fn a_sandbox_expires_after_its_ttl_unless_used() {
        let registry: Registry<u32> = Registry::new(Duration::from_secs(10), 5, Arc::default());
        let (a, _) = registry.create(None, None, None, |_| 1).expect("made");
        let (b, _) = registry
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
            Err(Refused::TooMany { max: 2, live: 2 })
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
        let (mine, _) = registry.create(Some(m), None, None, |_| ()).expect("made");
        let (theirs, _) = registry.create(Some(n), None, None, |_| ()).expect("made");
        let listed: Vec<Uuid> = registry.list(Some(m)).iter().map(|(i, _)| i.id).collect();
        assert_eq!(listed, vec![mine.id]);
        assert_eq!(registry.list(None).len(), 2);
        assert!(registry.remove(theirs.id, Some(m)).is_none(), "not its own");
        assert!(registry.remove(mine.id, Some(m)).is_some());
        assert!(registry.remove(mine.id, None).is_none(), "already gone");
        assert!(registry.remove(theirs.id, None).is_some(), "the admin's");
    }

    /// A state that notes what its store would hear.
    #[derive(Clone, Default)]
    struct Heard(Arc<Mutex<Vec<String>>>);

    impl Lifetime for Heard {
        fn renewed(&self, expires_at: DateTime<Utc>) {
            let left = (expires_at - Utc::now()).num_seconds();
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(format!("renewed {left}"));
        }

        fn expired(&self) {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push("expired".into());
        }
    }

    impl Heard {
        fn take(&self) -> Vec<String> {
            std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn its_store_hears_of_renewals_a_quarter_apart_and_of_expiry() {
        let registry: Registry<Heard> = Registry::new(Duration::from_secs(100), 5, Arc::default());
        let heard = Heard::default();
        let (made, _) = registry
            .create(None, None, None, |_| heard.clone())
            .expect("made");
        // Used every 10 s: the store hears at most once per 25 s.
        for _ in 0..6 {
            tokio::time::advance(Duration::from_secs(10)).await;
            assert!(registry.use_sandbox(made.id).is_some());
        }
        let told = heard.take();
        assert_eq!(told.len(), 2, "{told:?}");
        assert!(told.iter().all(|t| t.starts_with("renewed ")), "{told:?}");
        tokio::time::advance(Duration::from_secs(101)).await;
        assert!(registry.use_sandbox(made.id).is_none());
        assert_eq!(heard.take(), ["expired"]);
        // Removed by hand: the caller forgets it, the state hears nothing.
        let (other, _) = registry
            .create(None, None, None, |_| heard.clone())
            .expect("made");
        assert!(registry.remove(other.id, None).is_some());
        assert_eq!(heard.take(), Vec::<String>::new());
    }

    #[tokio::test]
    async fn a_kept_sandbox_comes_back_until_its_time_is_past() {
        let registry: Registry<Heard> = Registry::new(DEFAULT_SANDBOX_TTL, 5, Arc::default());
        let heard = Heard::default();
        let info = |expires_in: i64| SandboxInfo {
            id: Uuid::new_v4(),
            label: Some("kept".into()),
            owner: None,
            created_at: Utc::now() - chrono::Duration::hours(1),
            expires_at: Utc::now() + chrono::Duration::seconds(expires_in),
            ttl: DEFAULT_SANDBOX_TTL,
        };
        let live = info(600);
        assert!(registry.restore(live.clone(), heard.clone()));
        assert!(!registry.restore(info(-1), heard.clone()));
        assert_eq!(
            heard.take(),
            ["expired"],
            "the store forgets the expired one"
        );
        let listed = registry.list(None);
        assert_eq!(listed.len(), 1);
        let left = (listed[0].0.expires_at - Utc::now()).num_seconds();
        assert!((590..=600).contains(&left), "{left}");
        assert_eq!(listed[0].0.label.as_deref(), Some("kept"));
        assert_eq!(registry.counts(), (0, 1), "restored, not made; one expired");
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
