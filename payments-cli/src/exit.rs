//! The documented exit codes (COMMANDS.md), and the one mapping from the
//! outcome of a service call to them.
//!
//! They describe the call, not the payment: a `FAILED` payment that was read
//! without trouble exits 0.

use std::process::ExitCode;

/// An exit code of `payments`; ordered so that the worst of many look-ups is
/// the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Exit {
    /// Every call succeeded.
    #[default]
    Ok = 0,
    /// The service rejected a call (4xx other than not found).
    Rejected = 1,
    /// Bad flags, amount, `--extra`, config; or input the client refused to send.
    Usage = 2,
    /// `TRANSACTION_NOT_FOUND`, whatever the HTTP status.
    NotFound = 3,
    /// 5xx, rate limited, connection, timeout, a body that is not the
    /// envelope, or an answer about another request than the one sent.
    Unavailable = 4,
    /// `--wait` gave up before a final state.
    WaitGaveUp = 5,
    /// `reconcile` found rows that do not match.
    Mismatch = 6,
}

impl Exit {
    /// The number the process exits with.
    #[must_use]
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The worst of several outcomes (the highest code); `Ok` for none.
    #[must_use]
    pub fn worst(outcomes: impl IntoIterator<Item = Self>) -> Self {
        outcomes.into_iter().max().unwrap_or_default()
    }

    /// The code for an answer of the service that carried an error envelope.
    ///
    /// `TRANSACTION_NOT_FOUND` wins over the HTTP status (confirm answers it
    /// with 400, the status endpoints with 404). 429 counts with the 5xx: the
    /// call may well work later, which is what a script needs to know.
    #[must_use]
    pub fn for_service_answer(http_status: u16, is_transaction_not_found: bool) -> Self {
        match http_status {
            _ if is_transaction_not_found => Self::NotFound,
            429 | 500..=599 => Self::Unavailable,
            _ => Self::Rejected,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        Self::from(exit.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_documentation() {
        let codes: Vec<u8> = [
            Exit::Ok,
            Exit::Rejected,
            Exit::Usage,
            Exit::NotFound,
            Exit::Unavailable,
            Exit::WaitGaveUp,
            Exit::Mismatch,
        ]
        .into_iter()
        .map(Exit::code)
        .collect();
        assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn not_found_wins_over_the_http_status() {
        assert_eq!(Exit::for_service_answer(400, true), Exit::NotFound);
        assert_eq!(Exit::for_service_answer(404, true), Exit::NotFound);
        assert_eq!(Exit::for_service_answer(200, true), Exit::NotFound);
    }

    #[test]
    fn other_answers_split_into_rejected_and_unavailable() {
        assert_eq!(Exit::for_service_answer(400, false), Exit::Rejected);
        assert_eq!(Exit::for_service_answer(401, false), Exit::Rejected);
        assert_eq!(Exit::for_service_answer(404, false), Exit::Rejected);
        assert_eq!(Exit::for_service_answer(200, false), Exit::Rejected);
        assert_eq!(Exit::for_service_answer(429, false), Exit::Unavailable);
        assert_eq!(Exit::for_service_answer(500, false), Exit::Unavailable);
        assert_eq!(Exit::for_service_answer(503, false), Exit::Unavailable);
    }

    #[test]
    fn many_look_ups_exit_with_the_highest_code() {
        assert_eq!(Exit::worst([]), Exit::Ok);
        assert_eq!(
            Exit::worst([Exit::Ok, Exit::NotFound, Exit::Rejected]),
            Exit::NotFound
        );
        assert_eq!(
            Exit::worst([Exit::Unavailable, Exit::WaitGaveUp]),
            Exit::WaitGaveUp
        );
    }
}
