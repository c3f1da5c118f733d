//! `perf-otlp-sink`: an OTLP/HTTP receiver that takes every export and
//! throws it away, the receiver of `scripts/bench-otlp.sh`: what the mock
//! pays for `--otlp-endpoint` is then its own span work and export, not a
//! collector's. Counts the exports and their bytes, printed at the stop.
//!
//! `perf-otlp-sink [--port 0]`; prints `listening on http://ADDR` like the
//! mock, answers `POST /v1/traces` 200 with an empty
//! `ExportTraceServiceResponse` (an empty protobuf message is no bytes),
//! serves until SIGTERM.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use payments_perf::{Flags, stop_signal};

/// Exports taken and their bytes.
#[derive(Default)]
struct Taken {
    exports: AtomicU64,
    bytes: AtomicU64,
}

async fn take(State(taken): State<Arc<Taken>>, body: Bytes) -> impl IntoResponse {
    taken.exports.fetch_add(1, Ordering::Relaxed);
    taken.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
    (
        [(header::CONTENT_TYPE, "application/x-protobuf")],
        Bytes::new(),
    )
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-otlp-sink: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let flags = Flags::from_env()?;
    let port: u16 = flags.parsed("port", 0)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        println!("listening on http://{addr}");
        let taken = Arc::new(Taken::default());
        let app = Router::new()
            .route("/v1/traces", axum::routing::post(take))
            .with_state(Arc::clone(&taken));
        axum::serve(listener, app)
            .with_graceful_shutdown(stop_signal())
            .await
            .map_err(|e| e.to_string())?;
        eprintln!(
            "exports={} bytes={}",
            taken.exports.load(Ordering::Relaxed),
            taken.bytes.load(Ordering::Relaxed)
        );
        Ok(())
    })
}
