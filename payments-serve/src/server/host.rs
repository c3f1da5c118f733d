//! The `Host` rule of HTTP/1.1 ([`OneHost`]).

use axum::extract::Request;
use hyper::body::Incoming;

/// A connection's service behind the `Host` rule of HTTP/1.1 (RFC 9112,
/// section 3.2: a server MUST answer 400 to an HTTP/1.1 request without a
/// `Host` header, and to any request with more than one or with a value
/// that is not a host and port). The 400 is the envelope's
/// `VALIDATION_ERROR`; the request never reaches the service (no journal
/// entry, no `X-Request-Id`), like hyper's own 400 and 431.
pub(super) struct OneHost<S>(pub(super) S);

impl<S> hyper::service::Service<Request<Incoming>> for OneHost<S>
where
    S: hyper::service::Service<
            Request<Incoming>,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        >,
{
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = futures_util::future::Either<
        S::Future,
        std::future::Ready<Result<axum::response::Response, std::convert::Infallible>>,
    >;

    #[inline]
    fn call(&self, req: Request<Incoming>) -> Self::Future {
        match host_refused(&req) {
            None => futures_util::future::Either::Left(self.0.call(req)),
            Some(why) => {
                use axum::response::IntoResponse;
                let answer = crate::answer::ApiError::validation(why).into_response();
                futures_util::future::Either::Right(std::future::ready(Ok(answer)))
            }
        }
    }
}

/// Why a request's `Host` header breaks RFC 9112's rule, if it does.
pub(super) fn host_refused<B>(req: &Request<B>) -> Option<&'static str> {
    let mut hosts = req.headers().get_all(axum::http::header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return Some("the request carries more than one Host header");
    }
    match first {
        None if req.version() == axum::http::Version::HTTP_11 => {
            Some("an HTTP/1.1 request needs a Host header")
        }
        Some(host) if !is_host_and_port(host.as_bytes()) => {
            Some("the Host header is not a host and an optional port")
        }
        _ => None,
    }
}

/// `uri-host [ ":" port ]` of RFC 3986: a name or an IPv4 address
/// (unreserved characters, percent-encoded bytes and sub-delimiters but
/// `,`, which only a list of two `Host` values joined would hold), or a
/// bracketed IPv6 address (hex digits, `:` and `.`; a zone's `%25` and
/// unreserved characters), then optionally `:` and a port of at most five
/// digits up to 65535. Never user information (`@`), a path, a query,
/// white space, a second colon or a port that is not a number. Empty is
/// allowed (RFC 9112: the target has no authority).
fn is_host_and_port(host: &[u8]) -> bool {
    let (name_ok, rest) = if let Some(inner) = host.strip_prefix(b"[") {
        let Some(end) = inner.iter().position(|&b| b == b']') else {
            return false;
        };
        let address = &inner[..end];
        let ok = !address.is_empty()
            && address.iter().all(|&b| {
                b.is_ascii_hexdigit()
                    || matches!(b, b':' | b'.' | b'%' | b'-' | b'_' | b'~')
                    || b.is_ascii_alphanumeric()
            })
            && address.contains(&b':');
        (ok, &inner[end + 1..])
    } else {
        // One pass: the name's bytes up to the first `:`.
        let mut end = host.len();
        for (i, &b) in host.iter().enumerate() {
            if b == b':' {
                end = i;
                break;
            }
            if !REG_NAME[usize::from(b)] {
                return false;
            }
        }
        (true, &host[end..])
    };
    name_ok
        && match rest {
            [] => true,
            [b':', port @ ..] => is_port(port),
            _ => false,
        }
}

/// The bytes of a name or an IPv4 address (RFC 3986's `reg-name`:
/// unreserved, `%` of a percent-encoded byte, sub-delimiters but `,`), as
/// a table: one load a byte on the hot path.
static REG_NAME: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'%'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b';'
                    | b'='
            );
        b += 1;
    }
    table
};

/// RFC 3986's `port`, within what TCP has: empty (the scheme's default),
/// or up to five digits no greater than 65535.
fn is_port(port: &[u8]) -> bool {
    port.len() <= 5
        && port.iter().all(u8::is_ascii_digit)
        && port.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')) <= 65_535
}
