//! The W3C Trace Context `traceparent` header, as the mock and the proxy
//! read it from a caller (CONTRACT section 21): the caller's trace id and
//! the id of the span that sent the request, so a journal entry or an
//! exchange can be found from the caller's trace.
//!
//! Read by hand: the mock's light build takes no OpenTelemetry crate (the
//! SDK's propagator would bring it), and the small crates that parse this
//! header alone are unmaintained (`trace-context` 0.1.0, 2019). The rules
//! are those of <https://www.w3.org/TR/trace-context/#traceparent-header>:
//! a malformed header is ignored, never an error.
//!
//! ```
//! use payments_serve::trace::TraceParent;
//!
//! let read = TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
//!     .expect("a valid header");
//! assert_eq!(read.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
//! assert_eq!(read.span_id(), "00f067aa0ba902b7");
//! assert!(read.sampled());
//! assert_eq!(TraceParent::parse("00-0000-bad"), None);
//! ```

use std::fmt::Write as _;

/// The header's name.
pub const HEADER: &str = "traceparent";

/// A `traceparent` read from a request: its trace id and parent (span) id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    trace: [u8; 16],
    span: [u8; 8],
    flags: u8,
}

/// `n` bytes of lowercase hex from `text` (uppercase is invalid).
fn hex<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    if text.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in text.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

fn to_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

impl TraceParent {
    /// Reads a header's value; `None` when it is malformed: a version of
    /// `ff` or not two hex digits, ids of the wrong length, uppercase or
    /// all zeros, a version `00` header with anything after its flags, or
    /// a later version's without a `-` before what it adds (what a later
    /// version adds is ignored, as the specification asks).
    pub fn parse(value: &str) -> Option<Self> {
        let bytes = value.trim_matches([' ', '\t']).as_bytes();
        if bytes.len() < 55 || bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let [version] = hex::<1>(&bytes[..2])?;
        match version {
            0xff => return None,
            0 if bytes.len() != 55 => return None,
            _ if bytes.len() > 55 && bytes[55] != b'-' => return None,
            _ => {}
        }
        let trace = hex::<16>(&bytes[3..35])?;
        let span = hex::<8>(&bytes[36..52])?;
        let [flags] = hex::<1>(&bytes[53..55])?;
        if trace == [0; 16] || span == [0; 8] {
            return None;
        }
        Some(Self { trace, span, flags })
    }

    /// Reads the first `traceparent` of `headers` (a request with several
    /// is malformed: ignored).
    pub fn from_headers(headers: &axum::http::HeaderMap) -> Option<Self> {
        // A value that is not text is a malformed header: "" never parses.
        Self::from_pairs(
            headers
                .get_all(HEADER)
                .iter()
                .map(|v| (HEADER, v.to_str().unwrap_or_default())),
        )
    }

    /// Reads the one `traceparent` among `headers` (names in any case), as
    /// a journal or a recording keeps them; none when it is missing,
    /// repeated or malformed.
    pub fn from_pairs<'a>(headers: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<Self> {
        let mut sent = headers
            .into_iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case(HEADER));
        match (sent.next(), sent.next()) {
            (Some((_, value)), None) => Self::parse(value),
            _ => None,
        }
    }

    /// The trace id: 32 lowercase hex digits.
    pub fn trace_id(&self) -> String {
        to_hex(&self.trace)
    }

    /// The id of the caller's span that sent the request: 16 lowercase hex
    /// digits.
    pub fn span_id(&self) -> String {
        to_hex(&self.span)
    }

    /// Whether the caller records this trace (the `sampled` flag).
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The trace id's bytes.
    pub fn trace_bytes(&self) -> [u8; 16] {
        self.trace
    }

    /// The span id's bytes.
    pub fn span_bytes(&self) -> [u8; 8] {
        self.span
    }

    /// A span's ids as a header would carry them; `None` when either is
    /// all zeros (no span).
    pub fn from_bytes(trace: [u8; 16], span: [u8; 8], sampled: bool) -> Option<Self> {
        if trace == [0; 16] || span == [0; 8] {
            return None;
        }
        Some(Self {
            trace,
            span,
            flags: u8::from(sampled),
        })
    }

    /// The header's value in version `00`, as this crate sends it (the
    /// flags a later version would add are not carried on).
    ///
    /// ```
    /// use payments_serve::trace::TraceParent;
    ///
    /// let value = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    /// let read = TraceParent::parse(value).expect("a valid header");
    /// assert_eq!(read.to_header(), value);
    /// ```
    pub fn to_header(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            self.trace_id(),
            self.span_id(),
            self.flags & 1
        )
    }
}

/// The span a server serves a request in, when it exports its spans
/// (`--otlp-endpoint`, feature `otlp`): put into the request's extensions
/// by the span layer, so what the request sends on (the contract proxy's
/// call upstream) names it as its parent and one trace runs through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServingSpan(pub TraceParent);

/// A call a server makes of its own while serving a request (the contract
/// proxy's to its upstream), as its span of kind client describes it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The span it is made under: the request's [`ServingSpan`].
    pub parent: TraceParent,
    /// The request's method.
    pub method: &'a axum::http::Method,
    /// `http` or `https`.
    pub scheme: &'a str,
    /// The host called.
    pub host: &'a str,
    /// The port called.
    pub port: u16,
    /// The path called (no query). Where it names a capability (a payment
    /// page's token) the span leaves it out.
    pub path: &'a str,
}

/// A call's span, open until the call is answered or fails; dropped
/// without either (the caller went away first), it ends as `cancelled`.
pub trait CallSpan: Send {
    /// The `traceparent` the call sends: this span's (`None` only for a
    /// span without valid ids, which then sends the server span's).
    fn traceparent(&self) -> Option<TraceParent>;
    /// The call was answered with `status`.
    fn answered(self: Box<Self>, status: u16);
    /// The call failed before an answer; `error_type` names how
    /// (`timeout`, `connect`, …).
    fn failed(self: Box<Self>, error_type: &'static str);
}

/// What opens [`CallSpan`]s (the span export, feature `otlp`).
pub trait StartCall: Send + Sync {
    /// A span for `call`, a child of `call.parent`.
    fn start(&self, call: Call<'_>) -> Box<dyn CallSpan>;
}

/// Spans for the calls a server makes while serving a request: put into
/// the request's extensions by the span layer of a server that exports
/// spans and makes calls of its own (the contract proxy), so one trace
/// shows the caller's span, the server's, its call, and the service's.
#[derive(Clone)]
pub struct CallSpans(pub std::sync::Arc<dyn StartCall>);

impl std::fmt::Debug for CallSpans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallSpans")
    }
}

/// The faults a server injected into an answer, in the journal's words
/// (`internal-error`, `delay=200`…): put into the response's extensions,
/// so the request's span names them (`payments.fault`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFault(pub String);

/// Where a server names the fault of a request it will never answer (an
/// injected `reset` or `hang`): there is no response to carry an
/// [`InjectedFault`], so the request's span, ended as `aborted`, reads it
/// from here. Put into a request's extensions by the span layer, only when
/// spans are exported.
#[derive(Debug, Clone, Default)]
pub struct UnansweredFault(std::sync::Arc<std::sync::OnceLock<String>>);

impl UnansweredFault {
    /// Names the fault (the journal's words); the first name stays.
    pub fn name(&self, fault: &str) {
        let _ = self.0.set(fault.to_owned());
    }

    /// The fault named, if any.
    pub fn named(&self) -> Option<&str> {
        self.0.get().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_header_gives_its_ids() {
        let read = TraceParent::parse(GOOD).expect("valid");
        assert_eq!(read.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(read.span_id(), "00f067aa0ba902b7");
        assert!(read.sampled());
        let unsampled = TraceParent::parse(&GOOD.replace("-01", "-00")).expect("valid");
        assert!(!unsampled.sampled());
        // Spaces and tabs around a value are the field's, not the header's.
        assert!(TraceParent::parse(&format!(" {GOOD}\t")).is_some());
        // A later version may add fields after a dash.
        let later = format!("cc{}-what-comes-later", &GOOD[2..]);
        assert_eq!(
            TraceParent::parse(&later).map(|t| t.trace_id()),
            Some(read.trace_id())
        );
    }

    #[test]
    fn malformed_headers_are_ignored() {
        let long = "a".repeat(10_000);
        for bad in [
            "",
            "00",
            &GOOD[..54],
            &format!("{GOOD}-"),
            &format!("{GOOD}0"),
            &GOOD.replace("00-4b", "ff-4b"),
            &GOOD.replace("00-4b", "0g-4b"),
            &GOOD.to_uppercase(),
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b\u{e9}-0",
            &long,
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_span_written_as_a_header_reads_back() {
        let read = TraceParent::parse(GOOD).expect("valid");
        let made = TraceParent::from_bytes(read.trace_bytes(), read.span_bytes(), true);
        assert_eq!(made, Some(read));
        assert_eq!(read.to_header(), GOOD);
        let unsampled =
            TraceParent::from_bytes(read.trace_bytes(), read.span_bytes(), false).expect("ids");
        assert!(unsampled.to_header().ends_with("-00"));
        assert_eq!(TraceParent::parse(&unsampled.to_header()), Some(unsampled));
        assert_eq!(TraceParent::from_bytes([0; 16], [1; 8], true), None);
        assert_eq!(TraceParent::from_bytes([1; 16], [0; 8], true), None);
        // A later version's flags are not carried on: only `sampled`.
        let later = TraceParent::parse(&format!("cc{}ff", &GOOD[2..53])).expect("a later version");
        assert!(later.to_header().starts_with("00-") && later.to_header().ends_with("-01"));
    }

    #[test]
    fn two_headers_are_none() {
        let mut headers = axum::http::HeaderMap::new();
        headers.append(HEADER, GOOD.parse().expect("a value"));
        assert!(TraceParent::from_headers(&headers).is_some());
        headers.append(HEADER, GOOD.parse().expect("a value"));
        assert_eq!(TraceParent::from_headers(&headers), None);
        let mut bytes = axum::http::HeaderMap::new();
        bytes.append(
            HEADER,
            axum::http::HeaderValue::from_bytes(b"00-\xff").expect("opaque bytes"),
        );
        assert_eq!(TraceParent::from_headers(&bytes), None);
        let kept = [("Content-Type", "application/json"), ("TraceParent", GOOD)];
        assert!(TraceParent::from_pairs(kept).is_some(), "any case");
        assert_eq!(
            TraceParent::from_pairs([(HEADER, GOOD), (HEADER, GOOD)]),
            None
        );
        assert_eq!(TraceParent::from_pairs([("x-other", GOOD)]), None);
    }
}
