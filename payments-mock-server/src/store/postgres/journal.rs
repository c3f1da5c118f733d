//! The journal of one replica, written behind the answers: every 100 ms,
//! and before this replica reads it.

use super::*;
use rows::*;

pub(super) async fn flush(inner: &Inner) -> Result<(), StoreError> {
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
pub(super) async fn write_journal(inner: Weak<Inner>) {
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
