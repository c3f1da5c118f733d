//! The registry: time to live, limits, scopes, what its store hears.

use super::*;

// A whole server on a SQLite file, swept with nobody asking.
#[cfg(feature = "sqlite")]
mod swept;

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

/// Finding a sandbox (a request whose caller is not yet let in) renews
/// nothing: only [`Registry::renew`] does, and its store hears of that.
#[tokio::test(start_paused = true)]
async fn finding_a_sandbox_renews_nothing() {
    let registry: Registry<Heard> = Registry::new(Duration::from_secs(10), 5, Arc::default());
    let heard = Heard::default();
    let (made, _) = registry
        .create(None, None, None, |_| heard.clone())
        .expect("made");
    for _ in 0..9 {
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(registry.find(made.id).is_some(), "live");
    }
    assert_eq!(heard.take(), Vec::<String>::new(), "nothing renewed");
    tokio::time::advance(Duration::from_millis(1100)).await;
    assert!(registry.find(made.id).is_none(), "10 s after it was made");
    assert_eq!(heard.take(), ["expired"]);
    let (kept, _) = registry
        .create(None, None, None, |_| heard.clone())
        .expect("made");
    tokio::time::advance(Duration::from_secs(9)).await;
    registry.renew(kept.id);
    let told = heard.take();
    assert!(
        told.len() == 1 && told[0].starts_with("renewed "),
        "its store hears of it: {told:?}"
    );
    tokio::time::advance(Duration::from_secs(9)).await;
    assert!(registry.find(kept.id).is_some(), "renewed 9 s ago");
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

/// Lets the sweep on a timer run what the clock's move woke (a paused
/// clock on this test's one thread): a bounded number of turns, no sleep.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

/// Nobody asks: no request, no listing, no scrape. An expired sandbox is
/// dropped all the same (its store forgets it) at its deadline, whether
/// its time to live is the server's or its own shorter one made after a
/// longer one (the sweep wakes earlier for it); one in use lives on. The
/// task ends with the registry.
#[tokio::test(start_paused = true)]
async fn an_expired_sandbox_is_swept_without_anyone_asking() {
    let tally = Arc::new(SandboxTally::default());
    let registry: Registry<Heard> = Registry::new(Duration::from_secs(100), 5, Arc::clone(&tally));
    let long = Heard::default();
    let short = Heard::default();
    let busy: Registry<Arc<u8>> = Registry::new(Duration::from_secs(3), 5, Arc::default());
    settle().await;
    registry
        .create(None, None, None, |_| long.clone())
        .expect("made");
    registry
        .create(None, None, Some(Duration::from_secs(3)), |_| short.clone())
        .expect("made");
    let (served, _) = busy
        .create(None, None, None, |_| Arc::new(0))
        .expect("made");
    let (_, serving) = busy.use_sandbox(served.id).expect("live");
    settle().await;
    tokio::time::advance(Duration::from_millis(2900)).await;
    settle().await;
    assert_eq!(registry.live(), 2, "neither expired yet");
    tokio::time::advance(Duration::from_millis(300)).await;
    settle().await;
    assert_eq!(short.take(), ["expired"], "the short one, unasked");
    assert_eq!(registry.live(), 1);
    assert_eq!(tally.live.load(Ordering::Relaxed), 1);
    assert_eq!(tally.expired.load(Ordering::Relaxed), 1);
    assert_eq!(busy.live(), 1, "a request is served in it");
    tokio::time::advance(Duration::from_secs(97)).await;
    settle().await;
    assert_eq!(long.take(), ["expired"], "the long one, at its own time");
    assert_eq!(registry.live(), 0);
    drop(serving);
    tokio::time::advance(Duration::from_secs(40)).await;
    settle().await;
    assert_eq!(busy.live(), 0, "unused since: gone");
    drop(registry);
    settle().await;
    assert_eq!(Arc::strong_count(&tally), 1, "the sweep ended with it");
}

/// Restored at start, nobody asking: one whose time ran out while the
/// server was down goes at once (its store forgets it); one whose time
/// runs out soon after is swept at its deadline, before the sweep's
/// longest pause, though restored after the sweep first planned.
#[tokio::test(start_paused = true)]
async fn a_restored_sandbox_is_swept_without_anyone_asking() {
    let tally = Arc::new(SandboxTally::default());
    let registry: Registry<Heard> = Registry::new(DEFAULT_SANDBOX_TTL, 5, Arc::clone(&tally));
    settle().await;
    let kept = |expires_in: chrono::Duration| SandboxInfo {
        id: Uuid::new_v4(),
        label: None,
        owner: None,
        created_at: Utc::now() - chrono::Duration::hours(1),
        expires_at: Utc::now() + expires_in,
        ttl: DEFAULT_SANDBOX_TTL,
    };
    let (past, soon, later) = (Heard::default(), Heard::default(), Heard::default());
    assert!(!registry.restore(kept(-chrono::Duration::seconds(5)), past.clone()));
    assert!(registry.restore(kept(chrono::Duration::seconds(3)), soon.clone()));
    assert!(registry.restore(kept(chrono::Duration::seconds(40)), later.clone()));
    assert_eq!(past.take(), ["expired"], "gone at once");
    settle().await;
    tokio::time::advance(Duration::from_millis(2500)).await;
    settle().await;
    assert_eq!(registry.live(), 2, "neither due yet");
    tokio::time::advance(Duration::from_millis(1000)).await;
    settle().await;
    assert_eq!(soon.take(), ["expired"], "at its deadline, unasked");
    assert_eq!(registry.live(), 1);
    tokio::time::advance(Duration::from_secs(37)).await;
    settle().await;
    assert_eq!(later.take(), ["expired"], "at its own, unasked");
    assert_eq!(registry.live(), 0);
    assert_eq!(tally.expired.load(Ordering::Relaxed), 3);
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

/// A scrape sweeps first: the gauge and the expired count are right at
/// the scrape, not only once the sandboxes are listed or the registry
/// grows (two sandboxes of 1 s were still live and none expired 10 s on).
/// The tally's sweep lasts no longer than the registry.
#[cfg(feature = "metrics")]
#[tokio::test(start_paused = true)]
async fn a_scrape_counts_expired_sandboxes_gone() {
    let tally = Arc::new(SandboxTally::default());
    // No sweep on a timer: the scrape's own sweep is what is seen.
    let registry: Registry<()> = Registry::unswept(Duration::from_secs(10), 5, Arc::clone(&tally));
    let short = Some(Duration::from_secs(1));
    registry.create(None, None, short, |_| ()).expect("one");
    registry.create(None, None, short, |_| ()).expect("two");
    registry.create(None, None, None, |_| ()).expect("three");
    tokio::time::advance(Duration::from_secs(2)).await;
    let live = || tally.live.load(Ordering::Relaxed);
    let expired = || tally.expired.load(Ordering::Relaxed);
    assert_eq!((live(), expired()), (3, 0), "nothing swept yet");
    let sweep = || (tally.sweeper.get().expect("a sweep").0)(&tally);
    sweep();
    assert_eq!((live(), expired()), (1, 2));
    assert_eq!(registry.live(), 1);
    drop(registry);
    sweep();
    assert_eq!((live(), expired()), (1, 2), "no registry, nothing to sweep");
}
