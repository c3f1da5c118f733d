//! `tail`'s table: one line per entry, columns fixed when the first line
//! is printed (entries keep coming), fitted to the width (COMMANDS.md,
//! "Output"). Every column but the last has its width; the path is last
//! and takes what the line has left, shortened to fit when it must, so a
//! line never runs past the width (down to about 60 columns) and an
//! unusually wide value (a long error code or method, a seq that grew)
//! moves only the path of its own line, and is itself cut (with `…`) when
//! the path has nothing left to give.
//!
//! ```text
//! SEQ TIME     METHOD HTTP CODE                  REQUEST  PATH
//!  41 08:15:30 GET     404 TRANSACTION_NOT_FOUND 9e193d6f …/01937e1c…00c1/status
//!  42 08:15:31 POST    200 -                     b6916845 /api/payments/initiate
//! ```
//!
//! With `--proxy`, CODE is VERDICT, and an exchange with findings has a
//! second line naming their rules by level.

use unicode_width::UnicodeWidthStr as _;

use super::entry::Entry;
use super::path::fit_path;
use crate::output::{Style, printable};
use crate::text::printable_within;

/// The widths of the columns before the path, by what they hold.
const TIME: usize = 8;
const METHOD: usize = "METHOD".len();
const HTTP: usize = "HTTP".len();
/// `TRANSACTION_NOT_FOUND`: the longer codes (`TRANSACTION_ALREADY_CONFIRMED`)
/// are rarer and take room from their line's path.
const CODE: usize = "TRANSACTION_NOT_FOUND".len();
/// `undocumented`.
const VERDICT: usize = "undocumented".len();
/// The first characters of a request id.
const REQUEST: usize = 8;
/// The path never gets less than this, even when the line then runs past
/// the width.
const LEAST_PATH: usize = 12;
/// What a path keeps before a method wider than its column takes room
/// from it: an id's read (`…/01937e1c…00c1/status`) whole.
const PATH_BEFORE_METHOD: usize = 24;
/// Between columns: one space, as `ps` and `ls -l` have it, so that at 80
/// columns a line keeps the interface's paths whole (ids shortened).
const GAP: &str = " ";

/// How lines are drawn, decided once.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    style: Style,
    proxy: bool,
    seq: usize,
}

impl Layout {
    /// For entries numbered up to about ten times `seq_seen` (the highest
    /// seq known when the table starts).
    #[must_use]
    pub fn new(style: Style, proxy: bool, seq_seen: u64) -> Self {
        let digits = seq_seen.checked_ilog10().map_or(1, |d| d as usize + 1);
        Self {
            style,
            proxy,
            seq: (digits + 1).max("SEQ".len()),
        }
    }

    fn code_width(&self) -> usize {
        if self.proxy { VERDICT } else { CODE }
    }

    /// The header line.
    #[must_use]
    pub fn header(&self) -> String {
        let code = if self.proxy { "VERDICT" } else { "CODE" };
        let mut line = format!(
            "{:>seq$}{GAP}{:<TIME$}{GAP}{:<METHOD$}{GAP}{:>HTTP$}{GAP}{:<code_w$}{GAP}{:<REQUEST$}{GAP}PATH",
            "SEQ",
            "TIME",
            "METHOD",
            "HTTP",
            code,
            "REQUEST",
            seq = self.seq,
            code_w = self.code_width(),
        );
        line.push('\n');
        line
    }

    /// The line (or, for an exchange with findings, two lines) of `entry`.
    #[must_use]
    pub fn row(&self, entry: &Entry) -> String {
        let time = entry.time.as_deref().map_or_else(|| "-".to_owned(), clock);
        let status = entry
            .status
            .map_or_else(|| "-".to_owned(), |s| s.to_string());
        let code = if self.proxy {
            entry.verdict.clone().unwrap_or_else(|| "-".to_owned())
        } else {
            match (&entry.error_code, &entry.fault) {
                (Some(code), _) => code.clone(),
                (None, Some(fault)) => format!("fault:{fault}"),
                (None, None) => "-".to_owned(),
            }
        };
        let request = entry
            .request_id
            .as_deref()
            .filter(|id| !id.is_empty())
            .map_or_else(|| "-".to_owned(), |id| id.chars().take(REQUEST).collect());
        // What the line has beyond the columns' widths and the least
        // path: a seq that grew takes it first, then a code, then a method
        // wider than its column (which leaves the path its first
        // `PATH_BEFORE_METHOD` columns); past it, they are cut (with `…`).
        let seq = entry.seq.to_string();
        let fixed = self.seq + TIME + METHOD + HTTP + self.code_width() + REQUEST;
        let mut spare = self
            .style
            .width
            .saturating_sub(fixed + 6 * GAP.len() + LEAST_PATH)
            .saturating_sub(seq.len().saturating_sub(self.seq));
        let code = printable_within(&code, self.code_width() + spare);
        spare = spare.saturating_sub(code.width().saturating_sub(self.code_width()));
        let path_kept = printable(&entry.path)
            .width()
            .min(PATH_BEFORE_METHOD)
            .saturating_sub(LEAST_PATH);
        let method = printable_within(&entry.method, METHOD + spare.saturating_sub(path_kept));
        let cells = [
            (seq, self.seq, Align::Right),
            (printable(&time), TIME, Align::Left),
            (method, METHOD, Align::Left),
            (status, HTTP, Align::Right),
            (code, self.code_width(), Align::Left),
            (printable(&request), REQUEST, Align::Left),
        ];
        let mut line = String::new();
        let mut used = 0;
        for (n, (text, width, align)) in cells.iter().enumerate() {
            let shown = text.width();
            let pad = " ".repeat(width.saturating_sub(shown));
            let text = match n {
                3 => self.paint(text, http_colour(entry.status)),
                4 if self.proxy => self.paint(text, verdict_colour(text)),
                4 => self.paint(text, entry.status.and_then(|s| http_colour(Some(s)))),
                _ => text.clone(),
            };
            match align {
                Align::Right => {
                    line.push_str(&pad);
                    line.push_str(&text);
                }
                Align::Left => {
                    line.push_str(&text);
                    line.push_str(&pad);
                }
            }
            line.push_str(GAP);
            used += shown.max(*width) + GAP.len();
        }
        let room = self.style.width.saturating_sub(used).max(LEAST_PATH);
        line.push_str(&fit_path(&entry.path, room));
        let mut text = line.trim_end().to_owned();
        text.push('\n');
        if self.proxy && !entry.findings.is_empty() {
            let indent = " ".repeat(self.seq + GAP.len());
            let room = self.style.width.max(indent.len() + 20) - indent.len() - "↳ ".width();
            text.push_str(&format!(
                "{indent}↳ {}",
                printable_within(&findings(entry), room)
            ));
            text.push('\n');
        }
        text
    }

    /// `text` in `colour` when colour is on.
    fn paint(&self, text: &str, colour: Option<&str>) -> String {
        match colour {
            Some(code) if self.style.colour && text != "-" => {
                format!("\u{1b}[{code}m{text}\u{1b}[0m")
            }
            _ => text.to_owned(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Align {
    Left,
    Right,
}

/// Red for a server's failure, yellow for a refusal, green for a success.
fn http_colour(status: Option<u16>) -> Option<&'static str> {
    match status? {
        200..=299 => Some("32"),
        400..=499 => Some("33"),
        500..=599 => Some("31"),
        _ => None,
    }
}

fn verdict_colour(verdict: &str) -> Option<&'static str> {
    match verdict {
        "pass" => Some("32"),
        "undocumented" => Some("33"),
        "violation" => Some("31"),
        _ => None,
    }
}

/// `HH:MM:SS` (UTC) of an RFC 3339 time; the text itself (cut) when it is
/// not one.
fn clock(time: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(time) {
        Ok(at) => at
            .with_timezone(&chrono::Utc)
            .format("%H:%M:%S")
            .to_string(),
        Err(_) => time.chars().take(TIME).collect(),
    }
}

/// The findings by level, each rule once with how often it was found
/// (as received: the caller makes it printable):
/// `violation: envelope.shape, status.agree ×5; undocumented:
/// code.undocumented`.
fn findings(entry: &Entry) -> String {
    let mut levels: Vec<(&str, Vec<(&str, usize)>)> = Vec::new();
    for finding in &entry.findings {
        let rules = match levels.iter_mut().find(|(level, _)| *level == finding.level) {
            Some((_, rules)) => rules,
            None => {
                levels.push((&finding.level, Vec::new()));
                match levels.last_mut() {
                    Some((_, rules)) => rules,
                    None => continue,
                }
            }
        };
        match rules.iter_mut().find(|(rule, _)| *rule == finding.rule) {
            Some((_, count)) => *count += 1,
            None => rules.push((&finding.rule, 1)),
        }
    }
    levels
        .iter()
        .map(|(level, rules)| {
            let rules: Vec<String> = rules
                .iter()
                .map(|(rule, count)| match count {
                    1 => (*rule).to_owned(),
                    n => format!("{rule} ×{n}"),
                })
                .collect();
            format!("{level}: {}", rules.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    const ID: &str = "01937e1c-5b7a-7c1e-9a55-1c2b3d4e00c1";

    fn entry(json: &str) -> Entry {
        Entry::read(RawValue::from_string(json.to_owned()).expect("JSON")).expect("an entry")
    }

    fn layout(width: usize, proxy: bool) -> Layout {
        Layout::new(
            Style {
                colour: false,
                width,
            },
            proxy,
            42,
        )
    }

    #[test]
    fn lines_fit_80_columns_and_columns_line_up() {
        let layout = layout(80, false);
        let rows = [
            entry(&format!(
                r#"{{"seq":41,"at":"2026-11-22T08:15:30.123Z","method":"GET","path":"/api/payments/{ID}/status","status":404,"errorCode":"TRANSACTION_NOT_FOUND","requestId":"9e193d6f-a8a9-4a03-be36-9deb51bb505e"}}"#
            )),
            entry(
                r#"{"seq":42,"at":"2026-11-22T08:15:31Z","method":"POST","path":"/api/payments/initiate","status":200,"requestId":"b6916845-9c12-470b-848a-a74082f1128e"}"#,
            ),
            entry(
                r#"{"seq":43,"at":"2026-11-22T08:15:32Z","method":"POST","path":"/api/payments/confirm","status":400,"errorCode":"TRANSACTION_ALREADY_CONFIRMED","requestId":"r"}"#,
            ),
            entry(
                r#"{"seq":44,"at":"2026-11-22T08:15:33Z","method":"POST","path":"/api/payments/confirm","status":null,"fault":"reset","requestId":"r2"}"#,
            ),
        ];
        let header = layout.header();
        let lines: Vec<String> = rows.iter().map(|r| layout.row(r)).collect();
        for line in std::iter::once(&header).chain(&lines) {
            assert!(line.trim_end().width() <= 80, "{line}");
        }
        assert!(lines[0].contains("TRANSACTION_NOT_FOUND"), "{}", lines[0]);
        assert!(lines[0].contains(" 9e193d6f "), "{}", lines[0]);
        // 24 columns left: the prefix goes, the id keeps its ends.
        assert!(
            lines[0].trim_end().ends_with(" …/01937e1c…00c1/status"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].ends_with(" /api/payments/initiate\n"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].contains("TRANSACTION_ALREADY_CONFIRMED"),
            "{}",
            lines[2]
        );
        assert!(lines[3].contains("fault:reset"), "{}", lines[3]);
        assert!(
            lines[3].contains("    - fault:reset"),
            "no status: {}",
            lines[3]
        );
        let at = |line: &str, what: &str| line.find(what).expect(what);
        assert_eq!(at(&header, "HTTP") + 1, at(&lines[0], "404"));
        assert_eq!(at(&header, "CODE"), at(&lines[0], "TRANSACTION"));
        assert_eq!(at(&header, "PATH"), at(&lines[1], "/api/payments/initiate"));
        assert_eq!(at(&header, "TIME"), at(&lines[0], "08:15:30"));
    }

    #[test]
    fn a_long_method_or_code_is_cut_to_fit_the_line() {
        for proxy in [false, true] {
            let layout = layout(80, proxy);
            let method = "X".repeat(200);
            let line = layout.row(&entry(&format!(
                r#"{{"seq":1,"method":"{method}","path":"/api/payments/initiate","status":405,"errorCode":"{}","verdict":"{}"}}"#,
                "C".repeat(200),
                "V".repeat(200),
            )));
            assert!(line.trim_end().width() <= 80, "{line}");
            assert!(line.contains("X…"), "{line}");
            assert!(line.contains("C…") || line.contains("V…"), "{line}");
            // A method a little wider than its column keeps it whole.
            let line = layout.row(&entry(
                r#"{"seq":2,"method":"OPTIONS","path":"/api/payments/initiate","status":200}"#,
            ));
            assert!(line.contains(" OPTIONS "), "{line}");
        }
    }

    #[test]
    fn a_wide_terminal_shows_the_path_whole() {
        let layout = layout(200, false);
        let line = layout.row(&entry(&format!(
            r#"{{"seq":1,"method":"GET","path":"/api/payments/{ID}/status","status":200}}"#
        )));
        assert!(
            line.contains(&format!("/api/payments/{ID}/status")),
            "{line}"
        );
    }

    #[test]
    fn findings_go_on_a_second_line() {
        let layout = layout(80, true);
        let line = layout.row(&entry(
            r#"{"seq":3,"time":"2026-11-22T08:15:30Z","method":"GET","path":"/api/payments/x/status","status":500,"verdict":"violation","findings":[{"rule":"envelope.shape","level":"violation"},{"rule":"http.undocumented","level":"undocumented"},{"rule":"http.status","level":"violation"}]}"#,
        ));
        let lines: Vec<&str> = line.lines().collect();
        assert_eq!(lines.len(), 2, "{line}");
        assert!(lines[0].contains("violation"));
        assert_eq!(
            lines[1].trim_start(),
            "↳ violation: envelope.shape, http.status; undocumented: http.undocumented"
        );
        // A rule found five times is named once, with its count.
        let line = layout.row(&entry(
            r#"{"seq":4,"method":"GET","path":"/api/payments/x/status","status":200,"verdict":"violation","findings":[{"rule":"status.agree","level":"violation"},{"rule":"status.agree","level":"violation"},{"rule":"status.agree","level":"violation"},{"rule":"status.agree","level":"violation"},{"rule":"status.agree","level":"violation"}]}"#,
        ));
        assert_eq!(
            line.lines().nth(1).map(str::trim_start),
            Some("↳ violation: status.agree ×5")
        );
    }

    #[test]
    fn control_characters_are_escaped_and_colour_only_when_asked() {
        let mut layout = layout(80, false);
        let hostile = entry(
            r#"{"seq":1,"method":"GET\u001b[2J","path":"/api/\u001b[31m","status":404,"errorCode":"X\u0007"}"#,
        );
        assert!(!layout.row(&hostile).contains('\u{1b}'));
        layout.style.colour = true;
        let line = layout.row(&hostile);
        assert!(line.contains("\u{1b}[33m404\u{1b}[0m"), "{line:?}");
        assert!(!line.contains("\u{1b}[2J"), "{line:?}");
    }

    #[test]
    fn paths_give_up_the_least_first() {
        let path = format!("/api/payments/{ID}/status");
        assert_eq!(fit_path(&path, 100), path);
        assert_eq!(fit_path(&path, 34), "/api/payments/01937e1c…00c1/status");
        assert_eq!(fit_path(&path, 22), "…/01937e1c…00c1/status");
        let tight = fit_path(&path, 18);
        assert!(tight.width() <= 18 && tight.ends_with("/status"), "{tight}");
        assert!(tight.starts_with("…/01"), "{tight}");
        let tiny = fit_path(&path, 12);
        assert!(tiny.width() <= 12, "{tiny}");
        assert_eq!(fit_path("/other/thing", 8), "/other/…");
        let by_reference = "/api/payments/reference/INV-A1/status";
        assert_eq!(fit_path(by_reference, 25), "…/reference/INV-A1/status");
        assert_eq!(fit_path(by_reference, 24), "…/ref/INV-A1/status");
        let long = fit_path("/api/payments/reference/INV-2026-0101-ABCDEFGH/status", 24);
        assert_eq!(long, "…/ref/INV-2…DEFGH/status");
    }

    /// A bidirectional control in a path is shown escaped; shortening
    /// the path once cut inside that escape (`INV-\u{2…}FDP`).
    #[test]
    fn a_path_is_shortened_before_it_is_escaped() {
        let path = "/api/payments/reference/INV-\u{202e}FDP-2026-0101/status";
        for room in 12..60 {
            let shown = fit_path(path, room);
            assert!(shown.width() <= room, "{room}: {shown}");
            assert!(!shown.contains('\u{202e}'), "{room}: {shown}");
            let cut_escape = shown.match_indices("\\u{").any(|(at, _)| {
                let rest = &shown[at + 3..];
                !rest.starts_with("202e}")
            });
            assert!(!cut_escape, "{room}: {shown}");
        }
        assert_eq!(fit_path(path, 28), "…/ref/INV-…-2026-0101/status");
        assert_eq!(fit_path(path, 34), "…/ref/INV-\\u{202e}FDP…0101/status");
        let findings = layout(80, true).row(&entry(
            r#"{"seq":5,"method":"GET","path":"/x","status":200,"verdict":"violation","findings":[{"rule":"r\u202e\u202e\u202e\u202e\u202e\u202e\u202e\u202e\u202e","level":"violation"}]}"#,
        ));
        let second = findings.lines().nth(1).expect("a findings line");
        assert!(second.width() <= 80, "{second}");
        assert!(second.ends_with("\\u{202e}…"), "{second}");
    }

    #[test]
    fn seq_columns_fit_what_was_seen() {
        assert_eq!(layout(80, false).seq, 3);
        let wide = Layout::new(
            Style {
                colour: false,
                width: 80,
            },
            false,
            123_456,
        );
        assert_eq!(wide.seq, 7);
    }
}
