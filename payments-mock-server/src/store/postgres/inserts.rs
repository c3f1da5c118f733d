//! The PostgreSQL store's two inserts: a new transaction (`create`: the
//! unique index on sandbox, merchant and reference decides which of racing
//! initiates wins) and one taken from a recording (`seed`).

use super::*;
use rows::*;

/// How many times an initiate tries again when the reference's holder was
/// removed between its insert and its read of the holder.
const RETRIES_AFTER_A_VANISHED_HOLDER: usize = 8;

impl PostgresStore {
    /// [`Store::create`].
    pub(super) async fn insert_new(
        &self,
        new: NewTransaction,
        initial: InitialState,
        expiry: Duration,
    ) -> Result<Result<Record, InsertRefusal>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let read = Clock::at_offset(self.offset(&client).await?);
            let id = self.view.ids.at(read);
            // Ids of one process never go back: one made a moment later on
            // another thread may carry a later millisecond than `read`.
            // The transaction is created when its id says, so ids follow
            // creation times.
            let now = id
                .get_timestamp()
                .and_then(|t| {
                    let (secs, nanos) = t.to_unix();
                    DateTime::from_timestamp(i64::try_from(secs).ok()?, nanos)
                })
                .map_or(read, |at| at.max(read));
            let row = new_row(id, new, initial, now, crate::domain::clock::add(now, expiry));
            let statement = client
                .prepare_cached(&format!(
                    "INSERT INTO mock_transactions ({COLUMNS}, sandbox) VALUES \
                     ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
                     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, $19) \
                     ON CONFLICT (sandbox, merchant_id, reference_no) DO NOTHING RETURNING id"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let stored = nul_escape::escaped_row(&row);
            let mut params = fields(&stored).to_vec();
            params.push(&self.view.sandbox);
            // The holder committed before our insert looked (ON CONFLICT
            // waits for a rival in flight), so it is there to read, unless
            // a reset (or the sandbox's removal) took it away in between:
            // then the reference is free again, and the insert is tried
            // again (it said "the mock is full" here).
            for _ in 0..RETRIES_AFTER_A_VANISHED_HOLDER {
                let inserted = client
                    .query_opt(&statement, &params)
                    .await
                    .map_err(|e| self.insert_error(&e))?;
                if inserted.is_some() {
                    return Ok(Ok(row.into_record()?));
                }
                let holder = Self::select_one(
                    &client,
                    "merchant_id = $1 AND reference_no = $2 AND sandbox = $3",
                    &[&row.merchant_id, &row.reference_no, &self.view.sandbox],
                )
                .await?;
                if let Some(holder) = holder {
                    return Ok(Err(InsertRefusal::Duplicate(holder.id)));
                }
            }
            Err(StoreError::new(
                "the reference's holder vanished each time it was looked for (resets in a row)",
            ))
        })
        .await
    }

    /// [`Store::seed`].
    pub(super) async fn insert_seeded(
        &self,
        record: Record,
    ) -> Result<Result<(), InsertRefusal>, StoreError> {
        let row = Row::of(&record);
        let c = row.confirm.clone();
        bounded(async {
            let client = self.client().await?;
            let statement = client
                .prepare_cached(&format!(
                    "INSERT INTO mock_transactions ({COLUMNS}, sandbox) VALUES \
                     ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
                     $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30) \
                     ON CONFLICT DO NOTHING RETURNING id"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let c = c.as_ref();
            let (confirmed_at, result, settles_at) = (
                c.map(|c| c.confirmed_at),
                c.map(|c| c.result),
                c.and_then(|c| c.settles_at),
            );
            let (error_message, provider_reference, confirm_extra) = (
                c.and_then(|c| c.error_message.clone()),
                c.and_then(|c| c.provider_reference.clone()),
                c.and_then(|c| c.confirm_extra.clone()),
            );
            let (page_token, page_deadline) = (
                c.and_then(|c| c.page_token.clone()),
                c.and_then(|c| c.page_deadline),
            );
            let stored = nul_escape::escaped_row(&row);
            let mut params = fields(&stored).to_vec();
            params.extend_from_slice(&[
                &confirmed_at,
                &result,
                &settles_at,
                &error_message,
                &provider_reference,
                &confirm_extra,
                &page_token,
                &page_deadline,
                &row.decision,
                &row.decided_at,
                &row.later_submits,
                &self.view.sandbox,
            ]);
            let inserted = client
                .query_opt(&statement, &params)
                .await
                .map_err(|e| self.insert_error(&e))?;
            Ok(match inserted {
                Some(_) => Ok(()),
                None => Err(InsertRefusal::Duplicate(row.id)),
            })
        })
        .await
    }
}

/// The parameters `$1` to `$18` of both inserts: a transaction's own
/// fields, in [`COLUMNS`]' order, up to its expiry.
fn fields(row: &Row) -> [&(dyn ToSql + Sync); 18] {
    [
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
    ]
}
