//! The `errorCode`s the servers of this workspace answer: the interface
//! document's section 7, and the extensions the mock and the contract
//! proxy add, each marked as whose.

/// Who defines an error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Whose {
    /// The interface document's section 7: a real service answers it.
    Document,
    /// An extension of the mock (and of any server built like it: not
    /// found, wrong method, limits, auth): a real service may answer it
    /// differently.
    Mock,
    /// The contract proxy's own answer, never the service's.
    Proxy,
}

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal, $whose:ident, $status:literal;)*) => {
        /// A wire error code (`errorCode` of the envelope).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in the order of the contract's error table.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];

            /// The wire string, e.g. `VALIDATION_ERROR`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)*
                }
            }

            /// Who defines it.
            pub fn whose(self) -> Whose {
                match self {
                    $(Self::$variant => Whose::$whose,)*
                }
            }

            /// The HTTP status it is usually answered with (confirm's
            /// `TRANSACTION_NOT_FOUND` is 400: see
            /// [`crate::Endpoint::status_of`]).
            pub fn http_status(self) -> u16 {
                match self {
                    $(Self::$variant => $status,)*
                }
            }
        }
    };
}

codes! {
    /// Body, query or rule validation failed.
    ValidationError = "VALIDATION_ERROR", Document, 400;
    /// Status by id: empty id.
    InvalidTransactionId = "INVALID_TRANSACTION_ID", Document, 400;
    /// Status by reference: empty reference.
    InvalidReferenceNo = "INVALID_REFERENCE_NO", Document, 400;
    /// Unknown transaction (400 on confirm, 404 on the status reads).
    TransactionNotFound = "TRANSACTION_NOT_FOUND", Document, 404;
    /// Initiate: the merchant already used this reference.
    DuplicateReferenceNo = "DUPLICATE_REFERENCE_NO", Mock, 400;
    /// Confirm: already processed.
    TransactionAlreadyConfirmed = "TRANSACTION_ALREADY_CONFIRMED", Mock, 400;
    /// Confirm: expired.
    TransactionExpired = "TRANSACTION_EXPIRED", Mock, 400;
    /// Status by reference: several merchants hold it and no scope was given.
    AmbiguousReferenceNo = "AMBIGUOUS_REFERENCE_NO", Mock, 400;
    /// Authentication on, key missing or wrong.
    Unauthorized = "UNAUTHORIZED", Mock, 401;
    /// A key bound to another merchant, or a change a key may not make.
    Forbidden = "FORBIDDEN", Mock, 403;
    /// No such route.
    NotFound = "NOT_FOUND", Mock, 404;
    /// The route exists, the method does not.
    MethodNotAllowed = "METHOD_NOT_ALLOWED", Mock, 405;
    /// Body over the limit.
    PayloadTooLarge = "PAYLOAD_TOO_LARGE", Mock, 413;
    /// Body not JSON by content type.
    UnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE", Mock, 415;
    /// Rate limit exceeded (or injected).
    RateLimited = "RATE_LIMITED", Mock, 429;
    /// The mock's sandboxes: `--max-sandboxes` live already.
    TooManySandboxes = "TOO_MANY_SANDBOXES", Mock, 429;
    /// The mock's sandboxes: no live sandbox has the id in the path
    /// (unknown, malformed, removed or expired).
    SandboxNotFound = "SANDBOX_NOT_FOUND", Mock, 404;
    /// Unexpected error, or an injected fault.
    InternalError = "INTERNAL_ERROR", Document, 500;
    /// The database behind the mock's store cannot be reached.
    StoreUnavailable = "STORE_UNAVAILABLE", Mock, 503;
    /// The contract proxy's upstream could not be reached or did not
    /// answer in time.
    UpstreamUnavailable = "UPSTREAM_UNAVAILABLE", Proxy, 502;
    /// The contract proxy with `--enforce`: the upstream's answer broke the
    /// interface document.
    ContractViolation = "CONTRACT_VIOLATION", Proxy, 502;
}

impl ErrorCode {
    /// The code a wire string names, if it is one of these.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == text)
    }

    /// The codes `whose` defines, in [`ErrorCode::ALL`]'s order.
    pub fn of(whose: Whose) -> impl Iterator<Item = Self> {
        Self::ALL
            .iter()
            .copied()
            .filter(move |c| c.whose() == whose)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_parses_back_and_is_upper_snake_case() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
            assert!(
                code.as_str()
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_'),
                "{code}"
            );
        }
        assert_eq!(ErrorCode::parse("validation_error"), None);
    }

    #[test]
    fn the_document_lists_five_codes_and_the_proxy_owns_two() {
        let document: Vec<_> = ErrorCode::of(Whose::Document)
            .map(ErrorCode::as_str)
            .collect();
        assert_eq!(
            document,
            [
                "VALIDATION_ERROR",
                "INVALID_TRANSACTION_ID",
                "INVALID_REFERENCE_NO",
                "TRANSACTION_NOT_FOUND",
                "INTERNAL_ERROR"
            ]
        );
        let proxy: Vec<_> = ErrorCode::of(Whose::Proxy).collect();
        assert_eq!(
            proxy,
            [ErrorCode::UpstreamUnavailable, ErrorCode::ContractViolation]
        );
    }
}
