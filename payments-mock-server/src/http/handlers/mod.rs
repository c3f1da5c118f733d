//! Request handlers, one file per endpoint group, and the response `data`
//! shapes (interface document sections 2.3, 2.5, 2.6) as structs, so fields
//! appear in the document's order.

pub mod admin;
pub mod confirm;
pub mod coverage;
pub mod faults;
pub mod health;
pub mod initiate;
pub mod sandboxes;
pub mod status;

use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Number;
use uuid::Uuid;

use crate::domain::clock::format_time;
use crate::domain::transaction::Record;
use crate::http::json::JsonOut;
use payments_interface::money::major_number;

/// Status `data` (interface document section 2.6): both status reads.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatusData<'a> {
    /// The transactionId (the mock issues UUID v7, lower case).
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
    pub transaction_id: Uuid,
    /// The merchant's reference.
    pub reference_no: &'a str,
    /// State now (virtual clock).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::transaction_status))]
    pub status: &'static str,
    /// Major units with exactly the currency's fraction digits.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::major_amount))]
    pub amount: Number,
    /// Product of the transaction.
    pub product_code: &'a str,
    /// Creation time.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::timestamp))]
    pub created_at: String,
    /// Latest state change; null until the first.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::optional_timestamp))]
    pub last_modified_at: Option<String>,
    /// The provider's reference, once a confirm succeeded.
    pub provider_reference: Option<&'a str>,
    /// Status detail: why it failed or expired, `awaiting settlement`,
    /// `awaiting the payer`.
    pub message: Option<&'a str>,
    /// Provider data as JSON text: gift card PINs (`{"pins":[...]}`), a
    /// redirect product's payment page (`{"paymentUrl":"..."}`).
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

/// The success envelope of [`status_data`], written by hand: the same bytes
/// as `success(status_data(record, now), None)` (tested below), at a
/// fraction of the cost (`json.rs`).
pub(crate) fn status_envelope(record: &Record, now: DateTime<Utc>) -> Response {
    let view = record.view(now);
    let confirmation = record.confirmation.as_deref();
    let provider_reference = confirmation.and_then(|c| c.provider_reference.as_deref());
    let extra_properties = confirmation.and_then(|c| c.extra_properties.as_deref());
    let fields = &record.fields;
    let mut out = JsonOut::with_capacity(
        400 + fields.reference_no.len() + extra_properties.map_or(0, str::len),
    );
    out.raw(r#"{"isSuccess":true,"errorCode":null,"message":null,"data":{"transactionId":"#);
    out.uuid(record.id);
    out.raw(r#","referenceNo":"#);
    out.string(&fields.reference_no);
    out.raw(r#","status":"#);
    out.string(view.status.as_str());
    out.raw(r#","amount":"#);
    out.major(fields.amount_minor, fields.currency_exponent);
    out.raw(r#","productCode":"#);
    out.string(&fields.product_code);
    out.raw(r#","createdAt":"#);
    out.time(record.created_at);
    out.raw(r#","lastModifiedAt":"#);
    out.opt_time(view.last_modified_at);
    out.raw(r#","providerReference":"#);
    out.opt_string(provider_reference);
    out.raw(r#","message":"#);
    out.opt_string(view.message);
    out.raw(r#","extraProperties":"#);
    out.opt_string(extra_properties);
    out.raw("}}");
    out.into_response()
}

#[cfg(test)]
mod fast_json_tests {
    use std::time::Duration;

    use axum::body::to_bytes;
    use axum::http::header;

    use super::*;
    use crate::domain::catalog::InitialState;
    use crate::domain::transaction::{ConfirmResult, Confirmation, NewTransaction};
    use crate::store::test_support::fields;
    use payments_serve::success;

    fn new_transaction(reference: &str, currency: (&str, u16), amount: u64) -> NewTransaction {
        NewTransaction {
            merchant_id: Uuid::now_v7(),
            amount_minor: amount,
            currency_code: currency.0.to_owned(),
            currency_exponent: currency.1,
            product_code: "GIFT_CARD-2".to_owned(),
            payer_id: None,
            ..fields(reference)
        }
    }

    async fn body(response: Response) -> (Option<String>, Vec<u8>) {
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().expect("visible").to_owned());
        let bytes = to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body");
        (content_type, bytes.to_vec())
    }

    #[tokio::test]
    async fn the_status_envelope_is_byte_for_byte_what_serde_writes() {
        let store = crate::store::MemoryStore::new("test");
        let created = DateTime::from_timestamp_millis(1_795_000_000_123).expect("a time");
        let expires = created + Duration::from_secs(900);
        let confirmations = [
            None,
            Some(Confirmation {
                confirmed_at: created + Duration::from_millis(1500),
                result: ConfirmResult::Successful,
                provider_reference: Some("PRV-0001".to_owned()),
                extra_properties: Some(r#"{"pins":["1234","5678"]}"#.to_owned()),
            }),
            Some(Confirmation {
                confirmed_at: created + Duration::from_secs(1),
                result: ConfirmResult::Settling {
                    settles_at: created + Duration::from_secs(3),
                },
                provider_reference: Some("PRV-\"odd\"".to_owned()),
                extra_properties: None,
            }),
            Some(Confirmation {
                confirmed_at: created + Duration::from_secs(1),
                result: ConfirmResult::Failed {
                    error_message: "declined by provider\n\u{1}".to_owned(),
                },
                provider_reference: None,
                extra_properties: None,
            }),
        ];
        let references = [
            "INV-1",
            "INV/2026/0001 ?#%",
            "quote \" backslash \\ tab \t",
            "ünïcødé ✓ 🚀",
            "\u{7f}\u{1b}[31m",
        ];
        let currencies = [("MYR", 2), ("JPY", 0), ("KWD", 3), ("CLF", 4)];
        let mut n = 0;
        for reference in references {
            for (c, currency) in currencies.iter().enumerate() {
                for confirmation in &confirmations {
                    let amount = [1, 15_000, 9_007_199_254_740_991][n % 3];
                    n += 1;
                    let mut record = store
                        .initiate(
                            new_transaction(&format!("{reference}-{n}"), *currency, amount),
                            if c % 2 == 0 {
                                InitialState::Pending
                            } else {
                                InitialState::Initiated
                            },
                            created,
                            expires,
                        )
                        .expect("stored");
                    record.confirmation = confirmation.clone().map(Box::new);
                    // Before and after settlement and expiry.
                    for now in [created, created + Duration::from_secs(5), expires] {
                        let fast = body(status_envelope(&record, now)).await;
                        let serde = body(success(status_data(&record, now), None)).await;
                        assert_eq!(
                            String::from_utf8_lossy(&fast.1),
                            String::from_utf8_lossy(&serde.1)
                        );
                        assert_eq!(fast, serde);
                    }
                }
            }
        }
    }
}
