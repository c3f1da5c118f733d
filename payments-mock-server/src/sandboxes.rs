//! Sandboxes (CONTRACT section 19): isolated worlds on one server, each
//! with its own transactions, clock, journal, fault rules, rate counter and
//! coverage, reached under `/sandboxes/{id}`. This module keeps the
//! registry: which sandboxes live, whose they are, and when each expires
//! (its time to live, renewed by every request). What a sandbox holds is
//! the state type `S` ([`crate::state::AppState`]).
//!
//! Time to live is real time (`tokio::time::Instant`, so a test on a
//! paused clock can move it), never a sandbox's virtual clock. An expired
//! sandbox is gone the moment it is asked for; the others that expired
//! are dropped by a sweep on a timer (one task per registry, made on the
//! runtime it is made on, ended when the registry is dropped: it wakes at
//! the first deadline, at least every [`SWEEP_EVERY`]), and whenever the
//! registry is listed, grows, or `/metrics` is scraped (so the gauge and
//! the expired count are right at the scrape). A sweep drops a sandbox
//! through [`Lifetime::expired`], as finding it expired does: a store the
//! replicas share removes it only if its time ran out by the database's
//! row too, so two replicas sweeping at once remove it once.
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

/// Longest pause of the sweep on a timer (it wakes at the first deadline
/// when that comes sooner).
pub(crate) const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// Shortest pause of the sweep on a timer: deadlines this close together
/// are swept at once.
const SWEEP_PAUSE: Duration = Duration::from_millis(100);

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

    /// It left the registry, whatever the way (removed, expired, or gone
    /// on another replica): requests held in it end.
    fn removed(&self) {}

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

type Entries<S> = Mutex<HashMap<Uuid, Entry<S>>>;

/// The live sandboxes of one server.
pub(crate) struct Registry<S> {
    /// Shared with the tally's sweep at a scrape and the sweep on a timer
    /// (held weakly there).
    entries: Arc<Entries<S>>,
    ttl: Duration,
    max: usize,
    tally: Arc<SandboxTally>,
    /// When the sweep on a timer wakes next (set and read under the
    /// entries' lock).
    planned: Arc<Mutex<Instant>>,
    /// Wakes the sweep on a timer early: a sandbox was added that expires
    /// before it planned to wake. Dropped with the registry, which ends it.
    wake: tokio::sync::watch::Sender<()>,
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

/// Counts `gone` sandboxes no longer live in `tally`, `expired` of them by
/// time.
fn gone(tally: &SandboxTally, gone: usize, expired: bool) {
    let gone = gone as u64;
    tally.live.fetch_sub(gone, Ordering::Relaxed);
    if expired {
        tally.expired.fetch_add(gone, Ordering::Relaxed);
    }
}

fn lock<S>(entries: &Entries<S>) -> std::sync::MutexGuard<'_, HashMap<Uuid, Entry<S>>> {
    entries.lock().unwrap_or_else(PoisonError::into_inner)
}

/// When the sweep on a timer wakes next, seen at `now` with `first` the
/// first deadline of the sandboxes held.
fn next_sweep(now: Instant, first: Option<Instant>) -> Instant {
    let latest = now + SWEEP_EVERY;
    first
        .map_or(latest, |first| first.min(latest))
        .max(now + SWEEP_PAUSE)
}

/// The sweep on a timer: drops the expired sandboxes at their deadlines
/// (at least every [`SWEEP_EVERY`]) while the registry lives.
async fn sweep_on_time<S: Lifetime>(
    held: std::sync::Weak<Entries<S>>,
    tally: Arc<SandboxTally>,
    planned: Arc<Mutex<Instant>>,
    mut wake: tokio::sync::watch::Receiver<()>,
) {
    loop {
        let Some(entries) = held.upgrade() else {
            return;
        };
        let at = {
            let now = Instant::now();
            let mut entries = lock(&entries);
            sweep(&mut entries, now, &tally);
            let at = next_sweep(now, entries.values().map(|e| e.deadline).min());
            *planned.lock().unwrap_or_else(PoisonError::into_inner) = at;
            at
        };
        drop(entries);
        tokio::select! {
            () = tokio::time::sleep_until(at) => {}
            woken = wake.changed() => if woken.is_err() {
                return;
            },
        }
    }
}

/// Drops every sandbox expired at `now`; counts them in `tally`.
fn sweep<S: Lifetime>(entries: &mut HashMap<Uuid, Entry<S>>, now: Instant, tally: &SandboxTally) {
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
        e.state.removed();
        false
    });
    let gone_now = before - entries.len();
    if gone_now > 0 {
        gone(tally, gone_now, true);
    }
}

impl<S: Clone + Lifetime + Send + 'static> Registry<S> {
    /// No sandbox; each lives `ttl` unless renewed; at most `max` at once;
    /// counted in `tally`, which sweeps the expired ones out at a scrape.
    /// Made on a Tokio runtime, the expired ones are swept out on a timer
    /// too, by a task of that runtime that ends with the registry.
    pub(crate) fn new(ttl: Duration, max: usize, tally: Arc<SandboxTally>) -> Self {
        let registry = Self::unswept(ttl, max, tally);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(sweep_on_time(
                Arc::downgrade(&registry.entries),
                Arc::clone(&registry.tally),
                Arc::clone(&registry.planned),
                registry.wake.subscribe(),
            ));
        }
        registry
    }

    /// As [`Registry::new`], without the sweep on a timer.
    fn unswept(ttl: Duration, max: usize, tally: Arc<SandboxTally>) -> Self {
        let entries: Arc<Entries<S>> = Arc::default();
        #[cfg(feature = "metrics")]
        {
            let held = Arc::downgrade(&entries);
            // One registry per tally: a second's sweep is not set.
            let _ = tally
                .sweeper
                .set(crate::metrics::Sweeper(Box::new(move |tally| {
                    if let Some(entries) = held.upgrade() {
                        sweep(&mut lock(&entries), Instant::now(), tally);
                    }
                })));
        }
        Self {
            entries,
            ttl,
            max,
            tally,
            planned: Arc::new(Mutex::new(Instant::now() + SWEEP_EVERY)),
            wake: tokio::sync::watch::Sender::new(()),
        }
    }

    /// A sandbox expiring at `deadline` was added (under the entries'
    /// lock): the sweep on a timer wakes early if it planned to wake later.
    fn added(&self, deadline: Instant) {
        if deadline < *self.planned.lock().unwrap_or_else(PoisonError::into_inner) {
            self.wake.send_replace(());
        }
    }

    /// Counts `gone` sandboxes no longer live, `expired` of them by time.
    fn gone(&self, gone_now: usize, expired: bool) {
        gone(&self.tally, gone_now, expired);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Entry<S>>> {
        lock(&self.entries)
    }

    /// Drops every expired sandbox; counts them.
    fn sweep(&self, entries: &mut HashMap<Uuid, Entry<S>>, now: Instant) {
        sweep(entries, now, &self.tally);
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
        self.added(deadline);
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
        let mut entries = self.lock();
        entries.insert(
            info.id,
            Entry {
                info,
                deadline,
                told: deadline,
                state,
            },
        );
        self.added(deadline);
        drop(entries);
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
        self.added(deadline);
        self.tally.live.fetch_add(1, Ordering::Relaxed);
        state
    }

    /// Drops the sandbox `id` from this registry without a word to its
    /// store (another replica removed it, or its time ran out there).
    pub(crate) fn drop_gone(&self, id: Uuid) {
        if let Some(entry) = self.lock().remove(&id) {
            entry.state.removed();
            self.gone(1, false);
        }
    }

    /// The most sandboxes live at once (`--max-sandboxes`).
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// The sandbox `id` with its owner, as it is: not renewed (a request
    /// renews it once its caller is let in, [`Registry::renew`], so one
    /// turned away keeps nothing alive); `None` when there is none, or it
    /// expired (then it is dropped).
    pub(crate) fn find(&self, id: Uuid) -> Option<(Option<Uuid>, S)> {
        let now = Instant::now();
        let mut entries = self.lock();
        let entry = entries.get(&id)?;
        if entry.deadline <= now && !entry.state.in_use() {
            entry.state.expired();
            entry.state.removed();
            entries.remove(&id);
            self.gone(1, true);
            return None;
        }
        Some((entry.info.owner, entry.state.clone()))
    }

    /// The sandbox `id`, found ([`Registry::find`]) and renewed: a request
    /// its caller may make.
    #[cfg(test)]
    pub(crate) fn use_sandbox(&self, id: Uuid) -> Option<(Option<Uuid>, S)> {
        let found = self.find(id)?;
        self.renew(id);
        Some(found)
    }

    /// Starts the sandbox `id`'s time to live again from now, if it is
    /// still here: a request let in to it (and again as it is answered,
    /// when it took long, so the change it answered stays). Its store
    /// hears of it at most once a quarter of the time to live.
    pub(crate) fn renew(&self, id: Uuid) {
        let now = Instant::now();
        if let Some(entry) = self.lock().get_mut(&id) {
            entry.deadline = entry.deadline.max(now + entry.info.ttl);
            if entry.deadline.saturating_duration_since(entry.told) >= entry.info.ttl / 4 {
                entry.told = entry.deadline;
                entry.state.renewed(wall(entry.deadline, now));
            }
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
                e.state.removed();
                entries.remove(&id);
                self.gone(1, true);
                None
            }
            Some(e) if scope.is_none() || e.info.owner == scope => {
                let removed = entries.remove(&id).map(|e| e.state);
                if let Some(state) = &removed {
                    state.removed();
                }
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
mod tests;
