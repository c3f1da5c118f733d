//! How a scripted fault delivers an answer (CONTRACT section 19): a
//! gateway's HTML page in place of the service's, a body cut in half
//! under a head that promises it whole, and a body trickled at a rate.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use http_body_util::BodyExt as _;

use crate::state::AppState;

/// Marks an answer the envelope guarantee must leave as it is: a
/// gateway's page is exactly what is not the service's envelope.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Verbatim;

/// A gateway's error page for `status` (502, 503 or 504), as nginx
/// writes it: `text/html`, no envelope, no request id of the service's.
pub(crate) fn gateway_page(status: u16) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let title = format!(
        "{} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("Error")
    );
    let page = format!(
        "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n\
         <center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n\
         </body>\r\n</html>\r\n"
    );
    let mut response = (
        status,
        [(header::CONTENT_TYPE, HeaderValue::from_static("text/html"))],
        page,
    )
        .into_response();
    response.extensions_mut().insert(Verbatim);
    response
}

/// The whole of `response`'s body, or `None` when it cannot be read.
async fn whole(response: Response) -> (axum::http::response::Parts, Option<Bytes>) {
    let (head, body) = response.into_parts();
    let bytes = body.collect().await.ok().map(|c| c.to_bytes());
    (head, bytes)
}

/// `response` with its head promising the whole body (`Content-Length`)
/// and half of it sent: then the body fails, and the connection closes.
pub(crate) async fn truncated(response: Response) -> Response {
    let (mut head, bytes) = whole(response).await;
    let bytes = bytes.unwrap_or_default();
    head.headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    let half = bytes.slice(..bytes.len() / 2);
    // The half goes out first: hyper writes what it holds when the body
    // has nothing ready, so the failure comes a moment later (failing at
    // once would drop the buffered head and half unsent).
    let stream = futures_util::stream::unfold(Some(half), |half| async move {
        match half {
            Some(half) => Some((Ok(half), None)),
            None => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let cut: Result<Bytes, std::io::Error> =
                    Err(std::io::Error::other("truncated (injected fault)"));
                Some((cut, None))
            }
        }
    });
    // Only one error: a body stream that fails is not polled again.
    Response::from_parts(head, Body::from_stream(stream))
}

/// How many bytes go out at once, and how often, for `rate` bytes a
/// second: a tenth of a second's worth every 100 ms, or below 10 bytes a
/// second one byte every `1 / rate` seconds.
fn pace(rate: u32) -> (usize, Duration) {
    let rate = rate.max(1);
    if rate >= 10 {
        ((rate / 10) as usize, Duration::from_millis(100))
    } else {
        (1, Duration::from_secs(1) / rate)
    }
}

/// `response` with its body trickled at `rate` bytes a second (the whole
/// `Content-Length` announced). At the server's shutdown the rest goes
/// out at once: the answer is finished, as every request under way is
/// (COMMANDS.md), never cut short.
pub(crate) async fn trickled(state: &AppState, response: Response, rate: u32) -> Response {
    let (mut head, bytes) = whole(response).await;
    let bytes = bytes.unwrap_or_default();
    head.headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    let (size, every) = pace(rate);
    let state = state.clone();
    let stream = futures_util::stream::unfold((bytes, false), move |(rest, waited)| {
        let state = state.clone();
        async move {
            if rest.is_empty() {
                return None;
            }
            if waited {
                // The pause, or less: the shutdown ends it.
                state.faults.hold(every).await;
            }
            let mut rest = rest;
            let size = if state.faults.is_closed() {
                rest.len()
            } else {
                size.min(rest.len())
            };
            let chunk = rest.split_to(size);
            Some((Ok::<_, std::io::Error>(chunk), (rest, true)))
        }
    });
    Response::from_parts(head, Body::from_stream(stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_keeps_the_rate() {
        assert_eq!(pace(1000), (100, Duration::from_millis(100)));
        assert_eq!(pace(10), (1, Duration::from_millis(100)));
        assert_eq!(pace(4), (1, Duration::from_millis(250)));
        assert_eq!(pace(0), (1, Duration::from_secs(1)));
        assert_eq!(pace(u32::MAX).0, 429_496_729);
    }

    #[tokio::test]
    async fn a_truncated_body_promises_all_and_fails_after_half() {
        let response = (StatusCode::OK, "0123456789").into_response();
        let cut = truncated(response).await;
        assert_eq!(cut.headers()[header::CONTENT_LENGTH], "10");
        let mut body = cut.into_body();
        let first = body.frame().await.expect("a frame").expect("data");
        assert_eq!(first.into_data().expect("data"), "01234");
        assert!(body.frame().await.expect("a frame").is_err());
    }

    /// At the shutdown a trickled body sends the rest of itself at once.
    #[tokio::test(start_paused = true)]
    async fn a_trickled_body_ends_whole_at_the_shutdown() {
        let state = AppState::new(crate::config::Config::default());
        let body = "0123456789".repeat(3);
        let slow = trickled(&state, (StatusCode::OK, body.clone()).into_response(), 1).await;
        assert_eq!(slow.headers()[header::CONTENT_LENGTH], "30");
        let mut slow = slow.into_body();
        let first = slow.frame().await.expect("a frame").expect("data");
        assert_eq!(first.into_data().expect("data"), "0");
        state.faults.close();
        let rest = slow.collect().await.expect("the rest, whole").to_bytes();
        assert_eq!(rest, body[1..]);
    }

    #[test]
    fn a_gateway_page_is_html_with_its_status() {
        let page = gateway_page(504);
        assert_eq!(page.status(), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(page.headers()[header::CONTENT_TYPE], "text/html");
        assert!(page.extensions().get::<Verbatim>().is_some());
    }
}
