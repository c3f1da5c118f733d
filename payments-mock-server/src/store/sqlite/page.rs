//! A page of transactions ([`Store::page`]): `GET /_mock/transactions`,
//! the console's list; and a merchant's count
//! ([`Store::count_of_merchant`]).
//!
//! The rows are read in id order through the `(sandbox, id)` index
//! (`mock_transactions_sandbox_id`, migration V4) with a `LIMIT`, so a page
//! costs the same in a sandbox of ten rows or of a million: nothing sorts
//! the sandbox. What SQL cannot filter (the status now, which follows the
//! virtual clock) is `keep`, applied here: when it drops rows, the next
//! batch is read from the last id seen, larger each time (at most
//! [`PAGE_BATCH`] rows), until the page is full or the sandbox ends.
//!
//! Each batch runs on Tokio's blocking threads, never on an async worker:
//! a page that reads many rows (a filter that keeps few) must not hold the
//! worker that answers the other requests. All the batches of a page read
//! one snapshot (one read transaction on one connection), as the single
//! statement before them did.

use super::*;

/// Rows one batch reads at most.
const PAGE_BATCH: usize = 1024;

/// What a batch reads: the page's filters, owned (a batch crosses to a
/// blocking thread).
struct Batch {
    key: Vec<u8>,
    order: Order,
    merchant: Option<Uuid>,
    reference_contains: Option<String>,
    /// Start after this id; checked to be stored on the first batch.
    after: Option<Uuid>,
    first: bool,
    size: usize,
}

/// A batch's rows; `None` when the page's `from` is not stored.
type Rows = Option<Vec<Record>>;

impl Batch {
    /// The statement of a batch: `?1` the sandbox, `?2` the limit, then
    /// the start and the filters that are there.
    fn sql(&self) -> (String, Vec<rusqlite::types::Value>) {
        let (cmp, order) = match self.order {
            Order::OldestFirst => (">", "ASC"),
            Order::NewestFirst => ("<", "DESC"),
        };
        let size = i64::try_from(self.size).unwrap_or(i64::MAX);
        let mut values: Vec<rusqlite::types::Value> = vec![self.key.clone().into(), size.into()];
        let mut sql = format!("SELECT {COLUMNS} FROM mock_transactions WHERE sandbox = ?1");
        if let Some(after) = self.after {
            values.push(after.as_bytes().to_vec().into());
            sql.push_str(&format!(" AND id {cmp} ?{}", values.len()));
        }
        if let Some(merchant) = self.merchant {
            values.push(merchant.as_bytes().to_vec().into());
            // The planner's choice: the unique (sandbox, merchant,
            // reference) index and a sort of the merchant's rows (a few
            // merchants' rows found at once), or this index's order.
            sql.push_str(&format!(" AND merchant_id = ?{}", values.len()));
        }
        if let Some(part) = &self.reference_contains {
            values.push(part.clone().into());
            sql.push_str(&format!(" AND instr(reference_no, ?{}) > 0", values.len()));
        }
        sql.push_str(&format!(" ORDER BY id {order} LIMIT ?2"));
        (sql, values)
    }

    /// Reads the batch on `conn` (inside the page's read transaction).
    fn run(&self, conn: &Connection) -> Result<Rows, StoreError> {
        if self.first
            && let Some(from) = self.after
            && select_id(conn, &self.key, from)?.is_none()
        {
            return Ok(None);
        }
        let (sql, values) = self.sql();
        let mut statement = conn.prepare_cached(&sql).map_err(|e| store_error(&e))?;
        let mut rows = statement
            .query(rusqlite::params_from_iter(values))
            .map_err(|e| store_error(&e))?;
        let mut records = Vec::with_capacity(self.size.min(PAGE_BATCH));
        while let Some(row) = rows.next().map_err(|e| store_error(&e))? {
            records.push(record_of(row).map_err(|e| store_error(&e))??);
        }
        Ok(Some(records))
    }
}

/// Runs `batch` on a blocking thread, on `conn` (a reader of the pool
/// taken, and its read transaction begun, on the first batch). The
/// connection comes back with the rows unless the batch failed.
async fn on_blocking_thread(
    file: &Arc<Opened>,
    conn: Option<Connection>,
    batch: Batch,
) -> (Option<Connection>, Result<Rows, StoreError>) {
    let file = Arc::clone(file);
    let ran = tokio::task::spawn_blocking(move || {
        let conn = match conn {
            Some(conn) => conn,
            None => match file.reader().and_then(|conn| {
                conn.execute_batch("BEGIN")
                    .map_err(|e| store_error(&e))
                    .map(|()| conn)
            }) {
                Ok(conn) => conn,
                Err(e) => return (None, Err(e)),
            },
        };
        let rows = batch.run(&conn);
        (Some(conn), rows)
    })
    .await;
    ran.unwrap_or_else(|e| {
        (
            None,
            Err(StoreError::new(format!("a SQLite read stopped: {e}"))),
        )
    })
}

impl SqliteStore {
    /// One page of `query`, filtered by `keep`, mapped by `f` (see the
    /// module's doc).
    pub(super) async fn page_in_batches<T>(
        &self,
        query: &PageQuery,
        mut keep: impl FnMut(&Record) -> bool,
        mut f: impl FnMut(&Record) -> T,
    ) -> Result<Option<Page<T>>, StoreError> {
        let mut items = Vec::with_capacity(query.limit.min(PAGE_BATCH));
        let mut conn = None;
        let mut after = query.from;
        let mut size = query.limit.saturating_add(1).min(PAGE_BATCH);
        let mut first = true;
        let page = loop {
            let batch = Batch {
                key: self.shared.key.clone(),
                order: query.order,
                merchant: query.merchant,
                reference_contains: query.reference_contains.clone(),
                after,
                first,
                size,
            };
            let (back, rows) = on_blocking_thread(&self.file, conn.take(), batch).await;
            conn = back;
            let rows = match rows {
                Ok(Some(rows)) => rows,
                Ok(None) => break Ok(None),
                Err(e) => {
                    self.noted(&e);
                    break Err(e);
                }
            };
            first = false;
            let ended = rows.len() < size;
            let mut full = false;
            for record in &rows {
                if !keep(record) {
                    continue;
                }
                if items.len() == query.limit {
                    full = true;
                    break;
                }
                items.push(f(record));
            }
            if full || ended {
                break Ok(Some(Page { items, more: full }));
            }
            after = rows.last().map(|r| r.id);
            let wanted = (query.limit - items.len()).saturating_add(1);
            size = wanted.max(size.saturating_mul(2)).min(PAGE_BATCH);
        };
        if let Some(conn) = conn {
            // Ends the read transaction (a read's: nothing to wait for);
            // a connection still in one is not pooled.
            if conn.execute_batch("COMMIT").is_ok() {
                self.file.give_back(conn);
            }
        }
        page
    }
}

/// A merchant's count: one `count(*)` on the unique `(sandbox,
/// merchant_id, reference_no)` index (migration V2), whose first two
/// columns are the filter (`?1` the sandbox, `?2` the merchant).
const COUNT_OF_MERCHANT: &str =
    "SELECT count(*) FROM mock_transactions WHERE sandbox = ?1 AND merchant_id = ?2";

impl SqliteStore {
    /// How many transactions `merchant` holds in this store's sandbox: one
    /// statement, on a blocking thread (it walks the merchant's part of
    /// the index, a million entries for a merchant with a million).
    pub(super) async fn count_merchant(&self, merchant: Uuid) -> Result<usize, StoreError> {
        let (file, key) = (Arc::clone(&self.file), self.shared.key.clone());
        let counted = tokio::task::spawn_blocking(move || {
            let conn = file.reader()?;
            let n = conn
                .prepare_cached(COUNT_OF_MERCHANT)
                .and_then(|mut s| {
                    s.query_row(params![key, merchant.as_bytes().as_slice()], |r| {
                        r.get::<_, i64>(0)
                    })
                })
                .map_err(|e| store_error(&e));
            file.give_back(conn);
            n
        })
        .await
        .unwrap_or_else(|e| Err(StoreError::new(format!("a SQLite read stopped: {e}"))));
        if let Err(e) = &counted {
            self.noted(e);
        }
        Ok(usize::try_from(counted?).unwrap_or(0))
    }
}

/// The plan SQLite makes for a merchant's count (`EXPLAIN QUERY PLAN`,
/// its steps joined).
#[cfg(test)]
pub(super) fn count_plan(store: &SqliteStore) -> String {
    store
        .read(|conn| {
            let mut s = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {COUNT_OF_MERCHANT}"))
                .map_err(|e| store_error(&e))?;
            let steps = s
                .query_map(params![store.shared.key, [0u8; 16].as_slice()], |r| {
                    r.get::<_, String>(3)
                })
                .map_err(|e| store_error(&e))?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| store_error(&e))?;
            Ok(steps.join("; "))
        })
        .expect("a plan")
}

/// The plan SQLite makes for a batch of the root's page (`EXPLAIN QUERY
/// PLAN`, its steps joined).
#[cfg(test)]
pub(super) fn plan_of(store: &SqliteStore, order: Order, after: Option<Uuid>) -> String {
    let batch = Batch {
        key: store.shared.key.clone(),
        order,
        merchant: None,
        reference_contains: None,
        after,
        first: false,
        size: 11,
    };
    let (sql, values) = batch.sql();
    store
        .read(|conn| {
            let mut s = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .map_err(|e| store_error(&e))?;
            let steps = s
                .query_map(rusqlite::params_from_iter(values), |r| {
                    r.get::<_, String>(3)
                })
                .map_err(|e| store_error(&e))?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| store_error(&e))?;
            Ok(steps.join("; "))
        })
        .expect("a plan")
}
