//! The `X-Mock-Fault` header (CONTRACT section 10): its tokens, and the
//! delay they ask for in all.

use std::time::Duration;

use payments_serve::ApiError;

use super::{Fault, MAX_DELAY};

/// Parses an `X-Mock-Fault` value (comma-separated tokens). Each `delay=`
/// is at most 60000 ms, and so are all of them together: a request's
/// delays add up (`Plan::add`), and a header of many would otherwise hold
/// it for hours.
///
/// # Errors
///
/// `VALIDATION_ERROR` naming the unknown token, or the delays' total.
pub fn parse_header(value: &[u8]) -> Result<Vec<Fault>, ApiError> {
    let text = std::str::from_utf8(value).unwrap_or_default();
    // The grammar the OpenAPI document publishes (rules::FAULT_HEADER):
    // lower-case tokens, commas, optional spaces, nothing empty.
    if !crate::domain::rules::is_fault_header(text) {
        return Err(ApiError::validation(format!(
            "X-Mock-Fault: {:?} is not a comma-separated list of internal-error, \
             commit-then-error, reset, commit-then-reset, rate-limit, answer-other or \
             delay=<ms> (0 to 60000, no leading zeros)",
            String::from_utf8_lossy(value)
                .chars()
                .take(64)
                .collect::<String>()
        )));
    }
    let mut faults = Vec::new();
    let mut delay = Duration::ZERO;
    for token in text.split(',').map(|t| t.trim_matches(' ')) {
        // The rules' tokens, less the kinds a header cannot ask for (a
        // hang or a truncated body is a rule's: `POST /_mock/faults`).
        let fault = Fault::from_rule_token(token)
            .ok()
            .filter(Fault::is_header_kind)
            .ok_or_else(|| {
                ApiError::validation(format!(
                    "X-Mock-Fault: unknown fault {token:?}; expected internal-error, \
                     commit-then-error, reset, commit-then-reset, rate-limit, \
                     answer-other or delay=<ms> (at most 60000)"
                ))
            })?;
        if let Fault::Delay(d) = &fault {
            delay = delay.saturating_add(*d);
        }
        faults.push(fault);
    }
    if delay > MAX_DELAY {
        return Err(ApiError::validation(format!(
            "X-Mock-Fault: the delays add up to {} ms; at most 60000 ms in all",
            delay.as_millis()
        )));
    }
    Ok(faults)
}
