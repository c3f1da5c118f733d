//! The forwarding's own pieces: hop-by-hop headers, bodies read whole.

use super::*;

#[test]
fn hop_by_hop_headers_are_dropped_and_the_rest_kept_in_order() {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONNECTION,
        HeaderValue::from_static("keep-alive, X-Private"),
    );
    headers.insert("x-private", HeaderValue::from_static("hop"));
    headers.insert(
        header::TRANSFER_ENCODING,
        HeaderValue::from_static("chunked"),
    );
    headers.insert(header::HOST, HeaderValue::from_static("proxy:1"));
    headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer k"));
    headers.insert(
        header::PROXY_AUTHORIZATION,
        HeaderValue::from_static("Basic cHJveHk6a2V5"),
    );
    headers.insert(
        header::PROXY_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=\"proxy\""),
    );
    headers.append("x-twice", HeaderValue::from_static("1"));
    headers.append("x-twice", HeaderValue::from_static("2"));
    let kept = end_to_end(&headers);
    let names: Vec<&str> = kept.keys().map(HeaderName::as_str).collect();
    assert_eq!(names, ["authorization", "x-twice"]);
    assert_eq!(kept.get_all("x-twice").iter().count(), 2);
}

/// Reads `chunks` as a body through [`read_up_to`].
fn read(chunks: &[&'static [u8]]) -> Read<impl futures::Stream<Item = Result<Bytes, ()>> + Unpin> {
    let stream = futures::stream::iter(chunks.iter().map(|c| Ok(Bytes::from_static(c))));
    futures::executor::block_on(read_up_to(stream)).expect("read")
}

fn whole(read: Read<impl Unpin>) -> Bytes {
    match read {
        Read::Whole(bytes) => bytes,
        Read::Streaming { .. } => panic!("read whole"),
    }
}

#[test]
fn a_body_in_one_chunk_is_kept_as_it_came() {
    static BODY: &[u8] = b"{\"amount\":1050}";
    let bytes = whole(read(&[BODY]));
    assert_eq!(bytes, BODY);
    assert_eq!(bytes.as_ptr(), BODY.as_ptr(), "not copied");
    assert!(whole(read(&[])).is_empty());
}

#[test]
fn a_body_in_chunks_is_read_whole_in_order() {
    assert_eq!(whole(read(&[b"{\"a\":", b"1", b"}"])), &b"{\"a\":1}"[..]);
    assert_eq!(whole(read(&[b"", b"ab", b"", b"c"])), &b"abc"[..]);
    assert_eq!(whole(read(&[b"ab", b""])), &b"ab"[..]);
}

#[test]
fn a_body_past_the_limit_streams_from_what_was_read() {
    static BIG: [u8; JUDGE_LIMIT + 1] = [b'x'; JUDGE_LIMIT + 1];
    match read(&[b"ab", &BIG, b"rest"]) {
        Read::Streaming { head, rest } => {
            assert_eq!(head.len(), 2 + BIG.len());
            assert_eq!(&head[..3], b"abx");
            let rest: Vec<_> = futures::executor::block_on(rest.collect::<Vec<_>>());
            assert_eq!(rest.len(), 1, "the rest still to come");
        }
        Read::Whole(_) => panic!("past the limit"),
    }
    match read(&[&BIG]) {
        Read::Streaming { head, .. } => assert_eq!(head.len(), BIG.len()),
        Read::Whole(_) => panic!("past the limit"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_timeout_past_the_clocks_range_never_comes_and_never_panics() {
    let progress = Progress::new();
    // `Instant + Duration::MAX` panics ("overflow when adding duration to
    // instant"); the wait is endless instead.
    let waited = tokio::time::timeout(
        std::time::Duration::from_secs(3600),
        progress.overdue(std::time::Duration::MAX),
    )
    .await;
    assert!(waited.is_err(), "overdue with Duration::MAX returned");
}
