//! One job inside the writer's transaction: its statements and what it
//! changes in the process and answers.

use super::*;

/// `slot`'s statement, prepared from `sql` on `conn` if it is not yet.
fn prepared<'s, 'c>(
    slot: &'s mut Option<rusqlite::Statement<'c>>,
    conn: &'c Connection,
    sql: &str,
) -> Result<&'s mut rusqlite::Statement<'c>, StoreError> {
    if slot.is_none() {
        *slot = Some(conn.prepare(sql).map_err(|e| store_error(&e))?);
    }
    slot.as_mut()
        .ok_or_else(|| StoreError::new("a prepared statement went missing"))
}

/// Confirms a transaction of the sandbox `?11` that is still confirmable.
const CONFIRM: &str = "UPDATE mock_transactions SET confirmed_at = ?2, result = ?3, settles_at = ?4, \
     error_message = ?5, provider_reference = ?6, confirm_extra = ?7, \
     page_token = ?8, page_deadline = ?9 \
     WHERE id = ?1 AND sandbox = ?11 AND confirmed_at IS NULL AND expires_at > ?10";

/// Writes `last` as where `view`'s journal numbering is (`restore` numbers
/// on after it at the next start).
fn numbered_to(conn: &Connection, view: &Shared, last: u64) -> Result<(), StoreError> {
    match view.sandbox {
        None => put_setting(conn, "journal_last_seq", &last.to_string()),
        Some(_) => conn
            .execute(
                "UPDATE mock_sandboxes SET journal_last_seq = ?1 WHERE id = ?2",
                params![i64::try_from(last).unwrap_or(i64::MAX), view.key],
            )
            .map(|_| ()),
    }
    .map_err(|e| store_error(&e))
}

impl Writer<'_> {
    /// Reserves `view`'s journal numbers up to [`JOURNAL_AHEAD`] past its
    /// newest (never fewer than reserved already); returns the last one
    /// reserved.
    fn reserve(&mut self, view: &Arc<Shared>) -> Result<u64, StoreError> {
        self.changing(view);
        let reserved = view
            .journal
            .last_seq()
            .saturating_add(JOURNAL_AHEAD)
            .max(view.writer_reserved.load(Ordering::SeqCst));
        numbered_to(self.conn, view, reserved)?;
        view.writer_reserved.store(reserved, Ordering::SeqCst);
        Ok(reserved)
    }

    /// One job of `view` inside the transaction: what it changes in the
    /// process and what it answers.
    pub(super) fn apply(
        &mut self,
        view: &Arc<Shared>,
        job: &Job,
    ) -> Result<(Effect, Outcome), StoreError> {
        let conn = self.conn;
        let key = view.key.as_slice();
        let now_of = |view: &Shared| Clock::at_offset(view.writer_offset.load(Ordering::SeqCst));
        // A sandbox removed (its `ForgetSandbox` ran before this job) gets
        // no row back: the change is refused as its request is answered,
        // 404 `SANDBOX_NOT_FOUND`. Only this thread writes, so the check
        // and the write cannot be split by the removal.
        if view.sandbox.is_some()
            && view.gone.load(Ordering::SeqCst)
            && matches!(
                job,
                Job::Seed { .. } | Job::Create { .. } | Job::Confirm { .. }
            )
        {
            return Err(StoreError::sandbox_gone());
        }
        match job {
            Job::Seed { record, .. } => {
                let statement = prepared(&mut self.statements.insert, conn, INSERT)?;
                let inserted =
                    insert(statement, key, &Row::of(record)).map_err(|e| store_error(&e))?;
                Ok(if inserted {
                    (Effect::Created, Outcome::Seeded(Ok(())))
                } else {
                    (
                        Effect::None,
                        Outcome::Seeded(Err(InsertRefusal::Duplicate(record.id))),
                    )
                })
            }
            Job::Create {
                new,
                initial,
                expiry,
                ..
            } => {
                let now = now_of(view);
                let id = view.ids.at(now);
                let row = new_row(
                    id,
                    (**new).clone(),
                    *initial,
                    now,
                    crate::domain::clock::add(now, *expiry),
                );
                let statement = prepared(&mut self.statements.insert, conn, INSERT)?;
                let inserted = insert(statement, key, &row).map_err(|e| store_error(&e))?;
                if inserted {
                    let record = row.into_record()?;
                    Ok((Effect::Created, Outcome::Created(Ok(record))))
                } else {
                    let existing: Vec<u8> = conn
                        .query_row(
                            "SELECT id FROM mock_transactions WHERE sandbox = ?3 AND merchant_id = ?1 AND reference_no = ?2",
                            params![new.merchant_id.as_bytes().as_slice(), new.reference_no, key],
                            |r| r.get(0),
                        )
                        .map_err(|e| store_error(&e))?;
                    let existing = uuid_of(&existing).map_err(|e| store_error(&e))?;
                    Ok((
                        Effect::None,
                        Outcome::Created(Err(InsertRefusal::Duplicate(existing))),
                    ))
                }
            }
            Job::Confirm {
                id,
                now,
                confirmation,
                ..
            } => {
                let c = ConfirmColumns::of(confirmation);
                let changed = prepared(&mut self.statements.confirm, conn, CONFIRM)?
                    .execute(params![
                        id.as_bytes().as_slice(),
                        c.confirmed_at,
                        c.result,
                        c.settles_at,
                        c.error_message,
                        c.provider_reference,
                        c.confirm_extra,
                        c.page_token,
                        c.page_deadline,
                        // The expiry at the writer's now, no earlier than the
                        // caller's: confirms are ordered here.
                        millis((*now).max(now_of(view))),
                        key,
                    ])
                    .map_err(|e| store_error(&e))?;
                let select = prepared(&mut self.statements.select_id, conn, SELECT_ID)?;
                let transition = match select_id_with(select, key, *id)? {
                    None => Transition::Missing,
                    Some(record) if changed == 1 => Transition::Moved(record),
                    Some(record) => Transition::Unmoved(record),
                };
                Ok((Effect::None, Outcome::Confirmed(transition)))
            }
            Job::Decide {
                key: page,
                scope,
                action,
                now,
                ..
            } => {
                let Some(record) = select_page(conn, key, page)?
                    .filter(|r| scope.is_none_or(|m| m == r.fields.merchant_id))
                else {
                    return Ok((Effect::None, Outcome::Decided(Err(PayerRefusal::NotFound))));
                };
                let Some(payment_page) = record.payment_page() else {
                    let refusal = match page {
                        PageKey::Token(_) => PayerRefusal::NotFound,
                        PageKey::Transaction(_) => PayerRefusal::NoPaymentPage,
                    };
                    return Ok((Effect::None, Outcome::Decided(Err(refusal))));
                };
                // The window at the writer's now, never earlier than the
                // caller's (as confirm's expiry): a submit that read the
                // clock before the deadline cannot decide after a read
                // saw the window closed.
                let now = &(*now).max(now_of(view));
                let decided_now = payment_page.is_open(*now);
                let id = record.id.as_bytes().to_vec();
                if decided_now {
                    conn.execute(
                        "UPDATE mock_transactions SET decision = ?2, decided_at = ?3 WHERE id = ?1",
                        params![id, action.as_str(), millis(*now)],
                    )
                } else {
                    conn.execute(
                        "UPDATE mock_transactions SET later_submits = MIN(later_submits + 1, 4294967295) WHERE id = ?1",
                        params![id],
                    )
                }
                .map_err(|e| store_error(&e))?;
                let record = select_id(conn, key, record.id)?
                    .ok_or_else(|| StoreError::new("a decided transaction vanished"))?;
                Ok((
                    Effect::None,
                    Outcome::Decided(Ok(Decided {
                        record,
                        decided_now,
                    })),
                ))
            }
            Job::Advance { by, .. } => {
                // The check and the add in the one writer: of racing
                // advances only one of which fits, one moves the clock.
                let was = view.writer_offset.load(Ordering::SeqCst);
                let Some(offset) = crate::domain::clock::advanced(was, *by) else {
                    let refused = NoRoom { offset_nanos: was };
                    return Ok((Effect::None, Outcome::Clock(Err(refused))));
                };
                self.changing(view);
                match view.sandbox {
                    None => conn.execute(
                        "UPDATE mock_clock SET offset_nanos = ?1 WHERE id = 1",
                        [offset],
                    ),
                    Some(_) => conn.execute(
                        "UPDATE mock_sandboxes SET offset_nanos = ?1 WHERE id = ?2",
                        params![offset, key],
                    ),
                }
                .map_err(|e| store_error(&e))?;
                view.writer_offset.store(offset, Ordering::SeqCst);
                Ok((
                    Effect::Clock(offset),
                    Outcome::Clock(Ok(ClockReading {
                        now: now_of(view),
                        offset_nanos: offset,
                    })),
                ))
            }
            Job::Reset { erase, .. } => {
                self.changing(view);
                // Everything recorded up to here goes; what is recorded from
                // now on stays (in the process and in the file alike), and
                // the coverage starts over at this same point (`Fence`).
                let floor = view.journal.fence_floor();
                // The numbering goes on past what the file has reserved.
                let numbered = floor.max(view.writer_reserved.load(Ordering::SeqCst));
                let numbered_sql = i64::try_from(numbered).unwrap_or(i64::MAX);
                if *erase {
                    // `--fresh`, before serving: every sandbox goes too.
                    conn.execute_batch(
                        "DELETE FROM mock_transactions; DELETE FROM mock_journal; \
                         DELETE FROM mock_sandboxes; DELETE FROM mock_settings; \
                         UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1;",
                    )
                } else {
                    conn.execute(
                        "DELETE FROM mock_transactions WHERE sandbox = ?1",
                        [key],
                    )
                    .and_then(|_| conn.execute("DELETE FROM mock_journal WHERE sandbox = ?1", [key]))
                    .and_then(|_| match view.sandbox {
                        None => conn
                            .execute("UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1", [])
                            .and_then(|_| {
                                put_setting(conn, "journal_last_seq", &numbered.to_string())
                            }),
                        Some(_) => conn
                            .execute(
                                "UPDATE mock_sandboxes SET offset_nanos = 0, journal_last_seq = ?1 WHERE id = ?2",
                                params![numbered_sql, key],
                            )
                            .map(|_| ()),
                    })
                }
                .map_err(|e| store_error(&e))?;
                view.writer_offset.store(0, Ordering::SeqCst);
                // `--fresh` numbers from 1 again, before serving: no floor,
                // nothing reserved.
                view.journal_floor
                    .store(if *erase { 0 } else { floor }, Ordering::SeqCst);
                if *erase {
                    view.writer_reserved.store(0, Ordering::SeqCst);
                }
                Ok((
                    Effect::Reset {
                        erase: *erase,
                        floor,
                    },
                    Outcome::Done,
                ))
            }
            Job::SaveSettings { settings, .. } => {
                let expiry = crate::store::stored_settings::expiry_millis(settings).to_string();
                for (key, value) in [
                    ("catalog", settings.catalog.to_toml()),
                    ("expiry_ms", expiry),
                ] {
                    conn.execute(
                        "INSERT INTO mock_settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING",
                        params![key, value],
                    )
                    .map_err(|e| store_error(&e))?;
                }
                Ok((Effect::None, Outcome::Done))
            }
            Job::Journal {
                entries,
                last_seq,
                closing,
            } => {
                // A removed sandbox's last entries are not written back.
                if view.gone.load(Ordering::SeqCst) {
                    return Ok((Effect::None, Outcome::Done));
                }
                let mut insert = conn
                    .prepare_cached(&format!(
                        "INSERT OR REPLACE INTO mock_journal \
                         (sandbox, {JOURNAL_COLUMNS}, {SQLITE_JOURNAL_EXTRA}) \
                         VALUES (?13, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?15, ?14)"
                    ))
                    .map_err(|e| store_error(&e))?;
                let floor = view.journal_floor.load(Ordering::SeqCst);
                // Those a failed write left first (a full disk): older.
                let pending = view.pending();
                for entry in pending.iter().chain(entries).filter(|e| e.seq > floor) {
                    let r = JournalRow::of(entry);
                    insert
                        .execute(params![
                            r.seq,
                            r.at,
                            r.method,
                            r.path,
                            r.query,
                            r.headers,
                            r.body,
                            r.status,
                            r.error_code,
                            r.request_id,
                            r.fault,
                            r.replica,
                            key,
                            body_length_column(entry),
                            r.caller.as_ref().map(Uuid::as_bytes)
                        ])
                        .map_err(|e| store_error(&e))?;
                }
                // The newest CAPACITY entries stay, by count: the numbers
                // have gaps (a restart after a `kill -9` numbers on past
                // its reservation, JOURNAL_AHEAD), and trimming by number
                // dropped every entry from before the gap.
                conn.execute(
                    "DELETE FROM mock_journal WHERE sandbox = ?2 AND seq <= \
                     (SELECT seq FROM mock_journal WHERE sandbox = ?2 \
                      ORDER BY seq DESC LIMIT 1 OFFSET ?1)",
                    params![i64::try_from(CAPACITY).unwrap_or(i64::MAX), key],
                )
                .map_err(|e| store_error(&e))?;
                if *closing {
                    // Nothing more is numbered: the exact end, no gap at
                    // the next start.
                    self.changing(view);
                    numbered_to(conn, view, *last_seq)?;
                    view.writer_reserved.store(*last_seq, Ordering::SeqCst);
                    return Ok((Effect::None, Outcome::Done));
                }
                let reserved = self.reserve(view)?;
                Ok((Effect::Reserved(reserved), Outcome::Done))
            }
            Job::Reserve { .. } => {
                // A removed sandbox's numbers come back nowhere.
                if view.gone.load(Ordering::SeqCst) {
                    return Ok((Effect::Reserved(u64::MAX), Outcome::Done));
                }
                let reserved = self.reserve(view)?;
                Ok((Effect::Reserved(reserved), Outcome::Done))
            }
            Job::KeepSandbox { kept, .. } => {
                conn.execute(
                    "INSERT INTO mock_sandboxes (id, owner, label, created_at, ttl_ms, expires_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        kept.id.as_bytes().as_slice(),
                        kept.owner.map(|o| o.as_bytes().to_vec()),
                        kept.label,
                        millis(kept.created_at),
                        i64::try_from(kept.ttl.as_millis()).unwrap_or(i64::MAX),
                        millis(kept.expires_at),
                    ],
                )
                .map_err(|e| store_error(&e))?;
                Ok((Effect::None, Outcome::Done))
            }
            Job::ForgetSandbox { .. } => {
                if view.sandbox.is_none() {
                    return Err(StoreError::new("the root is not a sandbox to remove"));
                }
                view.gone.store(true, Ordering::SeqCst);
                conn.execute("DELETE FROM mock_transactions WHERE sandbox = ?1", [key])
                    .and_then(|_| {
                        conn.execute("DELETE FROM mock_journal WHERE sandbox = ?1", [key])
                    })
                    .and_then(|_| conn.execute("DELETE FROM mock_sandboxes WHERE id = ?1", [key]))
                    .map_err(|e| store_error(&e))?;
                Ok((Effect::None, Outcome::Done))
            }
            Job::RenewSandbox { expires_at } => {
                conn.execute(
                    "UPDATE mock_sandboxes SET expires_at = MAX(expires_at, ?1) WHERE id = ?2",
                    params![millis(*expires_at), key],
                )
                .map_err(|e| store_error(&e))?;
                Ok((Effect::None, Outcome::Done))
            }
            Job::Probe { .. } => {
                // As much as a big write needs: a row that small fits in
                // the last bytes of a full disk while every create fails.
                conn.execute(
                    "INSERT OR REPLACE INTO mock_settings (key, value) VALUES ('health_probe', zeroblob(?1))",
                    [i64::try_from(PROBE_BYTES).unwrap_or(i64::MAX)],
                )
                .and_then(|_| {
                    conn.execute("DELETE FROM mock_settings WHERE key = 'health_probe'", [])
                })
                .map_err(|e| store_error(&e))?;
                Ok((Effect::None, Outcome::Done))
            }
        }
    }
}
