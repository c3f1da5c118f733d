//! The mock's own request rules, beside the interface's
//! ([`payments_interface::rules`]): the grammar of its test controls
//! (`X-Mock-Fault`, the clock's advance), the form of the ids it issues and
//! of its payment page tokens. Published by its OpenAPI document and held
//! to the hand-written checks by the tests below.

use std::sync::LazyLock;

use regex::Regex;

/// The interface's rules (lengths, limits, patterns, code lists), which
/// the validator checks: re-exported so the mock's rules are one module.
pub use payments_interface::rules::*;

/// Largest clock advance: 100 years, in seconds.
pub const MAX_ADVANCE_SECONDS: u64 = 100 * 365 * 24 * 3600;
/// Largest `X-Mock-Fault` delay, in milliseconds.
pub const MAX_FAULT_DELAY_MS: u64 = 60_000;

/// A transactionId as the mock issues it: lower-case hyphenated (the
/// paging cursors name stored transactions exactly).
pub const ISSUED_ID: &str = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

/// One `X-Mock-Fault` token.
fn fault_token() -> String {
    "(?:internal-error|commit-then-error|reset|commit-then-reset|rate-limit|answer-other|delay=(?:0|[1-9][0-9]{0,3}|[1-5][0-9]{4}|60000))".to_owned()
}

/// `X-Mock-Fault`: one or more tokens, separated by commas with optional
/// spaces around them.
pub static FAULT_HEADER: LazyLock<String> = LazyLock::new(|| {
    let token = fault_token();
    format!("^ *{token}(?: *, *{token})* *$")
});

/// A payment page token: 32 of `A-Z a-z 0-9`.
pub const PAGE_TOKEN: &str = "^[A-Za-z0-9]{32}$";

fn compiled(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the rule patterns are valid (unit-tested)")
}

static ISSUED_ID_RE: LazyLock<Regex> = LazyLock::new(|| compiled(ISSUED_ID));
static FAULT_HEADER_RE: LazyLock<Regex> = LazyLock::new(|| compiled(&FAULT_HEADER));

/// Whether `text` is an id in the form the mock issues ([`ISSUED_ID`]).
pub fn is_issued_id(text: &str) -> bool {
    ISSUED_ID_RE.is_match(text)
}

/// Whether `text` matches [`FAULT_HEADER`].
pub fn is_fault_header(text: &str) -> bool {
    FAULT_HEADER_RE.is_match(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_in_rusts_dialect() {
        for pattern in [ISSUED_ID, &FAULT_HEADER, PAGE_TOKEN] {
            compiled(pattern);
        }
    }

    #[test]
    fn the_fault_grammar_is_lower_case_tokens_separated_by_commas() {
        for good in [
            "reset",
            "delay=0",
            "delay=60000",
            " internal-error , delay=5 ",
            "rate-limit,reset",
        ] {
            assert!(is_fault_header(good), "{good:?}");
        }
        for bad in [
            "",
            " ",
            "RESET",
            "reset,",
            ",reset",
            "delay=60001",
            "delay=007",
            "delay=",
            "boom",
            "reset\t",
        ] {
            assert!(!is_fault_header(bad), "{bad:?}");
        }
    }

    #[test]
    fn issued_ids_are_lower_case() {
        let id = "01930000-0000-7000-8000-00000000000a";
        assert!(is_issued_id(id));
        assert!(!is_issued_id(&id.to_uppercase()));
    }
}
