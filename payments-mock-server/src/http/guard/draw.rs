//! The key a request's fault draw is made on (`--fail-rate`, a rule's
//! `probability`): the same request gets the same draw in any order, and
//! the key says nothing of other merchants' transactions.

use axum::http::request::Parts;
use payments_interface::Endpoint;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::domain::port::Store as _;
use crate::domain::transaction::issued_id;
use crate::faults::KeyHasher;
use crate::http::extract::{Caller, decoded_segment};
use crate::state::AppState;

/// The key of a request's fail-rate and latency draw (`faults.rs`): what
/// identifies the logical request, independent of arrival order and of the
/// ids the mock made up (random v7 UUIDs differ from run to run):
///
/// - initiate: merchantId (as a UUID when it is one) and referenceNo;
/// - confirm: the transaction the transactionId names, as its merchant and
///   referenceNo, plus the body's referenceNo; an unknown id as its text;
/// - status by id: the transaction, as for confirm; an unknown id, and
///   every other request (status by reference, unknown routes): the
///   method, the path and the query, and the body.
///
/// Look-ups use the caller's merchant scope, like the handlers, so the draw
/// reveals nothing about other merchants' transactions.
pub(super) async fn fault_key(state: &AppState, parts: &Parts, caller: Caller, body: &[u8]) -> u64 {
    let method = parts.method.as_str();
    let path = parts.uri.path();
    let mut key = KeyHasher::new();
    key.part(method.as_bytes());
    let object = || serde_json::from_slice::<Map<String, Value>>(body).ok();
    // A store that cannot be read keys the draw by the request's text.
    let transaction = async |id: &str| match issued_id(id) {
        Some(id) => state
            .store
            .with_id(id, caller.merchant, |r| {
                (r.fields.merchant_id, r.fields.reference_no.to_string())
            })
            .await
            .ok()
            .flatten(),
        None => None,
    };
    let endpoint = payments_interface::route(path)
        .filter(|r| r.endpoint.takes_method(method))
        .map(|r| r.endpoint);
    match endpoint {
        Some(Endpoint::Initiate) => {
            key.part(path.as_bytes());
            match object() {
                Some(o) => {
                    let merchant = match o.get("merchantId") {
                        Some(Value::String(m)) => Uuid::parse_str(m)
                            .map_or_else(|_| m.clone(), |m| m.hyphenated().to_string()),
                        other => field_text(other),
                    };
                    key.part(merchant.as_bytes())
                        .part(field_text(o.get("referenceNo")).as_bytes());
                }
                None => {
                    key.part(body);
                }
            }
        }
        Some(Endpoint::Confirm) => {
            let o = object();
            let id = o.as_ref().and_then(|o| match o.get("transactionId") {
                Some(Value::String(id)) => Some(id.as_str()),
                _ => None,
            });
            let stored = match id {
                Some(id) => transaction(id).await,
                None => None,
            };
            match (stored, &o) {
                (Some((merchant, reference)), Some(o)) => {
                    key.part(b"confirm a stored transaction")
                        .part(merchant.as_bytes())
                        .part(reference.as_bytes())
                        .part(field_text(o.get("referenceNo")).as_bytes());
                }
                _ => {
                    key.part(path.as_bytes()).part(body);
                }
            }
        }
        _ => {
            let id = payments_interface::route(path)
                .filter(|r| r.endpoint == Endpoint::StatusById)
                .and_then(|r| decoded_segment(r.raw));
            let stored = match id {
                Some(id) => transaction(&id).await,
                None => None,
            };
            match stored {
                Some((merchant, reference)) => {
                    key.part(b"status of a stored transaction")
                        .part(merchant.as_bytes())
                        .part(reference.as_bytes());
                }
                None => {
                    key.part(path.as_bytes())
                        .part(parts.uri.query().unwrap_or("").as_bytes())
                        .part(body);
                }
            }
        }
    }
    key.finish()
}

/// A body field as key text: a string as itself, anything else (absent,
/// a number) as its JSON text, tagged so the two never collide.
fn field_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => format!("s:{s}"),
        Some(other) => format!("j:{other}"),
        None => "absent".to_owned(),
    }
}
