//! The SQLite store's statements: rows read into records and journal
//! entries, look-ups, settings, the insert.

use super::*;
use crate::store::sql::concat_columns;

pub(super) fn store_error(e: &rusqlite::Error) -> StoreError {
    match e {
        // A value the row cannot hold as the mock wrote it (a 1-byte id, a
        // text where a number goes): changed outside the mock, and no retry
        // mends it.
        rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::IntegralValueOutOfRange(..)
        | rusqlite::Error::Utf8Error(..) => StoreError::unreadable(format!(
            "a stored row does not hold what the mock wrote (SQLite: {e}); was the database changed outside the mock?"
        )),
        // Pages overwritten or cut: a damaged file, not an outage (no
        // retry mends it either).
        _ if is_damage(e) => StoreError::unreadable(format!(
            "{DAMAGED} (SQLite: {e}); was it changed outside the mock? Restore it from a copy (or move it away) and restart the mock"
        )),
        _ => StoreError::new(format!("SQLite: {e}")),
    }
}

/// How a [`store_error`] for a damaged file begins (the watch tells it
/// from a row it cannot read by it).
pub(super) const DAMAGED: &str = "the SQLite file is damaged";

/// Whether SQLite found the file damaged: `SQLITE_CORRUPT` (its pages do
/// not hold a database any more) or `SQLITE_NOTADB` (its header neither).
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

pub(super) fn uuid_of(bytes: &[u8]) -> rusqlite::Result<Uuid> {
    Uuid::from_slice(bytes).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Blob, Box::new(e))
    })
}

/// A transaction row, in [`COLUMNS`] order.
pub(super) fn row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let confirmed_at: Option<i64> = r.get(18)?;
    let result: Option<String> = r.get(19)?;
    let confirm = match (
        confirmed_at,
        result.as_deref().and_then(ConfirmColumns::result_of),
    ) {
        (Some(confirmed_at), Some(result)) => Some(ConfirmColumns {
            confirmed_at,
            result,
            settles_at: r.get(20)?,
            error_message: r.get(21)?,
            provider_reference: r.get(22)?,
            confirm_extra: r.get(23)?,
            page_token: r.get(24)?,
            page_deadline: r.get(25)?,
        }),
        _ => None,
    };
    Ok(Row {
        id: uuid_of(&r.get::<_, Vec<u8>>(0)?)?,
        merchant_id: uuid_of(&r.get::<_, Vec<u8>>(1)?)?,
        reference_no: r.get(2)?,
        description: r.get(3)?,
        amount_minor: r.get(4)?,
        currency_code: r.get(5)?,
        currency_exponent: r.get(6)?,
        product_code: r.get(7)?,
        quantity: r.get(8)?,
        country_code: r.get(9)?,
        store_id: r.get(10)?,
        device_id: r.get(11)?,
        payer_id: r.get(12)?,
        return_url: r.get(13)?,
        extra_properties: r.get(14)?,
        initial: r.get(15)?,
        created_at: r.get(16)?,
        expires_at: r.get(17)?,
        confirm,
        decision: r.get(26)?,
        decided_at: r.get(27)?,
        later_submits: r.get(28)?,
    })
}

pub(super) fn record_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<Record, StoreError>> {
    Ok(row_of(r)?.into_record())
}

/// SQLite's journal columns: [`JOURNAL_COLUMNS`] (shared with PostgreSQL,
/// whose journal keeps bodies whole), then `body_length`, the whole length
/// of a body the journal cut (NULL: whole), as [`journal_entry_of`] reads
/// them.
pub(super) const SQLITE_JOURNAL_EXTRA: &str = "body_length";

/// A journal entry from a row of [`JOURNAL_COLUMNS`] then
/// [`SQLITE_JOURNAL_EXTRA`]: a cut body keeps its whole length across a
/// reopen. A length not above the kept body's (a row changed outside the
/// mock) reads as a whole body.
pub(super) fn journal_entry_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<JournalEntry> {
    let body_length: Option<i64> = r.get(13)?;
    let mut entry = journal_row_of(r)?.into_entry();
    entry.body_length = body_length
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n > entry.body.len());
    Ok(entry)
}

/// The length of a cut body as [`journal_entry_of`] reads it back.
pub(super) fn body_length_column(entry: &JournalEntry) -> Option<i64> {
    entry.body_length.and_then(|n| i64::try_from(n).ok())
}

fn journal_row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<JournalRow> {
    Ok(JournalRow {
        seq: r.get(0)?,
        at: r.get(1)?,
        method: r.get(2)?,
        path: r.get(3)?,
        query: r.get(4)?,
        headers: r.get(5)?,
        body: r.get(6)?,
        status: r.get(7)?,
        error_code: r.get(8)?,
        request_id: r.get(9)?,
        fault: r.get(10)?,
        replica: r.get(11)?,
        // A value that is no UUID (a row changed outside the mock) names
        // no caller.
        caller: r
            .get::<_, Option<Vec<u8>>>(12)?
            .and_then(|bytes| Uuid::from_slice(&bytes).ok()),
    })
}

/// The statement that reads one transaction by id, in one sandbox (`?2`:
/// the sandbox column, empty for the root).
pub(super) const SELECT_ID: &str = concat_columns!(
    "SELECT ",
    " FROM mock_transactions WHERE id = ?1 AND sandbox = ?2"
);

/// One transaction by id, in the sandbox `key` (empty: the root).
pub(super) fn select_id(
    conn: &Connection,
    key: &[u8],
    id: Uuid,
) -> Result<Option<Record>, StoreError> {
    let mut statement = conn
        .prepare_cached(SELECT_ID)
        .map_err(|e| store_error(&e))?;
    select_id_with(&mut statement, key, id)
}

/// One transaction by id, with [`SELECT_ID`] prepared.
pub(super) fn select_id_with(
    statement: &mut rusqlite::Statement<'_>,
    key: &[u8],
    id: Uuid,
) -> Result<Option<Record>, StoreError> {
    statement
        .query_row(params![id.as_bytes().as_slice(), key], record_of)
        .optional()
        .map_err(|e| store_error(&e))?
        .transpose()
}

/// The transaction a payment page belongs to, in the sandbox `key`.
pub(super) fn select_page(
    conn: &Connection,
    key: &[u8],
    page: &PageKey,
) -> Result<Option<Record>, StoreError> {
    match page {
        PageKey::Transaction(id) => select_id(conn, key, *id),
        PageKey::Token(token) => {
            let mut statement = conn
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM mock_transactions WHERE page_token = ?1 AND sandbox = ?2"
                ))
                .map_err(|e| store_error(&e))?;
            statement
                .query_row(params![token, key], record_of)
                .optional()
                .map_err(|e| store_error(&e))?
                .transpose()
        }
    }
}

pub(super) fn setting(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT value FROM mock_settings WHERE key = ?1",
        [key],
        |r| r.get(0),
    )
    .optional()
}

pub(super) fn put_setting(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO mock_settings (key, value) VALUES (?1, ?2) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )
    .map(|_| ())
}

/// The statement that inserts a transaction unless its merchant holds
/// its reference in its sandbox (`?30`).
pub(super) const INSERT: &str = concat_columns!(
    "INSERT INTO mock_transactions (",
    ", sandbox) VALUES \
     (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, \
     ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30) \
     ON CONFLICT DO NOTHING"
);

/// Inserts a new transaction into the sandbox `key` unless its merchant
/// holds its reference there, with [`INSERT`] prepared; whether it did.
pub(super) fn insert(
    statement: &mut rusqlite::Statement<'_>,
    key: &[u8],
    row: &Row,
) -> rusqlite::Result<bool> {
    let c = row.confirm.as_ref();
    let changed = statement.execute(params![
        row.id.as_bytes().as_slice(),
        row.merchant_id.as_bytes().as_slice(),
        row.reference_no,
        row.description,
        row.amount_minor,
        row.currency_code,
        row.currency_exponent,
        row.product_code,
        row.quantity,
        row.country_code,
        row.store_id,
        row.device_id,
        row.payer_id,
        row.return_url,
        row.extra_properties,
        row.initial,
        row.created_at,
        row.expires_at,
        c.map(|c| c.confirmed_at),
        c.map(|c| c.result),
        c.and_then(|c| c.settles_at),
        c.and_then(|c| c.error_message.clone()),
        c.and_then(|c| c.provider_reference.clone()),
        c.and_then(|c| c.confirm_extra.clone()),
        c.and_then(|c| c.page_token.clone()),
        c.and_then(|c| c.page_deadline),
        row.decision,
        row.decided_at,
        row.later_submits,
        key,
    ])?;
    Ok(changed == 1)
}
