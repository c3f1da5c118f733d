//! PostgreSQL rows into records and journal entries; its errors into
//! [`StoreError`]s without secrets; every call bounded in time.

use super::*;

pub(super) fn store_error(e: &tokio_postgres::Error) -> StoreError {
    // The error's text names the server's complaint (a refused connection,
    // a failed statement); it never holds the URL or the password.
    let mut text = e.to_string();
    if let Some(db) = e.as_db_error() {
        if *db.code() == tokio_postgres::error::SqlState::UNDEFINED_TABLE {
            return tables_gone(db.message());
        }
        text = format!("PostgreSQL: {}", db.message());
    } else if let Some(source) = std::error::Error::source(e) {
        text = format!("{text}: {source}");
    }
    StoreError::new(text)
}

/// The store's tables are not in the database any more (it was dropped
/// and made again empty, or its tables dropped): no retry brings them
/// back, a restart of the mock makes them again (its migrations).
fn tables_gone(message: &str) -> StoreError {
    StoreError::lost(format!(
        "the PostgreSQL store's tables are gone (PostgreSQL: {message}; was its database dropped or emptied?): restart the mock to make them again"
    ))
}

/// A value of a row fetched that does not hold what the mock wrote: a
/// lasting fault of the data, not an outage.
fn unreadable(e: &tokio_postgres::Error) -> StoreError {
    StoreError::unreadable(format!(
        "a stored row does not hold what the mock wrote ({}); was the database changed outside the mock?",
        store_error(e).reason()
    ))
}

pub(super) fn pool_error(e: &deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => store_error(e),
        deadpool_postgres::PoolError::Timeout(_) => {
            StoreError::new("PostgreSQL did not answer within 4 s")
        }
        other => StoreError::new(format!("PostgreSQL: {other}")),
    }
}

/// A transaction row, in [`COLUMNS`] order.
pub(super) fn row_of(r: &tokio_postgres::Row) -> Result<Row, StoreError> {
    let get = |e: tokio_postgres::Error| unreadable(&e);
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
    let mut row = Row {
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
    };
    nul_escape::unescape_row(&mut row);
    Ok(row)
}

pub(super) fn record_of(r: &tokio_postgres::Row) -> Result<Record, StoreError> {
    row_of(r)?.into_record()
}

pub(super) fn journal_row_of(r: &tokio_postgres::Row) -> Result<JournalRow, StoreError> {
    let get = |e: tokio_postgres::Error| unreadable(&e);
    let mut row = JournalRow {
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
        caller: r.try_get(12).map_err(get)?,
    };
    nul_escape::unescape_journal(&mut row);
    Ok(row)
}

/// Bounds a database call by [`STORE_TIMEOUT`].
pub(super) async fn bounded<T>(
    work: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(STORE_TIMEOUT, work)
        .await
        .map_err(|_| StoreError::new("PostgreSQL did not answer within 4 s"))?
}
