//! Seeding: a mock that starts with the transactions something outside
//! it saw (a proxy recording, for the binary's `--seed-from FILE`), each in
//! the last state seen, found by id and by reference, so a situation met on
//! staging can be replayed locally. What was seen comes in the service's
//! own JSON ([`Sighting`]); reading a recording is the binary's.
//!
//! A transaction is placed only when its initiate was seen answered 200
//! (the fields come from that request, the id and creation time from that
//! answer); one seen only through confirms or status reads is counted,
//! never guessed. Its last state is the latest answer about it:
//! `SUCCESSFUL` and `FAILED` as they were (with `providerReference`,
//! `errorMessage` and `extraProperties`), `CONFIRMED` kept confirmed (it
//! never settles by itself), `EXPIRED` expired, and `PENDING` /
//! `INITIATED` confirmable, expiring `expiry` after the mock starts.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::domain::catalog::InitialState;
use crate::domain::port::{InsertRefusal, Store, StoreError};
use crate::domain::transaction::{ConfirmResult, Confirmation, Fields, RareFields, Record};

/// What seeding placed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Seeded {
    /// Transactions stored.
    pub placed: usize,
    /// Transactions seen that cannot be placed: no initiate seen, an id
    /// that is not a UUID, a last status the document does not name, a
    /// reference already held.
    pub unplaced: usize,
}

/// What was seen of one transaction, in the service's own JSON: its
/// initiate answered 200 (when it was seen), and the latest successful
/// answer about it (an initiate's, a confirm's or a status read's `data`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sighting {
    /// The `transactionId` the answers name.
    pub id: String,
    /// Its initiate, answered 200.
    pub initiate: Option<SeenInitiate>,
    /// The latest answer about it.
    pub last: Option<SeenAnswer>,
}

impl Sighting {
    /// Nothing seen yet of transaction `id`.
    #[must_use]
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            initiate: None,
            last: None,
        }
    }
}

/// An initiate seen answered 200.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenInitiate {
    /// Its request body.
    pub request: Map<String, Value>,
    /// Its answer's `data`.
    pub answer: Map<String, Value>,
    /// When it was seen.
    pub at: DateTime<Utc>,
}

/// A successful answer's `data` about a transaction, and when it was seen.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenAnswer {
    /// The answer's `data`.
    pub data: Map<String, Value>,
    /// When it was seen.
    pub at: DateTime<Utc>,
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

/// The record of a sighting, or `None` when it cannot be placed.
fn record_of(seen: &Sighting, now: DateTime<Utc>, expiry: Duration) -> Option<Record> {
    let SeenInitiate {
        request,
        answer,
        at,
    } = seen.initiate.as_ref()?;
    let id = Uuid::parse_str(&seen.id).ok()?;
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
    let SeenAnswer {
        data: last,
        at: last_at,
    } = seen.last.as_ref()?;
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
        // Expired by now whatever time the service wrote: a
        // `lastModifiedAt` ahead of this clock (the service's clock, or a
        // mock's moved virtual clock) would make it confirmable again.
        "EXPIRED" => (changed_at.min(now), None),
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

/// Seeds `store` with `sightings`, placed in the order given.
///
/// # Errors
///
/// The store's failure.
pub(crate) async fn seed(
    store: &impl Store,
    sightings: impl IntoIterator<Item = Sighting>,
    expiry: Duration,
) -> Result<Seeded, StoreError> {
    let now = store.now().await?;
    let mut seeded = Seeded::default();
    for seen in sightings {
        match record_of(&seen, now, expiry) {
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

    use super::*;
    use crate::domain::transaction::Status;
    use crate::store::MemoryStore;

    const ID: &str = "01a2f000-0000-7000-8000-000000000001";

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().expect("a time")
    }

    fn initiated(id: &str, reference: &str, amount: u64) -> Sighting {
        let request = object(json!({
            "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
            "referenceNo": reference, "amount": amount, "productCode": "TOPUP",
            "storeId": "S1", "payerId": "60123456789",
        }));
        let answer = object(json!({
            "transactionId": id, "referenceNo": reference, "status": "INITIATED",
            "amount": amount, "currencyCode": "MYR", "productCode": "TOPUP",
            "createdAt": "2026-11-22T08:15:30.123Z",
        }));
        let when = at("2026-11-22T08:15:30.123Z");
        Sighting {
            id: id.to_owned(),
            initiate: Some(SeenInitiate {
                request,
                answer: answer.clone(),
                at: when,
            }),
            last: Some(SeenAnswer {
                data: answer,
                at: when,
            }),
        }
    }

    #[tokio::test]
    async fn each_transaction_in_its_last_state_and_the_unplaceable_counted() {
        let store = MemoryStore::new("seed");
        let mut paid = initiated(ID, "R1", 1050);
        paid.last = Some(SeenAnswer {
            data: object(json!({
                "transactionId": ID, "referenceNo": "R1", "status": "SUCCESSFUL",
                "amount": "10.50", "providerReference": "PRV-1",
                "confirmedAt": "2026-11-22T08:16:00Z",
            })),
            at: at("2026-11-22T08:16:00Z"),
        });
        let mut only_read = Sighting::new("01a2f000-0000-7000-8000-000000000002");
        only_read.last = Some(SeenAnswer {
            data: object(
                json!({"transactionId": "01a2f000-0000-7000-8000-000000000002", "status": "PENDING"}),
            ),
            at: at("2026-11-22T08:16:00Z"),
        });
        let seeded = seed(&store, [paid, only_read], Duration::from_secs(900))
            .await
            .expect("seeds");
        assert_eq!(
            seeded,
            Seeded {
                placed: 1,
                unplaced: 1,
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
    async fn a_status_the_document_does_not_name_is_not_guessed_and_the_first_placed_wins() {
        let store = MemoryStore::new("seed");
        let mut cancelled = initiated(ID, "R1", 1050);
        cancelled.last = Some(SeenAnswer {
            data: object(
                json!({"transactionId": ID, "status": "CANCELLED", "lastModifiedAt": "2026-11-22T08:20:00Z"}),
            ),
            at: at("2026-11-22T08:20:00Z"),
        });
        let other = "01a2f000-0000-7000-8000-000000000002";
        let first = initiated(other, "R2", 700);
        let second = initiated("01a2f000-0000-7000-8000-000000000003", "R2", 900);
        let seeded = seed(&store, [cancelled, first, second], Duration::from_secs(900))
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
        assert_eq!(kept, (other.to_owned(), 700), "the first given");
    }

    /// An `EXPIRED` seen with a `lastModifiedAt` ahead of this clock (a
    /// service whose clock runs ahead, or a mock whose virtual clock was
    /// moved) is expired here too, never confirmable again.
    #[tokio::test]
    async fn an_expiry_written_ahead_of_this_clock_is_expired_now() {
        let store = MemoryStore::new("seed");
        let mut expired = initiated(ID, "R1", 1050);
        let ahead = (Utc::now() + chrono::TimeDelta::hours(2)).to_rfc3339();
        expired.last = Some(SeenAnswer {
            data: object(json!({
                "transactionId": ID, "referenceNo": "R1", "status": "EXPIRED",
                "lastModifiedAt": ahead,
            })),
            at: Utc::now(),
        });
        seed(&store, [expired], Duration::from_secs(900))
            .await
            .expect("seeds");
        let now = store.now().await.expect("now");
        let status = store
            .with_reference("R1", None, |r| r.view(now).status)
            .await
            .expect("answers")
            .expect("found");
        assert_eq!(status, Status::Expired);
    }
}
