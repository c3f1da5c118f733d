//! The request rules the mock's validator enforces and its OpenAPI document
//! publishes, from one place (the contract's field formats, path
//! parameters and redirect-based payments): lengths,
//! limits, the code lists, and the patterns, which are regular expressions
//! in the common subset of JSON Schema's (ECMA 262), Python's and Rust's
//! dialects, so what a generator produces from the document is what the
//! mock accepts. Tests compare each pattern with the hand-written check it
//! stands for (`tests` below, and proptests in `tests/props.rs`).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

/// The largest request body: 64 KiB (a larger one is 413
/// `PAYLOAD_TOO_LARGE`).
pub const BODY_LIMIT: usize = 64 * 1024;
/// `referenceNo`: 1–64 characters.
pub const REFERENCE_MAX: usize = 64;
/// `description`: at most 255 characters.
pub const DESCRIPTION_MAX: usize = 255;
/// `storeId`, `deviceId`: 1–64 characters.
pub const STORE_ID_MAX: usize = 64;
/// `payerId`: 1–128 characters.
pub const PAYER_ID_MAX: usize = 128;
/// `returnUrl`: at most 2048 characters.
pub const RETURN_URL_MAX: usize = 2048;
/// `confirmationCode`: 1–32 characters.
pub const CONFIRMATION_CODE_MAX: usize = 32;
/// `quantity`: 1–1000 (a product may allow fewer).
pub const QUANTITY_MAX: u32 = 1000;
/// The largest amount: 2^53 − 1.
pub const MAX_AMOUNT: u64 = 9_007_199_254_740_991;
/// Largest `extraProperties`, as compact JSON text.
pub const MAX_EXTRA_BYTES: usize = 16 * 1024;
/// `X-Request-Id` kept when it is 1–128 visible ASCII characters.
pub const REQUEST_ID: &str = "^[!-~]{1,128}$";

/// Unicode White_Space, what Rust's `str::trim` removes, as a class body.
const WHITE_SPACE: &str = r"\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000";

/// A string with at least one character that is not white space (the
/// path segments and `transactionId`: empty or blank is refused).
pub static NOT_BLANK: LazyLock<String> = LazyLock::new(|| format!("[^{WHITE_SPACE}]"));

/// `referenceNo` at initiate: no control character (Unicode Cc, which
/// holds the ASCII white space and U+0085), and no white space at either
/// end. Lengths and `.`/`..` are separate rules (`maxLength`, `not`).
pub static REFERENCE_NO: LazyLock<String> = LazyLock::new(|| {
    let edge = r"[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]";
    let inner = r"[^\x00-\x1f\x7f-\x9f]";
    format!("^{edge}(?:{inner}*{edge})?$")
});

/// A UUID in its hyphenated text form, any letter case (`merchantId`).
pub const UUID: &str =
    "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$";

/// A port, 0–65535.
const PORT: &str =
    "(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})";
/// An IPv4 address in dotted-quad form.
const IPV4: &str = r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
/// A host name whose last label starts with a letter (a last label of
/// digits would be read as an IPv4 number by URL parsers).
const HOST_NAME: &str = r"(?:[A-Za-z0-9-]+\.)*[A-Za-z][A-Za-z0-9-]*";
/// The characters a path, query or fragment may hold: RFC 3986 unreserved,
/// sub-delims, `:`, `@`, `/`, `?` and `%`, and non-ASCII characters of the
/// Basic Multilingual Plane from U+00A0 (an IRI's; URL parsers
/// percent-encode them).
const URL_CHARS: &str = r"[A-Za-z0-9._~!$&'()*+,;=:@/?% -퟿-�-]";

/// An IPv6 address in brackets, loosely (hex digits, colons and dots, at
/// least one colon): the URL parse that follows the pattern checks it.
const IPV6: &str = r"\[[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*\]";

/// `returnUrl`: an absolute http or https URL (at most
/// [`RETURN_URL_MAX`] characters; the scheme in any letter case, as URLs
/// have it): a host name, an IPv4 address or an IPv6 one in brackets, an
/// optional port, then an optional path, query and fragment of URL
/// characters. Written without inline flags, so JSON Schema's (ECMA 262)
/// dialect reads it too.
pub static RETURN_URL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "^[Hh][Tt][Tt][Pp][Ss]?://(?:{HOST_NAME}|{IPV4}|{IPV6})(?::{PORT})?(?:/{URL_CHARS}*)?(?:\\?{URL_CHARS}*)?(?:#{URL_CHARS}*)?$"
    )
});

fn compiled(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the rule patterns are valid (unit-tested)")
}

static RETURN_URL_RE: LazyLock<Regex> = LazyLock::new(|| compiled(&RETURN_URL));

/// Whether `text` matches [`RETURN_URL`].
pub fn is_return_url(text: &str) -> bool {
    text.chars().count() <= RETURN_URL_MAX && RETURN_URL_RE.is_match(text)
}

/// The UUID `text` is in hyphenated form ([`UUID`]), if it is one. The
/// only form of 36 characters `uuid` parses is the hyphenated one (a test
/// holds this to the pattern), so no regex runs on a request's way (about
/// 500 instructions an initiate).
pub fn uuid(text: &str) -> Option<uuid::Uuid> {
    if text.len() == 36 {
        uuid::Uuid::try_parse(text).ok()
    } else {
        None
    }
}

/// Codes `iso_currency` marks superseded that ISO 4217's list one still
/// carries as active: the bolívar soberano, `VES` (928), stays Venezuela's
/// currency beside `VED` (926), which ISO added for the 2021
/// redenomination.
const STILL_ACTIVE: [&str; 1] = ["VES"];

/// The active ISO 4217 currencies `iso_currency` knows (with a minor-unit
/// exponent, not superseded, or in [`STILL_ACTIVE`]), by code: what
/// `currencyCode` accepts. A
/// table made once: `Currency::from_code` compares a code with each of
/// its codes in turn, about 600 instructions an initiate (BENCHMARKS.md).
/// It is made from the numeric codes 000–999 (a `match` each), not by
/// asking `from_code` for every three letters (17,576 linear searches: 30 ms
/// in a debug build, paid by every `payments` command that checks a
/// currency); a test holds the two ways equal.
static ACTIVE_CURRENCIES: LazyLock<BTreeMap<String, iso_currency::Currency>> =
    LazyLock::new(|| {
        (0u16..1000)
            .filter_map(iso_currency::Currency::from_numeric)
            .filter(|currency| is_active(*currency))
            .map(|currency| (currency.code().to_owned(), currency))
            .collect()
    });

/// Whether `currency` is one `currencyCode` accepts: with a minor-unit
/// exponent, and not superseded (but for [`STILL_ACTIVE`]).
fn is_active(currency: iso_currency::Currency) -> bool {
    let superseded = currency.is_superseded().is_some() && !STILL_ACTIVE.contains(&currency.code());
    !superseded && currency.exponent().is_some()
}

/// Whether `code` is an ISO 4217 code in use that has no minor unit
/// (`XAU`, `XAG`, `XDR`, `XSU`, `XUA`, `XTS`...): active in ISO's list,
/// yet `currencyCode` refuses it, since an amount in minor units cannot be
/// paid in it.
pub fn has_no_minor_unit(code: &str) -> bool {
    iso_currency::Currency::from_code(code).is_some_and(|currency| {
        currency.exponent().is_none()
            && (currency.is_superseded().is_none() || STILL_ACTIVE.contains(&currency.code()))
    })
}

/// The active currency whose code is `code` (upper case), if any.
pub fn active_currency(code: &str) -> Option<iso_currency::Currency> {
    ACTIVE_CURRENCIES.get(code).copied()
}

/// Every active ISO 4217 code, in order: the codes `currencyCode` accepts.
pub fn currency_codes() -> Vec<String> {
    ACTIVE_CURRENCIES.keys().cloned().collect()
}

/// Every assigned ISO 3166-1 alpha-2 code: the codes `countryCode` accepts.
pub fn country_codes() -> Vec<String> {
    letters(2).filter(|code| is_country_code(code)).collect()
}

/// Whether `code` is an assigned ISO 3166-1 alpha-2 code, upper case
/// (`iso_country` also maps `""` to its `Unspecified`: hence the length).
pub fn is_country_code(code: &str) -> bool {
    code.len() == 2 && code.parse::<iso_country::Country>().is_ok()
}

fn letters(n: u32) -> impl Iterator<Item = String> {
    (0..26u32.pow(n)).map(move |mut i| {
        let mut code = vec![b'A'; n as usize];
        for slot in code.iter_mut().rev() {
            *slot = b'A' + (i % 26) as u8;
            i /= 26;
        }
        String::from_utf8(code).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_in_rusts_dialect() {
        for pattern in [REQUEST_ID, &NOT_BLANK, &REFERENCE_NO, UUID, &RETURN_URL] {
            compiled(pattern);
        }
    }

    /// The table made from the numeric codes is the one every three
    /// letters asked of `from_code` gives: no active currency shares its
    /// number with another that hides it.
    #[test]
    fn the_currency_table_is_every_active_code() {
        let by_letters: Vec<String> = letters(3)
            .filter(|code| iso_currency::Currency::from_code(code).is_some_and(is_active))
            .collect();
        assert_eq!(currency_codes(), by_letters);
    }

    #[test]
    fn the_code_lists_are_the_iso_ones() {
        let currencies = currency_codes();
        assert!(currencies.contains(&"MYR".to_owned()) && currencies.contains(&"KWD".to_owned()));
        assert!(!currencies.contains(&"AAA".to_owned()));
        assert!(currencies.len() > 150, "{}", currencies.len());
        // Both of Venezuela's codes are active; the superseded ones are not.
        for (code, active) in [("VES", true), ("VED", true), ("VEF", false)] {
            assert_eq!(currencies.contains(&code.to_owned()), active, "{code}");
            assert_eq!(active_currency(code).is_some(), active, "{code}");
        }
        assert_eq!(active_currency("VES").and_then(|c| c.exponent()), Some(2));
        let countries = country_codes();
        assert_eq!(countries.len(), 249);
        assert!(countries.contains(&"MY".to_owned()) && !countries.contains(&"AA".to_owned()));
    }

    #[test]
    fn codes_without_a_minor_unit_are_known_but_not_accepted() {
        for code in ["XAU", "XAG", "XDR", "XSU", "XUA", "XTS"] {
            assert!(has_no_minor_unit(code), "{code}");
            assert!(active_currency(code).is_none(), "{code}");
        }
        for code in ["MYR", "JPY", "VEF", "AAA", "xau", ""] {
            assert!(!has_no_minor_unit(code), "{code}");
        }
    }

    #[test]
    fn return_urls_are_http_with_a_host_a_browser_can_reach() {
        for good in [
            "https://shop.example/back?order=17#top",
            "http://127.0.0.1:44417/return?order=17",
            "http://localhost",
            "HTTPS://Shop.Example/b".to_lowercase().as_str(),
            "https://a-b.c-d.example:65535/x/y;z?q=%20&r=1",
            "https://shop.example/café?q=ünï#✓",
            // A URL's scheme is in any letter case (RFC 3986 3.1), and a
            // host may be an IPv6 address (a test shop on [::1]).
            "HTTP://shop.example",
            "Https://shop.example/back",
            "https://[::1]/",
            "http://[::1]:8080/back?order=1",
            "http://[2001:db8::7]/",
        ] {
            assert!(is_return_url(good), "{good}");
            assert!(url::Url::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "javascript:alert(1)",
            "/relative",
            "//shop.example/x",
            "ftp://shop.example",
            "https://",
            "https://shop.example:65536",
            "https://1.2.3.4.5",
            "https://shop example",
            "https://shop.example/a b",
            "https://shop_example.com",
            "https://[]/",
            "https://[shop.example]/",
            "https://[::1/",
        ] {
            assert!(!is_return_url(bad), "{bad}");
        }
    }

    #[test]
    fn uuids_are_hyphenated_in_any_letter_case() {
        let id = "01930000-0000-7000-8000-00000000000a";
        assert!(uuid(id).is_some());
        assert!(uuid(&id.to_uppercase()).is_some());
        for bad in [
            "{01930000-0000-7000-8000-00000000000a}",
            "0193000000007000800000000000000a",
            "",
        ] {
            assert!(uuid(bad).is_none(), "{bad}");
        }
    }

    proptest::proptest! {
        #[test]
        fn uuid_is_the_pattern(
            text in "[0-9a-fA-F{}:-]{30,40}|urn:uuid:[0-9a-f-]{36}|[0-9a-fA-FgG-]{36}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-fA-F]{12}\\n?",
        ) {
            let pattern = compiled(UUID);
            proptest::prop_assert_eq!(uuid(&text).is_some(), pattern.is_match(&text), "{}", text);
        }
    }
}
