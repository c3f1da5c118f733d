//! Words for a command line the user will paste: quoted for a POSIX shell
//! when they hold anything beyond `[A-Za-z0-9_./-]`.

/// `word` as one shell word: as it is when it holds only letters, digits
/// and `_ . / -` (and is not empty), else in single quotes, a `'` in it
/// written `'\''`.
///
/// ```text
/// my-shop  -> my-shop
/// my shop  -> 'my shop'
/// it's     -> 'it'\''s'
/// ```
pub(super) fn word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-'));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
