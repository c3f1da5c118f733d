//! The SQLite store's verbs (the `Store` trait): each write handed to the
//! writer as a job and answered after its commit; each read on a pooled
//! read connection, or for a look-up by id the root's read cache.

use super::*;

impl Store for SqliteStore {
    async fn now(&self) -> Result<DateTime<Utc>, StoreError> {
        Ok(self.shared.clock.now())
    }

    async fn clock(&self) -> Result<ClockReading, StoreError> {
        Ok(ClockReading {
            now: self.shared.clock.now(),
            offset_nanos: self.shared.clock.offset_nanos(),
        })
    }

    async fn advance_clock(
        &self,
        by: Duration,
    ) -> Result<Result<ClockReading, NoRoom>, StoreError> {
        // One step of the writer: the check and the add.
        self.send(|reply| Job::Advance { by, reply }).await
    }

    async fn create(
        &self,
        new: NewTransaction,
        initial: InitialState,
        expiry: Duration,
    ) -> Result<Result<Record, InsertRefusal>, StoreError> {
        self.send(|reply| Job::Create {
            new: Box::new(new),
            initial,
            expiry,
            reply,
        })
        .await
    }

    async fn seed(&self, record: Record) -> Result<Result<(), InsertRefusal>, StoreError> {
        self.send(|reply| Job::Seed {
            record: Box::new(record),
            reply,
        })
        .await
    }

    async fn confirm(
        &self,
        id: Uuid,
        now: DateTime<Utc>,
        confirmation: Confirmation,
    ) -> Result<Transition, StoreError> {
        self.send(|reply| Job::Confirm {
            id,
            now,
            confirmation: Box::new(confirmation),
            reply,
        })
        .await
    }

    async fn decide(
        &self,
        key: PaymentPageKey<'_>,
        scope: Option<Uuid>,
        action: PayerAction,
        now: DateTime<Utc>,
    ) -> Result<Result<Decided, PayerRefusal>, StoreError> {
        let key = match key {
            PaymentPageKey::Token(token) if crate::domain::redirect::is_token(token) => {
                PageKey::Token(token.to_owned())
            }
            PaymentPageKey::Transaction(id) => match issued_id(id) {
                Some(id) => PageKey::Transaction(id),
                None => return Ok(Err(PayerRefusal::NotFound)),
            },
            PaymentPageKey::Token(_) => return Ok(Err(PayerRefusal::NotFound)),
        };
        self.send(|reply| Job::Decide {
            key,
            scope,
            action,
            now,
            reply,
        })
        .await
    }

    async fn with_id<T: Send>(
        &self,
        id: Uuid,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        let key = &self.shared.key;
        let record = match &self.shared.cache {
            None => self.read(|conn| select_id(conn, key, id))?.map(Arc::new),
            Some(cache) => match cache.get(id) {
                Ok(record) => Some(record),
                Err(generation) => {
                    let read = self.read(|conn| select_id(conn, key, id))?.map(Arc::new);
                    if let Some(record) = &read {
                        cache.keep(Arc::clone(record), generation);
                    }
                    read
                }
            },
        };
        Ok(record
            .filter(|r| scope.is_none_or(|m| m == r.fields.merchant_id))
            .as_deref()
            .map(f))
    }

    async fn with_reference<T: Send>(
        &self,
        reference_no: &str,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Result<T, LookupError>, StoreError> {
        let key = self.shared.key.as_slice();
        let found = self.read(|conn| {
            let mut records = Vec::with_capacity(1);
            let map = |e: rusqlite::Error| store_error(&e);
            match scope {
                Some(merchant) => {
                    let mut s = conn
                        .prepare_cached(&format!(
                            "SELECT {COLUMNS} FROM mock_transactions WHERE sandbox = ?3 AND merchant_id = ?1 AND reference_no = ?2"
                        ))
                        .map_err(map)?;
                    for r in s
                        .query_map(params![merchant.as_bytes().as_slice(), reference_no, key], record_of)
                        .map_err(map)?
                    {
                        records.push(r.map_err(map)??);
                    }
                }
                None => {
                    let mut s = conn
                        .prepare_cached(&format!(
                            "SELECT {COLUMNS} FROM mock_transactions WHERE sandbox = ?2 AND reference_no = ?1 LIMIT 2"
                        ))
                        .map_err(map)?;
                    for r in s.query_map(params![reference_no, key], record_of).map_err(map)? {
                        records.push(r.map_err(map)??);
                    }
                }
            }
            Ok(records)
        })?;
        Ok(match found.as_slice() {
            [] => Err(LookupError::NotFound),
            [one] => Ok(f(one)),
            _ => Err(LookupError::Ambiguous),
        })
    }

    async fn with_payment_page<T: Send>(
        &self,
        key: PaymentPageKey<'_>,
        f: impl FnOnce(&Record, &PaymentPage) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        let key = match key {
            PaymentPageKey::Token(token) if crate::domain::redirect::is_token(token) => {
                PageKey::Token(token.to_owned())
            }
            PaymentPageKey::Transaction(id) => match issued_id(id) {
                Some(id) => PageKey::Transaction(id),
                None => return Ok(None),
            },
            PaymentPageKey::Token(_) => return Ok(None),
        };
        let record = self.read(|conn| select_page(conn, &self.shared.key, &key))?;
        Ok(record.and_then(|r| r.payment_page().map(|page| f(&r, page))))
    }

    async fn page<T: Send>(
        &self,
        query: &PageQuery,
        keep: impl FnMut(&Record) -> bool + Send,
        f: impl FnMut(&Record) -> T + Send,
    ) -> Result<Option<Page<T>>, StoreError> {
        self.page_in_batches(query, keep, f).await
    }

    async fn count(&self) -> Result<usize, StoreError> {
        Ok(self.shared.count.load(Ordering::SeqCst))
    }

    async fn count_of_merchant(&self, merchant: Uuid) -> Result<usize, StoreError> {
        self.count_merchant(merchant).await
    }

    async fn still_here(&self) -> Result<(), StoreError> {
        if self.shared.gone.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::sandbox_gone());
        }
        Ok(())
    }

    fn now_hint(&self) -> DateTime<Utc> {
        self.shared.clock.now()
    }

    fn record_request(&self, capture: Capture) {
        self.shared.journal.record(capture);
    }

    async fn requests_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        self.reserved().await;
        Ok(self.shared.journal.since(after, limit.min(CAPACITY)))
    }

    async fn requests_after(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        self.reserved().await;
        Ok(self.shared.journal.after(after, limit.min(CAPACITY)))
    }

    async fn request(&self, seq: u64) -> Result<Option<JournalEntry>, StoreError> {
        self.reserved().await;
        // Found by position, which a gap in the numbers (a restart after a
        // `kill -9` numbers on past its reservation) throws off: then by
        // the numbers.
        let journal = &self.shared.journal;
        Ok(journal.get(seq).or_else(|| {
            journal
                .after(seq.saturating_sub(1), 1)
                .into_iter()
                .find(|e| e.seq == seq)
        }))
    }

    async fn journal_stats(&self) -> Result<JournalStats, StoreError> {
        self.reserved().await;
        Ok(self.shared.journal.stats())
    }

    async fn reset(&self) -> Result<(), StoreError> {
        self.send_within(ADMIN_TIMEOUT, |reply| Job::Reset {
            erase: false,
            reply,
        })
        .await
    }

    async fn settings(&self) -> Result<Option<Settings>, StoreError> {
        self.read(|conn| {
            let catalog = setting(conn, "catalog").map_err(|e| store_error(&e))?;
            let expiry = setting(conn, "expiry_ms").map_err(|e| store_error(&e))?;
            crate::store::stored_settings::from_texts(catalog, expiry).map_err(StoreError::new)
        })
    }

    async fn save_settings(&self, settings: &Settings) -> Result<(), StoreError> {
        let settings = settings.clone();
        self.send(|reply| Job::SaveSettings { settings, reply })
            .await
    }

    async fn erase(&self) -> Result<(), StoreError> {
        self.send_within(ADMIN_TIMEOUT, |reply| Job::Reset { erase: true, reply })
            .await
    }

    /// Whether the store can serve: its file still the one opened, and
    /// written (while the last commit failed, a write that succeeds now
    /// says it can again), and read.
    async fn check(&self) -> Result<(), StoreError> {
        if let Err(lost) = self.file.watch.still_ours() {
            // The writer hears of it (and keeps what it committed) with
            // its next job: this one, when nobody writes.
            let _ = self.send(|reply| Job::Probe { reply }).await;
            return Err(lost);
        }
        if let Some(damaged) = self.file.watch.damaged() {
            return Err(damaged);
        }
        if self.file.watch.failing().is_some() {
            self.send(|reply| Job::Probe { reply }).await?;
        }
        // The schema's page: a file damaged there is found by health
        // before any request meets it.
        let read = self.read(|conn| {
            conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
                .map_err(|e| store_error(&e))
        });
        match (read, self.file.watch.damaged()) {
            (Err(_), Some(damaged)) => Err(damaged),
            (read, _) => read,
        }
    }
}

impl SqliteStore {
    /// Its journal in the process: where a request's entry is admitted.
    pub(crate) fn journal(&self) -> &crate::store::journal::Journal {
        &self.shared.journal
    }

    /// Waits until the file has reserved every journal number given out
    /// so far ([`JOURNAL_AHEAD`]), so that no number a read shows is given
    /// out again after a `kill -9`; at once while the reservation is ahead
    /// (the journal's write-behind moves it every quarter second).
    ///
    /// A reservation that fails (a full disk) does not fail the read: the
    /// journal is what an operator reads during that incident, and the
    /// entries are in memory. The read shows them unreserved (a `kill -9`
    /// before the file takes a write again may give their numbers out
    /// again), and the log says so once, until a reservation succeeds.
    /// A file removed or replaced under the mock numbers nothing again (a
    /// restart finds another file): the read goes on without.
    async fn reserved(&self) {
        let shared = &self.shared;
        let unreserved = &self.file.unreserved;
        let reserved = || {
            if unreserved.load(Ordering::SeqCst) {
                unreserved.store(false, Ordering::SeqCst);
            }
        };
        if shared.journal.last_seq() <= shared.journal_reserved.load(Ordering::SeqCst) {
            reserved();
            return;
        }
        match self.send(|reply| Job::Reserve { reply }).await {
            Ok(()) => reserved(),
            Err(e) if e.kind() == crate::domain::port::StoreErrorKind::Lost => {}
            Err(e) => {
                if !unreserved.swap(true, Ordering::SeqCst) {
                    tracing::warn!(
                        store = %self.file.path.display(),
                        error = %e,
                        "the SQLite store could not reserve the journal's numbers: the journal is read from memory all the same, and a kill -9 before the file takes writes again may give the numbers shown out again"
                    );
                }
            }
        }
    }
}
