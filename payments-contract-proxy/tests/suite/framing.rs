//! Framing the proxy must get right whatever the upstream sends: a
//! `Content-Length` beside `Transfer-Encoding`, a HEAD's answer without a
//! length, more than a hundred header lines, and large bodies that keep
//! coming for longer than the upstream timeout (only a pause cuts them).

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;

use crate::rig::{Reply, Rig, Setup, client, proxy_in_front_of, status_data};
use crate::upstream::Canned;

/// An upstream that writes `pieces` (bytes, then a pause) for each
/// connection in turn, after reading the request's head.
pub async fn raw_upstream(answers: Vec<Vec<(Vec<u8>, Duration)>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        for pieces in answers {
            let (mut socket, _) = listener.accept().await.expect("a connection");
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                    break;
                }
                head.push(byte[0]);
            }
            for (bytes, pause) in pieces {
                if socket.write_all(&bytes).await.is_err() {
                    break;
                }
                tokio::time::sleep(pause).await;
            }
            let _ = socket.shutdown().await;
        }
    });
    format!("http://{addr}")
}

pub fn once(bytes: &[u8]) -> Vec<(Vec<u8>, Duration)> {
    vec![(bytes.to_vec(), Duration::ZERO)]
}

#[tokio::test]
async fn a_content_length_beside_transfer_encoding_is_not_passed_on() {
    let upstream = raw_upstream(vec![once(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10\r\n\
          transfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    )])
    .await;
    let proxy = proxy_in_front_of(&upstream, &Setup::default()).await;
    let reply = Reply::of(
        client()
            .get(format!("{}/api/payments/t-1/status", proxy.base_url()))
            .send()
            .await
            .expect("the proxy answers whole"),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, Bytes::from_static(b"abc"));
    assert_ne!(
        reply.headers.get("content-length").map(|v| v.as_bytes()),
        Some(b"10".as_slice()),
        "{:?}",
        reply.headers
    );
}

#[tokio::test]
async fn a_heads_answer_without_a_length_gets_none() {
    let upstream = raw_upstream(vec![once(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
    )])
    .await;
    let proxy = proxy_in_front_of(&upstream, &Setup::default()).await;
    let reply = Reply::of(
        client()
            .head(format!("{}/api/payments/t-1/status", proxy.base_url()))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert!(
        reply.headers.get("content-length").is_none(),
        "no length made up: {:?}",
        reply.headers
    );
}

#[tokio::test]
async fn an_answer_with_more_than_a_hundred_headers_passes_through() {
    let rig = Rig::start().await;
    let mut canned = Canned::ok(status_data("t-h", "R-h", "INITIATED", "1"));
    for n in 0..150 {
        canned = canned.header(&format!("x-h{n}"), &n.to_string());
    }
    rig.upstream.push(canned);
    // Read raw: HTTP clients stop at a hundred header lines themselves.
    let url = url::Url::parse(&rig.url("/")).expect("a URL");
    let mut socket = tokio::net::TcpStream::connect((
        url.host_str().expect("a host"),
        url.port().expect("a port"),
    ))
    .await
    .expect("connects");
    socket
        .write_all(b"GET /api/payments/t-h/status HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .expect("sent");
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).await.expect("read");
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 200 "), "{text}");
    let lines = text.lines().filter(|l| l.starts_with("x-h")).count();
    assert_eq!(lines, 150, "{text}");
}

/// Seventeen MiB in 512 KiB pieces, 40 ms apart: past the judging limit,
/// and longer in all than the 300 ms upstream timeout, never pausing that
/// long.
const PIECE: usize = 512 * 1024;
const PIECES: usize = 34;
const GAP: Duration = Duration::from_millis(40);
const TIMEOUT: Duration = Duration::from_millis(300);

// On tokio's paused clock: the pauses between pieces and the proxy's
// upstream timeout are the same virtual timers, so the 1.4 s of pieces
// pass without waiting.
#[tokio::test(start_paused = true)]
async fn a_large_answer_that_keeps_coming_is_not_cut_off_by_the_timeout() {
    let mut pieces = vec![(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\n\r\n",
            PIECE * PIECES
        )
        .into_bytes(),
        GAP,
    )];
    pieces.extend((0..PIECES).map(|n| (vec![b'a' + (n % 26) as u8; PIECE], GAP)));
    let upstream = raw_upstream(vec![pieces]).await;
    let proxy = proxy_in_front_of(
        &upstream,
        &Setup {
            upstream_timeout: TIMEOUT,
            ..Setup::default()
        },
    )
    .await;
    let started = Instant::now();
    let reply = Reply::of(
        client()
            .get(format!("{}/api/payments/t-big/status", proxy.base_url()))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert!(started.elapsed() > TIMEOUT, "the answer took longer in all");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body.len(), PIECE * PIECES);
    assert_eq!(reply.verdict(), "unchecked");
}

// Real time: on tokio's paused clock the proxy's timeout fired while the
// upload was still flowing (the clock jumped while the runtime waited on
// socket I/O), so this one keeps its 40 ms pauses.
#[tokio::test]
async fn a_large_request_that_keeps_coming_is_forwarded_whole() {
    let rig = Rig::with(Setup {
        upstream_timeout: TIMEOUT,
        ..Setup::default()
    })
    .await;
    rig.upstream
        .push(Canned::ok(status_data("t-up", "R-up", "INITIATED", "1")));
    let paced = futures::stream::iter(0..PIECES).then(|n| async move {
        tokio::time::sleep(GAP).await;
        Ok::<_, std::io::Error>(hyper::body::Frame::data(Bytes::from(vec![
            b'a' + (n % 26)
                as u8;
            PIECE
        ])))
    });
    let started = Instant::now();
    let reply = Reply::of(
        client()
            .post(rig.url("/api/payments/initiate"))
            .header("content-type", "application/json")
            .header("content-length", (PIECE * PIECES).to_string())
            .body(reqwest::Body::wrap(http_body_util::StreamBody::new(paced)))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert!(started.elapsed() > TIMEOUT, "the upload took longer in all");
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(rig.upstream.only_request().body.len(), PIECE * PIECES);
}

/// Reads one answer's head from `socket`, byte by byte (nothing of what
/// follows it).
async fn read_head(socket: &mut tokio::net::TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let read = tokio::time::timeout(Duration::from_secs(30), socket.read(&mut byte))
            .await
            .expect("an answer in time")
            .expect("read");
        assert_ne!(
            read,
            0,
            "closed before a head: {:?}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).to_ascii_lowercase()
}

/// An HTTP/1.0 client that asks for keep-alive, the upstream's answers
/// without a length (ended by closing): either the proxy's first answer
/// says `Connection: close` (and is whole at the close), or it has a
/// length and the second request on the connection is answered too.
#[tokio::test]
async fn an_http_10_keep_alive_client_is_never_left_waiting_for_an_unsized_answer() {
    const BODY: &[u8] = b"{\"success\":true}";
    let answer = [
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n"
            .as_slice(),
        BODY,
    ]
    .concat();
    let upstream = raw_upstream(vec![once(&answer), once(&answer)]).await;
    let proxy = proxy_in_front_of(&upstream, &Setup::default()).await;
    let url = url::Url::parse(&proxy.base_url()).expect("a URL");
    let mut socket = tokio::net::TcpStream::connect((
        url.host_str().expect("a host"),
        url.port().expect("a port"),
    ))
    .await
    .expect("connects");
    let request = b"GET /api/payments/t-1/status HTTP/1.0\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\n\r\n";
    socket.write_all(request).await.expect("sent");
    let head = read_head(&mut socket).await;
    assert!(head.starts_with("http/1.0 200 "), "{head}");
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|n| n.trim().parse::<usize>().expect("a length"));
    let Some(length) = length else {
        assert!(
            head.contains("\r\nconnection: close\r\n"),
            "no length, and keep-alive promised: {head}"
        );
        let mut body = Vec::new();
        tokio::time::timeout(Duration::from_secs(30), socket.read_to_end(&mut body))
            .await
            .expect("closed in time")
            .expect("read");
        assert_eq!(body, BODY);
        return;
    };
    let mut body = vec![0u8; length];
    socket.read_exact(&mut body).await.expect("the body");
    assert_eq!(body, BODY);
    socket.write_all(request).await.expect("sent again");
    let again = read_head(&mut socket).await;
    assert!(again.starts_with("http/1.0 200 "), "{again}");
}
