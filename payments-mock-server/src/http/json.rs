//! JSON written by hand for the responses on the hot paths (status look-ups,
//! initiate), byte for byte what `serde_json` writes for the same envelope.
//!
//! Serializing the status envelope through serde cost ~5.5k instructions of
//! a ~43k-instruction look-up (BENCHMARKS.md): per-field map machinery, a
//! byte-by-byte escape loop over every string, a `String` per timestamp
//! and a parsed `Number` for the amount. Here the fixed parts are literals,
//! strings that need no escaping (nearly all) are copied whole, timestamps
//! and amounts are written from integers, and the buffer is sized once.
//! Unit tests compare every writer with serde over hostile strings, and
//! `handlers::fast_json_tests` compares whole envelopes.

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use chrono::{DateTime, Datelike, Timelike, Utc};
use uuid::Uuid;

use crate::domain::clock::format_time;

/// A JSON text being written.
pub(crate) struct JsonOut {
    buf: Vec<u8>,
}

impl JsonOut {
    /// An empty text with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            buf: Vec::with_capacity(capacity),
        }
    }

    /// JSON text written by the caller (keys, punctuation, literals).
    pub(crate) fn raw(&mut self, text: &str) {
        self.buf.extend_from_slice(text.as_bytes());
    }

    /// A JSON string, escaped exactly as `serde_json` escapes it.
    pub(crate) fn string(&mut self, text: &str) {
        if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            self.buf.reserve(text.len() + 2);
            self.buf.push(b'"');
            self.buf.extend_from_slice(text.as_bytes());
            self.buf.push(b'"');
        } else {
            // Rare: let serde_json do the escaping. Writing a `str` into a
            // `Vec` cannot fail.
            let _ = serde_json::to_writer(&mut self.buf, text);
        }
    }

    /// A JSON string or `null`.
    pub(crate) fn opt_string(&mut self, text: Option<&str>) {
        match text {
            Some(text) => self.string(text),
            None => self.raw("null"),
        }
    }

    /// A UUID as its lower-case hyphenated string.
    pub(crate) fn uuid(&mut self, id: Uuid) {
        let mut text = Uuid::encode_buffer();
        let text = id.hyphenated().encode_lower(&mut text);
        self.buf.push(b'"');
        self.buf.extend_from_slice(text.as_bytes());
        self.buf.push(b'"');
    }

    /// A timestamp as [`format_time`] writes it, as a JSON string.
    pub(crate) fn time(&mut self, t: DateTime<Utc>) {
        // The naive time once: each accessor of a `DateTime` works it out
        // again from the time and the zone's offset.
        let n = t.naive_utc();
        let year = n.year();
        let nanos = n.nanosecond();
        if !(0..=9999).contains(&year) || nanos >= 1_000_000_000 {
            // Years chrono writes with a sign, and leap seconds.
            self.string(&format_time(t));
            return;
        }
        // `year` is in 0..=9999, so the cast is exact.
        let year = year.unsigned_abs();
        let mut text = *b"\"0000-00-00T00:00:00.000Z\"";
        digits(&mut text[1..5], year);
        digits(&mut text[6..8], n.month());
        digits(&mut text[9..11], n.day());
        digits(&mut text[12..14], n.hour());
        digits(&mut text[15..17], n.minute());
        digits(&mut text[18..20], n.second());
        digits(&mut text[21..24], nanos / 1_000_000);
        self.buf.extend_from_slice(&text);
    }

    /// A timestamp or `null`.
    pub(crate) fn opt_time(&mut self, t: Option<DateTime<Utc>>) {
        match t {
            Some(t) => self.time(t),
            None => self.raw("null"),
        }
    }

    /// An integer.
    pub(crate) fn u64(&mut self, value: u64) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
    }

    /// `minor / 10^exponent` as a JSON number with exactly `exponent`
    /// fraction digits, as [`payments_interface::money::major_text`] writes it.
    pub(crate) fn major(&mut self, minor: u64, exponent: u16) {
        let mut itoa = itoa::Buffer::new();
        let digits = itoa.format(minor).as_bytes();
        let e = usize::from(exponent);
        if e == 0 {
            self.buf.extend_from_slice(digits);
            return;
        }
        if digits.len() <= e {
            self.buf.extend_from_slice(b"0.");
            self.buf.extend(std::iter::repeat_n(b'0', e - digits.len()));
            self.buf.extend_from_slice(digits);
        } else {
            let (int, frac) = digits.split_at(digits.len() - e);
            self.buf.extend_from_slice(int);
            self.buf.push(b'.');
            self.buf.extend_from_slice(frac);
        }
    }

    /// The text written so far.
    #[cfg(test)]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// A 200 response with this text as an `application/json` body.
    pub(crate) fn into_response(self) -> Response {
        // A boxed slice becomes `Bytes` without the second allocation that
        // a `Vec` with room to spare costs (its shared header), and the
        // shrink stays in place when the slack is small, as it is here.
        let mut response = Response::new(Body::from(Bytes::from(self.buf.into_boxed_slice())));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }
}

/// Writes `value` as zero-padded decimal digits filling `out`.
fn digits(out: &mut [u8], mut value: u32) {
    for slot in out.iter_mut().rev() {
        // `value % 10` is a single digit.
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use proptest::prelude::*;

    use super::*;
    use payments_interface::money::major_text;

    fn written(f: impl FnOnce(&mut JsonOut)) -> String {
        let mut out = JsonOut::with_capacity(0);
        f(&mut out);
        String::from_utf8(out.as_bytes().to_vec()).expect("UTF-8")
    }

    #[test]
    fn strings_are_escaped_as_serde_escapes_them() {
        for text in [
            "",
            "plain",
            "with \"quotes\" and \\ backslash",
            "tab\tnew\nline\rreturn\u{8}\u{c}",
            "\u{0}\u{1f}\u{7f}",
            "ünïcødé ✓ 🚀 /?#%",
            "</script>",
            "{\"pins\":[\"1234\"]}",
        ] {
            assert_eq!(
                written(|o| o.string(text)),
                serde_json::to_string(text).expect("a string"),
                "{text:?}"
            );
        }
        assert_eq!(written(|o| o.opt_string(None)), "null");
    }

    #[test]
    fn times_are_written_as_format_time_writes_them() {
        let cases = [
            Utc.timestamp_millis_opt(0).single(),
            Utc.timestamp_millis_opt(1_795_000_000_123).single(),
            Utc.with_ymd_and_hms(2026, 12, 31, 23, 59, 59).single(),
            Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).single(),
            Utc.with_ymd_and_hms(10000, 1, 1, 0, 0, 0).single(),
            Utc.with_ymd_and_hms(0, 1, 1, 0, 0, 0).single(),
            Utc.with_ymd_and_hms(-1, 1, 1, 0, 0, 0).single(),
            Some(DateTime::<Utc>::MAX_UTC),
            Some(DateTime::<Utc>::MIN_UTC),
        ];
        for t in cases.into_iter().map(|t| t.expect("a valid time")) {
            assert_eq!(
                written(|o| o.time(t)),
                serde_json::to_string(&format_time(t)).expect("a string"),
                "{t:?}"
            );
        }
        // A leap second (nanoseconds past 1e9).
        let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
            .and_then(|d| d.and_hms_nano_opt(23, 59, 59, 1_500_000_000))
            .expect("a leap second")
            .and_utc();
        assert_eq!(
            written(|o| o.time(leap)),
            serde_json::to_string(&format_time(leap)).expect("a string")
        );
        assert_eq!(written(|o| o.opt_time(None)), "null");
    }

    #[test]
    fn amounts_are_written_as_major_text_writes_them() {
        for (minor, e) in [
            (1, 0),
            (1, 2),
            (5, 2),
            (99, 2),
            (100, 2),
            (15000, 2),
            (1500, 3),
            (1, 4),
            (9_007_199_254_740_991, 2),
            (u64::MAX, 0),
            (u64::MAX, 4),
        ] {
            assert_eq!(
                written(|o| o.major(minor, e)),
                major_text(minor, e),
                "{minor} e{e}"
            );
        }
    }

    proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_escapes_it(text in any::<String>()) {
            prop_assert_eq!(
                written(|o| o.string(&text)),
                serde_json::to_string(&text).expect("a string")
            );
        }

        #[test]
        fn any_millisecond_time_is_written_as_format_time_writes_it(
            millis in -62_135_596_800_000i64..=253_402_300_799_999,
        ) {
            let t = Utc.timestamp_millis_opt(millis).single().expect("in range");
            prop_assert_eq!(
                written(|o| o.time(t)),
                serde_json::to_string(&format_time(t)).expect("a string")
            );
        }

        #[test]
        fn any_amount_is_written_as_major_text_writes_it(minor in any::<u64>(), e in 0u16..6) {
            prop_assert_eq!(written(|o| o.major(minor, e)), major_text(minor, e));
        }
    }
}
