//! The one rule the CLI keeps for a referenceNo, wherever it is typed or
//! read: `payments initiate --reference-no`, `payments status
//! --reference-no` (and `--from-file --by-reference`), a ledger's
//! `referenceNo` for `payments reconcile`. What initiate sends, status and
//! reconcile can look up: initiate refuses whatever they would.
//!
//! Its length and form are otherwise the service's to judge (the mock's
//! limits are its own, CONTRACT section 1); the CLI refuses only what a
//! command line, a terminal and a CSV file cannot carry reliably (a
//! control character: a tab, a line break, an escape sequence), and a
//! length no reference has, so a stray paste is not sent.

/// The most characters of a referenceNo: far beyond any service's limit.
pub const MAX_REFERENCE_CHARS: usize = 1024;

/// Why `reference` is not one the CLI sends or looks up, said after its
/// name (`referenceNo contains a control character`); `None` when it is.
/// Emptiness, whitespace at an end and `.`/`..` are judged where the text
/// comes from (a line is trimmed, an argument is not) and by the client.
pub fn problem(reference: &str) -> Option<String> {
    if reference.chars().any(char::is_control) {
        Some("contains a control character".to_owned())
    } else if reference.chars().count() > MAX_REFERENCE_CHARS {
        Some(format!("is longer than {MAX_REFERENCE_CHARS} characters"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_is_control_characters_and_the_length() {
        assert_eq!(problem("INV 2026/11"), None);
        assert_eq!(problem(&"é".repeat(MAX_REFERENCE_CHARS)), None);
        assert_eq!(
            problem("INV\t2026/11").as_deref(),
            Some("contains a control character")
        );
        assert_eq!(
            problem(&"x".repeat(MAX_REFERENCE_CHARS + 1)).as_deref(),
            Some("is longer than 1024 characters")
        );
    }
}
