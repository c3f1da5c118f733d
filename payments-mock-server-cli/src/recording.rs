//! `--seed-from FILE`: what a proxy recording (`--record`) shows of each
//! transaction, as the mock's [`Sighting`]s, in the order the recording
//! first shows them. Placing them is the library's
//! ([`payments_mock_server::Service::seed`]).
//!
//! Only the upstream's own answers count: an exchange the proxy answered
//! itself (an unreachable upstream) or did not judge (a body it streamed)
//! tells nothing of a transaction. An initiate answered 200 gives the
//! fields; the latest success about a transaction, by any of the four
//! calls, gives its last state.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use payments_contract_proxy::{Exchange, read_recording};
use payments_interface::Endpoint;
use payments_mock_server::seed::{SeenAnswer, SeenInitiate, Sighting};
use serde_json::{Map, Value};

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
struct Sightings {
    order: Vec<String>,
    by_id: HashMap<String, Sighting>,
}

impl Sightings {
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
        let seen = match self.by_id.entry(id.to_owned()) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                self.order.push(id.to_owned());
                v.insert(Sighting::new(id))
            }
        };
        if endpoint == Some(Endpoint::Initiate)
            && seen.initiate.is_none()
            && let Some(request) = request_object(exchange)
        {
            seen.initiate = Some(SeenInitiate {
                request,
                answer: data.clone(),
                at: exchange.time,
            });
        }
        // The last state is the answer to the request asked last: lines are
        // written as exchanges finish, so a slow read asked before a
        // confirm can follow it in the file with the state before it.
        if endpoint.is_some()
            && seen
                .last
                .as_ref()
                .is_none_or(|last| exchange.time >= last.at)
        {
            seen.last = Some(SeenAnswer {
                data,
                at: exchange.time,
            });
        }
    }

    fn into_ordered(mut self) -> Vec<Sighting> {
        self.order
            .iter()
            .filter_map(|id| self.by_id.remove(id))
            .collect()
    }
}

/// What a recording read line by line from `reader` shows, and how many of
/// its lines are no recorded exchange.
///
/// # Errors
///
/// The reader's failure.
pub fn sightings(reader: impl std::io::BufRead) -> std::io::Result<(Vec<Sighting>, usize)> {
    let mut seen = Sightings::default();
    let bad = read_recording(reader, |exchange| seen.add(&exchange))?;
    Ok((seen.into_ordered(), bad.count))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use payments_contract_proxy::rules::test_support::{
        confirm_data, exchange, initiate_body, initiate_data, ok, status_data,
    };

    use super::*;

    const ID: &str = "01a2f000-0000-7000-8000-000000000001";

    fn recording(lines: &[Exchange]) -> String {
        lines
            .iter()
            .map(|e| serde_json::to_string(e).expect("serializes"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn each_transaction_with_its_initiate_and_its_last_answer_in_first_seen_order() {
        let other = "01a2f000-0000-7000-8000-000000000002";
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
                "/api/payments/other/status",
                json!(null),
                200,
                ok(status_data(other, "R2", "PENDING", "1")),
            ),
            exchange(
                "POST",
                "/api/payments/confirm",
                json!({"transactionId": ID, "referenceNo": "R1"}),
                200,
                ok(confirm_data(ID, "R1", "SUCCESSFUL", "10.50")),
            ),
        ]);
        let (seen, bad) = sightings(format!("{text}\nbroken").as_bytes()).expect("reads");
        assert_eq!(bad, 1);
        let ids: Vec<&str> = seen.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, [ID, other]);
        let initiate = seen[0].initiate.as_ref().expect("its initiate");
        assert_eq!(initiate.request["referenceNo"], "R1");
        assert_eq!(initiate.answer["transactionId"], ID);
        let last = seen[0].last.as_ref().expect("its last answer");
        assert_eq!(last.data["status"], "SUCCESSFUL");
        assert!(
            seen[1].initiate.is_none(),
            "seen only through a status read"
        );
    }

    #[test]
    fn failures_and_the_proxys_own_answers_tell_nothing() {
        let mut unjudged = exchange(
            "POST",
            "/api/payments/initiate",
            initiate_body("R1", 1050),
            200,
            ok(initiate_data(ID, "R1", 1050)),
        );
        unjudged.judged = false;
        let refused = exchange(
            "POST",
            "/api/payments/initiate",
            initiate_body("R1", 1050),
            400,
            json!({"isSuccess": false, "errorCode": "VALIDATION_ERROR", "message": "no", "data": null}),
        );
        let text = recording(&[unjudged, refused]);
        let (seen, bad) = sightings(text.as_bytes()).expect("reads");
        assert_eq!((seen.len(), bad), (0, 0));
    }

    /// A slow read asked before the confirm, finished (and written) after
    /// it: the last state is the confirm's, the answer asked last.
    #[test]
    fn the_last_state_is_the_answer_asked_last_not_written_last() {
        let confirmed_at = "2026-11-22T08:16:00Z".parse().expect("a time");
        let read_at = "2026-11-22T08:15:59Z".parse().expect("a time");
        let mut confirm = exchange(
            "POST",
            "/api/payments/confirm",
            json!({"transactionId": ID, "referenceNo": "R1"}),
            200,
            ok(confirm_data(ID, "R1", "SUCCESSFUL", "10.50")),
        );
        confirm.time = confirmed_at;
        let mut slow = exchange(
            "GET",
            &format!("/api/payments/{ID}/status"),
            json!(null),
            200,
            ok(status_data(ID, "R1", "INITIATED", "10.50")),
        );
        slow.time = read_at;
        let text = recording(&[confirm, slow]);
        let (seen, _) = sightings(text.as_bytes()).expect("reads");
        let last = seen[0].last.as_ref().expect("its last answer");
        assert_eq!(last.data["status"], "SUCCESSFUL");
    }
}
