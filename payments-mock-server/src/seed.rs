//! `payments-mock-server --seed-from FILE`: a mock that starts with the
//! transactions a proxy recording shows, each in the last state the
//! recording saw, found by id and by reference, so a situation met on
//! staging can be replayed locally.
//!
//! A transaction is placed only when the recording shows its initiate
//! answered 200 (the fields come from that request, the id and creation
//! time from that answer); one seen only through confirms or status reads
//! is counted, never guessed. Its last state is the latest answer about it:
//! `SUCCESSFUL` and `FAILED` as they were (with `providerReference`,
//! `errorMessage` and `extraProperties`), `CONFIRMED` kept confirmed (it
//! never settles by itself), `EXPIRED` expired, and `PENDING` / `INITIATED`
//! confirmable, expiring `expiry` after the mock starts.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use payments_contract_proxy::{Exchange, read_recording};
use payments_interface::Endpoint;

use crate::domain::catalog::InitialState;
use crate::domain::port::{InsertRefusal, Store, StoreError};
use crate::domain::transaction::{ConfirmResult, Confirmation, Fields, RareFields, Record};

/// What seeding placed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Seeded {
    /// Transactions stored.
    pub placed: usize,
    /// Transactions the recording shows but cannot place: no initiate
    /// seen, an id that is not a UUID, a last status the document does not
    /// name, a reference already held.
    pub unplaced: usize,
    /// Lines of the recording that are no exchange.
    pub bad_lines: usize,
}

/// An initiate answered 200: its request body, its `data`, when.
type Initiated = (Map<String, Value>, Map<String, Value>, DateTime<Utc>);

/// What the recording shows of one transaction.
#[derive(Debug, Default)]
struct Story {
    initiate: Option<Initiated>,
    /// The latest success `data` about it, and when.
    last: Option<(Map<String, Value>, DateTime<Utc>)>,
}

fn time(value: Option<&Value>) -> Option<DateTime<Utc>> {
    let text = value?.as_str()?;
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
                .ok()
                .map(|t| t.and_utc())
        })
}

fn text(map: &Map<String, Value>, field: &str) -> Option<String> {
    match map.get(field)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The request body, when it is a JSON object.
fn request_object(exchange: &Exchange) -> Option<Map<String, Value>> {
    let body = exchange.request.body.as_deref().unwrap_or("");
    match serde_json::from_str::<Value>(body).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// The answer's `data` object, on a success (HTTP 200, `isSuccess` true).
fn success_data(exchange: &Exchange) -> Option<Map<String, Value>> {
    if exchange.response.status != 200 {
        return None;
    }
    let body = exchange.response.body.as_deref()?;
    let Value::Object(mut envelope) = serde_json::from_str::<Value>(body).ok()? else {
        return None;
    };
    if envelope.get("isSuccess").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    match envelope.remove("data")? {
        Value::Object(data) => Some(data),
        _ => None,
    }
}

/// The transactions a recording shows, in the order it first shows them.
#[derive(Debug, Default)]
struct Stories {
    order: Vec<String>,
    by_id: HashMap<String, Story>,
}

impl Stories {
    fn add(&mut self, exchange: &Exchange) {
        if !exchange.judged || exchange.proxy_answer {
            return;
        }
        let endpoint = payments_interface::route(&exchange.request.path)
            .map(|r| r.endpoint)
            .filter(|e| e.method() == exchange.request.method);
        let Some(data) = success_data(exchange) else {
            return;
        };
        let Some(id) = data.get("transactionId").and_then(Value::as_str) else {
            return;
        };
        let story = match self.by_id.entry(id.to_owned()) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                self.order.push(id.to_owned());
                v.insert(Story::default())
            }
        };
        if endpoint == Some(Endpoint::Initiate)
            && story.initiate.is_none()
            && let Some(request) = request_object(exchange)
        {
            story.initiate = Some((request, data.clone(), exchange.time));
        }
        if endpoint.is_some() {
            story.last = Some((data, exchange.time));
        }
    }
}

/// The record of a story, or `None` when it cannot be placed.
fn record_of(id: &str, story: &Story, now: DateTime<Utc>, expiry: Duration) -> Option<Record> {
    let (request, answer, at) = story.initiate.as_ref()?;
    let id = Uuid::parse_str(id).ok()?;
    let merchant_id = Uuid::parse_str(request.get("merchantId")?.as_str()?).ok()?;
    let currency = text(request, "currencyCode").unwrap_or_else(|| "MYR".to_owned());
    let exponent = payments_interface::money::exponent(&currency).unwrap_or(2);
    let extra = match request.get("extraProperties") {
        Some(Value::Object(o)) => Some(Value::Object(o.clone()).to_string()),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let boxed = |s: Option<String>| s.map(String::into_boxed_str);
    let rare = RareFields {
        description: boxed(text(request, "description")),
        device_id: boxed(text(request, "deviceId")),
        return_url: boxed(text(request, "returnUrl")),
        extra_properties: boxed(extra),
    };
    let fields = Fields {
        merchant_id,
        reference_no: text(request, "referenceNo")?.into_boxed_str(),
        amount_minor: request.get("amount")?.as_u64()?,
        currency_code: currency.into(),
        currency_exponent: exponent,
        product_code: text(request, "productCode")?.into(),
        quantity: request
            .get("quantity")
            .and_then(Value::as_u64)
            .and_then(|q| u32::try_from(q).ok()),
        country_code: text(request, "countryCode").map(Into::into),
        store_id: text(request, "storeId").unwrap_or_default().into(),
        payer_id: boxed(text(request, "payerId")),
        rare: (rare != RareFields::default()).then(|| std::sync::Arc::new(rare)),
    };
    let created_at = time(answer.get("createdAt")).unwrap_or(*at);
    let initial = match answer.get("status").and_then(Value::as_str) {
        Some("PENDING") => InitialState::Pending,
        _ => InitialState::Initiated,
    };
    let (last, last_at) = story.last.as_ref()?;
    // A status the document does not name (or none) is not guessed at.
    let status = last.get("status").and_then(Value::as_str)?;
    let changed_at = time(last.get("lastModifiedAt"))
        .or_else(|| time(last.get("confirmedAt")))
        .unwrap_or(*last_at);
    let confirmation = |result| {
        Some(Box::new(Confirmation {
            confirmed_at: time(last.get("confirmedAt")).unwrap_or(changed_at),
            result,
            provider_reference: text(last, "providerReference"),
            extra_properties: text(last, "extraProperties"),
        }))
    };
    let (expires_at, confirmation) = match status {
        "SUCCESSFUL" => (changed_at, confirmation(ConfirmResult::Successful)),
        "FAILED" => (
            changed_at,
            confirmation(ConfirmResult::Failed {
                error_message: text(last, "errorMessage")
                    .or_else(|| text(last, "message"))
                    .unwrap_or_else(|| "failed upstream".to_owned()),
            }),
        ),
        "CONFIRMED" => (
            changed_at,
            confirmation(ConfirmResult::Settling {
                settles_at: DateTime::<Utc>::MAX_UTC,
            }),
        ),
        "EXPIRED" => (changed_at, None),
        "PENDING" | "INITIATED" => (crate::domain::clock::add(now, expiry), None),
        _ => return None,
    };
    Some(Record {
        id,
        fields,
        initial,
        created_at,
        expires_at,
        confirmation,
    })
}

/// Why seeding failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeedError {
    /// The recording could not be read.
    #[error("cannot read the recording: {0}")]
    Read(#[from] std::io::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Seeds `store` from a recording, read line by line from `reader`; the
/// transactions are placed in the order the recording first shows them.
///
/// # Errors
///
/// [`SeedError`] when the recording cannot be read or the store fails.
pub async fn seed_from(
    store: &impl Store,
    reader: impl std::io::BufRead,
    expiry: Duration,
) -> Result<Seeded, SeedError> {
    let mut stories = Stories::default();
    let bad = read_recording(reader, |exchange| stories.add(&exchange))?;
    let now = store.now().await?;
    let mut seeded = Seeded {
        bad_lines: bad.len(),
        ..Seeded::default()
    };
    for id in &stories.order {
        let story = &stories.by_id[id];
        match record_of(id, story, now, expiry) {
            Some(record) => match store.seed(record).await? {
                Ok(()) => seeded.placed += 1,
                Err(InsertRefusal::Duplicate(_) | InsertRefusal::Full) => seeded.unplaced += 1,
            },
            None => seeded.unplaced += 1,
        }
    }
    Ok(seeded)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use payments_contract_proxy::rules::test_support::{
        confirm_data, exchange, initiate_body, initiate_data, ok, status_data,
    };

    use super::*;
    use crate::domain::transaction::Status;
    use crate::store::MemoryStore;

    const ID: &str = "01a2f000-0000-7000-8000-000000000001";

    fn recording(lines: &[Exchange]) -> String {
        lines
            .iter()
            .map(|e| serde_json::to_string(e).expect("serializes"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[tokio::test]
    async fn each_transaction_in_its_last_state_and_the_unplaceable_counted() {
        let store = MemoryStore::new("seed");
        let text = recording(&[
            exchange(
                "POST",
                "/api/payments/initiate",
                initiate_body("R1", 1050),
                200,
                ok(initiate_data(ID, "R1", 1050)),
            ),
            exchange(
                "POST",
                "/api/payments/confirm",
                json!({"transactionId": ID, "referenceNo": "R1"}),
                200,
                ok(confirm_data(ID, "R1", "SUCCESSFUL", "10.50")),
            ),
            exchange(
                "GET",
                "/api/payments/other/status",
                json!(null),
                200,
                ok(status_data(
                    "01a2f000-0000-7000-8000-000000000002",
                    "R2",
                    "PENDING",
                    "1",
                )),
            ),
        ]);
        let seeded = seed_from(
            &store,
            format!("{text}\nbroken").as_bytes(),
            Duration::from_secs(900),
        )
        .await
        .expect("seeds");
        assert_eq!(
            seeded,
            Seeded {
                placed: 1,
                unplaced: 1,
                bad_lines: 1
            }
        );
        let now = store.now().await.expect("now");
        let stored = store
            .with_reference("R1", None, |r| {
                (r.id.to_string(), r.view(now).status, r.fields.amount_minor)
            })
            .await
            .expect("answers")
            .expect("found by reference");
        assert_eq!(stored, (ID.to_owned(), Status::Successful, 1050));
    }

    #[tokio::test]
    async fn a_status_the_document_does_not_name_is_not_guessed_and_the_first_seen_wins() {
        let store = MemoryStore::new("seed");
        let other = "01a2f000-0000-7000-8000-000000000002";
        let mut cancelled = status_data(ID, "R1", "CANCELLED", "10.50");
        cancelled["lastModifiedAt"] = json!("2026-11-22T08:20:00Z");
        let text = recording(&[
            exchange(
                "POST",
                "/api/payments/initiate",
                initiate_body("R1", 1050),
                200,
                ok(initiate_data(ID, "R1", 1050)),
            ),
            exchange(
                "GET",
                "/api/payments/x/status",
                json!(null),
                200,
                ok(cancelled),
            ),
            exchange(
                "POST",
                "/api/payments/initiate",
                initiate_body("R2", 700),
                200,
                ok(initiate_data(other, "R2", 700)),
            ),
            // A second transaction under the same reference, seen later.
            exchange(
                "POST",
                "/api/payments/initiate",
                initiate_body("R2", 900),
                200,
                ok(initiate_data(
                    "01a2f000-0000-7000-8000-000000000003",
                    "R2",
                    900,
                )),
            ),
        ]);
        let seeded = seed_from(&store, text.as_bytes(), Duration::from_secs(900))
            .await
            .expect("seeds");
        assert_eq!((seeded.placed, seeded.unplaced), (1, 2), "{seeded:?}");
        assert!(
            store
                .with_reference("R1", None, |r| r.id)
                .await
                .expect("answers")
                .is_err(),
            "CANCELLED is not guessed into a state"
        );
        let kept = store
            .with_reference("R2", None, |r| (r.id.to_string(), r.fields.amount_minor))
            .await
            .expect("answers")
            .expect("found");
        assert_eq!(
            kept,
            (other.to_owned(), 700),
            "the first the recording shows"
        );
    }
}
