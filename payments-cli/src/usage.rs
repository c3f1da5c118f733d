//! Usage errors in the words of the command line: each names the flag (not
//! the JSON field the service or the client speaks of), says what to do, and
//! never repeats more than [`MAX_ECHO`](crate::text::MAX_ECHO) bytes of the offending value
//! (COMMANDS.md, "Output"; issue 34).
//!
//! Three sources are rewritten here: clap's own errors for a value a value
//! parser refused, the client's local validation of a request (field names
//! such as `productCode`), and the flags' own checks that only need the
//! flag's text.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use payments_client::error::ValidationErrors;

use crate::output::printable;

mod typed;

pub use crate::output::quote;

/// The flag (or argument) of the command line that sets a JSON field of
/// initiate or confirm.
#[must_use]
pub fn flag_for_field(field: &str) -> Option<&'static str> {
    Some(match field {
        "merchantId" => "--merchant-id",
        "referenceNo" => "--reference-no",
        "description" => "--description",
        "amount" => "--amount",
        "currencyCode" => "--currency",
        "productCode" => "--product",
        "quantity" => "--quantity",
        "countryCode" => "--country",
        "storeId" => "--store-id",
        "deviceId" => "--device-id",
        "payerId" => "--payer-id",
        "returnUrl" => "--return-url",
        "extraProperties" => "--extra",
        "transactionId" => "TRANSACTION_ID",
        "confirmationCode" => "--code",
        _ => return None,
    })
}

/// The client's local validation, said with flags: `countryCode must be
/// an ISO 3166-1 alpha-2 code` becomes `--country 'XX': must be an ISO
/// 3166-1 alpha-2 code`. `value_of` gives the text the user typed for a
/// field, when there is one.
#[must_use]
pub fn invalid_request<'a>(
    errors: &ValidationErrors,
    value_of: impl Fn(&str) -> Option<&'a str>,
) -> String {
    let mut lines = Vec::with_capacity(errors.errors().len());
    for error in errors.errors() {
        let Some(flag) = flag_for_field(error.field) else {
            lines.push(printable(&error.message));
            continue;
        };
        let rest = error
            .message
            .strip_prefix(error.field)
            .map_or(error.message.as_str(), str::trim_start);
        let line = match value_of(error.field) {
            Some(value) => format!("{flag} {}: {}", quote(value), printable(rest)),
            None => format!("{flag} {}", printable(rest)),
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines.join("; ")
}

/// `--country my`: the interface document asks for an ISO 3166-1 alpha-2
/// code, and the standard's codes are upper case (the client refuses `my`
/// before sending), so two letters that are not gets that hint. `None`
/// otherwise: the client's own check says what else is wrong.
///
/// Product codes get no such check: their form is the service's to decide
/// (the mock's `A-Z 0-9 _ -` is its own).
#[must_use]
pub fn check_country(value: &str) -> Option<String> {
    let letters = value.len() == 2 && value.bytes().all(|b| b.is_ascii_alphabetic());
    if !letters || value.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    Some(format!(
        "--country {}: country codes are upper case, e.g. {}",
        quote(value),
        value.to_ascii_uppercase()
    ))
}

/// One line for a clap error about a value (a value parser said no, a
/// value outside a list, an unknown flag), naming the flag or its
/// environment variable and quoting at most [`MAX_ECHO`](crate::text::MAX_ECHO) bytes of the
/// value. `None` for other errors: clap's own text is kept for them.
#[must_use]
pub fn clap_error_line(err: &clap::Error, command: &clap::Command) -> Option<String> {
    let text = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    match err.kind() {
        ErrorKind::ValueValidation | ErrorKind::InvalidValue => {
            let arg = text(ContextKind::InvalidArg)?;
            let value = text(ContextKind::InvalidValue)?;
            let source = whence(arg, command);
            let reason = match (err.kind(), std::error::Error::source(err)) {
                (ErrorKind::ValueValidation, Some(reason)) => reason.to_string(),
                _ => match err.get(ContextKind::ValidValue) {
                    Some(ContextValue::Strings(valid)) if !valid.is_empty() => {
                        format!("must be one of {}", valid.join(", "))
                    }
                    _ => "is not a valid value".to_owned(),
                },
            };
            if value.is_empty() && err.kind() == ErrorKind::InvalidValue {
                // A flag given without its value: clap lists no valid
                // values then (an empty list), and "is not a valid value"
                // would be wrong; only a list says more.
                return Some(match err.get(ContextKind::ValidValue) {
                    Some(ContextValue::Strings(valid)) if !valid.is_empty() => {
                        format!("{source} needs a value: it {reason}")
                    }
                    _ => format!("{source} needs a value (see --help)"),
                });
            }
            Some(format!("{source} {}: {}", quote(value), printable(&reason)))
        }
        ErrorKind::UnknownArgument => {
            let arg = text(ContextKind::InvalidArg)?;
            // A value that starts with `-` (`--reference-no -R1`,
            // `--api-key -abc…`) is read as an argument of its own: said
            // with its flag (a secret never repeated).
            if let Some(line) = typed::value_after_a_flag(arg, command) {
                return Some(line);
            }
            let suggestion = match err.get(ContextKind::SuggestedArg) {
                Some(ContextValue::String(s)) => format!("; did you mean {s}?"),
                _ => String::new(),
            };
            // `confirm -01a2`: an id that starts with `-` goes after `--`.
            let positional = typed::positional_like_a_flag(arg, command)
                .map(|hint| format!("; {hint}"))
                .unwrap_or_default();
            Some(format!(
                "unknown argument {}{suggestion} (see --help){positional}",
                quote(arg)
            ))
        }
        // clap names no argument for this one.
        ErrorKind::InvalidUtf8 => Some(typed::not_utf8(command)),
        _ => None,
    }
}

/// `--merchant-id <UUID>` → `--merchant-id`, or the environment variable
/// when the flag is not on the command line but the variable is set.
fn whence(arg: &str, command: &clap::Command) -> String {
    let flag = arg.split_whitespace().next().unwrap_or(arg);
    let Some(long) = flag.strip_prefix("--") else {
        return flag.to_owned();
    };
    let typed = std::env::args_os().skip(1).any(|a| {
        a.to_str()
            .is_some_and(|a| a == flag || a.starts_with(&format!("{flag}=")))
    });
    if typed {
        return flag.to_owned();
    }
    let env = command
        .get_subcommands()
        .flat_map(clap::Command::get_arguments)
        .chain(command.get_arguments())
        .find(|a| a.get_long() == Some(long))
        .and_then(clap::Arg::get_env)
        .and_then(|name| name.to_str().map(str::to_owned));
    match env {
        Some(name) if std::env::var_os(&name).is_some() => format!("{name} (for {flag})"),
        _ => flag.to_owned(),
    }
}

/// Parses `--merchant-id`: a UUID, with a message that says so.
///
/// # Errors
///
/// Anything that is not a UUID.
pub fn parse_merchant_id(text: &str) -> Result<uuid::Uuid, String> {
    uuid::Uuid::parse_str(text.trim()).map_err(|_| {
        "not a UUID; a merchant id is 32 hex digits in groups of 8-4-4-4-12, \
         e.g. 4f1c6a2e-0b7d-4c1e-9a53-2f8e6d1b7c90"
            .to_owned()
    })
}

/// The products a service offers, from its OpenAPI description when it
/// publishes one: the mock does at `/openapi.json`, as the `enum` of the
/// initiate request's `productCode` (CONTRACT section 10). The document is
/// searched for any `productCode` property with an `enum`, so a
/// restructured document still answers. At most 50 codes, each printable.
#[must_use]
pub fn products_in_openapi(document: &serde_json::Value) -> Option<Vec<String>> {
    fn walk(value: &serde_json::Value, depth: usize) -> Option<Vec<String>> {
        if depth > 64 {
            return None;
        }
        match value {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Array(codes)) =
                    map.get("productCode").and_then(|p| p.get("enum"))
                {
                    let codes: Vec<String> = codes
                        .iter()
                        .filter_map(serde_json::Value::as_str)
                        .take(50)
                        .map(|code| printable(code).chars().take(32).collect())
                        .collect();
                    if !codes.is_empty() {
                        return Some(codes);
                    }
                }
                map.values().find_map(|v| walk(v, depth + 1))
            }
            serde_json::Value::Array(items) => items.iter().find_map(|v| walk(v, depth + 1)),
            _ => None,
        }
    }
    walk(document, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_at_200_bytes() {
        assert_eq!(quote("abc"), "'abc'");
        let long = "é".repeat(30_000);
        let quoted = quote(&long);
        assert!(
            quoted.len() < crate::text::MAX_ECHO + 60,
            "{}",
            quoted.len()
        );
        assert!(
            quoted.ends_with("(the first 200 of 60000 bytes)"),
            "{quoted}"
        );
        let escaped = quote("\u{1b}[2J".repeat(100).as_str());
        assert!(!escaped.contains('\u{1b}'));
        assert!(escaped.len() < crate::text::MAX_ECHO + 60);
    }

    #[test]
    fn lower_case_countries_say_upper_case() {
        assert_eq!(
            check_country("my").as_deref(),
            Some("--country 'my': country codes are upper case, e.g. MY")
        );
        assert_eq!(
            check_country("My").as_deref(),
            Some("--country 'My': country codes are upper case, e.g. MY")
        );
        for left_to_the_client in ["MY", "MYS", "m1", ""] {
            assert_eq!(check_country(left_to_the_client), None);
        }
    }

    #[test]
    fn merchant_ids_must_be_uuids() {
        assert!(parse_merchant_id("4F1C6A2E-0B7D-4C1E-9A53-2F8E6D1B7C90").is_ok());
        let err = parse_merchant_id("nope").unwrap_err();
        assert!(err.starts_with("not a UUID"), "{err}");
    }

    #[test]
    fn products_are_found_anywhere_in_the_document() {
        let doc = serde_json::json!({"components": {"schemas": {"InitiateRequest": {
            "properties": {"productCode": {"type": "string", "enum": ["TOPUP", "BILLPAY"]}}
        }}}});
        assert_eq!(
            products_in_openapi(&doc),
            Some(vec!["TOPUP".to_owned(), "BILLPAY".to_owned()])
        );
        assert_eq!(products_in_openapi(&serde_json::json!({"a": [1, 2]})), None);
    }
}
