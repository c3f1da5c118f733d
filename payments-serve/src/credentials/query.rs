//! Which query parameters carry credentials, and a query with their values
//! replaced in place: the one rule the mock's journal and the contract
//! proxy's recording both follow.
//!
//! A key sent as `?api_key=…`, `?token=…` or `?access_token=…` is a
//! credential as surely as one in a header. A parameter's name is read as
//! a header's is ([`is_credential_header`]), decoded first (`%5F`, `+`),
//! every character that is not a letter or a digit separating its words,
//! and so does a capital after a small letter (`accessToken`, `apiKey`):
//! `api_key`, `api%5Fkey`, `token[]`, `X-Amz-Signature`, `password`,
//! `client.secret` are credentials; `pageToken`, `idempotency_key` and
//! `referenceNo` are not. Parameters are separated by `&`, and by `;` as
//! some servers read a query too (`x=1;api_key=…`, [`query_params`]).

use std::borrow::Cow;

use super::is_credential_header;

/// What a replaced value reads as.
pub const REDACTED: &str = "[redacted]";

/// One parameter of a query that has a value: its name decoded (`+` a
/// space, escapes decoded, lossily), its value as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryParam<'a> {
    /// The name, decoded.
    pub name: Cow<'a, str>,
    /// The value as sent (never empty).
    pub value: &'a str,
    /// Where `value` starts in the query.
    at: usize,
}

impl QueryParam<'_> {
    /// Whether the parameter's name says it carries a credential (the
    /// module's rule).
    pub fn is_credential(&self) -> bool {
        names_a_credential(&self.name)
    }
}

/// The parameters of `query` (without its `?`) that have a value, in
/// order: a pair without `=`, or with nothing after it, holds nothing to
/// hide and is left out.
///
/// Pairs are split at `&`, and at a `;` that a pair with `=` follows
/// (some servers split at `;` too, as HTML 4 asked): `x=1;api_key=k` is
/// `x` and `api_key`. A `;` followed by no `=` before the next separator
/// stays in the value before it (`token=abc;def`: `abc;def`), so a value
/// is never cut short where no server would see a new parameter.
pub fn query_params(query: &str) -> impl Iterator<Item = QueryParam<'_>> {
    pairs(query).filter_map(move |(start, pair)| {
        let (name, value) = pair.split_once('=')?;
        (!value.is_empty()).then(|| QueryParam {
            name: decoded(name),
            value,
            at: start + name.len() + 1,
        })
    })
}

/// The pairs of `query`, each with where it starts: split at every `&`,
/// and at a `;` whose next piece (up to the next `&` or `;`) holds a `=`.
fn pairs(query: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = query.as_bytes();
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let mut end = start;
        loop {
            match bytes.get(end) {
                None => {
                    done = true;
                    break;
                }
                Some(b'&') => break,
                Some(b';') if piece_has_value(&bytes[end + 1..]) => break,
                Some(_) => end += 1,
            }
        }
        // `&` and `;` are ASCII: every cut is at a character's boundary.
        let pair = (start, query.get(start..end).unwrap_or_default());
        start = end + 1;
        Some(pair)
    })
}

/// Whether the piece at the start of `rest` (up to its first `&` or `;`)
/// holds a `=`.
fn piece_has_value(rest: &[u8]) -> bool {
    rest.iter()
        .take_while(|&&b| b != b'&' && b != b';')
        .any(|&b| b == b'=')
}

/// `query` with the value of each parameter `replace` gives a
/// replacement for written as that replacement, and everything else (the
/// names, the other values, their order, each `&`) byte for byte as sent.
/// Borrowed when nothing is replaced.
pub fn rewrite_query<'a, F>(query: &'a str, mut replace: F) -> Cow<'a, str>
where
    F: FnMut(&QueryParam<'_>) -> Option<Cow<'static, str>>,
{
    let mut rewritten = String::new();
    // Up to here `query` is copied into `rewritten` (when it is begun).
    let mut copied = 0;
    for param in query_params(query) {
        if let Some(replacement) = replace(&param) {
            rewritten.push_str(&query[copied..param.at]);
            rewritten.push_str(&replacement);
            copied = param.at + param.value.len();
        }
    }
    if copied == 0 {
        return Cow::Borrowed(query);
    }
    rewritten.push_str(&query[copied..]);
    Cow::Owned(rewritten)
}

/// `query` with the value of each parameter whose name says it carries a
/// credential ([`QueryParam::is_credential`]) replaced by `[redacted]`,
/// the names, the other values and the order as sent.
///
/// ```
/// use payments_serve::redacted_query;
///
/// assert_eq!(
///     redacted_query("merchantId=m&api_key=sk_1&token%5B%5D=t"),
///     "merchantId=m&api_key=[redacted]&token%5B%5D=[redacted]"
/// );
/// assert_eq!(redacted_query("pageToken=p"), "pageToken=p");
/// ```
pub fn redacted_query(query: &str) -> Cow<'_, str> {
    rewrite_query(query, |param| {
        param.is_credential().then_some(Cow::Borrowed(REDACTED))
    })
}

/// `text` as a form encodes it, decoded: `+` a space, each `%XY` its
/// byte, the bytes read as UTF-8 (lossily). Borrowed when it has neither.
pub fn form_decoded(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if !bytes.iter().any(|&b| b == b'%' || b == b'+') {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escape = (bytes[at] == b'%')
            .then(|| escaped(&bytes[at + 1..]))
            .flatten();
        match (bytes[at], escape) {
            (_, Some(b)) => {
                out.push(b);
                at += 2;
            }
            (b'+', None) => out.push(b' '),
            (b, None) => out.push(b),
        }
        at += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// The byte two hexadecimal digits at the start of `bytes` stand for.
fn escaped(bytes: &[u8]) -> Option<u8> {
    let hex = |b: u8| char::from(b).to_digit(16);
    match bytes {
        [hi, lo, ..] => u8::try_from(hex(*hi)? << 4 | hex(*lo)?).ok(),
        _ => None,
    }
}

/// A parameter's name, decoded.
fn decoded(name: &str) -> Cow<'_, str> {
    form_decoded(name)
}

/// Whether a decoded parameter name says it carries a credential: its
/// words (split at anything but a letter or a digit, and before a capital
/// after a small letter) read as a header's name.
fn names_a_credential(name: &str) -> bool {
    let mut words = String::with_capacity(name.len() + 4);
    let mut previous_small = false;
    for c in name.chars() {
        if c.is_alphanumeric() {
            if previous_small && c.is_uppercase() {
                words.push('_');
            }
            words.push(c);
            previous_small = c.is_lowercase() || c.is_ascii_digit();
        } else {
            words.push('_');
            previous_small = false;
        }
    }
    is_credential_header(&words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_named_as_credentials_are_redacted_in_place() {
        for (sent, kept) in [
            ("merchantId=abc", "merchantId=abc"),
            ("", ""),
            ("a=1&b=2", "a=1&b=2"),
            (
                "api_key=sk_1&token=t0k&access_token=at",
                "api_key=[redacted]&token=[redacted]&access_token=[redacted]",
            ),
            (
                "merchantId=m&apiKey=s&x=1&accessToken=a",
                "merchantId=m&apiKey=[redacted]&x=1&accessToken=[redacted]",
            ),
            // Percent-encoded and `+` names, as a form encodes them.
            (
                "api%5Fkey=s&x%2Dauth%2Dtoken=t",
                "api%5Fkey=[redacted]&x%2Dauth%2Dtoken=[redacted]",
            ),
            ("api+key=s", "api+key=[redacted]"),
            (
                "client.secret=s&auth[token]=t",
                "client.secret=[redacted]&auth[token]=[redacted]",
            ),
            (
                "token[]=a&password=p&X-Amz-Signature=abc&X-Amz-Date=1",
                "token[]=[redacted]&password=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Date=1",
            ),
            // The whole value, `=` and escapes in it included.
            ("sig=a%3Db%3D=c&next=1", "sig=[redacted]&next=1"),
            // Repeated, empty, without a value, at the ends.
            ("token=a&token=b", "token=[redacted]&token=[redacted]"),
            ("token=&token", "token=&token"),
            ("&token=a&", "&token=[redacted]&"),
            // Names that carry no credential, by the headers' words.
            (
                "pageToken=p&idempotency_key=i&cache-key=c&referenceNo=r",
                "pageToken=p&idempotency_key=i&cache-key=c&referenceNo=r",
            ),
            // A bad escape or a name that is not UTF-8 is read lossily.
            ("%zz=1&%FF=2&token%=3", "%zz=1&%FF=2&token%=[redacted]"),
            // `;` separates too (HTML 4), every other byte as sent.
            ("x=1;api_key=SEMIsecret123", "x=1;api_key=[redacted]"),
            ("api_key=C;token=D", "api_key=[redacted];token=[redacted]"),
            (
                "a=1;b=2&token=t;page=3;;passwd=p",
                "a=1;b=2&token=[redacted];page=3;;passwd=[redacted]",
            ),
            (";token=a;", ";token=[redacted]"),
            // A `;` no pair with `=` follows stays in the value.
            ("token=abc;def&x=1", "token=[redacted]&x=1"),
            ("token=abc;def;x=1", "token=[redacted];x=1"),
            ("note=a;b", "note=a;b"),
        ] {
            assert_eq!(redacted_query(sent), kept, "{sent}");
        }
        assert!(matches!(redacted_query("merchantId=abc"), Cow::Borrowed(_)));
    }

    #[test]
    fn session_password_and_one_time_names_are_credentials_the_interface_names_are_not() {
        for name in [
            "sessionid",
            "sessionId",
            "session_id",
            "jsessionid",
            "JSESSIONID",
            "PHPSESSID",
            "sessid",
            "sid",
            "SID",
            "pwd",
            "passwd",
            "otp",
            "otpCode",
            "user_pwd",
        ] {
            let query = format!("{name}=v");
            assert_eq!(
                redacted_query(&query),
                format!("{name}=[redacted]"),
                "{name}"
            );
        }
        // The interface's own names (`payerId` is the proxy's token, not
        // the journal's `[redacted]`), a page's place, and words that only
        // hold a credential's letters.
        for name in [
            "merchantId",
            "referenceNo",
            "transactionId",
            "productCode",
            "storeId",
            "deviceId",
            "payerId",
            "pageToken",
            "page_token",
            "nextPageToken",
            "monkey",
            "tokenized",
            "side",
            "inside",
            "sidebar",
            "otpx",
        ] {
            let query = format!("{name}=v");
            assert_eq!(redacted_query(&query), query, "{name}");
        }
    }

    #[test]
    fn a_rewrite_keeps_what_it_does_not_replace_byte_for_byte() {
        let query = "a=%5B1%5D&confirmation%43ode=123456&b=x+y&payerId=p%2B1";
        let rewritten = rewrite_query(query, |param| match &*param.name {
            "confirmationCode" => Some(Cow::Borrowed(REDACTED)),
            "payerId" => Some(Cow::Owned(format!("T({})", form_decoded(param.value)))),
            _ => None,
        });
        assert_eq!(
            rewritten,
            "a=%5B1%5D&confirmation%43ode=[redacted]&b=x+y&payerId=T(p+1)"
        );
    }

    #[test]
    fn form_text_is_decoded_leniently() {
        assert_eq!(form_decoded("a+b%20c%2b"), "a b c+");
        assert_eq!(form_decoded("100%"), "100%");
        assert_eq!(form_decoded("%4"), "%4");
        assert_eq!(form_decoded("%e9%"), "\u{fffd}%");
        assert!(matches!(form_decoded("plain"), Cow::Borrowed(_)));
    }
}
