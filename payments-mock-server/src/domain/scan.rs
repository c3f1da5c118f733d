//! JSON text scanned by hand, for the quick ways of reading what nearly
//! every merchant sends (`fields/quick.rs`, `extra.rs`). Each function
//! answers for the bytes it has looked at and nothing more; the callers
//! take anything these do not settle to `serde_json`, so what is accepted,
//! and every message, stays `serde_json`'s.

/// JSON's whitespace (RFC 8259): what `serde_json` skips.
pub(crate) fn skip_whitespace(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The closing quote of the string whose text starts at `i`, and whether
/// it has an escape; `None` at a control character (which JSON strings
/// may not hold raw) or the end of the text.
pub(crate) fn string_end(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut escaped = false;
    // Eight bytes at a time: a quote, a backslash or a control character
    // among them is found with the "has a zero byte" and "has a byte less
    // than n" tests of bit twiddling. Their lowest flagged byte is always
    // a true match (a false flag needs a borrow from a true match below).
    while let Some(chunk) = b.get(i..i + 8) {
        let mut eight = [0; 8];
        eight.copy_from_slice(chunk);
        let x = u64::from_le_bytes(eight);
        let quote = x ^ (ONES * u64::from(b'"'));
        let backslash = x ^ (ONES * u64::from(b'\\'));
        let stops = ((quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (x.wrapping_sub(ONES * 0x20) & !x))
            & HIGHS;
        if stops == 0 {
            i += 8;
            continue;
        }
        i += (stops.trailing_zeros() / 8) as usize;
        match b[i] {
            b'"' => return Some((i, escaped)),
            b'\\' => {
                // The escaped byte is skipped (it may be a quote); the
                // escape is judged when the string is decoded.
                escaped = true;
                i += 2;
            }
            _ => return None,
        }
    }
    // The last few bytes, one at a time.
    loop {
        match *b.get(i)? {
            b'"' => return Some((i, escaped)),
            b'\\' => {
                escaped = true;
                i += 2;
            }
            0..=0x1f => return None,
            _ => i += 1,
        }
    }
}

/// Walks the flat JSON object that `text` is: for each member in order,
/// `member(key, at)` gets the key (which has no escape) and where its value
/// starts, and answers where the value ends. `None` where `text` is not an
/// object with nothing after it, where a key has an escape, or where
/// `member` answers `None`.
pub(crate) fn members<'t>(
    text: &'t str,
    mut member: impl FnMut(&'t str, usize) -> Option<usize>,
) -> Option<()> {
    let b = text.as_bytes();
    let mut i = skip_whitespace(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_whitespace(b, i + 1);
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let (end, escaped) = string_end(b, i + 1)?;
            if escaped {
                return None;
            }
            let key = &text[i + 1..end];
            i = skip_whitespace(b, end + 1);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = skip_whitespace(b, member(key, skip_whitespace(b, i + 1))?);
            match b.get(i) {
                Some(b',') => i = skip_whitespace(b, i + 1),
                Some(b'}') => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (skip_whitespace(b, i) == b.len()).then_some(())
}

/// A JSON number (RFC 8259's grammar) at `start`.
pub(crate) struct Number {
    /// Where it ends.
    pub end: usize,
    /// Whether it has a fraction or an exponent.
    pub integer: bool,
    /// Whether it has an exponent.
    pub exponent: bool,
}

/// The number at `start`; `None` where none starts (or one breaks off).
/// A leading zero ends the number after it (`01` is `0`, then `1`), so
/// the caller's next step refuses it.
pub(crate) fn number(b: &[u8], start: usize) -> Option<Number> {
    let digits = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = start + usize::from(b.get(start) == Some(&b'-'));
    i = match *b.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(i + 1),
        _ => return None,
    };
    let mut integer = true;
    if b.get(i) == Some(&b'.') {
        integer = false;
        let end = digits(i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
    }
    let exponent = matches!(b.get(i), Some(b'e' | b'E'));
    if exponent {
        integer = false;
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let end = digits(i);
        if end == i {
            return None;
        }
        i = end;
    }
    Some(Number {
        end: i,
        integer,
        exponent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`string_end`] one byte at a time.
    fn string_end_bytewise(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
        let mut escaped = false;
        loop {
            match *b.get(i)? {
                b'"' => return Some((i, escaped)),
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                0..=0x1f => return None,
                _ => i += 1,
            }
        }
    }

    #[test]
    fn eight_bytes_at_a_time_finds_what_one_at_a_time_finds() {
        for len in 0..40 {
            for at in 0..len {
                for stop in [b'"', b'\\', 0, 0x1f, b'\n'] {
                    for filler in [b'a', 0x7f, 0x80, 0xff, b' ', 0x21, 0x5d] {
                        let mut text = vec![filler; len];
                        text[at] = stop;
                        text.push(b'"');
                        for start in 0..3.min(len + 1) {
                            assert_eq!(
                                string_end(&text, start),
                                string_end_bytewise(&text, start),
                                "{text:?} from {start}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn numbers_as_json_writes_them() {
        for (text, end, integer, exponent) in [
            ("0", 1, true, false),
            ("-12,", 3, true, false),
            ("01", 1, true, false),
            ("1.50}", 4, false, false),
            ("-0.5e+3 ", 7, false, true),
            ("2E9", 3, false, true),
        ] {
            let n = number(text.as_bytes(), 0).expect(text);
            assert_eq!(
                (n.end, n.integer, n.exponent),
                (end, integer, exponent),
                "{text}"
            );
        }
        for text in ["", "-", "+1", ".5", "1.", "1e", "1e+", "-a", "x"] {
            assert!(number(text.as_bytes(), 0).is_none(), "{text}");
        }
    }
}
