//! The guard's body reading.

use axum::body::Bytes;
use http_body_util::{Full, StreamBody};
use hyper::body::Frame;

use super::read_body;

type Sent = Result<Frame<Bytes>, std::io::Error>;

fn frames(frames: Vec<Sent>) -> StreamBody<futures_util::stream::Iter<std::vec::IntoIter<Sent>>> {
    StreamBody::new(futures_util::stream::iter(frames))
}

#[tokio::test]
async fn one_frame_is_its_own_bytes() {
    let sent = Bytes::from_static(b"{\"amount\":1}");
    let read = read_body(Full::new(sent.clone())).await.expect("read");
    assert_eq!(read, sent);
    assert_eq!(read.as_ptr(), sent.as_ptr(), "not copied");
}

#[tokio::test]
async fn frames_are_joined_in_order_and_trailers_skipped() {
    let mut trailers = axum::http::HeaderMap::new();
    trailers.insert("x-t", axum::http::HeaderValue::from_static("1"));
    for (sent, expected) in [
        (vec!["ab", "cd", "ef"], "abcdef"),
        (vec!["", "ab"], "ab"),
        (vec!["", "", ""], ""),
        (vec!["ab", "", "cd"], "abcd"),
        (vec![], ""),
    ] {
        let mut body: Vec<Sent> = sent
            .iter()
            .map(|s| Ok(Frame::data(Bytes::copy_from_slice(s.as_bytes()))))
            .collect();
        body.push(Ok(Frame::trailers(trailers.clone())));
        let read = read_body(frames(body)).await.expect("read");
        assert_eq!(read, expected.as_bytes(), "{sent:?}");
    }
}

#[tokio::test]
async fn an_error_frame_is_the_error() {
    let body = frames(vec![
        Ok(Frame::data(Bytes::from_static(b"ab"))),
        Err(std::io::Error::other("reset")),
    ]);
    let error = read_body(body).await.expect_err("an error");
    assert_eq!(error.to_string(), "reset");
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_by_the_limit() {
    let body = http_body_util::Limited::new(Full::new(Bytes::from(vec![b'x'; 33])), 32);
    let error = read_body(body).await.expect_err("over the limit");
    assert!(super::is_length_limit(error.as_ref()));
    // And the same bytes under the limit are read whole.
    let body = http_body_util::Limited::new(Full::new(Bytes::from(vec![b'x'; 32])), 32);
    assert_eq!(read_body(body).await.expect("read").len(), 32);
}
