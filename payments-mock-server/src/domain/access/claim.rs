//! Which merchant a journaled `/api/` request belongs to, as far as the
//! request, its answer and the key that sent it say (CONTRACT section 18:
//! a merchant's key sees its own requests and no other merchant's).
//!
//! A request sent with a key bound to a merchant (the journal keeps that
//! merchant, [`crate::domain::journal::JournalEntry::caller`]) is that
//! merchant's at most, never another's, whatever it names: it is the
//! sender's when it names the sender or no other merchant (an initiate's
//! `merchantId`; a transaction or reference the sender holds, or one
//! nobody holds; nothing at all: a body that is not JSON, an unknown
//! path). Naming another merchant (an initiate for it, refused 403; its
//! transaction or reference, whatever the answer) makes it the admin's
//! only: no merchant sees another's probing, nor is written into.
//!
//! A request no bound key sent (open mode, an unbound key, an entry
//! written before the journal kept the key's merchant) is given to the
//! merchant it names and was served for:
//!
//! - an initiate, to the `merchantId` of its body;
//! - a confirm or a status read by id, to the merchant of the transaction
//!   it names;
//! - a status read by reference, to the merchant that alone holds the
//!   reference (several holders: nobody, as the answer cannot say whose
//!   transaction it gave).
//!
//! A request refused for its key (401, 403), and one answered
//! `TRANSACTION_NOT_FOUND` about a transaction that exists (another
//! merchant's key asking), belongs to nobody: no merchant sees another's
//! probing. So does anything else (an unknown path, a body that is not
//! JSON). Only an admin key sees those.

use std::borrow::Cow;

use payments_interface::{Endpoint, ErrorCode};
use uuid::Uuid;

/// What a journaled request names as its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim<'a> {
    /// This merchant (an initiate's `merchantId`; the sender, for a
    /// request of a bound key that names no merchant).
    Merchant(Uuid),
    /// The merchant of the transaction with this id (as sent); for a
    /// bound key's request, the sender when it holds the transaction or
    /// nobody does.
    Transaction(Cow<'a, str>),
    /// The merchant that alone holds this reference; for a bound key's
    /// request, the sender when it holds the reference or nobody does.
    Reference(Cow<'a, str>),
    /// Nobody: only an admin key sees it.
    Nobody,
}

/// The claim of a journaled request: its path, body, the answer's status
/// and `errorCode`, and the merchant of the key that sent it (`caller`).
/// With a caller, what names nothing is the caller's ([`Claim::Merchant`]),
/// and a `TRANSACTION_NOT_FOUND` still names its transaction: whether the
/// caller or another merchant holds it decides.
pub fn claim<'a>(
    path: &'a str,
    body: &'a str,
    status: Option<u16>,
    error_code: Option<&str>,
    caller: Option<Uuid>,
) -> Claim<'a> {
    let refused_key = matches!(status, Some(401 | 403))
        || matches!(error_code, Some(c) if c == ErrorCode::Unauthorized.as_str() || c == ErrorCode::Forbidden.as_str());
    if refused_key {
        return Claim::Nobody;
    }
    // What names no merchant: the sender's, when a bound key sent it.
    let unnamed = caller.map_or(Claim::Nobody, Claim::Merchant);
    let Some(route) = payments_interface::route(path) else {
        return unnamed;
    };
    let not_found = error_code == Some(ErrorCode::TransactionNotFound.as_str());
    let field = |name: &str| -> Option<String> {
        let value: serde_json::Value = serde_json::from_str(body).ok()?;
        value.get(name)?.as_str().map(str::to_owned)
    };
    match route.endpoint {
        Endpoint::Initiate => field("merchantId")
            .and_then(|m| Uuid::try_parse(&m).ok())
            .map_or(unnamed, Claim::Merchant),
        _ if not_found && caller.is_none() => Claim::Nobody,
        Endpoint::Confirm => {
            field("transactionId").map_or(unnamed, |id| Claim::Transaction(id.into()))
        }
        Endpoint::StatusById => route
            .decoded()
            .map_or(unnamed, |id| Claim::Transaction(id.into_owned().into())),
        Endpoint::StatusByReference => route
            .decoded()
            .map_or(unnamed, |r| Claim::Reference(r.into_owned().into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
    const ID: &str = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

    #[test]
    fn each_endpoint_names_its_owner() {
        let initiate = format!(r#"{{"merchantId":"{A}","referenceNo":"R1"}}"#);
        assert_eq!(
            claim("/api/payments/initiate", &initiate, Some(200), None, None),
            Claim::Merchant(Uuid::parse_str(A).expect("uuid"))
        );
        let confirm = format!(r#"{{"transactionId":"{ID}"}}"#);
        assert_eq!(
            claim(
                "/api/payments/confirm",
                &confirm,
                Some(400),
                Some("TRANSACTION_EXPIRED"),
                None
            ),
            Claim::Transaction(ID.into())
        );
        assert_eq!(
            claim(
                &format!("/api/payments/{ID}/status"),
                "",
                Some(200),
                None,
                None
            ),
            Claim::Transaction(ID.into())
        );
        assert_eq!(
            claim(
                "/api/payments/reference/INV%2F7/status",
                "",
                Some(200),
                None,
                None
            ),
            Claim::Reference("INV/7".into())
        );
        // A fault answered before the handler still names its owner.
        assert_eq!(
            claim(&format!("/api/payments/{ID}/status"), "", None, None, None),
            Claim::Transaction(ID.into())
        );
    }

    #[test]
    fn refused_keys_and_others_probing_belong_to_nobody() {
        let initiate = format!(r#"{{"merchantId":"{A}"}}"#);
        for (status, code) in [
            (Some(401), Some("UNAUTHORIZED")),
            (Some(403), Some("FORBIDDEN")),
        ] {
            assert_eq!(
                claim("/api/payments/initiate", &initiate, status, code, None),
                Claim::Nobody
            );
        }
        let confirm = format!(r#"{{"transactionId":"{ID}"}}"#);
        assert_eq!(
            claim(
                "/api/payments/confirm",
                &confirm,
                Some(400),
                Some("TRANSACTION_NOT_FOUND"),
                None
            ),
            Claim::Nobody
        );
        assert_eq!(
            claim(
                &format!("/api/payments/{ID}/status"),
                "",
                Some(404),
                Some("TRANSACTION_NOT_FOUND"),
                None
            ),
            Claim::Nobody
        );
    }

    #[test]
    fn what_names_no_owner_belongs_to_nobody() {
        assert_eq!(
            claim("/api/payments/initiate", "not json", Some(400), None, None),
            Claim::Nobody
        );
        assert_eq!(
            claim(
                "/api/payments/initiate",
                r#"{"merchantId":7}"#,
                Some(400),
                None,
                None
            ),
            Claim::Nobody
        );
        assert_eq!(
            claim(
                "/api/payments/initiate",
                r#"{"merchantId":"x"}"#,
                Some(400),
                None,
                None
            ),
            Claim::Nobody
        );
        assert_eq!(
            claim("/api/payments/confirm", "{}", Some(400), None, None),
            Claim::Nobody
        );
        assert_eq!(
            claim("/api/other", "", Some(404), Some("NOT_FOUND"), None),
            Claim::Nobody
        );
    }

    #[test]
    fn a_bound_keys_request_that_names_nothing_is_its_senders() {
        let b = Uuid::parse_str("0b0c8a9e-52a4-4c2e-8f6f-2f8f3c4d5e6a").expect("uuid");
        for (path, body) in [
            ("/api/payments/initiate", "not json"),
            ("/api/payments/initiate", r#"{"merchantId":"x"}"#),
            ("/api/payments/confirm", "{}"),
            ("/api/other", ""),
        ] {
            assert_eq!(
                claim(path, body, Some(400), None, Some(b)),
                Claim::Merchant(b),
                "{path} {body}"
            );
        }
        // What it names stays named, whoever sent it; a refusal of its
        // key stays the admin's.
        let initiate = format!(r#"{{"merchantId":"{A}"}}"#);
        assert_eq!(
            claim(
                "/api/payments/initiate",
                &initiate,
                Some(500),
                None,
                Some(b)
            ),
            Claim::Merchant(Uuid::parse_str(A).expect("uuid"))
        );
        assert_eq!(
            claim(
                "/api/payments/initiate",
                &initiate,
                Some(403),
                Some("FORBIDDEN"),
                Some(b)
            ),
            Claim::Nobody
        );
        // A not-found names its transaction: who holds it decides.
        assert_eq!(
            claim(
                &format!("/api/payments/{ID}/status"),
                "",
                Some(404),
                Some("TRANSACTION_NOT_FOUND"),
                Some(b)
            ),
            Claim::Transaction(ID.into())
        );
    }
}
