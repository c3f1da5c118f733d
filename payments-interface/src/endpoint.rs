//! The interface's four operations (document section 4): their methods,
//! path templates, how a request path names one, and what the document
//! lets each answer. The one place a path is matched: the mock routes by
//! it, the contract proxy judges by it.

use std::borrow::Cow;

use crate::code::ErrorCode;
use crate::fields::{self, Field};

/// Every path of the interface starts here; everything else belongs to
/// the server (the mock's `/_mock/`, the proxy's `/_proxy/`).
pub const API_PREFIX: &str = "/api/";

/// The prefix of the four operations' paths.
const PAYMENTS: &str = "/api/payments/";

/// One operation of the interface document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `POST /api/payments/initiate` (4.1).
    Initiate,
    /// `POST /api/payments/confirm` (4.2).
    Confirm,
    /// `GET /api/payments/{transactionId}/status` (4.3).
    StatusById,
    /// `GET /api/payments/reference/{referenceNo}/status` (4.4).
    StatusByReference,
}

impl Endpoint {
    /// The four, in the document's order.
    pub const ALL: [Self; 4] = [
        Self::Initiate,
        Self::Confirm,
        Self::StatusById,
        Self::StatusByReference,
    ];

    /// Its short name: the OpenAPI `operationId`, and what reports count
    /// exchanges under (`initiate`, `confirm`, `statusById`,
    /// `statusByReference`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Initiate => "initiate",
            Self::Confirm => "confirm",
            Self::StatusById => "statusById",
            Self::StatusByReference => "statusByReference",
        }
    }

    /// The method the document gives it.
    pub fn method(self) -> &'static str {
        match self {
            Self::Initiate | Self::Confirm => "POST",
            Self::StatusById | Self::StatusByReference => "GET",
        }
    }

    /// The path template, with the parameter in braces.
    pub fn template(self) -> &'static str {
        match self {
            Self::Initiate => "/api/payments/initiate",
            Self::Confirm => "/api/payments/confirm",
            Self::StatusById => "/api/payments/{transactionId}/status",
            Self::StatusByReference => "/api/payments/reference/{referenceNo}/status",
        }
    }

    /// The path parameter's name, for the two reads.
    pub fn parameter(self) -> Option<&'static str> {
        match self {
            Self::Initiate | Self::Confirm => None,
            Self::StatusById => Some("transactionId"),
            Self::StatusByReference => Some("referenceNo"),
        }
    }

    /// Whether a server takes `method` on this path: the document's, and
    /// `HEAD` beside a `GET`.
    #[inline]
    pub fn takes_method(self, method: &str) -> bool {
        match self {
            Self::Initiate | Self::Confirm => method == "POST",
            Self::StatusById | Self::StatusByReference => method == "GET" || method == "HEAD",
        }
    }

    /// The `Allow` header of a 405 on this path.
    pub fn allow(self) -> &'static str {
        match self {
            Self::Initiate | Self::Confirm => "POST",
            Self::StatusById | Self::StatusByReference => "GET,HEAD",
        }
    }

    /// Whether it is one of the two status reads.
    pub fn is_status(self) -> bool {
        matches!(self, Self::StatusById | Self::StatusByReference)
    }

    /// The HTTP statuses the document lists for it (section 4).
    pub fn documented_http(self) -> &'static [u16] {
        match self {
            Self::Initiate | Self::Confirm => &[200, 400, 500],
            Self::StatusById | Self::StatusByReference => &[200, 400, 404, 500],
        }
    }

    /// The error codes sections 4 and 7 give it. Confirm's "validation
    /// failed" (section 4.2) names no code; `VALIDATION_ERROR`, the
    /// document's code for validation, is taken as its.
    pub fn documented_codes(self) -> &'static [ErrorCode] {
        use ErrorCode::*;
        match self {
            Self::Initiate => &[ValidationError, InternalError],
            Self::Confirm => &[ValidationError, TransactionNotFound, InternalError],
            Self::StatusById => &[InvalidTransactionId, TransactionNotFound, InternalError],
            Self::StatusByReference => &[InvalidReferenceNo, TransactionNotFound, InternalError],
        }
    }

    /// The extension codes the contract (CONTRACT section 8) gives this
    /// endpoint beside the document's: what a server built like the mock
    /// answers there (a duplicate reference, a second confirm, an expired
    /// one, keys, limits, a store gone). Route-level codes (`NOT_FOUND`,
    /// `METHOD_NOT_ALLOWED`) and the contract proxy's own are no
    /// endpoint's answer.
    pub fn contract_codes(self) -> &'static [ErrorCode] {
        use ErrorCode::*;
        match self {
            Self::Initiate => &[
                DuplicateReferenceNo,
                Unauthorized,
                Forbidden,
                PayloadTooLarge,
                UnsupportedMediaType,
                RateLimited,
                StoreUnavailable,
            ],
            Self::Confirm => &[
                TransactionAlreadyConfirmed,
                TransactionExpired,
                Unauthorized,
                PayloadTooLarge,
                UnsupportedMediaType,
                RateLimited,
                StoreUnavailable,
            ],
            Self::StatusById => &[Unauthorized, RateLimited, StoreUnavailable],
            // A `merchantId` query that is not a UUID (CONTRACT section 5).
            Self::StatusByReference => &[
                ValidationError,
                AmbiguousReferenceNo,
                Unauthorized,
                RateLimited,
                StoreUnavailable,
            ],
        }
    }

    /// The HTTP status the document gives `code` on this endpoint, where it
    /// gives one: `TRANSACTION_NOT_FOUND` is 400 on confirm and 404 on the
    /// reads; the other document codes have one status everywhere.
    pub fn status_of(self, code: ErrorCode) -> Option<u16> {
        match code {
            ErrorCode::TransactionNotFound if self == Self::Confirm => Some(400),
            ErrorCode::TransactionNotFound if self.is_status() => Some(404),
            ErrorCode::TransactionNotFound => None,
            code if code.whose() == crate::Whose::Document => Some(code.http_status()),
            _ => None,
        }
    }

    /// The request body's fields (sections 2.2, 2.4), in document order;
    /// empty for the reads.
    pub fn request_fields(self) -> &'static [Field] {
        match self {
            Self::Initiate => fields::INITIATE_REQUEST,
            Self::Confirm => fields::CONFIRM_REQUEST,
            Self::StatusById | Self::StatusByReference => &[],
        }
    }

    /// The fields of a success's `data` (sections 2.3, 2.5, 2.6), in
    /// document order.
    pub fn data_fields(self) -> &'static [Field] {
        match self {
            Self::Initiate => fields::INITIATE_DATA,
            Self::Confirm => fields::CONFIRM_DATA,
            Self::StatusById | Self::StatusByReference => fields::STATUS_DATA,
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A request path matched to an operation, whatever the method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route<'a> {
    /// The operation.
    pub endpoint: Endpoint,
    /// The path parameter of a read, as it came (still percent-encoded;
    /// possibly empty: `/api/payments//status` names the read by id with
    /// an empty id, which the document answers 400). Empty for initiate and
    /// confirm.
    pub raw: &'a str,
}

impl Route<'_> {
    /// The path parameter percent-decoded, as [`decode_segment`].
    pub fn decoded(&self) -> Option<Cow<'_, str>> {
        decode_segment(self.raw)
    }
}

/// The operation `path` (without its query) names, if any: exactly
/// `/api/payments/initiate` or `/confirm`, or `/api/payments/{one
/// segment}/status`, or `/api/payments/reference/{one segment}/status`.
/// A segment is everything between two slashes, so a `/` inside a
/// reference must come percent-encoded (`%2F`).
///
/// ```
/// use payments_interface::{Endpoint, route};
///
/// assert_eq!(route("/api/payments/initiate").map(|r| r.endpoint), Some(Endpoint::Initiate));
/// assert_eq!(route("/api/payments//status").map(|r| (r.endpoint, r.raw)), Some((Endpoint::StatusById, "")));
/// assert_eq!(route("/api/payments/a/b/status"), None);
/// assert_eq!(route("/api/payments/initiate/extra"), None);
/// ```
#[inline]
pub fn route(path: &str) -> Option<Route<'_>> {
    let rest = path.strip_prefix(PAYMENTS)?;
    let endpoint = |endpoint| Some(Route { endpoint, raw: "" });
    match rest {
        "initiate" => endpoint(Endpoint::Initiate),
        "confirm" => endpoint(Endpoint::Confirm),
        _ => {
            let inner = rest.strip_suffix("/status")?;
            match inner.strip_prefix("reference/") {
                Some(raw) if !raw.contains('/') => Some(Route {
                    endpoint: Endpoint::StatusByReference,
                    raw,
                }),
                Some(_) => None,
                None if !inner.contains('/') => Some(Route {
                    endpoint: Endpoint::StatusById,
                    raw: inner,
                }),
                None => None,
            }
        }
    }
}

/// The [`Route`] of `path` when [`route`] has already matched it to
/// `endpoint`: its path parameter sliced out again without searching the
/// path (a server that routes a path once, early, and passes only the
/// endpoint down). `None` for a path of another shape; for a path that
/// [`route`] would not match to `endpoint`, what it answers is
/// unspecified (a debug build asserts).
///
/// ```
/// use payments_interface::{Endpoint, route, route_as};
///
/// let path = "/api/payments/reference/INV%2F7/status";
/// let endpoint = route(path).map(|r| r.endpoint).expect("a read");
/// assert_eq!(route_as(endpoint, path), route(path));
/// ```
#[inline]
pub fn route_as(endpoint: Endpoint, path: &str) -> Option<Route<'_>> {
    let rest = path.strip_prefix(PAYMENTS)?;
    let raw = match endpoint {
        Endpoint::Initiate | Endpoint::Confirm => "",
        Endpoint::StatusById => rest.strip_suffix("/status")?,
        Endpoint::StatusByReference => rest.strip_suffix("/status")?.strip_prefix("reference/")?,
    };
    let routed = Route { endpoint, raw };
    debug_assert_eq!(route(path), Some(routed), "{path} is not {endpoint:?}");
    Some(routed)
}

/// A path segment percent-decoded (CONTRACT: `%2F` is `/`, `%20` a
/// space), borrowing `raw` when it has nothing to decode; `None` when the
/// result is not UTF-8.
#[inline]
pub fn decode_segment(raw: &str) -> Option<Cow<'_, str>> {
    if !raw.contains('%') {
        return Some(Cow::Borrowed(raw));
    }
    percent_encoding::percent_decode_str(raw).decode_utf8().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_routed_path_is_routed_the_same_again_from_its_endpoint() {
        for path in [
            "/api/payments/initiate",
            "/api/payments/confirm",
            "/api/payments/abc/status",
            "/api/payments//status",
            "/api/payments/reference/INV-1/status",
            "/api/payments/reference//status",
            "/api/payments/reference/a%2Fb/status",
            "/api/payments/reference/status",
        ] {
            let routed = route(path).expect(path);
            assert_eq!(route_as(routed.endpoint, path), Some(routed), "{path}");
        }
    }

    #[test]
    fn paths_name_endpoints_whatever_the_method() {
        fn of(p: &str) -> Option<(Endpoint, &str)> {
            route(p).map(|r| (r.endpoint, r.raw))
        }
        assert_eq!(of("/api/payments/initiate"), Some((Endpoint::Initiate, "")));
        assert_eq!(of("/api/payments/confirm"), Some((Endpoint::Confirm, "")));
        assert_eq!(
            of("/api/payments/abc/status"),
            Some((Endpoint::StatusById, "abc"))
        );
        assert_eq!(
            of("/api/payments/reference/INV%2F1/status"),
            Some((Endpoint::StatusByReference, "INV%2F1"))
        );
        assert_eq!(
            of("/api/payments/reference//status"),
            Some((Endpoint::StatusByReference, ""))
        );
        assert_eq!(
            of("/api/payments/reference/status"),
            Some((Endpoint::StatusById, "reference"))
        );
        for none in [
            "/api/payments/a/b/status",
            "/api/payments/reference/a/b/status",
            "/api/payments/",
            "/api/payments",
            "/api/other",
            "/api/payments/initiate/extra",
            "/_mock/health",
            "",
        ] {
            assert_eq!(route(none), None, "{none}");
        }
    }

    #[test]
    fn each_endpoints_template_routes_back_to_it() {
        for endpoint in Endpoint::ALL {
            let path = endpoint
                .template()
                .replace("{transactionId}", "01970000-0000-7000-8000-000000000000")
                .replace("{referenceNo}", "INV-1");
            let matched = route(&path).expect("routed");
            assert_eq!(matched.endpoint, endpoint);
            assert!(endpoint.takes_method(endpoint.method()));
            assert!(endpoint.allow().contains(endpoint.method()));
            assert_eq!(endpoint.parameter().is_some(), endpoint.is_status());
        }
    }

    #[test]
    fn methods_are_the_documents_and_head_beside_get() {
        assert!(Endpoint::StatusById.takes_method("HEAD"));
        assert!(!Endpoint::Initiate.takes_method("GET"));
        assert!(!Endpoint::Confirm.takes_method("post"));
    }

    #[test]
    fn transaction_not_found_is_400_on_confirm_and_404_on_the_reads() {
        use ErrorCode::*;
        assert_eq!(Endpoint::Confirm.status_of(TransactionNotFound), Some(400));
        assert_eq!(
            Endpoint::StatusById.status_of(TransactionNotFound),
            Some(404)
        );
        assert_eq!(Endpoint::Initiate.status_of(TransactionNotFound), None);
        assert_eq!(Endpoint::Initiate.status_of(InternalError), Some(500));
        assert_eq!(Endpoint::Initiate.status_of(DuplicateReferenceNo), None);
        for endpoint in Endpoint::ALL {
            for code in endpoint.documented_codes() {
                let status = endpoint.status_of(*code).expect("a documented status");
                assert!(endpoint.documented_http().contains(&status));
            }
        }
    }

    #[test]
    fn segments_decode_strictly() {
        assert_eq!(decode_segment("INV%2F1").as_deref(), Some("INV/1"));
        assert_eq!(decode_segment("%FF"), None);
        assert!(matches!(
            decode_segment("plain"),
            Some(Cow::Borrowed("plain"))
        ));
        assert_eq!(decode_segment("a%20b").as_deref(), Some("a b"));
    }
}
