//! [`OtlpEndpoint`]: the `--otlp-endpoint URL` of the two binaries, read
//! once and checked, its errors never quoting it.

/// The path of the traces of an OTLP/HTTP receiver.
pub const TRACES_PATH: &str = "/v1/traces";

/// Longest endpoint accepted, in bytes.
const MAX_LEN: usize = 2048;

/// Where spans go: the URL of an OTLP/HTTP receiver's traces.
///
/// Given as the receiver's base URL (`http://localhost:4318`, or with a
/// path prefix `https://gateway.example/otel`), to which [`TRACES_PATH`]
/// is added; a URL that already ends in `/v1/traces` is taken as it is
/// (the traces URL itself, as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` gives
/// it). `http` or `https`, a host, no credentials (a collector's token goes
/// in `OTEL_EXPORTER_OTLP_HEADERS`), no query or fragment, no control
/// character, at most 2,048 bytes.
///
/// ```
/// use payments_serve::otlp::OtlpEndpoint;
///
/// let base: OtlpEndpoint = "http://localhost:4318".parse().expect("a base URL");
/// assert_eq!(base.traces_url(), "http://localhost:4318/v1/traces");
/// let full: OtlpEndpoint = "http://collector:4318/v1/traces".parse().expect("a traces URL");
/// assert_eq!(full.traces_url(), "http://collector:4318/v1/traces");
/// assert!("localhost:4318".parse::<OtlpEndpoint>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpEndpoint(url::Url);

impl OtlpEndpoint {
    /// The URL spans are posted to.
    pub fn traces_url(&self) -> &str {
        self.0.as_str()
    }
}

impl std::fmt::Display for OtlpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.as_str())
    }
}

/// What every refusal ends with.
const EXAMPLE: &str =
    "an absolute http or https URL of an OTLP/HTTP receiver, e.g. http://localhost:4318";

impl std::str::FromStr for OtlpEndpoint {
    type Err = String;

    /// Reads an endpoint; the error says what is wrong without repeating
    /// the value (it may hold a secret).
    fn from_str(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err(format!("empty; {EXAMPLE}"));
        }
        if text.len() > MAX_LEN {
            return Err(format!("longer than {MAX_LEN} bytes; {EXAMPLE}"));
        }
        // The URL standard drops tabs and line breaks silently: refused
        // here instead, as every other control character.
        if text.chars().any(char::is_control) {
            return Err(format!("holds a control character; {EXAMPLE}"));
        }
        let mut url = url::Url::parse(text).map_err(|e| format!("not a URL ({e}); {EXAMPLE}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("not http or https; {EXAMPLE}"));
        }
        if !url.has_host() || url.host_str() == Some("") {
            return Err(format!("no host; {EXAMPLE}"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(
                "must hold no credentials: give a collector's token as a header in OTEL_EXPORTER_OTLP_HEADERS"
                    .to_owned(),
            );
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(format!("must have no query or fragment; {EXAMPLE}"));
        }
        let path = url.path().trim_end_matches('/');
        let traces = if path.ends_with(TRACES_PATH) {
            path.to_owned()
        } else {
            format!("{path}{TRACES_PATH}")
        };
        url.set_path(&traces);
        // The exporter reads it again as an `http::Uri`.
        if url.as_str().parse::<axum::http::Uri>().is_err() {
            return Err(format!("not a URL the exporter can send to; {EXAMPLE}"));
        }
        Ok(Self(url))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<String, String> {
        text.parse::<OtlpEndpoint>()
            .map(|e| e.traces_url().to_owned())
    }

    #[test]
    fn a_base_url_gets_the_traces_path() {
        for (given, url) in [
            ("http://localhost:4318", "http://localhost:4318/v1/traces"),
            ("http://localhost:4318/", "http://localhost:4318/v1/traces"),
            (
                "https://gw.example/otel/",
                "https://gw.example/otel/v1/traces",
            ),
            (
                "http://127.0.0.1:4318/v1/traces",
                "http://127.0.0.1:4318/v1/traces",
            ),
            (
                "http://127.0.0.1:4318/v1/traces/",
                "http://127.0.0.1:4318/v1/traces",
            ),
            ("http://[::1]:4318", "http://[::1]:4318/v1/traces"),
            ("HTTP://LOCALHOST:4318", "http://localhost:4318/v1/traces"),
        ] {
            assert_eq!(read(given).as_deref(), Ok(url), "{given}");
        }
    }

    #[test]
    fn malformed_empty_huge_and_hostile_urls_are_refused_without_being_quoted() {
        let huge = format!("http://localhost:4318/{}", "a".repeat(5000));
        for bad in [
            "",
            " ",
            "localhost:4318",
            "4318",
            "ftp://localhost:4318",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "http://",
            "http://user:s3cret@localhost:4318",
            "http://s3cret@localhost:4318",
            "http://localhost:4318?token=s3cret",
            "http://localhost:4318#s3cret",
            "http://local\nhost:4318",
            "http://localhost:4318/\u{0}s3cret",
            "http://localhost:99999",
            &huge,
        ] {
            let refused = read(bad).expect_err(bad);
            assert!(!refused.contains("s3cret"), "{refused}");
            assert!(!refused.contains("aaaa"), "{refused}");
        }
    }
}
