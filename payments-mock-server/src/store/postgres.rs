//! The PostgreSQL store (`--store postgres://…`, CONTRACT section 15): one
//! database shared by any number of mock processes, which then behave as
//! one service.
//!
//! Nothing that decides behaviour lives in a process: each verb is one
//! statement (or one transaction) whose conditions the database checks, so
//! exactly-once holds across replicas without a lock in any of them:
//!
//! - create: `INSERT … ON CONFLICT (merchant_id, reference_no) DO NOTHING
//!   RETURNING` (the unique constraint decides which initiate wins);
//! - confirm: `UPDATE … WHERE id = $1 AND confirmed_at IS NULL AND
//!   expires_at > $now RETURNING` (a second confirm re-checks the row its
//!   rival committed and matches nothing);
//! - decide: `UPDATE … WHERE decision IS NULL AND page_deadline > $now
//!   RETURNING`, else a later submit is counted;
//! - the clock is one row every replica reads per request.
//!
//! The journal is the one thing written behind the answers: each replica
//! sends its new entries every 100 ms (and before reading the journal), in
//! one statement under an advisory lock, so entry numbers follow commit
//! order and a reader polling "after n" never skips one.
//!
//! Every call is bounded by [`STORE_TIMEOUT`]: a database that is gone
//! makes requests answer 503 within seconds, and the pool reconnects by
//! itself once it is back.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use super::journal::{CAPACITY, Capture, JournalEntry};
use super::spec::PostgresUrl;
use super::sql::{COLUMNS, ConfirmColumns, JOURNAL_COLUMNS, JournalRow, Row, millis, new_row};
use super::{
    ClockReading, Confirmation, Decided, InsertRefusal, JournalStats, LookupError, NewTransaction,
    Order, Page, PageQuery, PayerAction, PayerRefusal, PaymentPage, PaymentPageKey, STORE_TIMEOUT,
    Settings, Store, StoreError, Transition,
};
use crate::domain::catalog::InitialState;
use crate::domain::clock::Clock;
use crate::domain::transaction::{ConfirmResult, Record, id_at, issued_id};
use crate::error::Error;

mod migrations {
    refinery::embed_migrations!("migrations/postgres");
}

/// The table refinery records applied migrations in.
const SCHEMA_TABLE: &str = "mock_schema_history";
/// Advisory lock keys: migrations (one replica at a time), journal writes.
const MIGRATION_LOCK: i64 = 0x6d6f_636b_0001;
const JOURNAL_LOCK: i64 = 0x6d6f_636b_0002;
/// How often a replica writes its journal entries.
const JOURNAL_EVERY: Duration = Duration::from_millis(100);
/// Connections per replica.
const POOL_SIZE: usize = 16;

/// A PostgreSQL database behind the mock.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    shown: String,
    pool: Pool,
    replica: String,
    /// Journal entries not yet written, oldest first (at most [`CAPACITY`]).
    pending: Mutex<Vec<JournalEntry>>,
    /// Serializes this replica's journal writes (a read flushes first).
    flushing: tokio::sync::Mutex<()>,
    /// The last clock offset read: the journal's arrival times use it, so
    /// journaling costs no round trip.
    offset_hint: AtomicI64,
}

fn store_error(e: &tokio_postgres::Error) -> StoreError {
    // The error's text names the server's complaint (a refused connection,
    // a failed statement); it never holds the URL or the password.
    let mut text = e.to_string();
    if let Some(db) = e.as_db_error() {
        text = format!("PostgreSQL: {}", db.message());
    } else if let Some(source) = std::error::Error::source(e) {
        text = format!("{text}: {source}");
    }
    StoreError::new(text)
}

fn pool_error(e: &deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => store_error(e),
        deadpool_postgres::PoolError::Timeout(_) => {
            StoreError::new("PostgreSQL did not answer within 4 s")
        }
        other => StoreError::new(format!("PostgreSQL: {other}")),
    }
}

/// A transaction row, in [`COLUMNS`] order.
fn row_of(r: &tokio_postgres::Row) -> Result<Row, StoreError> {
    let get = |e: tokio_postgres::Error| store_error(&e);
    let confirmed_at: Option<i64> = r.try_get(18).map_err(get)?;
    let result: Option<String> = r.try_get(19).map_err(get)?;
    let confirm = match (
        confirmed_at,
        result.as_deref().and_then(ConfirmColumns::result_of),
    ) {
        (Some(confirmed_at), Some(result)) => Some(ConfirmColumns {
            confirmed_at,
            result,
            settles_at: r.try_get(20).map_err(get)?,
            error_message: r.try_get(21).map_err(get)?,
            provider_reference: r.try_get(22).map_err(get)?,
            confirm_extra: r.try_get(23).map_err(get)?,
            page_token: r.try_get(24).map_err(get)?,
            page_deadline: r.try_get(25).map_err(get)?,
        }),
        _ => None,
    };
    Ok(Row {
        id: r.try_get(0).map_err(get)?,
        merchant_id: r.try_get(1).map_err(get)?,
        reference_no: r.try_get(2).map_err(get)?,
        description: r.try_get(3).map_err(get)?,
        amount_minor: r.try_get(4).map_err(get)?,
        currency_code: r.try_get(5).map_err(get)?,
        currency_exponent: r.try_get(6).map_err(get)?,
        product_code: r.try_get(7).map_err(get)?,
        quantity: r.try_get(8).map_err(get)?,
        country_code: r.try_get(9).map_err(get)?,
        store_id: r.try_get(10).map_err(get)?,
        device_id: r.try_get(11).map_err(get)?,
        payer_id: r.try_get(12).map_err(get)?,
        return_url: r.try_get(13).map_err(get)?,
        extra_properties: r.try_get(14).map_err(get)?,
        initial: r.try_get(15).map_err(get)?,
        created_at: r.try_get(16).map_err(get)?,
        expires_at: r.try_get(17).map_err(get)?,
        confirm,
        decision: r.try_get(26).map_err(get)?,
        decided_at: r.try_get(27).map_err(get)?,
        later_submits: r.try_get(28).map_err(get)?,
    })
}

fn record_of(r: &tokio_postgres::Row) -> Result<Record, StoreError> {
    row_of(r)?.into_record()
}

fn journal_row_of(r: &tokio_postgres::Row) -> Result<JournalRow, StoreError> {
    let get = |e: tokio_postgres::Error| store_error(&e);
    Ok(JournalRow {
        seq: r.try_get(0).map_err(get)?,
        at: r.try_get(1).map_err(get)?,
        method: r.try_get(2).map_err(get)?,
        path: r.try_get(3).map_err(get)?,
        query: r.try_get(4).map_err(get)?,
        headers: r.try_get(5).map_err(get)?,
        body: r.try_get(6).map_err(get)?,
        status: r.try_get(7).map_err(get)?,
        error_code: r.try_get(8).map_err(get)?,
        request_id: r.try_get(9).map_err(get)?,
        fault: r.try_get(10).map_err(get)?,
        replica: r.try_get(11).map_err(get)?,
    })
}

/// Bounds a database call by [`STORE_TIMEOUT`].
async fn bounded<T>(
    work: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(STORE_TIMEOUT, work)
        .await
        .map_err(|_| StoreError::new("PostgreSQL did not answer within 4 s"))?
}

impl PostgresStore {
    /// Connects, refuses a newer schema, migrates an older one (one replica
    /// at a time), and starts writing this replica's journal.
    ///
    /// # Errors
    ///
    /// [`Error::StoreOpen`] when the database cannot be reached or refuses
    /// the credentials (the message never holds the password);
    /// [`Error::StoreSchemaNewer`] when a newer mock wrote it.
    pub async fn open(url: &PostgresUrl, replica: &str) -> Result<Self, Error> {
        let shown = url.to_string();
        let fail = |reason: String| Error::StoreOpen {
            store: shown.clone(),
            reason,
        };
        let mut config: tokio_postgres::Config = url
            .secret()
            .parse()
            .map_err(|_| fail("the URL is not one PostgreSQL accepts".to_owned()))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(STORE_TIMEOUT);
        }
        config.application_name("payments-mock-server");
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .wait_timeout(Some(STORE_TIMEOUT))
            .create_timeout(Some(STORE_TIMEOUT))
            .recycle_timeout(Some(STORE_TIMEOUT))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| fail(format!("cannot set up its connection pool: {e}")))?;
        let mut client = pool
            .get()
            .await
            .map_err(|e| fail(format!("cannot connect: {}", pool_error(&e).reason())))?;
        let client: &mut tokio_postgres::Client = &mut client;
        let sql_error = |e: tokio_postgres::Error| fail(store_error(&e).reason().to_owned());
        client
            .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(sql_error)?;
        let migrated = Self::migrate(client, &shown).await;
        let _ = client
            .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
            .await;
        migrated?;
        let offset: i64 = client
            .query_one("SELECT offset_nanos FROM mock_clock WHERE id = 1", &[])
            .await
            .map_err(sql_error)?
            .get(0);
        let store = Self {
            inner: Arc::new(Inner {
                shown,
                pool,
                replica: replica.to_owned(),
                pending: Mutex::new(Vec::new()),
                flushing: tokio::sync::Mutex::new(()),
                offset_hint: AtomicI64::new(offset),
            }),
        };
        tokio::spawn(write_journal(Arc::downgrade(&store.inner)));
        Ok(store)
    }

    async fn migrate(client: &mut tokio_postgres::Client, shown: &str) -> Result<(), Error> {
        let fail = |reason: String| Error::StoreOpen {
            store: shown.to_owned(),
            reason,
        };
        let supported = migrations::migrations::runner()
            .get_migrations()
            .iter()
            .map(|m| i64::from(m.version()))
            .max()
            .unwrap_or(0);
        let exists: bool = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&SCHEMA_TABLE])
            .await
            .map_err(|e| fail(store_error(&e).reason().to_owned()))?
            .get(0);
        if exists {
            let found: Option<i32> = client
                .query_one(&format!("SELECT MAX(version) FROM {SCHEMA_TABLE}"), &[])
                .await
                .map_err(|e| fail(store_error(&e).reason().to_owned()))?
                .get(0);
            if let Some(found) = found.map(i64::from)
                && found > supported
            {
                return Err(Error::StoreSchemaNewer {
                    store: shown.to_owned(),
                    found,
                    supported,
                });
            }
        }
        migrations::migrations::runner()
            .set_migration_table_name(SCHEMA_TABLE)
            .run_async(client)
            .await
            .map_err(|e| fail(format!("cannot bring its schema up to date: {e}")))?;
        Ok(())
    }

    /// How the console names it: the URL, password as `***`.
    pub fn shown(&self) -> &str {
        &self.inner.shown
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.inner.pool.get().await.map_err(|e| pool_error(&e))
    }

    async fn offset(&self, client: &deadpool_postgres::Object) -> Result<i64, StoreError> {
        let statement = client
            .prepare_cached("SELECT offset_nanos FROM mock_clock WHERE id = 1")
            .await
            .map_err(|e| store_error(&e))?;
        let offset: i64 = client
            .query_one(&statement, &[])
            .await
            .map_err(|e| store_error(&e))?
            .get(0);
        self.inner.offset_hint.store(offset, Ordering::Relaxed);
        Ok(offset)
    }

    async fn select(
        client: &deadpool_postgres::Object,
        filter: &str,
        values: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Record>, StoreError> {
        let statement = client
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM mock_transactions WHERE {filter}"
            ))
            .await
            .map_err(|e| store_error(&e))?;
        client
            .query(&statement, values)
            .await
            .map_err(|e| store_error(&e))?
            .iter()
            .map(record_of)
            .collect()
    }

    async fn select_one(
        client: &deadpool_postgres::Object,
        filter: &str,
        values: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Record>, StoreError> {
        Ok(Self::select(client, filter, values)
            .await?
            .into_iter()
            .next())
    }

    /// The page key as a filter over one parameter.
    fn page_filter(key: PaymentPageKey<'_>) -> Option<(&'static str, PageParam)> {
        match key {
            PaymentPageKey::Token(token) if crate::domain::redirect::is_token(token) => {
                Some(("page_token = $1", PageParam::Token(token.to_owned())))
            }
            PaymentPageKey::Transaction(id) => {
                issued_id(id).map(|id| ("id = $1", PageParam::Id(id)))
            }
            PaymentPageKey::Token(_) => None,
        }
    }

    async fn page_now<T>(
        &self,
        query: &PageQuery,
        mut keep: impl FnMut(&Record) -> bool,
        mut f: impl FnMut(&Record) -> T,
    ) -> Result<Option<Page<T>>, StoreError> {
        let client = self.client().await?;
        if let Some(from) = query.from
            && Self::select_one(&client, "id = $1", &[&from])
                .await?
                .is_none()
        {
            return Ok(None);
        }
        let (cmp, order) = match query.order {
            Order::OldestFirst => (">", "ASC"),
            Order::NewestFirst => ("<", "DESC"),
        };
        let mut filter = String::from("TRUE");
        let mut values: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
        if let Some(from) = query.from {
            values.push(Box::new(from));
            filter.push_str(&format!(" AND id {cmp} ${}", values.len()));
        }
        if let Some(merchant) = query.merchant {
            values.push(Box::new(merchant));
            filter.push_str(&format!(" AND merchant_id = ${}", values.len()));
        }
        if let Some(part) = &query.reference_contains {
            values.push(Box::new(part.clone()));
            filter.push_str(&format!(" AND strpos(reference_no, ${}) > 0", values.len()));
        }
        // Batches in order until the page is full: `keep` (the status at
        // now) cannot run in the database.
        let batch = query.limit.saturating_add(1).clamp(64, 1001);
        let mut items = Vec::with_capacity(query.limit.min(1024));
        let mut last: Option<Uuid> = None;
        loop {
            let mut sql = filter.clone();
            let mut params: Vec<&(dyn ToSql + Sync)> =
                values.iter().map(|v| &**v as &(dyn ToSql + Sync)).collect();
            if let Some(last) = &last {
                params.push(last);
                sql.push_str(&format!(" AND id {cmp} ${}", params.len()));
            }
            sql.push_str(&format!(" ORDER BY id {order} LIMIT {batch}"));
            let rows = Self::select(&client, &sql, &params).await?;
            let fetched = rows.len();
            for record in rows {
                last = Some(record.id);
                if !keep(&record) {
                    continue;
                }
                if items.len() == query.limit {
                    return Ok(Some(Page { items, more: true }));
                }
                items.push(f(&record));
            }
            if fetched < batch {
                return Ok(Some(Page { items, more: false }));
            }
        }
    }

    /// Writes this replica's pending journal entries: one statement under
    /// the journal lock, then the table trimmed to the last [`CAPACITY`].
    async fn flush(&self) -> Result<(), StoreError> {
        flush(&self.inner).await
    }

    /// The clock offset this replica last read.
    fn offset_hint(&self) -> i64 {
        self.inner.offset_hint.load(Ordering::Relaxed)
    }
}

/// A page key's one parameter.
#[derive(Debug)]
enum PageParam {
    Token(String),
    Id(Uuid),
}

impl PageParam {
    fn value(&self) -> &(dyn ToSql + Sync) {
        match self {
            Self::Token(token) => token,
            Self::Id(id) => id,
        }
    }
}

async fn flush(inner: &Inner) -> Result<(), StoreError> {
    let _one = inner.flushing.lock().await;
    let entries =
        std::mem::take(&mut *inner.pending.lock().unwrap_or_else(PoisonError::into_inner));
    if entries.is_empty() {
        return Ok(());
    }
    let written = bounded(async {
        let mut client = inner.pool.get().await.map_err(|e| pool_error(&e))?;
        let tx = client.transaction().await.map_err(|e| store_error(&e))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&JOURNAL_LOCK])
            .await
            .map_err(|e| store_error(&e))?;
        let rows: Vec<JournalRow> = entries.iter().map(JournalRow::of).collect();
        let column = |f: fn(&JournalRow) -> Option<String>| rows.iter().map(f).collect::<Vec<_>>();
        let at: Vec<i64> = rows.iter().map(|r| r.at).collect();
        let status: Vec<Option<i32>> = rows.iter().map(|r| r.status).collect();
        let method = column(|r| Some(r.method.clone()));
        let path = column(|r| Some(r.path.clone()));
        let query = column(|r| r.query.clone());
        let headers = column(|r| Some(r.headers.clone()));
        let body = column(|r| Some(r.body.clone()));
        let error_code = column(|r| r.error_code.clone());
        let request_id = column(|r| Some(r.request_id.clone()));
        let fault = column(|r| r.fault.clone());
        let replica = column(|r| Some(r.replica.clone()));
        tx.execute(
            "INSERT INTO mock_journal (at, method, path, query, headers, body, status, error_code, request_id, fault, replica) \
             SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::integer[], $8::text[], $9::text[], $10::text[], $11::text[])",
            &[&at, &method, &path, &query, &headers, &body, &status, &error_code, &request_id, &fault, &replica],
        )
        .await
        .map_err(|e| store_error(&e))?;
        tx.execute(
            "DELETE FROM mock_journal WHERE seq <= (SELECT MAX(seq) FROM mock_journal) - $1",
            &[&(CAPACITY as i64)],
        )
        .await
        .map_err(|e| store_error(&e))?;
        tx.commit().await.map_err(|e| store_error(&e))
    })
    .await;
    if written.is_err() {
        // Kept for the next try, newest last, at most the journal's length.
        let mut pending = inner.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let mut again = entries;
        again.append(&mut pending);
        let excess = again.len().saturating_sub(CAPACITY);
        again.drain(..excess);
        *pending = again;
    }
    written
}

/// This replica's journal writer: every [`JOURNAL_EVERY`], until the store
/// is dropped.
async fn write_journal(inner: Weak<Inner>) {
    let mut tick = tokio::time::interval(JOURNAL_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if let Err(e) = flush(&inner).await {
            tracing::debug!(error = %e, "the request journal could not be written to PostgreSQL yet");
        }
    }
}

impl Store for PostgresStore {
    async fn now(&self) -> Result<DateTime<Utc>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            Ok(Clock::at_offset(self.offset(&client).await?))
        })
        .await
    }

    async fn clock(&self) -> Result<ClockReading, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let offset = self.offset(&client).await?;
            Ok(ClockReading {
                now: Clock::at_offset(offset),
                offset_nanos: offset,
            })
        })
        .await
    }

    async fn advance_clock(&self, by: Duration) -> Result<ClockReading, StoreError> {
        let add = i64::try_from(by.as_nanos()).unwrap_or(i64::MAX);
        bounded(async {
            let client = self.client().await?;
            // Saturating: the offset is never negative (advances are not,
            // and a reset sets 0), so the headroom below cannot overflow.
            let offset: i64 = client
                .query_one(
                    "UPDATE mock_clock SET offset_nanos = offset_nanos + \
                     LEAST($1::bigint, 9223372036854775807 - offset_nanos) WHERE id = 1 RETURNING offset_nanos",
                    &[&add],
                )
                .await
                .map_err(|e| store_error(&e))?
                .get(0);
            self.inner.offset_hint.store(offset, Ordering::Relaxed);
            Ok(ClockReading {
                now: Clock::at_offset(offset),
                offset_nanos: offset,
            })
        })
        .await
    }

    async fn create(
        &self,
        new: NewTransaction,
        initial: InitialState,
        expiry: Duration,
    ) -> Result<Result<Record, InsertRefusal>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let now = Clock::at_offset(self.offset(&client).await?);
            let id = id_at(now);
            let row = new_row(id, new, initial, now, crate::domain::clock::add(now, expiry));
            let statement = client
                .prepare_cached(&format!(
                    "INSERT INTO mock_transactions ({COLUMNS}) VALUES \
                     ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
                     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0) \
                     ON CONFLICT (merchant_id, reference_no) DO NOTHING RETURNING id"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let inserted = client
                .query_opt(
                    &statement,
                    &[
                        &row.id,
                        &row.merchant_id,
                        &row.reference_no,
                        &row.description,
                        &row.amount_minor,
                        &row.currency_code,
                        &row.currency_exponent,
                        &row.product_code,
                        &row.quantity,
                        &row.country_code,
                        &row.store_id,
                        &row.device_id,
                        &row.payer_id,
                        &row.return_url,
                        &row.extra_properties,
                        &row.initial,
                        &row.created_at,
                        &row.expires_at,
                    ],
                )
                .await
                .map_err(|e| store_error(&e))?;
            if inserted.is_some() {
                return Ok(Ok(row.into_record()?));
            }
            // The holder committed before our insert looked (ON CONFLICT
            // waits for a rival in flight), so it is there to read.
            let holder = Self::select_one(
                &client,
                "merchant_id = $1 AND reference_no = $2",
                &[&row.merchant_id, &row.reference_no],
            )
            .await?;
            Ok(Err(holder.map_or(InsertRefusal::Full, |h| {
                InsertRefusal::Duplicate(h.id)
            })))
        })
        .await
    }

    async fn confirm(
        &self,
        id: Uuid,
        now: DateTime<Utc>,
        confirmation: Confirmation,
    ) -> Result<Transition, StoreError> {
        let c = ConfirmColumns::of(&confirmation);
        bounded(async {
            let client = self.client().await?;
            let statement = client
                .prepare_cached(&format!(
                    "UPDATE mock_transactions SET confirmed_at = $2, result = $3, settles_at = $4, \
                     error_message = $5, provider_reference = $6, confirm_extra = $7, \
                     page_token = $8, page_deadline = $9 \
                     WHERE id = $1 AND confirmed_at IS NULL AND expires_at > $10 RETURNING {COLUMNS}"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let moved = client
                .query_opt(
                    &statement,
                    &[
                        &id,
                        &c.confirmed_at,
                        &c.result,
                        &c.settles_at,
                        &c.error_message,
                        &c.provider_reference,
                        &c.confirm_extra,
                        &c.page_token,
                        &c.page_deadline,
                        &millis(now),
                    ],
                )
                .await
                .map_err(|e| store_error(&e))?;
            if let Some(row) = moved {
                return Ok(Transition::Moved(record_of(&row)?));
            }
            Ok(match Self::select_one(&client, "id = $1", &[&id]).await? {
                Some(record) => Transition::Unmoved(record),
                None => Transition::Missing,
            })
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
        let Some((filter, param)) = Self::page_filter(key) else {
            return Ok(Err(PayerRefusal::NotFound));
        };
        let by_token = matches!(param, PageParam::Token(_));
        bounded(async {
            let client = self.client().await?;
            let scope_filter = "($2::uuid IS NULL OR merchant_id = $2)";
            let decide = client
                .prepare_cached(&format!(
                    "UPDATE mock_transactions SET decision = $3, decided_at = $4 \
                     WHERE {filter} AND {scope_filter} AND page_token IS NOT NULL \
                     AND decision IS NULL AND page_deadline > $4 RETURNING {COLUMNS}"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let at = millis(now);
            let decided = client
                .query_opt(&decide, &[param.value(), &scope, &action.as_str(), &at])
                .await
                .map_err(|e| store_error(&e))?;
            if let Some(row) = decided {
                return Ok(Ok(Decided {
                    record: record_of(&row)?,
                    decided_now: true,
                }));
            }
            let later = client
                .prepare_cached(&format!(
                    "UPDATE mock_transactions SET later_submits = LEAST(later_submits + 1, 4294967295) \
                     WHERE {filter} AND {scope_filter} AND page_token IS NOT NULL RETURNING {COLUMNS}"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let counted = client
                .query_opt(&later, &[param.value(), &scope])
                .await
                .map_err(|e| store_error(&e))?;
            if let Some(row) = counted {
                return Ok(Ok(Decided {
                    record: record_of(&row)?,
                    decided_now: false,
                }));
            }
            let exists = !by_token
                && Self::select_one(
                    &client,
                    &format!("{filter} AND {scope_filter}"),
                    &[param.value(), &scope],
                )
                .await?
                .is_some();
            Ok(Err(if exists {
                PayerRefusal::NoPaymentPage
            } else {
                PayerRefusal::NotFound
            }))
        })
        .await
    }

    async fn with_id<T: Send>(
        &self,
        id: Uuid,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        let record = bounded(async {
            let client = self.client().await?;
            Self::select_one(&client, "id = $1", &[&id]).await
        })
        .await?;
        Ok(record
            .filter(|r| scope.is_none_or(|m| m == r.fields.merchant_id))
            .as_ref()
            .map(f))
    }

    async fn with_reference<T: Send>(
        &self,
        reference_no: &str,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Result<T, LookupError>, StoreError> {
        let found = bounded(async {
            let client = self.client().await?;
            match scope {
                Some(merchant) => {
                    Self::select(
                        &client,
                        "merchant_id = $1 AND reference_no = $2",
                        &[&merchant, &reference_no],
                    )
                    .await
                }
                None => Self::select(&client, "reference_no = $1 LIMIT 2", &[&reference_no]).await,
            }
        })
        .await?;
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
        let Some((filter, param)) = Self::page_filter(key) else {
            return Ok(None);
        };
        let record = bounded(async {
            let client = self.client().await?;
            Self::select_one(&client, filter, &[param.value()]).await
        })
        .await?;
        Ok(
            record.and_then(|r| match &r.confirmation.as_deref()?.result {
                ConfirmResult::AwaitingPayer(page) => Some(f(&r, page)),
                _ => None,
            }),
        )
    }

    async fn page<T: Send>(
        &self,
        query: &PageQuery,
        keep: impl FnMut(&Record) -> bool + Send,
        f: impl FnMut(&Record) -> T + Send,
    ) -> Result<Option<Page<T>>, StoreError> {
        bounded(self.page_now(query, keep, f)).await
    }

    async fn count(&self) -> Result<usize, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let n: i64 = client
                .query_one("SELECT count(*) FROM mock_transactions", &[])
                .await
                .map_err(|e| store_error(&e))?
                .get(0);
            Ok(usize::try_from(n).unwrap_or(0))
        })
        .await
    }

    fn now_hint(&self) -> DateTime<Utc> {
        Clock::at_offset(self.offset_hint())
    }

    fn record_request(&self, capture: Capture) {
        let mut entry = capture.entry();
        entry.replica.clone_from(&self.inner.replica);
        let mut pending = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if pending.len() == CAPACITY {
            pending.remove(0);
        }
        pending.push(entry);
    }

    async fn requests_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        self.flush().await?;
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit.min(CAPACITY)).unwrap_or(0);
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    &format!(
                        "SELECT {JOURNAL_COLUMNS} FROM (SELECT {JOURNAL_COLUMNS} FROM mock_journal \
                         WHERE seq > $1 ORDER BY seq DESC LIMIT $2) newest ORDER BY seq"
                    ),
                    &[&after, &limit],
                )
                .await
                .map_err(|e| store_error(&e))?;
            rows.iter()
                .map(|r| journal_row_of(r).map(JournalRow::into_entry))
                .collect()
        })
        .await
    }

    async fn request(&self, seq: u64) -> Result<Option<JournalEntry>, StoreError> {
        self.flush().await?;
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        bounded(async {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    &format!("SELECT {JOURNAL_COLUMNS} FROM mock_journal WHERE seq = $1"),
                    &[&seq],
                )
                .await
                .map_err(|e| store_error(&e))?;
            row.as_ref()
                .map(|r| journal_row_of(r).map(JournalRow::into_entry))
                .transpose()
        })
        .await
    }

    async fn journal_stats(&self) -> Result<JournalStats, StoreError> {
        self.flush().await?;
        bounded(async {
            let client = self.client().await?;
            // The sequence's last value numbers entries across resets.
            let row = client
                .query_one(
                    "SELECT (SELECT count(*) FROM mock_journal), \
                     (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM mock_journal_seq_seq)",
                    &[],
                )
                .await
                .map_err(|e| store_error(&e))?;
            let len: i64 = row.get(0);
            let last: i64 = row.get(1);
            Ok(JournalStats {
                last_seq: u64::try_from(last).unwrap_or(0),
                len: usize::try_from(len).unwrap_or(0),
            })
        })
        .await
    }

    async fn reset(&self) -> Result<(), StoreError> {
        self.inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        bounded(async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| store_error(&e))?;
            tx.batch_execute(
                "TRUNCATE mock_transactions, mock_journal; UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1;",
            )
            .await
            .map_err(|e| store_error(&e))?;
            tx.commit().await.map_err(|e| store_error(&e))?;
            self.inner.offset_hint.store(0, Ordering::Relaxed);
            Ok(())
        })
        .await
    }

    async fn settings(&self) -> Result<Option<Settings>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT key, value FROM mock_settings WHERE key IN ('catalog', 'expiry_ms')",
                    &[],
                )
                .await
                .map_err(|e| store_error(&e))?;
            let value = |key: &str| {
                rows.iter()
                    .find(|r| r.get::<_, &str>(0) == key)
                    .map(|r| r.get::<_, String>(1))
            };
            match (value("catalog"), value("expiry_ms")) {
                (Some(catalog), Some(expiry)) => {
                    let expiry = expiry
                        .parse::<i64>()
                        .map_err(|_| StoreError::new("the stored expiry is not a number"))?;
                    Settings::from_stored(&catalog, expiry)
                        .map(Some)
                        .map_err(StoreError::new)
                }
                _ => Ok(None),
            }
        })
        .await
    }

    async fn save_settings(&self, settings: &Settings) -> Result<(), StoreError> {
        let catalog = settings.catalog.to_toml();
        let expiry = settings.expiry_millis().to_string();
        bounded(async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| store_error(&e))?;
            // Only where none are stored: of replicas starting together on
            // an empty database, the first one's settings stay, and every
            // other reads them back and compares.
            for (key, value) in [("catalog", &catalog), ("expiry_ms", &expiry)] {
                tx.execute(
                    "INSERT INTO mock_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                    &[&key, value],
                )
                .await
                .map_err(|e| store_error(&e))?;
            }
            tx.commit().await.map_err(|e| store_error(&e))
        })
        .await
    }

    async fn erase(&self) -> Result<(), StoreError> {
        self.inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        bounded(async {
            let client = self.client().await?;
            client
                .batch_execute(
                    "BEGIN; TRUNCATE mock_transactions, mock_journal RESTART IDENTITY; \
                     DELETE FROM mock_settings; UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1; COMMIT;",
                )
                .await
                .map_err(|e| store_error(&e))?;
            self.inner.offset_hint.store(0, Ordering::Relaxed);
            Ok(())
        })
        .await
    }

    async fn check(&self) -> Result<(), StoreError> {
        bounded(async {
            let client = self.client().await?;
            client
                .query_one("SELECT 1", &[])
                .await
                .map_err(|e| store_error(&e))?;
            Ok(())
        })
        .await
    }
}
