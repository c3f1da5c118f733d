//! Redirect-based payments (CONTRACT section 13): payment page tokens, the
//! page's address under the public base URL, and the return address the
//! payer's browser is sent to. Every URL is built with the `url` crate,
//! never by pasting strings.

use rand::RngExt as _;
use rand::distr::Alphanumeric;
use url::Url;

use crate::store::Record;

/// Characters in a payment page token.
pub const TOKEN_LEN: usize = 32;

/// A fresh payment page token: 32 characters of `A-Z a-z 0-9` (about 190
/// random bits), URL-safe as it is. It comes from `rand`'s thread RNG, a
/// CSPRNG (ChaCha12) seeded from the operating system, and has nothing to do
/// with the transactionId: knowing one never reveals the other.
pub(crate) fn new_token() -> Box<str> {
    rand::rng()
        .sample_iter(Alphanumeric)
        .take(TOKEN_LEN)
        .map(char::from)
        .collect::<String>()
        .into_boxed_str()
}

/// Whether `text` has a token's shape; anything else names no page (and is
/// answered like an unknown token, without a look-up).
pub fn is_token(text: &str) -> bool {
    text.len() == TOKEN_LEN && text.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Checks a public base URL (`--public-url`): absolute `http` or `https`
/// with a host, and nothing a page address cannot carry on from (no query,
/// fragment or credentials).
///
/// # Errors
///
/// A message naming the problem.
pub fn check_public_url(url: &Url) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
        return Err(format!(
            "public URL {url} must be an absolute http or https URL with a host"
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("public URL {url} must have no query or fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("public URL must not carry credentials".to_owned());
    }
    Ok(())
}

/// `<public base>/pay/<token>`: the base's own path (a prefix behind a
/// proxy) is kept.
pub(crate) fn payment_url(public_base: &Url, token: &str) -> String {
    let mut url = public_base.clone();
    // A base that cannot be a base (`mailto:`) was refused by
    // `check_public_url`; then the address is the base itself.
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().extend(["pay", token]);
    }
    url.into()
}

/// The return address: the transaction's `returnUrl` with `transactionId`,
/// `referenceNo` and `status` appended as query parameters, after any
/// query it already has; its fragment stays at the end. `None` when the
/// transaction has no `returnUrl` (only redirect products require one).
///
/// The values are percent-encoded with a space as `%20`, not the form
/// encoding's `+`: CONTRACT section 13 says percent-encoded, and a return
/// handler that decodes with `decodeURIComponent` (or any plain
/// percent-decoder) would read a `+` literally.
pub fn return_address(record: &Record, status: &str) -> Option<String> {
    let return_url = record.fields.rare.as_ref()?.return_url.as_deref()?;
    let mut url = Url::parse(return_url).ok()?;
    let mut id = uuid::Uuid::encode_buffer();
    let ours = [
        (
            "transactionId",
            &*record.id.hyphenated().encode_lower(&mut id),
        ),
        ("referenceNo", &*record.fields.reference_no),
        ("status", status),
    ]
    .map(|(name, value)| format!("{name}={}", percent_encoded(value)))
    .join("&");
    let query = match url.query() {
        Some(theirs) if !theirs.is_empty() => format!("{theirs}&{ours}"),
        _ => ours,
    };
    url.set_query(Some(&query));
    Some(url.into())
}

/// `value` as a query value: the form encoding of `url::form_urlencoded`
/// (every byte but `A-Z a-z 0-9 * - . _` escaped; a `+` in the value is
/// `%2B`), with its `+` for a space written `%20`.
fn percent_encoded(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::transaction::RareFields;

    fn record_returning_to(return_url: &str, reference: &str) -> Record {
        let mut record = crate::store::test_support::sample();
        record.id = uuid::Uuid::from_u128(0x0193_0000_0000_7000_8000_0000_0000_0017);
        record.fields.reference_no = reference.into();
        record.fields.rare = Some(std::sync::Arc::new(RareFields {
            return_url: Some(return_url.into()),
            ..RareFields::default()
        }));
        record
    }

    #[test]
    fn the_return_address_keeps_the_query_and_puts_the_fragment_last() {
        let record = record_returning_to("https://shop.example/back?order=17#top", "INV/17");
        assert_eq!(
            return_address(&record, "SUCCESSFUL").as_deref(),
            Some(
                "https://shop.example/back?order=17&transactionId=01930000-0000-7000-8000-000000000017\
                 &referenceNo=INV%2F17&status=SUCCESSFUL#top"
            )
        );
    }

    #[test]
    fn hostile_references_are_encoded_never_pasted() {
        let record = record_returning_to("http://127.0.0.1:9/r", "a&status=SUCCESSFUL#x ü");
        let address = return_address(&record, "FAILED").expect("an address");
        let url = Url::parse(&address).expect("a URL");
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert_eq!(
            pairs,
            [
                ("transactionId".to_owned(), record.id.to_string()),
                (
                    "referenceNo".to_owned(),
                    "a&status=SUCCESSFUL#x ü".to_owned()
                ),
                ("status".to_owned(), "FAILED".to_owned()),
            ]
        );
        assert_eq!(url.fragment(), None);
        // Percent-encoded, a space as %20 (a plain percent-decoder reads it
        // right), a plus as %2B.
        assert!(
            address.ends_with("&referenceNo=a%26status%3DSUCCESSFUL%23x%20%C3%BC&status=FAILED"),
            "{address}"
        );
        let record = record_returning_to("https://shop.example/back?", "1+1 = 2");
        assert_eq!(
            return_address(&record, "SUCCESSFUL").as_deref(),
            Some(
                "https://shop.example/back?transactionId=01930000-0000-7000-8000-000000000017\
                 &referenceNo=1%2B1%20%3D%202&status=SUCCESSFUL"
            )
        );
    }

    #[test]
    fn no_return_url_no_address() {
        let mut record = crate::store::test_support::sample();
        record.fields.rare = None;
        assert_eq!(return_address(&record, "FAILED"), None);
    }

    #[test]
    fn tokens_are_long_random_and_url_safe() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert!(is_token(&a) && is_token(&b));
        assert!(!is_token(&a[1..]));
        assert!(!is_token(&format!("{}-", &a[1..])));
        assert!(!is_token(&format!("{}é", &a[2..])));
    }

    #[test]
    fn the_payment_url_keeps_a_path_prefix() {
        let base = |s: &str| Url::parse(s).expect("a URL");
        assert_eq!(
            payment_url(&base("http://127.0.0.1:8080"), "T0K"),
            "http://127.0.0.1:8080/pay/T0K"
        );
        assert_eq!(
            payment_url(&base("https://dev.example/mock/"), "T0K"),
            "https://dev.example/mock/pay/T0K"
        );
        assert!(check_public_url(&base("https://dev.example/mock")).is_ok());
        for bad in [
            "ftp://dev.example",
            "https://dev.example/?a=1",
            "https://dev.example/#f",
            "https://u:p@dev.example/",
            "mailto:someone@example.com",
        ] {
            assert!(check_public_url(&base(bad)).is_err(), "{bad}");
        }
    }
}
