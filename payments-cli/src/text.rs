//! Text from outside (the service, a file, a flag) made safe to show on a
//! terminal or in a message: control and bidirectional characters escaped
//! ([`printable`]), a value quoted and cut for a usage error ([`quote`]),
//! and fitted to terminal columns ([`wrap`], [`printable_within`]).

mod width;

pub use width::{printable_within, text_columns, wrap};

use unicode_segmentation::UnicodeSegmentation as _;

/// At most this many bytes of an offending value are repeated in a message.
pub const MAX_ECHO: usize = 200;

/// A value quoted for a message: control characters escaped, cut to
/// [`MAX_ECHO`] bytes (at a character boundary) with the full length said.
#[must_use]
pub fn quote(value: &str) -> String {
    match cut_at(value) {
        (shown, None) => format!("'{shown}'"),
        (shown, Some(of)) => format!("'{shown}…' {of}"),
    }
}

/// A value for a message, unquoted (a path, a URL): as [`quote`], without
/// the quotes.
#[must_use]
pub fn cut(value: &str) -> String {
    match cut_at(value) {
        (shown, None) => shown,
        (shown, Some(of)) => format!("{shown}… {of}"),
    }
}

/// The printable value, at most [`MAX_ECHO`] bytes of it, and when it was
/// cut, `(the first N of M bytes)`.
fn cut_at(value: &str) -> (String, Option<String>) {
    let shown = printable(value);
    let kept = prefix(&shown);
    if kept.len() == shown.len() {
        return (shown, None);
    }
    let of = format!("(the first {} of {} bytes)", kept.len(), value.len());
    (kept.to_owned(), Some(of))
}

/// The longest start of `text` of at most [`MAX_ECHO`] bytes that ends on
/// an extended grapheme cluster boundary (never inside an emoji sequence,
/// a flag, a character and its marks).
#[must_use]
pub fn prefix(text: &str) -> &str {
    if text.len() <= MAX_ECHO {
        return text;
    }
    let end = text
        .grapheme_indices(true)
        .map(|(start, cluster)| start + cluster.len())
        .take_while(|&end| end <= MAX_ECHO)
        .last()
        .unwrap_or(0);
    &text[..end]
}

/// `text` as an echo repeats it: whole when it is at most [`MAX_ECHO`]
/// bytes, else its [`prefix`] and `…`.
#[must_use]
pub fn clipped(text: &str) -> String {
    match prefix(text) {
        kept if kept.len() == text.len() => text.to_owned(),
        kept => format!("{kept}…"),
    }
}

/// `text` whole when it has at most `max` characters, else its first
/// clusters of at most `max` characters in all and `…`: cut between
/// extended grapheme clusters (never inside an emoji sequence, a flag, a
/// character and its marks).
#[must_use]
pub fn clip_chars(text: &str, max: usize) -> String {
    if text.char_indices().nth(max).is_none() {
        return text.to_owned();
    }
    let mut count = 0;
    let mut end = 0;
    for cluster in text.graphemes(true) {
        count += cluster.chars().count();
        if count > max {
            break;
        }
        end += cluster.len();
    }
    format!("{}…", &text[..end])
}

/// Whether a terminal would act on `c`, or show nothing, rather than show
/// it: a control character, a bidirectional control, or another invisible
/// format character ([`is_format`]: a zero-width space, a byte order
/// mark). The joiners (U+200C, U+200D) are shown as they are: scripts and
/// emoji need them.
fn hidden(c: char) -> bool {
    c.is_control() || is_format(c) && !matches!(c, '\u{200c}' | '\u{200d}')
}

/// Whether `c` is a format character (Unicode's General_Category Format,
/// Cf, from `unicode-general-category`'s table): invisible, yet part of the
/// text. U+FEFF (a byte order mark, or a zero-width no-break space), U+200B
/// (zero-width space), the bidirectional controls (U+202E shows what
/// follows it reversed), the soft hyphen, the tag characters. The mock's
/// consoles (payments-serve's `pages::visible`) ask the same table.
#[must_use]
pub fn is_format(c: char) -> bool {
    unicode_general_category::get_general_category(c)
        == unicode_general_category::GeneralCategory::Format
}

/// Text from the service or an input file, made safe for a terminal:
/// control characters (including ESC, so no ANSI sequences), the
/// bidirectional controls (which would show what follows them reversed:
/// U+202E turns `ABC/status` into `sutats/CBA`) and the other invisible
/// format characters (U+200B, U+FEFF) are shown escaped instead of being
/// interpreted or lost.
#[must_use]
pub fn printable(text: &str) -> String {
    if !text.chars().any(hidden) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if hidden(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// JSON text on one line: as it is when it has no line break, else
/// without the white space between its tokens (strings untouched; a JSON
/// string never holds a raw line break), so a service that pretty-prints
/// its envelope still gives one document per line.
#[must_use]
pub fn one_json_line(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.contains(['\n', '\r']) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_are_cut_between_clusters() {
        let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
        let value = format!("a{}", family.repeat(12));
        let kept = prefix(&value);
        assert!(kept.len() <= MAX_ECHO);
        assert_eq!(kept, format!("a{}", family.repeat(7)));
        assert!(clipped(&value).ends_with(&format!("{family}…")));
        assert!(quote(&value).contains(&format!("{family}…'")));
        // By characters: a family is 7 of them, kept whole or not at all.
        assert_eq!(clip_chars(&value, 16), format!("a{}…", family.repeat(2)));
        assert_eq!(clip_chars(&value, 14), format!("a{family}…"));
        assert_eq!(clip_chars("🇲🇾🇲🇾", 3), "🇲🇾…");
        assert_eq!(clip_chars("e\u{301}e\u{301}", 3), "e\u{301}…");
        assert_eq!(clip_chars("abc", 3), "abc");
    }

    /// The format characters are Unicode's Cf, from the kept table: its
    /// edges, the joiners kept, and Cc left to `is_control`.
    #[test]
    fn format_characters_are_the_general_category_cf() {
        for c in [
            '\u{ad}',
            '\u{600}',
            '\u{605}',
            '\u{180e}',
            '\u{200b}',
            '\u{2064}',
            '\u{206f}',
            '\u{feff}',
            '\u{fffb}',
            '\u{13430}',
            '\u{1343f}',
            '\u{e0001}',
            '\u{e007f}',
        ] {
            assert!(is_format(c), "{c:?}");
            assert_eq!(printable(&c.to_string()), c.escape_default().to_string());
        }
        for c in [
            '\u{ac}', '\u{ae}', '\u{606}', '\u{2065}', '\u{2070}', '\u{fff8}', 'a',
        ] {
            assert!(!is_format(c), "{c:?}");
        }
        for joiner in ["a\u{200c}b", "👨\u{200d}👩"] {
            assert_eq!(printable(joiner), joiner);
        }
        assert!(!is_format('\u{85}'));
        assert_eq!(printable("\u{85}"), "\\u{85}");
    }
}
