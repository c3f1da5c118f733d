//! The chrome of the pages both servers show a person (the mock's payment
//! page and console, the proxy's console): rendering askama templates
//! (each crate keeps its own, auto-escaped), the stylesheets and the one
//! script compiled into the binaries, the headers every page carries, and
//! the helpers that make outside text visible and times readable.
//!
//! Every text that came from outside (reference, description, a form value)
//! reaches a page through a template variable, which askama HTML-escapes;
//! no template uses `|safe`.

use std::borrow::Cow;

use askama::Template;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};

/// The stylesheet of every page.
pub const STYLESHEET: &str = include_str!("../assets/mock.css");

/// The consoles' script: rows that refresh themselves.
pub const CONSOLE_SCRIPT: &str = include_str!("../assets/console.js");
/// The consoles' stylesheet: the pages' one plus the consoles' parts.
pub const CONSOLE_STYLESHEET: &str = concat!(
    include_str!("../assets/mock.css"),
    include_str!("../assets/console.css")
);

/// How often the consoles' pages poll for what is new, in milliseconds (in
/// each page's markup, read by the script).
pub const POLL_MS: u32 = 1000;

/// Headers of every page: no script, styles and images only from the mock
/// itself, never framed, never cached, and no `Referer` (the page's address
/// holds its token; the payer's next stop is the merchant's site).
///
/// There is no `form-action`: browsers apply it to the redirect after a
/// submit too, and the payment page's form ends at the merchant's return
/// address.
const PAGE_HEADERS: [(HeaderName, &str); 5] = [
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    (header::REFERRER_POLICY, "no-referrer"),
    (header::CACHE_CONTROL, "no-store"),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::X_FRAME_OPTIONS, "DENY"),
];

/// Whether a response is one of our pages (so the envelope guarantee of
/// the JSON API leaves it alone).
pub fn is_html(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"))
}

/// The relative prefix from `path` back to the server's root (`../` per
/// directory level), so links work under a `--public-url` with a path
/// prefix as well as at `/`.
pub fn root_of(path: &str) -> String {
    let depth = path.matches('/').count().saturating_sub(1);
    "../".repeat(depth)
}

/// [`root_of`] for a fragment of rows served at `path` and inserted into
/// the page one level up (`/_mock/ui/transactions/rows` into `/_mock/ui/`,
/// `/_mock/ui/requests/feed` into `/_mock/ui/requests`): its links are
/// followed from that page, so they are relative to it.
pub fn fragment_root_of(path: &str) -> String {
    root_of(path.rsplit_once('/').map_or(path, |(page, _)| page))
}

/// `body` as a page with `status` and the page headers.
pub fn page(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    for (name, value) in PAGE_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// Renders `template` as a page, or a plain 500 page if rendering fails
/// (it cannot for these templates: every value is a string or a number).
pub fn render(status: StatusCode, template: &impl Template) -> Response {
    match template.render() {
        Ok(body) => page(status, body),
        Err(e) => {
            tracing::error!(error = %e, "a page template failed to render");
            page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "<!doctype html><title>Internal error</title><h1>Internal error</h1>".to_owned(),
            )
        }
    }
}

/// The headers of console pages: the page headers, plus the console's own
/// script and its polls (`script-src`, `connect-src` 'self'), and forms
/// that only post back to the console.
const CONSOLE_CSP: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; \
     style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// `response` (a page) with a console's content security policy, and
/// `Referer` kept within the server: with `no-referrer` (the payment page's
/// policy) a browser sends `Origin: null` on a form post, and the console
/// could not tell its own forms from another site's.
pub fn console_page(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONSOLE_CSP),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

/// A stylesheet or script compiled into the binary, as served.
pub fn static_asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// Text from outside made visible as text: control characters become
/// their Unicode control pictures (`␛` for ESC); bidirectional controls
/// (which would reorder what follows them) and the other invisible format
/// characters (a zero-width space, a byte order mark, a soft hyphen: see
/// `is_format`) a visible `<U+200B>`, so two texts that differ only by
/// them never look the same, and one made of them is never blank; line
/// breaks and tabs stay. The joiners (U+200C, U+200D) are kept as they
/// are: scripts and emoji need them. The CLI escapes the same characters.
/// Escaping for HTML is the template's job.
pub fn visible(text: &str) -> Cow<'_, str> {
    let shown = |c: char| match c {
        '\n' | '\t' | '\u{200c}' | '\u{200d}' => None,
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + u32::from(c)).map(String::from),
        '\u{7f}' => Some("\u{2421}".to_owned()),
        '\u{80}'..='\u{9f}' => Some(format!("<U+{:04X}>", u32::from(c))),
        c if is_format(c) => Some(format!("<U+{:04X}>", u32::from(c))),
        _ => None,
    };
    if !text.chars().any(|c| shown(c).is_some()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match shown(c) {
            Some(s) => out.push_str(&s),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is a format character (Unicode's General_Category Format,
/// Cf, from `unicode-general-category`'s table): invisible, yet part of
/// the text. The bidirectional controls (U+202E shows what follows it
/// reversed), U+200B (zero-width space), U+FEFF (a byte order mark), the
/// soft hyphen, the word joiner and invisible operators, the tag
/// characters. The CLI's `text::is_format` asks the same table.
fn is_format(c: char) -> bool {
    unicode_general_category::get_general_category(c)
        == unicode_general_category::GeneralCategory::Format
}

/// A time as the consoles show it: `2026-11-25 10:15:30.123 UTC`.
pub fn shown_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S%.3f UTC").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_relative_to_the_page() {
        assert_eq!(root_of("/pay/abc"), "../");
        assert_eq!(root_of("/pay/a/b"), "../../");
        assert_eq!(root_of("/"), "");
    }

    #[test]
    fn control_and_bidi_characters_become_visible_text() {
        assert!(matches!(visible("plain ü ✓"), Cow::Borrowed(_)));
        assert_eq!(visible("a\u{1b}[31mb"), "a\u{241b}[31mb");
        assert_eq!(visible("x\u{0}y\u{7f}"), "x\u{2400}y\u{2421}");
        assert_eq!(visible("\u{202e}evil"), "<U+202E>evil");
        assert_eq!(visible("line\nnext\tcol"), "line\nnext\tcol");
    }

    /// The invisible format characters the CLI escapes are shown too: a
    /// reference of a zero-width space alone is not blank, and `X`,
    /// `\u{feff}X` and `X\u{feff}` do not all read `X`.
    #[test]
    fn invisible_format_characters_become_visible_text() {
        assert_eq!(visible("\u{200b}"), "<U+200B>");
        assert_eq!(visible("\u{200b}X"), "<U+200B>X");
        assert_eq!(visible("\u{feff}X"), "<U+FEFF>X");
        assert_eq!(visible("X\u{feff}Y"), "X<U+FEFF>Y");
        assert_eq!(visible("co\u{ad}op\u{2060}"), "co<U+00AD>op<U+2060>");
        assert_eq!(visible("\u{e0001}\u{e007f}"), "<U+E0001><U+E007F>");
        // The joiners stay: an emoji family, a Persian word.
        let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
        assert!(matches!(visible(family), Cow::Borrowed(_)));
        assert!(matches!(visible("a\u{200c}b"), Cow::Borrowed(_)));
        // Letters with combining accents, scripts, emoji: as they are.
        for text in ["cafe\u{301}", "請求書", "فاتورة-١٢٣", "👍🏽"] {
            assert!(matches!(visible(text), Cow::Borrowed(_)), "{text}");
        }
    }

    /// The format characters (Cf) at the edges of the table's ranges are
    /// shown, and the characters just outside them are not.
    #[test]
    fn the_format_list_has_its_edges() {
        for c in [
            '\u{600}', '\u{605}', '\u{180e}', '\u{2064}', '\u{206f}', '\u{fffb}',
        ] {
            assert!(is_format(c), "{c:?}");
        }
        for c in [
            '\u{ac}', '\u{ae}', '\u{606}', '\u{2065}', '\u{2070}', '\u{fff8}',
        ] {
            assert!(!is_format(c), "{c:?}");
        }
    }
}
