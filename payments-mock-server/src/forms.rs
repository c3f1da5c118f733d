//! The bounds of the HTML forms the server takes (the payer's payment page
//! and the console's), written once for the pages that read them and the
//! OpenAPI document that declares them.
//!
//! A form carries only its own fields, each at most once and within its
//! length, so every form the document calls valid fits the body limit: a
//! 413 only ever meets a form the document rules out (issue 40: before,
//! schemathesis's own data met 413 on a form the document called valid).
// The pages read all of it, the document some: either alone leaves a part.
#![cfg_attr(not(all(feature = "pages", feature = "openapi")), allow(dead_code))]

/// The fields a form may carry, each with its most characters; any other
/// field, a field given twice or a longer value is refused (400).
pub(crate) type Fields = &'static [(&'static str, usize)];

/// Largest accepted payment page form: one short field.
pub const PAY_FORM_LIMIT: usize = 4 * 1024;

/// Largest accepted console form. The sign-in form is the largest valid
/// one: a key of 1,024 characters and a `next` of 512, each character at
/// most 12 bytes percent-encoded (4 UTF-8 bytes), with the names and
/// separators: 18,442 bytes, under 20 KiB.
pub const CONSOLE_FORM_LIMIT: usize = 20 * 1024;

/// The clock form: whole seconds, digits only.
pub(crate) const CLOCK_FIELDS: Fields = &[("seconds", 20)];
/// The reset and sign-out forms: no field.
pub(crate) const NO_FIELDS: Fields = &[];
/// The sign-in form: a key and where to go next (as long as the sign-in
/// page may offer: a filter of non-ASCII text, percent-encoded, made a
/// `next` of 452 characters that the form then refused).
pub(crate) const SIGN_IN_FIELDS: Fields =
    &[("key", 1024), ("next", payments_serve::admin::MAX_NEXT)];

/// The most characters `field` of `fields` may have (0 for none).
pub(crate) fn most(fields: Fields, field: &str) -> usize {
    fields
        .iter()
        .find(|(name, _)| *name == field)
        .map_or(0, |(_, most)| *most)
}

/// Why `pairs` are not a form of `fields`: a field it does not have, one
/// given twice, or a value over its length; `None` when they are.
pub(crate) fn unexpected_field(pairs: &[(String, String)], fields: Fields) -> Option<String> {
    for (index, (name, value)) in pairs.iter().enumerate() {
        let shown: String = name.chars().take(64).collect();
        let Some((_, most)) = fields.iter().find(|(field, _)| field == name) else {
            return Some(format!(
                "This form has no field \u{201c}{shown}\u{201d}; submit the console's own form."
            ));
        };
        if pairs[..index].iter().any(|(earlier, _)| earlier == name) {
            return Some(format!(
                "The field \u{201c}{shown}\u{201d} is given more than once."
            ));
        }
        if value.chars().count() > *most {
            return Some(format!(
                "The field \u{201c}{shown}\u{201d} is longer than {most} characters."
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_form_has_its_own_fields_once_and_within_their_length() {
        assert_eq!(unexpected_field(&pairs(&[]), NO_FIELDS), None);
        assert_eq!(
            unexpected_field(
                &pairs(&[("key", "k"), ("next", "_mock/ui/")]),
                SIGN_IN_FIELDS
            ),
            None
        );
        let long = "é".repeat(513);
        for (bad, says) in [
            (pairs(&[("x", "1")]), "no field \u{201c}x\u{201d}"),
            (pairs(&[("key", "a"), ("key", "b")]), "more than once"),
            (pairs(&[("next", &long)]), "longer than 512 characters"),
        ] {
            let why = unexpected_field(&bad, SIGN_IN_FIELDS).expect("refused");
            assert!(why.contains(says), "{why}");
        }
        assert!(unexpected_field(&pairs(&[("a", "")]), NO_FIELDS).is_some());
    }

    /// The largest valid sign-in form, every character at its widest
    /// encoding, fits the limit; so does the clock's.
    #[test]
    fn every_valid_form_fits_the_limit() {
        let mut form = form_urlencoded::Serializer::new(String::new());
        // 4 UTF-8 bytes, each percent-encoded: 12 bytes a character.
        form.append_pair("key", &"\u{10FFFF}".repeat(most(SIGN_IN_FIELDS, "key")))
            .append_pair("next", &"\u{10FFFF}".repeat(most(SIGN_IN_FIELDS, "next")));
        let widest = form.finish();
        assert!(widest.len() <= CONSOLE_FORM_LIMIT, "{}", widest.len());
        assert!("seconds=".len() + 3 * most(CLOCK_FIELDS, "seconds") <= CONSOLE_FORM_LIMIT);
        assert!("action=decline".len() <= PAY_FORM_LIMIT);
    }
}
