//! The console's forms and addresses, as both servers read them: a posted
//! form checked before it is read ([`read_form`]), query and form pairs
//! ([`query_pairs`], [`param`]), the way back to a refused page
//! ([`target_of`]), a `303 See Other` ([`see_other`]) and the `401`'s
//! challenge ([`bearer_challenge`]). Each server words its own refusals.

use axum::body::{Body, to_bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::same_origin_as;

/// Why a posted form was not read: each server answers with its own page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormRefusal {
    /// Another site's page posted it (its `Origin` names another host): 403.
    CrossSite,
    /// Its `Content-Type` is not `application/x-www-form-urlencoded`: 415.
    NotAForm,
    /// Its body is larger than the form can be: 413.
    TooLarge,
}

impl FormRefusal {
    /// The status the refusal is answered with.
    pub fn status(self) -> StatusCode {
        match self {
            FormRefusal::CrossSite => StatusCode::FORBIDDEN,
            FormRefusal::NotAForm => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            FormRefusal::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }
}

/// Reads a posted console form, in this order: from this server's own page
/// ([`same_origin`](super::same_origin)), a form (no `Content-Type` is taken as one, as a
/// tool's bare `curl -d` is), at most `limit` bytes. Its pairs come
/// form-decoded, in order.
///
/// ```
/// use axum::body::Body;
/// use axum::http::{HeaderMap, HeaderValue, header};
/// use payments_serve::admin::{FormRefusal, param, read_form};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut headers = HeaderMap::new();
/// headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"));
/// let pairs = read_form(&headers, Body::from("key=a%20b&next="), 1024).await.unwrap();
/// assert_eq!(param(&pairs, "key"), Some("a b"));
/// assert_eq!(param(&pairs, "next"), None);
///
/// headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
/// let refused = read_form(&headers, Body::from("{}"), 1024).await;
/// assert_eq!(refused, Err(FormRefusal::NotAForm));
/// # });
/// ```
pub async fn read_form(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<Vec<(String, String)>, FormRefusal> {
    read_form_at(headers, body, limit, None).await
}

/// [`read_form`] for a server with a public URL (`public`): a form posted
/// from a page at the public URL's origin is its own too
/// ([`same_origin_as`](super::same_origin_as)), as behind a reverse proxy
/// that rewrites `Host`.
pub async fn read_form_at(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    public: Option<&str>,
) -> Result<Vec<(String, String)>, FormRefusal> {
    if !same_origin_as(headers, public) {
        return Err(FormRefusal::CrossSite);
    }
    if !is_form(headers) {
        return Err(FormRefusal::NotAForm);
    }
    let bytes = to_bytes(body, limit)
        .await
        .map_err(|_| FormRefusal::TooLarge)?;
    Ok(form_urlencoded::parse(&bytes).into_owned().collect())
}

/// Whether a request's body is a form: `Content-Type:
/// application/x-www-form-urlencoded` (any parameters, any letter case),
/// or no `Content-Type` at all (a tool's bare `curl -d`).
pub fn is_form(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).is_none_or(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(';').next().is_some_and(|e| {
                e.trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            })
        })
    })
}

/// The pairs of a query string (form-decoded), in order; none without one.
pub fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    query
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

/// The first value of `name`; a form's empty field is no value.
pub fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// The address of `uri` relative to the server's root (`_mock/ui/…?…`),
/// for a sign-in to come back to.
pub fn target_of(uri: &Uri) -> String {
    let path = uri.path().trim_start_matches('/');
    match uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_owned(),
    }
}

/// `303 See Other` to `location`, relative to the server's root `root`
/// (as `pages::root_of` gives it: `../` steps or empty).
pub fn see_other(root: &str, location: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, format!("{root}{location}"))],
    )
        .into_response()
}

/// `WWW-Authenticate: Bearer` on a `401` (RFC 9110: a 401 names its
/// scheme); any other answer is left as it is.
pub fn bearer_challenge(mut response: Response) -> Response {
    if response.status() == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), HeaderValue::from_static(v)))
            .collect()
    }

    async fn read(
        h: &[(header::HeaderName, &'static str)],
        body: &'static [u8],
        limit: usize,
    ) -> Result<Vec<(String, String)>, FormRefusal> {
        read_form(&headers(h), Body::from(body), limit).await
    }

    #[tokio::test]
    async fn a_form_is_read_only_from_this_site_as_a_form_within_its_limit() {
        let form = (
            header::CONTENT_TYPE,
            "Application/X-WWW-Form-Urlencoded; charset=utf-8",
        );
        let pairs = read(std::slice::from_ref(&form), b"a=1&b=%E2%82%AC+x&a=2", 64)
            .await
            .unwrap();
        assert_eq!(
            pairs,
            [("a", "1"), ("b", "€ x"), ("a", "2")].map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
        // No Content-Type is a tool's form; an empty body is no pairs.
        assert_eq!(read(&[], b"", 64).await.unwrap(), Vec::new());
        // Same origin, with the port.
        let same = [
            form.clone(),
            (header::HOST, "127.0.0.1:8080"),
            (header::ORIGIN, "http://127.0.0.1:8080"),
        ];
        assert!(read(&same, b"a=1", 64).await.is_ok());

        for (origin, why) in [
            ("http://evil.example", "another host"),
            ("http://127.0.0.1:8081", "another port"),
            ("null", "an opaque origin"),
            ("", "empty"),
        ] {
            let h = [
                form.clone(),
                (header::HOST, "127.0.0.1:8080"),
                (header::ORIGIN, origin),
            ];
            assert_eq!(
                read(&h, b"a=1", 64).await,
                Err(FormRefusal::CrossSite),
                "{why}"
            );
        }
        for content_type in [
            "application/json",
            "multipart/form-data; boundary=x",
            "",
            "text/plain",
        ] {
            let h = [(header::CONTENT_TYPE, content_type)];
            assert_eq!(
                read(&h, b"a=1", 64).await,
                Err(FormRefusal::NotAForm),
                "{content_type}"
            );
        }
        assert_eq!(
            read(std::slice::from_ref(&form), &[b'a'; 65], 64).await,
            Err(FormRefusal::TooLarge)
        );
        assert!(read(&[form], &[b'a'; 64], 64).await.is_ok());
        // A cross-site post is refused before its type or size is looked at.
        let h = [
            (header::HOST, "a"),
            (header::ORIGIN, "http://b"),
            (header::CONTENT_TYPE, "text/plain"),
        ];
        assert_eq!(read(&h, &[b'a'; 65], 64).await, Err(FormRefusal::CrossSite));
        assert_eq!(FormRefusal::CrossSite.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            FormRefusal::NotAForm.status(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        assert_eq!(
            FormRefusal::TooLarge.status(),
            StatusCode::PAYLOAD_TOO_LARGE
        );
    }

    #[test]
    fn params_take_the_first_value_and_an_empty_one_is_none() {
        let pairs = query_pairs(Some("next=_mock%2Fui%2F&next=x&empty=&flag"));
        assert_eq!(param(&pairs, "next"), Some("_mock/ui/"));
        assert_eq!(param(&pairs, "empty"), None);
        assert_eq!(param(&pairs, "flag"), None);
        assert_eq!(param(&pairs, "absent"), None);
        assert!(query_pairs(None).is_empty());
        assert!(query_pairs(Some("")).is_empty());
    }

    #[test]
    fn a_refused_page_knows_its_way_back_and_a_401_its_scheme() {
        let uri: Uri = "/_mock/ui/transactions?status=FAILED&limit=5"
            .parse()
            .unwrap();
        assert_eq!(
            target_of(&uri),
            "_mock/ui/transactions?status=FAILED&limit=5"
        );
        assert_eq!(target_of(&"/_proxy/ui/".parse().unwrap()), "_proxy/ui/");

        let moved = see_other("../../", "_mock/ui/");
        assert_eq!(moved.status(), StatusCode::SEE_OTHER);
        assert_eq!(moved.headers()[header::LOCATION], "../../_mock/ui/");

        let challenged = bearer_challenge(StatusCode::UNAUTHORIZED.into_response());
        assert_eq!(challenged.headers()[header::WWW_AUTHENTICATE], "Bearer");
        let forbidden = bearer_challenge(StatusCode::FORBIDDEN.into_response());
        assert!(forbidden.headers().get(header::WWW_AUTHENTICATE).is_none());
    }
}
