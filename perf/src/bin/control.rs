//! `perf-control`: the control of `scripts/load.sh`. A minimal axum server
//! that answers every GET with one fixed JSON body and every POST (after
//! reading the request body) with another, so the mock's figures can be
//! stated as a share of what axum and hyper alone do on the same core with
//! responses of the same size.
//!
//! `perf-control --get-body FILE --post-body FILE [--port 0]`; prints
//! `listening on http://ADDR` like the mock, serves until SIGTERM.

use std::process::ExitCode;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, header};
use axum::response::IntoResponse;
use axum::serve::ListenerExt as _;
use payments_perf::{Flags, stop_signal};

#[derive(Clone)]
struct Bodies {
    get: Bytes,
    post: Bytes,
}

async fn answer(State(bodies): State<Bodies>, method: Method, _body: Bytes) -> impl IntoResponse {
    let body = if method == Method::POST {
        bodies.post
    } else {
        bodies.get
    };
    ([(header::CONTENT_TYPE, "application/json")], body)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-control: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let flags = Flags::from_env()?;
    let read = |name: &str| -> Result<Bytes, String> {
        let path = flags
            .text(name)
            .ok_or_else(|| format!("--{name} FILE is required"))?;
        let text = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        Ok(Bytes::from(text))
    };
    let bodies = Bodies {
        get: read("get-body")?,
        post: read("post-body")?,
    };
    let port: u16 = flags.parsed("port", 0)?;
    // Same runtime as the mock binary: multi-threaded, one worker per
    // allowed core (one under `taskset -c 0`).
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        println!(
            "listening on http://{addr} get_body_bytes={} post_body_bytes={}",
            bodies.get.len(),
            bodies.post.len()
        );
        let app = Router::new().fallback(answer).with_state(bodies);
        // TCP_NODELAY like the mock's accept loop (server.rs).
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app)
            .with_graceful_shutdown(stop_signal())
            .await
            .map_err(|e| e.to_string())
    })
}
