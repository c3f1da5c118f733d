//! Request handlers, one file per endpoint group, and the response `data`
//! shapes (interface document sections 2.3, 2.5, 2.6) as structs, so fields
//! appear in the document's order.

pub mod admin;
pub mod confirm;
pub mod initiate;
pub mod status;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Number;
use uuid::Uuid;

use crate::clock::format_time;
use crate::money::major_number;
use crate::store::Record;

/// Status `data` (section 2.6).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatusData<'a> {
    pub transaction_id: Uuid,
    pub reference_no: &'a str,
    pub status: &'static str,
    pub amount: Number,
    pub product_code: &'a str,
    pub created_at: String,
    pub last_modified_at: Option<String>,
    pub provider_reference: Option<&'a str>,
    pub message: Option<&'a str>,
    pub extra_properties: Option<&'a str>,
}

/// Status `data` of `record` as seen at `now`, borrowing its text: build
/// and serialize it under the store's read lock (`Store::with_id`), so a
/// look-up copies nothing out of the store.
pub(crate) fn status_data(record: &Record, now: DateTime<Utc>) -> StatusData<'_> {
    let view = record.view(now);
    let confirmation = record.confirmation.as_deref();
    StatusData {
        transaction_id: record.id,
        reference_no: &record.fields.reference_no,
        status: view.status.as_str(),
        amount: major_number(record.fields.amount_minor, record.fields.currency_exponent),
        product_code: &record.fields.product_code,
        created_at: format_time(record.created_at),
        last_modified_at: view.last_modified_at.map(format_time),
        provider_reference: confirmation.and_then(|c| c.provider_reference.as_deref()),
        message: view.message,
        extra_properties: confirmation.and_then(|c| c.extra_properties.as_deref()),
    }
}
