//! Who a request to the admin side is ([`Role`], [`Viewer`]) and why one
//! may be refused ([`Refusal`]): the admin side's rules, apart from how a
//! key or a session arrives (the `admin` module and `http/` read those) and
//! how a refusal is answered (`http/access.rs`).

use uuid::Uuid;

/// What a request may do on the admin side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// No admin key is configured: the admin side is open to everyone.
    Open,
    /// An admin key: everything.
    Admin,
    /// An API key bound to this merchant: reads that merchant's
    /// transactions and requests, changes nothing.
    Merchant(Uuid),
    /// An API key bound to this merchant, in a sandbox that merchant made
    /// (CONTRACT section 19): reads its part, and controls the sandbox
    /// (clock, reset, faults, coverage).
    Owner(Uuid),
}

impl Role {
    /// The merchant whose part alone this role sees; `None`: everything.
    pub fn scope(self) -> Option<Uuid> {
        match self {
            Self::Open | Self::Admin => None,
            Self::Merchant(m) | Self::Owner(m) => Some(m),
        }
    }

    /// Whether this role may change the mock (reset, clock, payer; an
    /// owner its own sandbox).
    pub fn may_change(self) -> bool {
        !matches!(self, Self::Merchant(_))
    }
}

/// Who a request to the admin side comes from, as the middleware found it
/// (a request extension of every route outside `/api/` it lets through).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewer {
    /// What it may do.
    pub role: Role,
    /// Whether it came with a console session (the console then offers
    /// sign-out).
    pub signed_in: bool,
}

impl Viewer {
    /// A viewer of an open admin side.
    pub const OPEN: Self = Self {
        role: Role::Open,
        signed_in: false,
    };
}

/// Why a request may not use the admin side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No key, or one that is neither an admin key nor an API key: 401.
    Unauthenticated,
    /// An API key bound to no merchant: known, but it has no part of the
    /// admin side to read: 403.
    Unbound,
    /// A merchant's key asked for a change: 403.
    ReadOnly,
}
