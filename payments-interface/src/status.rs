//! Transaction statuses: the five the interface document shows (section
//! 3) and the mock's `EXPIRED`.

/// A transaction's state as the interface shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Waits on the payer (an OTP, say).
    Pending,
    /// Ready to confirm.
    Initiated,
    /// Confirmed, settlement (or the payer's decision) pending.
    Confirmed,
    /// Done.
    Successful,
    /// Declined, a wrong code, or the payer's refusal.
    Failed,
    /// Not confirmed in time (an extension: the document shows no expiry
    /// state).
    Expired,
}

impl Status {
    /// Every status, the document's five first.
    pub const ALL: [Self; 6] = [
        Self::Pending,
        Self::Initiated,
        Self::Confirmed,
        Self::Successful,
        Self::Failed,
        Self::Expired,
    ];

    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Initiated => "INITIATED",
            Self::Confirmed => "CONFIRMED",
            Self::Successful => "SUCCESSFUL",
            Self::Failed => "FAILED",
            Self::Expired => "EXPIRED",
        }
    }

    /// The status a wire string names, if it is one of these.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether the interface document shows it (all but `EXPIRED`).
    pub fn is_documented(self) -> bool {
        self != Self::Expired
    }

    /// Whether nothing moves it any more: `SUCCESSFUL`, `FAILED`, `EXPIRED`.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Successful | Self::Failed | Self::Expired)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The state transitions of CONTRACT section 6 (and 13, the payer's
/// decision), as (from, to): `None` is before the transaction exists
/// (its initiate). Every change a transaction's status can make, and
/// nothing else: a status seen to move another way broke the contract.
pub const TRANSITIONS: [(Option<Status>, Status); 12] = [
    // Initiate: the product's initial state.
    (None, Status::Pending),
    (None, Status::Initiated),
    // Confirm: a product's outcome (success, async or redirect, decline or
    // a wrong code).
    (Some(Status::Pending), Status::Successful),
    (Some(Status::Initiated), Status::Successful),
    (Some(Status::Pending), Status::Confirmed),
    (Some(Status::Initiated), Status::Confirmed),
    (Some(Status::Pending), Status::Failed),
    (Some(Status::Initiated), Status::Failed),
    // Settlement, or the payer's decision on the payment page.
    (Some(Status::Confirmed), Status::Successful),
    (Some(Status::Confirmed), Status::Failed),
    // The expiry period passes unconfirmed.
    (Some(Status::Pending), Status::Expired),
    (Some(Status::Initiated), Status::Expired),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_back_and_five_are_documented() {
        for status in Status::ALL {
            assert_eq!(Status::parse(status.as_str()), Some(status));
        }
        assert_eq!(Status::ALL.iter().filter(|s| s.is_documented()).count(), 5);
        assert_eq!(Status::parse("pending"), None);
    }
}
