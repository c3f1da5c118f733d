//! What a log line never writes as it is, whichever field or message it
//! came in: the characters a terminal, a pager or a Unicode-aware log
//! viewer acts on instead of showing. A request's path, a header's value or
//! a reference is the caller's text; written raw, a U+2028 or a NEL in it
//! starts what a viewer shows as a line of its own (a forged
//! `WARN … admin key accepted`), and a bidi override turns the rest of
//! the line around. Both formats escape them on the whole line, after it
//! is made (`text.rs`, `json.rs`), so no field can be missed: the mock's
//! request lines, the proxy's exchange lines and every other event.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether a log line writes `c` escaped: the C0 controls, DEL and the C1
/// controls (U+0085 NEL and U+009B CSI among them), the line and
/// paragraph separators (U+2028, U+2029), and the bidirectional controls
/// (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069).
#[must_use]
pub fn is_escaped(c: char) -> bool {
    matches!(
        c,
        '\0'..='\x1f'
            | '\x7f'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// `text` as the text log writes it: each character [`is_escaped`] says
/// as `\u{…}` (lower-case hex, as Rust's `Debug` and tracing-subscriber's
/// escaping of messages write one), the rest as it is.
///
/// ```
/// use payments_serve::logging::escape_text;
///
/// assert_eq!(escape_text("/api/payments/x\u{2028}y"), "/api/payments/x\\u{2028}y");
/// assert_eq!(escape_text("/caf\u{e9}"), "/caf\u{e9}");
/// ```
#[must_use]
pub fn escape_text(text: &str) -> Cow<'_, str> {
    if !holds(text, Style::Text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    push_escaped(&mut out, text, Style::Text);
    Cow::Owned(out)
}

/// How an escaped character is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    /// `\u{2028}`: the text format.
    Text,
    /// `\u{2028}`, but ESC kept: the text format in colour, whose own
    /// paint is ESC sequences.
    Painted,
    /// `\u2028`: JSON's escape, inside the JSON strings where the only
    /// such characters of a JSON line are (everything else of it is
    /// ASCII punctuation, names and numbers).
    Json,
}

/// Escapes a finished log line in place: every character [`is_escaped`]
/// says but its closing newline. Allocates only for a line that holds one.
pub(super) fn escape_line(line: &mut String, style: Style) {
    let body = line.strip_suffix('\n').unwrap_or(line);
    if !holds(body, style) {
        return;
    }
    let mut out = String::with_capacity(line.len() + 16);
    push_escaped(&mut out, body, style);
    if line.ends_with('\n') {
        out.push('\n');
    }
    *line = out;
}

/// Whether `c` is escaped in `style`.
fn needs(c: char, style: Style) -> bool {
    is_escaped(c) && !(style == Style::Painted && c == '\x1b')
}

fn push_escaped(out: &mut String, text: &str, style: Style) {
    for c in text.chars() {
        if !needs(c, style) {
            out.push(c);
        } else if style == Style::Json {
            // Every escaped character is in the Basic Multilingual Plane.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// Whether `text` holds a character escaped in `style`, read from its
/// UTF-8 bytes without decoding it: a line is escaped once it is made, so
/// this runs over every line, most of which hold none (a status read's
/// request line is about 180 bytes of ASCII). The bytes are first looked
/// at 32 at a time for one that is not printable ASCII (vectorised), then
/// one by one for one that may start such a character ([`flagged`]), and
/// only where one is, the character is read.
fn holds(text: &str, style: Style) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(i) = next_flagged(bytes, at) {
        if escaped_at(bytes, i, style) {
            return true;
        }
        at = i + 1;
    }
    false
}

/// Whether `text` holds a character [`is_escaped`] says.
#[cfg(test)]
fn may_hold(text: &str) -> bool {
    holds(text, Style::Text)
}

/// Whether `b` may start a character [`is_escaped`] says: a C0 control or
/// DEL, or the lead byte of the UTF-8 of U+0080 to U+00BF (`C2`), of
/// U+061C (`D8`) or of U+2000 to U+2FFF (`E2`). Without branches, so that
/// a loop over a block of bytes is vectorised.
#[inline]
fn flagged(b: u8) -> bool {
    (b < 0x20) | (b == 0x7f) | (b == 0xc2) | (b == 0xd8) | (b == 0xe2)
}

/// The first byte at or after `from` that [`flagged`] says.
fn next_flagged(bytes: &[u8], from: usize) -> Option<usize> {
    const BLOCK: usize = 32;
    let rest = bytes.get(from..)?;
    let mut skipped = 0;
    for block in rest.chunks_exact(BLOCK) {
        // Printable ASCII, one range test a byte: most blocks of most
        // lines, passed over at once.
        if block
            .iter()
            .fold(false, |any, &b| any | !(0x20..0x7f).contains(&b))
        {
            break;
        }
        skipped += BLOCK;
    }
    rest[skipped..]
        .iter()
        .position(|&b| flagged(b))
        .map(|i| from + skipped + i)
}

/// Whether the character starting at `bytes[i]` (a byte [`flagged`]
/// says, so ASCII or a lead byte) is escaped in `style`, by its UTF-8:
/// `C2 80`–`C2 9F` (U+0080–U+009F), `D8 9C` (U+061C), `E2 80 8E`/`8F`
/// (U+200E, U+200F), `E2 80 A8`–`AE` (U+2028–U+202E), `E2 81 A6`–`A9`
/// (U+2066–U+2069).
fn escaped_at(bytes: &[u8], i: usize, style: Style) -> bool {
    let next = |k: usize| bytes.get(i + k).copied();
    match bytes[i] {
        0x1b => style != Style::Painted,
        b if b < 0x20 || b == 0x7f => true,
        0xc2 => matches!(next(1), Some(0x80..=0x9f)),
        0xd8 => next(1) == Some(0x9c),
        0xe2 => matches!(
            (next(1), next(2)),
            (Some(0x80), Some(0x8e | 0x8f | 0xa8..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_separator_and_bidi_control_is_escaped() {
        for c in [
            '\0', '\t', '\n', '\r', '\x1b', '\x1f', '\x7f', '\u{80}', '\u{85}', '\u{9b}', '\u{9f}',
            '\u{61c}', '\u{200e}', '\u{200f}', '\u{2028}', '\u{2029}', '\u{202a}', '\u{202e}',
            '\u{2066}', '\u{2069}',
        ] {
            assert!(is_escaped(c), "{c:?}");
            let text = format!("a{c}b");
            assert!(may_hold(&text), "{c:?}");
            let shown = escape_text(&text);
            assert!(!shown.contains(c), "{c:?}: {shown}");
            assert_eq!(shown, format!("a\\u{{{:x}}}b", u32::from(c)));
        }
        for c in [
            ' ',
            '~',
            '\u{a0}',
            '\u{e9}',
            '\u{200b}',
            '\u{2030}',
            '\u{1f600}',
        ] {
            assert!(!is_escaped(c), "{c:?}");
            let text = format!("a{c}b");
            assert_eq!(escape_text(&text), text);
        }
    }

    #[test]
    fn a_line_keeps_its_closing_newline_and_json_gets_json_escapes() {
        let mut line = "x\u{2028}y\u{85}\n".to_owned();
        escape_line(&mut line, Style::Json);
        assert_eq!(line, "x\\u2028y\\u0085\n");
        let mut line = "\x1b[1mx\x1b[0m\u{202e}\n".to_owned();
        escape_line(&mut line, Style::Painted);
        assert_eq!(line, "\x1b[1mx\x1b[0m\\u{202e}\n");
        let mut line = "plain \u{e9}\n".to_owned();
        escape_line(&mut line, Style::Text);
        assert_eq!(line, "plain \u{e9}\n");
    }

    /// The byte-level reading agrees with [`needs`] for every character,
    /// alone and after others that share its lead byte, in each style.
    #[test]
    fn the_byte_reading_agrees_with_the_characters_for_every_character() {
        for style in [Style::Text, Style::Painted, Style::Json] {
            for c in (0..=0x2fff_u32)
                .chain([0x1_f600, 0x10_ffff])
                .filter_map(char::from_u32)
            {
                let want = needs(c, style);
                for text in [
                    format!("{c}"),
                    format!("abc{c}def"),
                    // After characters of the same lead bytes that are not escaped,
                    // past a block of 32 bytes.
                    format!("{}{}{c}", "x".repeat(40), "\u{e9}\u{2030}\u{602}"),
                ] {
                    assert_eq!(holds(&text, style), want, "{c:?} {style:?} in {text:?}");
                }
            }
        }
    }
}
