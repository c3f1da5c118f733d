//! The service's wire enums: transaction states and error codes.
//!
//! Both keep values this crate does not know in `Other(String)` instead of
//! failing (CONTRACT section 11); (de)serialisation goes through the string
//! by hand because `#[serde(untagged)]` misbehaves with the workspace's
//! `arbitrary_precision`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $wire:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this crate does not know, kept exactly as received.
            Other(String),
        }

        impl $name {
            /// The wire string.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $wire, )*
                    Self::Other(s) => s,
                }
            }

            /// Parses a wire string; unknown values become `Other`.
            pub fn from_wire(s: &str) -> Self {
                match s {
                    $( $wire => Self::$variant, )*
                    other => Self::Other(other.to_owned()),
                }
            }

            /// Every known value, in the order the service documents them.
            pub const KNOWN: &'static [$name] = &[ $( Self::$variant, )* ];
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::convert::Infallible;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Ok(Self::from_wire(s))
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Ok(Self::from_wire(&s))
            }
        }
    };
}

wire_enum! {
    /// A transaction's state.
    // CONTRACT section 6.
    pub enum TransactionStatus {
        /// Created, waiting on the payer (for example an OTP).
        Pending => "PENDING",
        /// Created, ready to confirm.
        Initiated => "INITIATED",
        /// Confirmed; the provider settles it later.
        Confirmed => "CONFIRMED",
        /// Paid.
        Successful => "SUCCESSFUL",
        /// Declined or rejected.
        Failed => "FAILED",
        /// Not confirmed in time *(ext)*.
        Expired => "EXPIRED",
    }
}

impl TransactionStatus {
    /// Whether no further change can happen: `SUCCESSFUL`, `FAILED` or
    /// `EXPIRED`. Unknown states are not final, so pollers keep waiting.
    pub fn is_final(&self) -> bool {
        matches!(self, Self::Successful | Self::Failed | Self::Expired)
    }
}

wire_enum! {
    /// An `errorCode` of the envelope.
    // CONTRACT section 8.
    pub enum ErrorCode {
        /// The request broke a rule; the message lists every one.
        ValidationError => "VALIDATION_ERROR",
        /// Status by id: empty id.
        InvalidTransactionId => "INVALID_TRANSACTION_ID",
        /// Status by reference: empty reference.
        InvalidReferenceNo => "INVALID_REFERENCE_NO",
        /// No such transaction.
        TransactionNotFound => "TRANSACTION_NOT_FOUND",
        /// Initiate: the merchant already used this reference *(ext)*.
        DuplicateReferenceNo => "DUPLICATE_REFERENCE_NO",
        /// Confirm: already processed *(ext)*.
        TransactionAlreadyConfirmed => "TRANSACTION_ALREADY_CONFIRMED",
        /// Confirm: expired *(ext)*.
        TransactionExpired => "TRANSACTION_EXPIRED",
        /// Status by reference: several merchants, no scope *(ext)*.
        AmbiguousReferenceNo => "AMBIGUOUS_REFERENCE_NO",
        /// Key missing or wrong *(ext)*.
        Unauthorized => "UNAUTHORIZED",
        /// Key bound to another merchant *(ext)*.
        Forbidden => "FORBIDDEN",
        /// No such route *(ext)*.
        NotFound => "NOT_FOUND",
        /// Route exists, method does not *(ext)*.
        MethodNotAllowed => "METHOD_NOT_ALLOWED",
        /// Body over the size limit *(ext)*.
        PayloadTooLarge => "PAYLOAD_TOO_LARGE",
        /// Body not JSON by content type *(ext)*.
        UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
        /// Rate limit hit *(ext)*.
        RateLimited => "RATE_LIMITED",
        /// Unexpected server error; may be retried.
        InternalError => "INTERNAL_ERROR",
        /// The mock's database cannot be reached (503) *(ext)*; retried
        /// like any 503, the outcome of the call unknown.
        StoreUnavailable => "STORE_UNAVAILABLE",
        /// The mock: no live sandbox has the id in the base URL (404): it
        /// was removed or expired *(ext)*; nothing was done.
        SandboxNotFound => "SANDBOX_NOT_FOUND",
        /// The mock: `--max-sandboxes` live already (429) *(ext)*.
        TooManySandboxes => "TOO_MANY_SANDBOXES",
        /// The contract proxy could not reach the service (502) *(ext)*.
        UpstreamUnavailable => "UPSTREAM_UNAVAILABLE",
        /// The contract proxy with `--enforce` refused the service's answer
        /// as breaking the interface document (502) *(ext)*.
        ContractViolation => "CONTRACT_VIOLATION",
    }
}
