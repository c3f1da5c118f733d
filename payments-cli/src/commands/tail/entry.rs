//! One entry of a journal as `tail` reads it (the mock's request, or the
//! proxy's exchange: one lenient shape for both), kept with its JSON
//! exactly as the server wrote it (what `-o json` prints), and the filters
//! the server does not apply.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::value::RawValue;

/// One finding of a proxy's exchange.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Finding {
    pub rule: String,
    pub level: String,
}

/// The fields `tail` reads, from either server; anything else is only
/// printed (in the JSON, as it came).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Wire {
    seq: Option<u64>,
    /// The mock's (virtual) time of arrival.
    at: Option<String>,
    /// The proxy's time of arrival.
    time: Option<String>,
    method: Option<String>,
    path: Option<String>,
    status: Option<u16>,
    error_code: Option<String>,
    request_id: Option<String>,
    fault: Option<String>,
    body: Option<String>,
    verdict: Option<String>,
    findings: Vec<Finding>,
    reference_no: Option<String>,
    transaction_id: Option<String>,
}

/// One entry of a journal.
#[derive(Debug)]
pub struct Entry {
    /// As the server wrote it.
    pub raw: Box<RawValue>,
    pub seq: u64,
    /// RFC 3339, as the server wrote it.
    pub time: Option<String>,
    pub method: String,
    pub path: String,
    /// The answer's status; none when the mock reset the connection on
    /// purpose.
    pub status: Option<u16>,
    pub error_code: Option<String>,
    pub request_id: Option<String>,
    /// The fault the mock applied.
    pub fault: Option<String>,
    /// The request body (the mock's journal).
    pub body: Option<String>,
    /// The proxy's verdict and findings.
    pub verdict: Option<String>,
    pub findings: Vec<Finding>,
    /// What the proxy knows of the transaction.
    pub reference_no: Option<String>,
    pub transaction_id: Option<String>,
}

impl Entry {
    /// Reads an item of a page.
    ///
    /// # Errors
    ///
    /// What is wrong with it: not an object of the journal's shape, or no
    /// `seq`.
    pub fn read(raw: Box<RawValue>) -> Result<Self, String> {
        // (serde would read a struct from an array too.)
        if !raw.get().trim_start().starts_with('{') {
            return Err("an entry that is not an object".to_owned());
        }
        let wire: Wire = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
        let seq = wire.seq.ok_or("an entry without its seq")?;
        Ok(Self {
            seq,
            time: wire.at.or(wire.time),
            method: wire.method.unwrap_or_default(),
            path: wire.path.unwrap_or_default(),
            status: wire.status,
            error_code: wire.error_code,
            request_id: wire.request_id,
            fault: wire.fault,
            body: wire.body,
            verdict: wire.verdict,
            findings: wire.findings,
            reference_no: wire.reference_no,
            transaction_id: wire.transaction_id,
            raw,
        })
    }
}

/// The most transactions `--reference-no` follows (a reference has one;
/// this bounds what a hostile journal can make it hold).
const FOLLOWED_IDS: usize = 1000;

/// The filters the server does not apply: `--status`, `--reference-no`,
/// and `--path` where the server has none (the proxy).
#[derive(Debug, Default)]
pub struct Filter {
    pub path: Option<String>,
    pub status: Option<u16>,
    pub reference: Option<String>,
    /// Transactions of the reference: those a confirm of it named (and,
    /// through the proxy, those its exchanges named).
    ids: HashSet<String>,
}

impl Filter {
    /// The filters of the command line.
    #[must_use]
    pub fn new(path: Option<String>, status: Option<u16>, reference: Option<String>) -> Self {
        Self {
            path,
            status,
            reference,
            ids: HashSet::new(),
        }
    }

    /// Whether `entry` is shown. Entries must be given in order: what a
    /// confirm of the reference names is followed in later ones.
    pub fn keeps(&mut self, entry: &Entry) -> bool {
        if self.path.as_ref().is_some_and(|p| *p != entry.path) {
            return false;
        }
        if self.status.is_some() && entry.status != self.status {
            return false;
        }
        match self.reference.clone() {
            None => true,
            Some(reference) => self.about(entry, &reference),
        }
    }

    /// Whether `entry` is about `reference`: it names it (the proxy's
    /// `referenceNo`, an initiate's or a confirm's body, a status read by
    /// reference's path), or it names a transaction of it (a status read
    /// by id, a confirm) that an earlier entry tied to it.
    fn about(&mut self, entry: &Entry, reference: &str) -> bool {
        let body = entry.body.as_deref().and_then(body_fields);
        let (body_reference, body_id) = body.unwrap_or_default();
        let path = read_path(&entry.path);
        let names_it = entry.reference_no.as_deref() == Some(reference)
            || body_reference.as_deref() == Some(reference)
            || matches!(&path, Some(ReadPath::ByReference(r)) if r == reference);
        let named_id = entry.transaction_id.clone().or(body_id).or(match path {
            Some(ReadPath::ById(id)) => Some(id),
            _ => None,
        });
        if names_it {
            if let Some(id) = named_id
                && self.ids.len() < FOLLOWED_IDS
            {
                self.ids.insert(id);
            }
            return true;
        }
        named_id.is_some_and(|id| self.ids.contains(&id))
    }
}

/// A path segment percent-decoded (`%2F` is `/`), lossy where the bytes
/// are not UTF-8; a `%` without two hex digits stays as it is.
fn decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push(u8::try_from(high * 16 + low).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `referenceNo` and `transactionId` of a JSON body, when it is an object.
fn body_fields(body: &str) -> Option<(Option<String>, Option<String>)> {
    if !body.trim_start().starts_with('{') {
        return None;
    }
    let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(body).ok()?;
    let text = |name: &str| object.get(name)?.as_str().map(str::to_owned);
    Some((text("referenceNo"), text("transactionId")))
}

/// A status read's path: the id or the reference it names, decoded.
#[derive(Debug, PartialEq, Eq)]
enum ReadPath {
    ById(String),
    ByReference(String),
}

/// The interface's two status paths (`/api/payments/{id}/status`,
/// `/api/payments/reference/{ref}/status`, one segment each).
fn read_path(path: &str) -> Option<ReadPath> {
    let inner = path
        .strip_prefix("/api/payments/")?
        .strip_suffix("/status")?;
    match inner.strip_prefix("reference/") {
        Some(raw) if !raw.contains('/') => Some(ReadPath::ByReference(decode(raw))),
        Some(_) => None,
        None if !inner.contains('/') && !inner.is_empty() => Some(ReadPath::ById(decode(inner))),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(json: &str) -> Entry {
        let raw = RawValue::from_string(json.to_owned()).expect("JSON");
        Entry::read(raw).expect("an entry")
    }

    #[test]
    fn both_shapes_are_read_and_the_raw_kept() {
        let mock = entry(
            r#"{"seq":7,"at":"2026-11-22T08:15:30.123Z","method":"POST","path":"/api/payments/initiate","query":null,"status":null,"errorCode":null,"requestId":"r-1","fault":"reset","faultRule":null,"replica":"a","headers":{},"body":"{}"}"#,
        );
        assert_eq!(mock.seq, 7);
        assert_eq!(mock.status, None);
        assert_eq!(mock.fault.as_deref(), Some("reset"));
        assert!(mock.raw.get().contains("\"replica\":\"a\""));
        let proxy = entry(
            r#"{"seq":8,"time":"2026-11-22T08:15:30Z","method":"GET","path":"/x","status":500,"verdict":"violation","findings":[{"rule":"envelope.shape","level":"violation"}],"referenceNo":"R1"}"#,
        );
        assert_eq!(proxy.time.as_deref(), Some("2026-11-22T08:15:30Z"));
        assert_eq!(proxy.findings[0].rule, "envelope.shape");
        assert!(Entry::read(RawValue::from_string("{}".into()).expect("JSON")).is_err());
        assert!(Entry::read(RawValue::from_string("[1]".into()).expect("JSON")).is_err());
    }

    #[test]
    fn segments_are_percent_decoded() {
        assert_eq!(decode("INV%2F1%20a"), "INV/1 a");
        assert_eq!(decode("%E2%82%AC"), "€");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("%FF"), "\u{fffd}");
    }

    #[test]
    fn status_paths_are_read() {
        assert_eq!(
            read_path("/api/payments/reference/INV%2F1/status"),
            Some(ReadPath::ByReference("INV/1".into()))
        );
        assert_eq!(
            read_path("/api/payments/abc/status"),
            Some(ReadPath::ById("abc".into()))
        );
        assert_eq!(read_path("/api/payments/a/b/status"), None);
        assert_eq!(read_path("/api/payments//status"), None);
        assert_eq!(read_path("/api/payments/initiate"), None);
    }

    #[test]
    fn a_reference_follows_its_transaction_from_the_confirm_on() {
        let mut filter = Filter::new(None, None, Some("INV-1".into()));
        let initiate = entry(
            r#"{"seq":1,"method":"POST","path":"/api/payments/initiate","body":"{\"referenceNo\":\"INV-1\"}"}"#,
        );
        let other = entry(
            r#"{"seq":2,"method":"POST","path":"/api/payments/initiate","body":"{\"referenceNo\":\"INV-2\"}"}"#,
        );
        let by_id_before = entry(r#"{"seq":3,"method":"GET","path":"/api/payments/t-1/status"}"#);
        let confirm = entry(
            r#"{"seq":4,"method":"POST","path":"/api/payments/confirm","body":"{\"transactionId\":\"t-1\",\"referenceNo\":\"INV-1\"}"}"#,
        );
        let by_id = entry(r#"{"seq":5,"method":"GET","path":"/api/payments/t-1/status"}"#);
        let by_reference =
            entry(r#"{"seq":6,"method":"GET","path":"/api/payments/reference/INV-1/status"}"#);
        let kept: Vec<u64> = [initiate, other, by_id_before, confirm, by_id, by_reference]
            .iter()
            .filter(|e| filter.keeps(e))
            .map(|e| e.seq)
            .collect();
        assert_eq!(kept, [1, 4, 5, 6]);
    }

    #[test]
    fn status_and_path_filter_exactly() {
        let mut filter = Filter::new(Some("/a".into()), Some(404), None);
        assert!(filter.keeps(&entry(r#"{"seq":1,"path":"/a","status":404}"#)));
        assert!(!filter.keeps(&entry(r#"{"seq":2,"path":"/a","status":400}"#)));
        assert!(!filter.keeps(&entry(r#"{"seq":3,"path":"/a/","status":404}"#)));
        assert!(!filter.keeps(&entry(r#"{"seq":4,"path":"/a"}"#)));
    }
}
