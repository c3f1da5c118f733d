//! PostgreSQL's `text` cannot hold a NUL (U+0000), which the interface
//! allows in free text (a description, a store or payer id, a request's
//! body) and the other stores keep. What this store writes there is
//! escaped, reversibly: U+FFFF (a noncharacter, which no interface text
//! needs) starts an escape, `U+FFFF 0` stands for a NUL and `U+FFFF U+FFFF`
//! for U+FFFF itself. Text holding neither is written and read unchanged.

use std::borrow::Cow;

use super::super::sql::{JournalRow, Row};
use crate::domain::journal::JournalEntry;

const MARK: char = '\u{FFFF}';

/// `text` as this store writes it.
pub(super) fn escape(text: &str) -> Cow<'_, str> {
    if !text.contains(['\0', MARK]) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => {
                escaped.push(MARK);
                escaped.push('0');
            }
            MARK => {
                escaped.push(MARK);
                escaped.push(MARK);
            }
            c => escaped.push(c),
        }
    }
    Cow::Owned(escaped)
}

/// `text` as this store read it back: the escapes undone (a mark followed
/// by anything else, which this store never writes, is kept as it is).
pub(super) fn unescape(text: String) -> String {
    if !text.contains(MARK) {
        return text;
    }
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == MARK {
            match chars.peek() {
                Some('0') => {
                    chars.next();
                    plain.push('\0');
                    continue;
                }
                Some(&MARK) => {
                    chars.next();
                }
                _ => {}
            }
        }
        plain.push(c);
    }
    plain
}

fn escape_in_place(text: &mut String) {
    if let Cow::Owned(escaped) = escape(text) {
        *text = escaped;
    }
}

fn unescape_in_place(text: &mut String) {
    *text = unescape(std::mem::take(text));
}

/// A transaction row's free text: what outside input fills with no rule
/// against control characters (a reference has one).
fn free_text(row: &mut Row) -> impl Iterator<Item = &mut String> {
    [
        &mut row.description,
        &mut row.device_id,
        &mut row.payer_id,
        &mut row.return_url,
        &mut row.extra_properties,
    ]
    .into_iter()
    .flatten()
    .chain(std::iter::once(&mut row.store_id))
}

/// `row` as this store writes it; borrowed when nothing needs escaping.
pub(super) fn escaped_row(row: &Row) -> Cow<'_, Row> {
    let plain = [
        row.description.as_deref(),
        row.device_id.as_deref(),
        row.payer_id.as_deref(),
        row.return_url.as_deref(),
        row.extra_properties.as_deref(),
        Some(row.store_id.as_str()),
    ]
    .into_iter()
    .flatten()
    .all(|text| matches!(escape(text), Cow::Borrowed(_)));
    if plain {
        return Cow::Borrowed(row);
    }
    let mut row = row.clone();
    free_text(&mut row).for_each(escape_in_place);
    Cow::Owned(row)
}

/// A transaction row read back.
pub(super) fn unescape_row(row: &mut Row) {
    free_text(row).for_each(unescape_in_place);
}

/// A journal row's text that a request fills: its path and query, its
/// headers and its body.
fn journal_text(row: &mut JournalRow) -> impl Iterator<Item = &mut String> {
    [&mut row.path, &mut row.headers, &mut row.body]
        .into_iter()
        .chain(row.query.as_mut())
}

/// The journal row of `entry` as this store writes it.
pub(super) fn journal_row(entry: &JournalEntry) -> JournalRow {
    let mut row = JournalRow::of(entry);
    journal_text(&mut row).for_each(escape_in_place);
    row
}

/// A journal row read back.
pub(super) fn unescape_journal(row: &mut JournalRow) {
    journal_text(row).for_each(unescape_in_place);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_with_a_nul_or_the_mark_comes_back_as_it_went() {
        for text in [
            "",
            "plain text, ünïcödé",
            "\0",
            "a\0b\0\0c",
            "\u{FFFF}",
            "\u{FFFF}0",
            "\u{FFFF}\0\u{FFFF}\u{FFFF}0",
            "\0\u{FFFF}",
        ] {
            let stored = escape(text);
            assert!(!stored.contains('\0'), "{text:?} stored as {stored:?}");
            assert_eq!(unescape(stored.into_owned()), text);
        }
        assert!(matches!(escape("no escape"), Cow::Borrowed("no escape")));
        // A mark this store did not write is kept.
        assert_eq!(unescape("a\u{FFFF}b".to_owned()), "a\u{FFFF}b");
    }
}
