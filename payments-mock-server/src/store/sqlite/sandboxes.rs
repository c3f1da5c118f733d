//! Sandboxes in the file (CONTRACT section 19): each sandbox is a view of
//! the same tables ([`SqliteStore`] with its own clock, count and
//! journal), and `mock_sandboxes` says what each is, so a restart finds
//! them again.

use super::*;

/// A stored wall-clock time (a sandbox's, never a transaction's).
fn from_millis(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

impl SqliteStore {
    /// The sandbox `id`'s view of the file, empty: for a sandbox being
    /// made (written down by [`SqliteStore::keep_sandbox`]).
    pub(crate) fn new_sandbox(&self, id: Uuid) -> Self {
        let shared = Arc::new(Shared::new(Some(id), &self.file.replica, 0, 0));
        self.file.views.add(&shared);
        Self {
            file: Arc::clone(&self.file),
            shared,
        }
    }

    /// The sandboxes the file keeps, each with its view as the file holds
    /// it (its transactions counted, its journal's last entries, its
    /// clock), oldest first.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the file cannot be read.
    pub(crate) fn kept_sandboxes(&self) -> Result<Vec<(KeptSandbox, Self)>, StoreError> {
        let replica = self.file.replica.clone();
        let found = self.read(|conn| {
            let mut statement = conn
                .prepare(
                    "SELECT id, owner, label, created_at, ttl_ms, expires_at, offset_nanos, \
                     journal_last_seq FROM mock_sandboxes ORDER BY created_at, id",
                )
                .map_err(|e| store_error(&e))?;
            let rows = statement
                .query_map([], |r| {
                    let id = uuid_of(&r.get::<_, Vec<u8>>(0)?)?;
                    let owner = r
                        .get::<_, Option<Vec<u8>>>(1)?
                        .map(|o| uuid_of(&o))
                        .transpose()?;
                    Ok((
                        KeptSandbox {
                            id,
                            owner,
                            label: r.get(2)?,
                            created_at: from_millis(r.get(3)?),
                            ttl: Duration::from_millis(
                                u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
                            ),
                            expires_at: from_millis(r.get(5)?),
                        },
                        r.get::<_, i64>(6)?,
                        u64::try_from(r.get::<_, i64>(7)?).unwrap_or(0),
                    ))
                })
                .map_err(|e| store_error(&e))?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| store_error(&e))?;
            let mut views = Vec::with_capacity(rows.len());
            for (kept, offset, last_seq) in rows {
                let view = open::load_view(conn, Some(kept.id), &replica, offset, last_seq)
                    .map_err(|e| store_error(&e))?;
                views.push((kept, view));
            }
            Ok(views)
        })?;
        Ok(found
            .into_iter()
            .map(|(kept, view)| {
                let shared = Arc::new(view);
                self.file.views.add(&shared);
                (
                    kept,
                    Self {
                        file: Arc::clone(&self.file),
                        shared,
                    },
                )
            })
            .collect())
    }

    /// Writes down the sandbox this view is (committed before it returns).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the file cannot be written.
    pub(crate) async fn keep_sandbox(&self, kept: &KeptSandbox) -> Result<(), StoreError> {
        let kept = Box::new(kept.clone());
        self.send(|reply| Job::KeepSandbox { kept, reply }).await
    }

    /// Writes down the sandbox this view is, behind the answers.
    pub(crate) fn keep_sandbox_later(&self, kept: &KeptSandbox) {
        let (reply, _) = oneshot::channel();
        let _ = self.file.jobs.try_send((
            Arc::clone(&self.shared),
            Job::KeepSandbox {
                kept: Box::new(kept.clone()),
                reply,
            },
            claim::Claim::default(),
        ));
    }

    /// Removes this view's sandbox with all it holds (committed before it
    /// returns).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the file cannot be written.
    pub(crate) async fn forget_sandbox(&self) -> Result<(), StoreError> {
        self.send_within(ADMIN_TIMEOUT, |reply| Job::ForgetSandbox {
            reply: Some(reply),
        })
        .await
    }

    /// Removes this view's sandbox, written behind (an expired one: nobody
    /// waits, and a restart drops it anyway once its time is past).
    pub(crate) fn forget_sandbox_later(&self) {
        self.shared.gone.store(true, Ordering::SeqCst);
        let _ = self.file.jobs.try_send((
            Arc::clone(&self.shared),
            Job::ForgetSandbox { reply: None },
            claim::Claim::default(),
        ));
    }

    /// Writes down, behind the answers, that this view's sandbox now
    /// expires at `expires_at`.
    pub(crate) fn renew_sandbox(&self, expires_at: DateTime<Utc>) {
        let _ = self.file.jobs.try_send((
            Arc::clone(&self.shared),
            Job::RenewSandbox { expires_at },
            claim::Claim::default(),
        ));
    }
}
