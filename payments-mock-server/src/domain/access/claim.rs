//! Which merchant a journaled `/api/` request belongs to, as far as the
//! request, its answer and the key that sent it say (CONTRACT section 18:
//! a merchant's key sees its own requests and no other merchant's).
//!
//! A request sent with a key bound to a merchant (the journal keeps that
//! merchant, [`crate::domain::journal::JournalEntry::caller`]) is that
//! merchant's, and only that merchant's, whatever it names and however it
//! was answered: its own bodies, its 403s and its probes of another's
//! transactions or references. So what a merchant sees never depends on
//! what other merchants hold (whether its probe of a reference shows
//! cannot tell it whether someone else holds that reference), and no
//! merchant sees another's requests.
//!
//! A request no bound key sent (open mode, the admin key, an unbound key,
//! an entry written before the journal kept the key's merchant) is given
//! to the merchant it names and was served for:
//!
//! - an initiate, to the `merchantId` of its body;
//! - a confirm or a status read by id, to the merchant of the transaction
//!   it names;
//! - a status read by reference, to the merchant that alone holds the
//!   reference (several holders: nobody, as the answer cannot say whose
//!   transaction it gave).
//!
//! Of those, a request refused for its key (401, 403), and one answered
//! `TRANSACTION_NOT_FOUND`, belongs to nobody; so does anything else (an
//! unknown path, a body that is not JSON). Only an admin key sees those.

use std::borrow::Cow;

use payments_interface::{Endpoint, ErrorCode};
use uuid::Uuid;

/// What a journaled request names as its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim<'a> {
    /// This merchant (the sender, for a request of a bound key; else an
    /// initiate's `merchantId`).
    Merchant(Uuid),
    /// The merchant of the transaction with this id (as sent).
    Transaction(Cow<'a, str>),
    /// The merchant that alone holds this reference.
    Reference(Cow<'a, str>),
    /// Nobody: only an admin key sees it.
    Nobody,
}

/// The claim of a journaled request: its path, body, the answer's status
/// and `errorCode`, and the merchant of the key that sent it (`caller`).
/// With a caller it is the caller's ([`Claim::Merchant`]), whatever the
/// rest says; without one, what the request names decides.
pub fn claim<'a>(
    path: &'a str,
    body: &'a str,
    status: Option<u16>,
    error_code: Option<&str>,
    caller: Option<Uuid>,
) -> Claim<'a> {
    if let Some(sender) = caller {
        return Claim::Merchant(sender);
    }
    let refused_key = matches!(status, Some(401 | 403))
        || matches!(error_code, Some(c) if c == ErrorCode::Unauthorized.as_str() || c == ErrorCode::Forbidden.as_str());
    if refused_key {
        return Claim::Nobody;
    }
    let Some(route) = payments_interface::route(path) else {
        return Claim::Nobody;
    };
    let not_found = error_code == Some(ErrorCode::TransactionNotFound.as_str());
    let field = |name: &str| -> Option<String> {
        let value: serde_json::Value = serde_json::from_str(body).ok()?;
        value.get(name)?.as_str().map(str::to_owned)
    };
    match route.endpoint {
        Endpoint::Initiate => field("merchantId")
            .and_then(|m| Uuid::try_parse(&m).ok())
            .map_or(Claim::Nobody, Claim::Merchant),
        _ if not_found => Claim::Nobody,
        Endpoint::Confirm => {
            field("transactionId").map_or(Claim::Nobody, |id| Claim::Transaction(id.into()))
        }
        Endpoint::StatusById => route.decoded().map_or(Claim::Nobody, |id| {
            Claim::Transaction(id.into_owned().into())
        }),
        Endpoint::StatusByReference => route
            .decoded()
            .map_or(Claim::Nobody, |r| Claim::Reference(r.into_owned().into())),
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

    /// Issue: a bound key's probe of another merchant's transaction or
    /// reference, and its own refused requests, went to nobody while its
    /// probe of what nobody holds was its own: whether its request showed
    /// told it whether another merchant held what it named. A bound key's
    /// request is its sender's, whatever it names or was answered.
    #[test]
    fn a_bound_keys_request_is_its_senders_whatever_it_names() {
        let b = Uuid::parse_str("0b0c8a9e-52a4-4c2e-8f6f-2f8f3c4d5e6a").expect("uuid");
        let initiate = format!(r#"{{"merchantId":"{A}"}}"#);
        let confirm = format!(r#"{{"transactionId":"{ID}"}}"#);
        let by_id = format!("/api/payments/{ID}/status");
        for (path, body, status, code) in [
            ("/api/payments/initiate", "not json", Some(400), None),
            (
                "/api/payments/initiate",
                r#"{"merchantId":"x"}"#,
                Some(400),
                None,
            ),
            ("/api/payments/confirm", "{}", Some(400), None),
            ("/api/other", "", Some(404), Some("NOT_FOUND")),
            // Naming another merchant: answered, refused, or a fault.
            ("/api/payments/initiate", &initiate, Some(500), None),
            (
                "/api/payments/initiate",
                &initiate,
                Some(403),
                Some("FORBIDDEN"),
            ),
            (
                "/api/payments/initiate",
                &initiate,
                Some(401),
                Some("UNAUTHORIZED"),
            ),
            ("/api/payments/confirm", &confirm, Some(200), None),
            (
                "/api/payments/confirm",
                &confirm,
                Some(400),
                Some("TRANSACTION_NOT_FOUND"),
            ),
            (&by_id, "", Some(200), None),
            (&by_id, "", Some(404), Some("TRANSACTION_NOT_FOUND")),
            (&by_id, "", None, None),
            (
                "/api/payments/reference/INV%2F7/status",
                "",
                Some(404),
                Some("TRANSACTION_NOT_FOUND"),
            ),
            (
                "/api/payments/reference/R1/status?merchantId=x",
                "",
                Some(403),
                Some("FORBIDDEN"),
            ),
        ] {
            assert_eq!(
                claim(path, body, status, code, Some(b)),
                Claim::Merchant(b),
                "{path} {body} {status:?} {code:?}"
            );
        }
    }
}
