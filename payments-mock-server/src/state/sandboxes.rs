//! The root's sandboxes as states (CONTRACT section 19): made, written
//! down by a store that keeps them, restored at start, removed; what a
//! sandbox's state is made of.

use std::time::Duration;

use std::sync::Arc;

use super::{Answered, AppState, Sandboxed, Shared};
use crate::domain::port::StoreError;
use crate::faults::Faults;
use crate::store::AnyStore;

/// Why `POST /_mock/sandboxes` made none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SandboxRefusal {
    /// Asked of a sandbox: they do not nest.
    Nested,
    /// An in-process test's sandbox, made without waiting, on a server
    /// that keeps its state in PostgreSQL: the other replicas would not
    /// find it (sandboxes are made there over HTTP).
    Store,
    /// The limit (`--max-sandboxes`) is reached: `live` live already, when
    /// this process knows (a store the replicas share counts them itself).
    TooMany { max: usize, live: Option<usize> },
    /// The store could not write it down.
    Unavailable(StoreError),
}

/// A sandbox as the registry holds it, from what a store kept.
fn info_of(kept: crate::store::KeptSandbox) -> crate::sandboxes::SandboxInfo {
    crate::sandboxes::SandboxInfo {
        id: kept.id,
        label: kept.label,
        owner: kept.owner,
        created_at: kept.created_at,
        expires_at: kept.expires_at,
        ttl: kept.ttl,
    }
}

/// A sandbox as its store writes it down.
fn kept(info: &crate::sandboxes::SandboxInfo) -> crate::store::KeptSandbox {
    crate::store::KeptSandbox {
        id: info.id,
        owner: info.owner,
        label: info.label.clone(),
        created_at: info.created_at,
        ttl: info.ttl,
        expires_at: info.expires_at,
    }
}

impl crate::sandboxes::Lifetime for AppState {
    fn renewed(&self, expires_at: chrono::DateTime<chrono::Utc>) {
        self.store.renew_sandbox(expires_at);
    }

    fn expired(&self) {
        self.store.forget_sandbox_later();
    }

    /// Its hanging requests end, as at the shutdown.
    fn removed(&self) {
        self.faults.end_held();
    }

    /// The registry holds one reference; each request served in it (and an
    /// in-process test's handle) holds another.
    fn in_use(&self) -> bool {
        std::sync::Arc::strong_count(&self.inner) > 1
    }
}

impl AppState {
    /// Takes back the sandboxes the store kept from an earlier run (SQLite);
    /// those whose time ran out while the server was down go.
    pub(super) fn restore_sandboxes(&self) -> Result<(), StoreError> {
        let Some(registry) = self.sandboxes.as_ref() else {
            return Ok(());
        };
        for (kept, store) in self.store.kept_sandboxes()? {
            let info = info_of(kept);
            let state = self.sandbox_state(store, info.id, info.owner, info.label.clone());
            registry.restore(info, state);
        }
        Ok(())
    }

    /// A new sandbox's state, for the sandbox `id` of `owner`: its own
    /// store (in memory), clock, journal, faults, rules and coverage; the
    /// root's catalogue, expiry, keys, sessions and metrics; its payment
    /// pages under `/sandboxes/{id}/`.
    fn sandbox_state(
        &self,
        store: AnyStore,
        id: uuid::Uuid,
        owner: Option<uuid::Uuid>,
        label: Option<String>,
    ) -> Self {
        let t = &self.template;
        let (coverage, coverage_unfenced) = super::fenced_coverage(&store);
        let shared = Shared {
            store,
            auth: Arc::clone(&self.auth),
            admin: Arc::clone(&self.admin),
            fault_rules: crate::fault_rules::RuleBook::default(),
            faults: Faults::new(t.fail_rate, Some(t.seed), t.latency.clone(), t.rate_limit)
                .closing_with(&t.closing),
            catalog: Arc::clone(&self.catalog),
            expiry: self.expiry,
            body_timeout: self.body_timeout,
            public_url: self.public_url.joined(&format!("sandboxes/{id}/")),
            metrics: Arc::clone(&self.metrics),
            coverage,
            coverage_unfenced,
            replica: self.replica.clone(),
            #[cfg(feature = "openapi")]
            openapi: std::sync::OnceLock::new(),
            #[cfg(feature = "openapi")]
            openapi_root: self.openapi_for_sandboxes.get().cloned(),
            #[cfg(feature = "openapi")]
            openapi_for_sandboxes: std::sync::OnceLock::new(),
            answered: Answered::default(),
            sandboxes: None,
            sandbox: Some(Sandboxed { id, owner }),
            sandbox_label: label,
            template: t.clone(),
            dropped: std::sync::atomic::AtomicBool::new(false),
        };
        Self {
            inner: Arc::new(shared),
        }
    }

    /// A new sandbox of `owner` (CONTRACT section 19), made in the
    /// registry; its store hears of it with `keep`, waiting or not.
    fn make_sandbox(
        &self,
        owner: Option<uuid::Uuid>,
        label: Option<String>,
        ttl: Option<Duration>,
    ) -> Result<(crate::sandboxes::SandboxInfo, AppState), SandboxRefusal> {
        let registry = self.sandboxes.as_ref().ok_or(SandboxRefusal::Nested)?;
        registry
            .create(owner, label.clone(), ttl, |id| {
                let store = self.store.new_sandbox(id, &self.replica);
                self.sandbox_state(store, id, owner, label)
            })
            .map_err(
                |crate::sandboxes::Refused::TooMany { max, live }| SandboxRefusal::TooMany {
                    max,
                    live: Some(live),
                },
            )
    }

    /// `POST /_mock/sandboxes` and [`crate::MockServer::create_sandbox`]: a
    /// new sandbox of `owner` with its state, written down by a store that
    /// keeps sandboxes before this returns.
    ///
    /// # Errors
    ///
    /// [`SandboxRefusal`]: this is a sandbox itself, the limit is reached
    /// (in this process, or across the replicas of a shared store), or the
    /// store could not write it.
    pub(crate) async fn create_sandbox(
        &self,
        owner: Option<uuid::Uuid>,
        label: Option<String>,
        ttl: Option<Duration>,
    ) -> Result<(crate::sandboxes::SandboxInfo, AppState), SandboxRefusal> {
        let (info, state) = self.make_sandbox(owner, label, ttl)?;
        let max = self.sandboxes.as_ref().map_or(0, |r| r.max());
        let refusal = match state.store.keep_sandbox(&kept(&info), max).await {
            Ok(true) => return Ok((info, state)),
            Ok(false) => SandboxRefusal::TooMany { max, live: None },
            Err(e) => SandboxRefusal::Unavailable(e),
        };
        if let Some(registry) = self.sandboxes.as_ref() {
            registry.remove(info.id, None);
        }
        Err(refusal)
    }

    /// The sandbox `id` for a request on a store the replicas share (not
    /// renewed: [`AppState::find_sandbox`]): asked of the database, which
    /// knows the sandboxes every replica made and removed. `None` when it
    /// holds no such live sandbox. When the database cannot be asked, this
    /// replica's own view answers (the request then meets the store's
    /// error itself).
    pub(crate) async fn shared_sandbox(&self, id: uuid::Uuid) -> Option<AppState> {
        let registry = self.sandboxes.as_ref()?;
        match self.store.shared_sandbox(id).await {
            Ok(Some((kept, store))) => {
                let info = info_of(kept);
                let (owner, label) = (info.owner, info.label.clone());
                registry.adopt(info, || self.sandbox_state(store, id, owner, label));
                self.find_sandbox(id)
            }
            Ok(None) => {
                registry.drop_gone(id);
                None
            }
            Err(_) => self.find_sandbox(id),
        }
    }

    /// The live sandboxes `scope` may see (all without a scope), oldest
    /// first, each with its state: on a store the replicas share, those
    /// the database holds (made on any replica).
    pub(crate) async fn live_sandboxes(
        &self,
        scope: Option<uuid::Uuid>,
    ) -> Vec<(crate::sandboxes::SandboxInfo, AppState)> {
        let Some(registry) = self.sandboxes.as_ref() else {
            return Vec::new();
        };
        if self.store.is_shared()
            && let Ok(held) = self.store.shared_sandboxes().await
        {
            let live: std::collections::HashSet<uuid::Uuid> =
                held.iter().map(|(kept, _)| kept.id).collect();
            for (info, _) in registry.list(None) {
                if !live.contains(&info.id) {
                    registry.drop_gone(info.id);
                }
            }
            for (kept, store) in held {
                let info = info_of(kept);
                let (id, owner, label) = (info.id, info.owner, info.label.clone());
                registry.adopt(info, || self.sandbox_state(store, id, owner, label));
            }
        }
        registry.list(scope)
    }

    /// A new sandbox for an in-process test ([`crate::MockServer::sandbox`]):
    /// written down behind the answers by a store that keeps sandboxes.
    ///
    /// # Errors
    ///
    /// As [`AppState::create_sandbox`], but for the store's write.
    pub(crate) fn create_sandbox_now(
        &self,
    ) -> Result<(crate::sandboxes::SandboxInfo, AppState), SandboxRefusal> {
        if self.store.is_shared() {
            return Err(SandboxRefusal::Store);
        }
        let (info, state) = self.make_sandbox(None, None, None)?;
        state.store.keep_sandbox_later(&kept(&info));
        Ok((info, state))
    }

    /// Removes the sandbox `id` if `scope` may see it, with all it holds
    /// (gone from the store before this returns); whether there was one.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store could not forget it (the sandbox is
    /// gone from this server all the same).
    pub(crate) async fn remove_sandbox(
        &self,
        id: uuid::Uuid,
        scope: Option<uuid::Uuid>,
    ) -> Result<bool, StoreError> {
        if self.store.is_shared() {
            // Made on another replica: this one learns of it first.
            let _ = self.shared_sandbox(id).await;
        }
        let Some(removed) = self.sandboxes.as_ref().and_then(|r| r.remove(id, scope)) else {
            return Ok(false);
        };
        removed.store.forget_sandbox().await?;
        Ok(true)
    }

    /// Removes the sandbox `id`, its store forgetting it behind the
    /// answers (an in-process test's sandbox, dropped).
    pub(crate) fn drop_sandbox(&self, id: uuid::Uuid) {
        if let Some(removed) = self.sandboxes.as_ref().and_then(|r| r.remove(id, None)) {
            removed.store.forget_dropped_sandbox();
        }
    }
}
