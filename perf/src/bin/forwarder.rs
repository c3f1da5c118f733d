//! `perf-forwarder`: the control of `scripts/bench-proxy.sh`. A bare
//! HTTP/1.1 reverse proxy that does nothing but forward: served the way the
//! mock and the contract proxy serve (hyper's HTTP/1 connection builder,
//! the same limits and timeouts, `TCP_NODELAY`), forwarding through a client
//! built like the proxy's upstream client (`proxy/mod.rs`,
//! `upstream_client`). No judging, no body read whole, no recording, no
//! log: bodies stream through as they come. So the proxy's figures can be
//! stated as a share of what any proxy on this stack does on the same core.
//!
//! Each request goes to upstream + its path and query, with its method,
//! its headers less the hop-by-hop ones, dropped by the proxy's own
//! `end_to_end_headers` (and `Host`: the client sets the
//! upstream's) and its body; the answer's status, headers (hop-by-hop ones
//! dropped) and body come back. No answer from the upstream: 502.
//!
//! `perf-forwarder --upstream http://127.0.0.1:PORT [--port 0]`; prints
//! `listening on http://ADDR` like the mock, serves until SIGTERM or SIGINT.

use std::convert::Infallible;
use std::process::ExitCode;
use std::sync::Arc;

use http_body_util::{Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use payments_contract_proxy::end_to_end as end_to_end_headers;
use payments_mock_server::http::{DEFAULT_HEADER_READ_TIMEOUT, HEADER_LIMIT};
use payments_perf::{Flags, stop_signal};

/// The mock binary's allocator, which the proxy runs in too.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Upstream = Client<hyper_rustls::HttpsConnector<HttpConnector>, Incoming>;
type Answer = Response<Either<Incoming, Full<Bytes>>>;

fn bad_gateway(why: &'static str) -> Answer {
    let mut answer = Response::new(Either::Right(Full::new(Bytes::from_static(why.as_bytes()))));
    *answer.status_mut() = StatusCode::BAD_GATEWAY;
    let plain = HeaderValue::from_static("text/plain; charset=utf-8");
    answer.headers_mut().insert(header::CONTENT_TYPE, plain);
    answer
}

/// Forwards one request; every failure is an answer (502), never an error.
async fn forward(client: Upstream, upstream: Arc<str>, request: Request<Incoming>) -> Answer {
    let (parts, body) = request.into_parts();
    let target = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    let Ok(uri) = format!("{upstream}{target}").parse::<Uri>() else {
        return bad_gateway("perf-forwarder: no upstream URL for this target\n");
    };
    let mut out = Request::new(body);
    *out.method_mut() = parts.method;
    *out.uri_mut() = uri;
    *out.headers_mut() = end_to_end_headers(&parts.headers);
    match client.request(out).await {
        Ok(reply) => {
            let (reply, body) = reply.into_parts();
            let mut answer = Response::new(Either::Left(body));
            *answer.status_mut() = reply.status;
            *answer.headers_mut() = end_to_end_headers(&reply.headers);
            answer
        }
        Err(_) => bad_gateway("perf-forwarder: the upstream could not be reached\n"),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-forwarder: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let flags = Flags::from_env()?;
    let upstream = flags
        .text("upstream")
        .ok_or("--upstream http://HOST:PORT is required")?
        .trim_end_matches('/');
    let probe: Uri = format!("{upstream}/")
        .parse()
        .map_err(|e| format!("--upstream {upstream:?}: {e}"))?;
    if !matches!(probe.scheme_str(), Some("http" | "https")) || probe.authority().is_none() {
        return Err("--upstream must be an absolute http or https URL".to_owned());
    }
    let upstream: Arc<str> = upstream.into();
    let port: u16 = flags.parsed("port", 0)?;
    // Same runtime as the mock binary: multi-threaded, one worker per
    // allowed core (one under `taskset -c 0`).
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        // As the proxy's `upstream_client` (its default 30 s timeout).
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(std::time::Duration::from_secs(30)));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client: Upstream = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(256)
            .http1_max_headers(1024)
            .build(https);

        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        println!("listening on http://{addr} upstream={upstream}");
        // The accept loop of the mock's `http/server.rs`, less its
        // connection resets.
        let graceful = GracefulShutdown::new();
        let mut stop = std::pin::pin!(stop_signal());
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => {
                        tokio::task::yield_now().await;
                        continue;
                    }
                },
                () = &mut stop => break,
            };
            let _ = stream.set_nodelay(true);
            let (client, upstream) = (client.clone(), upstream.clone());
            let service = hyper::service::service_fn(move |request| {
                let answer = forward(client.clone(), upstream.clone(), request);
                async move { Ok::<_, Infallible>(answer.await) }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(DEFAULT_HEADER_READ_TIMEOUT)
                .max_header_size(HEADER_LIMIT);
            let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
            tokio::spawn(async move {
                let _ = conn.await;
            });
        }
        drop(listener);
        graceful.shutdown().await;
        Ok(())
    })
}
