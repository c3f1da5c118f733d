//! Text from outside (the service, a file, a flag) made safe to show on a
//! terminal or in a message: control and bidirectional characters escaped
//! ([`printable`]), a value quoted and cut for a usage error ([`quote`]),
//! and fitted to terminal columns ([`wrap`], [`printable_within`]).

mod width;

pub use width::{columns, printable_within, wrap};

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
/// a character boundary.
#[must_use]
pub fn prefix(text: &str) -> &str {
    let mut end = MAX_ECHO.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
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
/// `max` characters and `…`: cut by characters (never inside one), and a
/// cut value is one character longer than any value shown whole, so the
/// two can never look the same.
#[must_use]
pub fn clip_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// Whether a terminal would act on `c` rather than show it: a control
/// character, or a bidirectional control.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Text from the service or an input file, made safe for a terminal:
/// control characters (including ESC, so no ANSI sequences) and the
/// bidirectional controls (which would show what follows them reversed:
/// U+202E turns `ABC/status` into `sutats/CBA`) are shown escaped instead
/// of being interpreted.
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
