//! Text fitted to terminal columns, measured as a terminal shows it: a
//! CJK character takes two columns, a combining mark none (display width,
//! not characters or bytes). Nothing is ever cut inside an extended
//! grapheme cluster (a character with its marks, an emoji with its skin
//! tone or its joined emoji, a flag's two regional indicators: what a
//! terminal shows as one), and nothing inside an escape [`printable`] wrote
//! (`\u{202e}`).

use unicode_segmentation::UnicodeSegmentation as _;
use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

use super::printable;

/// The columns a cluster (one of [`units`]) takes: an escape's length,
/// else the cluster's display width as a whole (`👍🏽` and `🇲🇾` are two
/// columns, not four; an emoji sequence of emoji joined by U+200D, two).
#[must_use]
pub fn cluster_columns(unit: &str) -> usize {
    if escape_len(unit) == Some(unit.len()) {
        return unit.len();
    }
    let width = unit.width();
    let mut chars = unit.chars();
    let first = chars.next();
    let joined = chars.next().is_some();
    // A sequence that starts with a wide (emoji) character and goes on
    // (a modifier, a joiner and more emoji, a variation selector) is shown
    // as one emoji; a regional indicator pair is a flag.
    let emoji = first.is_some_and(|c| c.width() == Some(2) || is_regional_indicator(c));
    if joined && emoji { 2 } else { width }
}

fn is_regional_indicator(c: char) -> bool {
    ('\u{1f1e6}'..='\u{1f1ff}').contains(&c)
}

/// The display width of printable `text`, cluster by cluster.
#[must_use]
pub fn text_columns(text: &str) -> usize {
    units(text).into_iter().map(cluster_columns).sum()
}

/// `text` made [`printable`], in at most `room` columns: whole when it
/// fits, else as much of its start as fits beside a closing `…`, each
/// cluster (or escape) whole.
#[must_use]
pub fn printable_within(text: &str, room: usize) -> String {
    let shown = printable(text);
    let units = units(&shown);
    if units.iter().map(|u| cluster_columns(u)).sum::<usize>() <= room {
        return shown;
    }
    let mut out = String::new();
    let mut used = 0;
    for unit in units {
        let wide = cluster_columns(unit);
        if used + wide + 1 > room {
            break;
        }
        out.push_str(unit);
        used += wide;
    }
    out.push('…');
    out
}

/// Printable `text` in lines of at most `width` display columns, broken
/// at spaces; a word wider than a whole line (text without spaces, as
/// CJK text is written, or a long id) is broken between characters,
/// starting beside what its line already holds. Only a single character
/// wider than `width` runs past it.
#[must_use]
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    let mut end_line = |line: &mut String, used: &mut usize| {
        lines.push(line.trim_end().to_owned());
        line.clear();
        *used = 0;
    };
    for word in text.split(' ') {
        let wide = text_columns(word);
        let gap = usize::from(!line.is_empty());
        if used + gap + wide <= width {
            if gap == 1 {
                line.push(' ');
            }
            line.push_str(word);
            used += gap + wide;
            continue;
        }
        if wide <= width {
            end_line(&mut line, &mut used);
            line.push_str(word);
            used = wide;
            continue;
        }
        if !line.is_empty() {
            line.push(' ');
            used += 1;
        }
        for unit in units(word) {
            let unit_width = cluster_columns(unit);
            if used + unit_width > width && !line.trim_end().is_empty() {
                end_line(&mut line, &mut used);
            }
            line.push_str(unit);
            used += unit_width;
        }
    }
    lines.push(line);
    lines
}

/// The pieces a word may be broken between: an extended grapheme cluster
/// (UAX #29: a character with its marks, an emoji sequence, a flag), or an
/// escape [`printable`] wrote, whole.
fn units(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < word.len() {
        let rest = &word[at..];
        let len = escape_len(rest).unwrap_or_else(|| {
            let cluster = rest.graphemes(true).next().unwrap_or(rest);
            // A prepended mark joins what follows it, even a backslash:
            // an escape still starts a piece of its own.
            match cluster.char_indices().skip(1).find(|&(_, c)| c == '\\') {
                Some((end, _)) => end,
                None => cluster.len(),
            }
        });
        out.push(&rest[..len]);
        at += len;
    }
    out
}

/// The length of the escape [`printable`] writes (`char::escape_default`)
/// at the start of `text`: `\u{…}` with one to six hex digits, or `\t`,
/// `\r`, `\n`.
fn escape_len(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('\\')?;
    if let Some(hex) = rest.strip_prefix("u{") {
        let end = hex.find('}')?;
        let digits = &hex[..end];
        return ((1..=6).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_hexdigit()))
            .then_some("\\u{".len() + end + 1);
    }
    matches!(rest.as_bytes().first(), Some(b't' | b'r' | b'n')).then_some(2)
}

#[cfg(test)]
mod tests {
    use super::super::printable;
    use super::*;

    fn widest(lines: &[String]) -> usize {
        lines.iter().map(|line| line.width()).max().unwrap_or(0)
    }

    #[test]
    fn words_stay_whole_where_they_fit() {
        assert_eq!(
            wrap("ledger 10.00 MYR, service 10.50 MYR", 20),
            ["ledger 10.00 MYR,", "service 10.50 MYR"]
        );
        assert_eq!(wrap("", 5), [""]);
        assert_eq!(wrap("short", 5), ["short"]);
    }

    #[test]
    fn a_word_wider_than_a_line_is_broken_between_characters() {
        assert_eq!(
            wrap("averyveryverylongword x", 5),
            ["avery", "veryv", "erylo", "ngwor", "d x"]
        );
        // CJK: two columns a character, no spaces to break at.
        let message = "支払いは銀行によって拒否されました。".repeat(3);
        let lines = wrap(
            &format!("ledger SUCCESSFUL, service FAILED ({message})"),
            40,
        );
        assert!(widest(&lines) <= 40, "{lines:#?}");
        assert_eq!(lines[0], "ledger SUCCESSFUL, service FAILED (支払");
        assert_eq!(
            lines.concat().replace(' ', ""),
            format!("ledgerSUCCESSFUL,serviceFAILED({message})")
        );
        // An odd column left over: a wide character goes to the next line.
        let lines = wrap("ab 請求書請求書", 6);
        assert_eq!(lines, ["ab 請", "求書請", "求書"]);
    }

    #[test]
    fn escapes_and_marks_are_never_split() {
        let text = printable("INV-\u{202e}FDP-\u{1b}[31m");
        let lines = wrap(&text, 6);
        assert!(lines.contains(&"\\u{202e}".to_owned()), "{lines:#?}");
        assert!(
            lines
                .iter()
                .all(|l| !l.ends_with('\\') && !l.ends_with("\\u{")),
            "{lines:#?}"
        );
        assert_eq!(lines.concat(), text);
        // e + U+0301 (a combining acute): one column, one piece.
        assert_eq!(
            wrap("e\u{301}e\u{301}e\u{301}", 2),
            ["e\u{301}e\u{301}", "e\u{301}"]
        );
    }

    #[test]
    fn cut_to_fit_keeps_escapes_whole() {
        assert_eq!(
            printable_within("/ref/INV-A/status", 40),
            "/ref/INV-A/status"
        );
        assert_eq!(printable_within("INV-\u{202e}FDP", 9), "INV-…");
        assert_eq!(printable_within("INV-\u{202e}FDP", 13), "INV-\\u{202e}…");
        assert_eq!(printable_within("請求書請求書", 6), "請求…");
        assert_eq!(text_columns("請"), 2);
        assert_eq!(text_columns(&printable("\u{202e}")), "\\u{202e}".len());
    }

    #[test]
    fn emoji_sequences_and_flags_are_never_split() {
        let flags = "🇲🇾".repeat(32);
        for width in 3..60 {
            let lines = wrap(&flags, width);
            assert!(
                lines.iter().all(|l| l.chars().count() % 2 == 0),
                "{lines:#?}"
            );
            assert!(lines.iter().all(|l| l.starts_with('🇲')), "{lines:#?}");
            assert!(widest(&lines) <= width, "{width}: {lines:#?}");
        }
        let thumbs = "👍🏽".repeat(32);
        for width in 2..60 {
            let lines = wrap(&thumbs, width);
            assert!(lines.iter().all(|l| l.starts_with('👍')), "{lines:#?}");
            assert_eq!(lines[0].chars().count(), 2 * (width / 2), "{width}");
        }
        let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
        assert_eq!(cluster_columns(family), 2);
        assert_eq!(cluster_columns("👍🏽"), 2);
        assert_eq!(cluster_columns("🇲🇾"), 2);
        assert_eq!(text_columns(&family.repeat(3)), 6);
        assert_eq!(
            wrap(&family.repeat(3), 4),
            [family.repeat(2), family.to_owned()]
        );
        assert_eq!(
            printable_within(&family.repeat(3), 5),
            format!("{}…", family.repeat(2))
        );
        assert_eq!(printable_within(&"🇲🇾".repeat(3), 4), "🇲🇾…");
    }
}
