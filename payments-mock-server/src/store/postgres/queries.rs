//! The PostgreSQL store's reads: a pooled client, the clock offset,
//! transactions by a filter, pages in batches, a merchant's count.

use super::*;
use rows::*;

/// The most rows a batch of a page reads.
const MAX_BATCH: usize = 8192;

/// The longest a page of transactions may take, batches and all (each
/// statement is bounded by [`STORE_TIMEOUT`]).
const LIST_TIMEOUT: Duration = Duration::from_secs(60);

impl PostgresStore {
    /// How the console names it: the URL, password as `***`.
    pub fn shown(&self) -> &str {
        &self.inner.shown
    }

    /// Its operations' counts (`GET /metrics`).
    pub(crate) fn counts(&self) -> &crate::metrics::StoreCounts {
        &self.inner.counts
    }

    pub(super) async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.inner.connection().await
    }

    pub(super) async fn offset(
        &self,
        client: &deadpool_postgres::Object,
    ) -> Result<i64, StoreError> {
        let offset: i64 = if self.is_root() {
            let statement = client
                .prepare_cached("SELECT offset_nanos FROM mock_clock WHERE id = 1")
                .await
                .map_err(|e| store_error(&e))?;
            client
                .query_one(&statement, &[])
                .await
                .map_err(|e| store_error(&e))?
                .get(0)
        } else {
            let statement = client
                .prepare_cached("SELECT offset_nanos FROM mock_sandboxes WHERE id = $1")
                .await
                .map_err(|e| store_error(&e))?;
            client
                .query_opt(&statement, &[&self.view.sandbox])
                .await
                .map_err(|e| store_error(&e))?
                .ok_or_else(sandbox_gone)?
                .get(0)
        };
        self.view.offset_hint.store(offset, Ordering::Relaxed);
        Ok(offset)
    }

    pub(super) async fn select(
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

    pub(super) async fn select_one(
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
    pub(super) fn page_filter(key: PaymentPageKey<'_>) -> Option<(&'static str, PageParam)> {
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

    /// A page of transactions: each statement bounded by
    /// [`STORE_TIMEOUT`], the page, which may read a whole sandbox in
    /// batches when `keep` drops most rows (an admin list by status), by
    /// [`LIST_TIMEOUT`].
    pub(super) async fn page_within<T>(
        &self,
        query: &PageQuery,
        keep: impl FnMut(&Record) -> bool,
        f: impl FnMut(&Record) -> T,
    ) -> Result<Option<Page<T>>, StoreError> {
        tokio::time::timeout(LIST_TIMEOUT, self.page_now(query, keep, f))
            .await
            .map_err(|_| StoreError::new("PostgreSQL did not read the page within 60 s"))?
    }

    async fn page_now<T>(
        &self,
        query: &PageQuery,
        mut keep: impl FnMut(&Record) -> bool,
        mut f: impl FnMut(&Record) -> T,
    ) -> Result<Option<Page<T>>, StoreError> {
        let client = bounded(self.client()).await?;
        if let Some(from) = query.from
            && bounded(Self::select_one(
                &client,
                "id = $1 AND sandbox = $2",
                &[&from, &self.view.sandbox],
            ))
            .await?
            .is_none()
        {
            return Ok(None);
        }
        // No reference holds a NUL (the interface refuses control
        // characters), and PostgreSQL's text cannot take one: such a
        // filter finds nothing, as on the other stores, never a 503.
        if query
            .reference_contains
            .as_deref()
            .is_some_and(|part| part.contains('\0'))
        {
            return Ok(Some(Page {
                items: Vec::new(),
                more: false,
            }));
        }
        let (cmp, order) = match query.order {
            Order::OldestFirst => (">", "ASC"),
            Order::NewestFirst => ("<", "DESC"),
        };
        let mut filter = String::from("sandbox = $1");
        let mut values: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(self.view.sandbox)];
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
        // now) cannot run in the database. Each batch is one statement
        // bounded by STORE_TIMEOUT (a database gone answers 503 within
        // it), not the whole page: a filter that keeps few rows reads the
        // sandbox to its end. Batches grow while they fill nothing much.
        let mut batch = query.limit.saturating_add(1).clamp(64, 1001);
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
            let rows = bounded(Self::select(&client, &sql, &params)).await?;
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
            batch = batch.saturating_mul(2).min(MAX_BATCH);
        }
    }

    /// How many transactions `merchant` holds in this store's sandbox: one
    /// `count(*)` on the unique `(sandbox, merchant_id, reference_no)`
    /// index (migration V5), whose first two columns are the filter.
    pub(super) async fn count_merchant(&self, merchant: Uuid) -> Result<usize, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let n: i64 = client
                .query_one(
                    "SELECT count(*) FROM mock_transactions WHERE sandbox = $1 AND merchant_id = $2",
                    &[&self.view.sandbox, &merchant],
                )
                .await
                .map_err(|e| store_error(&e))?
                .get(0);
            Ok(usize::try_from(n).unwrap_or(0))
        })
        .await
    }

    /// The clock offset this replica last read.
    pub(super) fn offset_hint(&self) -> i64 {
        self.view.offset_hint.load(Ordering::Relaxed)
    }
}

/// A page key's one parameter.
#[derive(Debug)]
pub(super) enum PageParam {
    Token(String),
    Id(Uuid),
}

impl PageParam {
    pub(super) fn value(&self) -> &(dyn ToSql + Sync) {
        match self {
            Self::Token(token) => token,
            Self::Id(id) => id,
        }
    }
}
