//! JUnit XML of the exchanges (CONTRACT section 20: `--junit FILE`,
//! `/_proxy/report?format=junit`), for the test reports CI systems show: a
//! `<testsuite>` per endpoint, a `<testcase>` per exchange (its request's
//! method and path template and its number as the name, its duration as
//! `time`), a `<failure>` per `violation` finding (`type` the rule id,
//! `message` the finding's); `undocumented` and `client` findings as
//! lines of the testcase's `<system-out>` (with `--strict`, an
//! undocumented finding is a failure too). An exchange the proxy did not
//! judge is `<skipped>`.
//!
//! Written with quick-xml's `Writer`, which escapes every attribute and
//! text; characters XML 1.0 cannot carry at all (most control
//! characters) are written as `\u{…}`.

use std::borrow::Cow;
use std::io::{self, Write};

use payments_interface::Endpoint;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use crate::rules::{Finding, Level};
use crate::trail::{CaseView, Cases, Trail, request_of};

/// The suites, in the document's order; `None` is `other` (written only
/// when such an exchange passed).
const SUITES: [Option<Endpoint>; 5] = [
    Some(Endpoint::Initiate),
    Some(Endpoint::Confirm),
    Some(Endpoint::StatusById),
    Some(Endpoint::StatusByReference),
    None,
];

/// What a suite's (or the whole file's) attributes count.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    tests: u64,
    failures: u64,
    skipped: u64,
    milliseconds: f64,
}

impl Counts {
    fn add(&mut self, case: &CaseView<'_>, strict: bool) {
        self.tests += 1;
        self.failures += u64::from(case.findings.iter().any(|f| fails(f, strict)));
        self.skipped += u64::from(case.unchecked);
        self.milliseconds += case.duration_ms;
    }

    fn merge(&mut self, other: &Self) {
        self.tests += other.tests;
        self.failures += other.failures;
        self.skipped += other.skipped;
        self.milliseconds += other.milliseconds;
    }

    /// `tests`, `failures`, `errors`, `skipped`, `time` as attribute texts.
    fn attributes(&self) -> [(&'static str, String); 5] {
        [
            ("tests", self.tests.to_string()),
            ("failures", self.failures.to_string()),
            ("errors", "0".to_owned()),
            ("skipped", self.skipped.to_string()),
            ("time", seconds(self.milliseconds)),
        ]
    }
}

/// Whether a finding fails its testcase: a violation, and with `strict`
/// an undocumented finding.
fn fails(finding: &Finding, strict: bool) -> bool {
    finding.level == Level::Violation || (strict && finding.level == Level::Undocumented)
}

/// Milliseconds as JUnit's seconds.
fn seconds(milliseconds: f64) -> String {
    format!("{:.6}", milliseconds / 1000.0)
}

/// `text` with the characters XML 1.0 cannot carry (even escaped)
/// written as `\u{…}`.
fn xml_text(text: &str) -> Cow<'_, str> {
    let forbidden = |c: char| matches!(c, '\0'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}');
    if !text.contains(forbidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if forbidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

impl Trail {
    /// Writes the exchanges as JUnit XML: a `<testsuite>` per endpoint, a
    /// `<testcase>` per exchange, a `<failure>` per violation (with
    /// `strict`, per undocumented finding too), the other findings as the
    /// testcase's `<system-out>` lines.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_junit(&self, out: impl Write, strict: bool) -> io::Result<()> {
        write_junit(self, out, strict)
    }
}

/// [`Trail::write_junit`] of the exchanges `cases` gives (read once for
/// the counts, then once per suite).
pub(crate) fn write_junit(cases: &impl Cases, out: impl Write, strict: bool) -> io::Result<()> {
    let mut counts = [Counts::default(); SUITES.len()];
    cases.each(
        |_| true,
        |case| {
            let suite = SUITES
                .iter()
                .position(|s| *s == case.operation)
                .unwrap_or(SUITES.len() - 1);
            counts[suite].add(case, strict);
            Ok::<_, io::Error>(())
        },
    )?;
    let mut all = Counts::default();
    for suite in &counts {
        all.merge(suite);
    }
    let mut writer = Writer::new_with_indent(io::BufWriter::new(out), b' ', 2);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let attributes = all.attributes();
    writer
        .create_element("testsuites")
        .with_attribute(("name", "payments-contract-proxy"))
        .with_attributes(attributes.iter().map(|(k, v)| (*k, v.as_str())))
        .write_inner_content(|writer| {
            for (suite, counts) in SUITES.iter().zip(&counts) {
                if suite.is_none() && counts.tests == 0 {
                    continue;
                }
                write_suite(cases, writer, *suite, counts, strict)?;
            }
            Ok(())
        })?;
    let mut out = writer.into_inner();
    out.write_all(b"\n")?;
    out.flush()
}

fn write_suite<W: Write>(
    cases: &impl Cases,
    writer: &mut Writer<W>,
    suite: Option<Endpoint>,
    counts: &Counts,
    strict: bool,
) -> io::Result<()> {
    let attributes = counts.attributes();
    writer
        .create_element("testsuite")
        .with_attribute(("name", suite.map_or("other", Endpoint::name)))
        .with_attributes(attributes.iter().map(|(k, v)| (*k, v.as_str())))
        .write_inner_content(|writer| {
            if let Some(operation) = suite {
                writer
                    .create_element("properties")
                    .write_inner_content(|writer| {
                        writer
                            .create_element("property")
                            .with_attribute(("name", "request"))
                            .with_attribute(("value", request_of(operation)))
                            .write_empty()?;
                        Ok(())
                    })?;
            }
            cases.each(
                |case| case.operation == suite,
                |case| write_case(writer, case, strict),
            )
        })?;
    Ok(())
}

fn write_case<W: Write>(
    writer: &mut Writer<W>,
    case: &CaseView<'_>,
    strict: bool,
) -> io::Result<()> {
    let name = format!("{} #{}", xml_text(case.request()), case.seq);
    let classname = format!("contract.{}", case.endpoint());
    let time = seconds(case.duration_ms);
    let element = writer.create_element("testcase").with_attributes([
        ("name", name.as_str()),
        ("classname", classname.as_str()),
        ("time", time.as_str()),
    ]);
    let mut output = String::new();
    for finding in case.findings.iter().filter(|f| !fails(f, strict)) {
        output.push_str(&format!(
            "{} {}: {}\n",
            finding.level.as_str(),
            finding.rule,
            xml_text(&finding.message)
        ));
    }
    let failing = case.findings.iter().any(|f| fails(f, strict));
    if !failing && output.is_empty() && !case.unchecked {
        element.write_empty()?;
        return Ok(());
    }
    element.write_inner_content(|writer| {
        for finding in case.findings.iter().filter(|f| fails(f, strict)) {
            let message = xml_text(&finding.message);
            writer
                .create_element("failure")
                .with_attribute(("type", finding.rule))
                .with_attribute(("message", message.as_ref()))
                .write_text_content(BytesText::new(&format!(
                    "{} {}: {message}",
                    finding.level.as_str(),
                    finding.rule
                )))?;
        }
        if case.unchecked {
            writer
                .create_element("skipped")
                .with_attribute((
                    "message",
                    "unchecked: not judged (the proxy's own answer, a body too large or compressed, \
                     or a request to none of the document's endpoints)",
                ))
                .write_empty()?;
        }
        if !output.is_empty() {
            writer
                .create_element("system-out")
                .write_text_content(BytesText::new(&output))?;
        }
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::exchange::Endpoint as Route;
    use crate::rules::Verdict;
    use crate::rules::test_support::exchange;

    fn finding(rule: &'static str, level: Level, message: &str) -> Finding {
        Finding {
            rule,
            level,
            message: message.to_owned(),
        }
    }

    /// A recording may say anything of a duration: what no exchange takes
    /// (infinite, not a number, negative, past a day) is written as 0,
    /// never `time="inf"`, which JUnit's readers refuse.
    #[test]
    fn a_duration_no_exchange_takes_is_written_as_zero() {
        let mut trail = Trail::default();
        let path = "/api/payments/t1/status";
        for ms in [f64::INFINITY, f64::NAN, -5.0, 1e300, 86_400_001.0, 2500.0] {
            let mut e = exchange("GET", path, json!(null), 404, json!({}));
            e.duration_ms = ms;
            trail.push(&e, &Route::of("GET", path), Verdict::Pass, &[], None);
        }
        let mut out = Vec::new();
        trail.write_junit(&mut out, false).expect("written");
        let xml = String::from_utf8(out).expect("UTF-8");
        assert!(!xml.contains("inf") && !xml.contains("NaN"), "{xml}");
        assert!(xml.contains(r#"time="2.500000""#), "{xml}");
    }

    #[test]
    fn suites_cases_failures_and_output_lines() {
        let mut trail = Trail::default();
        let path = "/api/payments/t1/status";
        let mut e = exchange("GET", path, json!(null), 502, json!("<html>"));
        e.seq = 7;
        e.duration_ms = 1500.0;
        let findings = [
            finding(
                "envelope.shape",
                Level::Violation,
                "not JSON: <html> & \u{1}",
            ),
            finding("http.undocumented", Level::Undocumented, "HTTP 502"),
        ];
        trail.push(
            &e,
            &Route::of("GET", path),
            Verdict::Violation,
            &findings,
            None,
        );
        let other = exchange("DELETE", "/api/x", json!(null), 404, json!({}));
        trail.push(&other, &Route::Other, Verdict::Pass, &[], None);
        let mut own = exchange("POST", "/api/payments/initiate", json!({}), 502, json!({}));
        own.proxy_answer = true;
        trail.push(&own, &Route::Initiate, Verdict::Unchecked, &[], None);

        let mut out = Vec::new();
        trail.write_junit(&mut out, false).expect("written");
        let xml = String::from_utf8(out).expect("UTF-8");
        assert!(
            xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testsuites name="payments-contract-proxy" tests="3" failures="1" errors="0" skipped="1""#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testsuite name="statusById" tests="1" failures="1" errors="0" skipped="0" time="1.500000">"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testcase name="GET /api/payments/{transactionId}/status #7" classname="contract.statusById" time="1.500000">"#),
            "{xml}"
        );
        assert!(
            xml.contains(
                r#"<failure type="envelope.shape" message="not JSON: &lt;html&gt; &amp; \u{1}">"#
            ),
            "{xml}"
        );
        assert!(
            xml.contains("undocumented http.undocumented: HTTP 502"),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testsuite name="other" tests="1""#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testcase name="DELETE /api/x #1""#),
            "{xml}"
        );
        assert!(xml.contains("<skipped message=\"unchecked: "), "{xml}");
        assert!(
            !xml.contains('\u{1}'),
            "no control character reaches the XML"
        );
        // Well-formed: every element read back to its end.
        let mut reader = quick_xml::Reader::from_str(&xml);
        let mut depth = 0_i32;
        loop {
            match reader.read_event().expect("well-formed XML") {
                quick_xml::events::Event::Start(_) => depth += 1,
                quick_xml::events::Event::End(_) => depth -= 1,
                quick_xml::events::Event::Eof => break,
                _ => {}
            }
        }
        assert_eq!(depth, 0);

        let mut strict = Vec::new();
        trail.write_junit(&mut strict, true).expect("written");
        let strict = String::from_utf8(strict).expect("UTF-8");
        assert!(
            strict.contains(r#"<failure type="http.undocumented" message="HTTP 502">"#),
            "{strict}"
        );
    }
}
