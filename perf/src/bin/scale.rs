//! `perf-scale`: the mock in-process with N transactions pre-loaded through
//! the library API (`validate_initiate`, the initiate handler's validation,
//! then `MemoryStore::initiate`, the memory store's insert without a
//! future), then served like the binary.
//!
//! `perf-scale --count N [--ids-out FILE] [--sample M] [--port 0]`
//!
//! Prints `rss_empty_kib=`, `rss_loaded_kib=`, `bytes_per_transaction=` and
//! `load_seconds=`, writes M ids (evenly spread over the store, one
//! `transactionId referenceNo` per line) to FILE, then
//! `listening on http://ADDR` and serves until SIGTERM. The request log is on
//! (stderr), as in the binary.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use payments_mock_server::domain::validate::initiate as validate_initiate;
use payments_mock_server::{InitialState, MockServer};
use payments_perf::{Flags, init_request_log, stop_signal, vm_rss_kib};
use serde_json::{Map, Value, json};

/// The binary's allocator (`payments-mock-server/src/main.rs`), so the
/// memory figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-scale: {e}");
            ExitCode::FAILURE
        }
    }
}

fn body(i: u64) -> Map<String, Value> {
    let value = json!({
        "merchantId": MERCHANT,
        "referenceNo": format!("SCALE-{i:08}"),
        "amount": 1000 + i % 9000,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
    });
    match value {
        Value::Object(map) => map,
        _ => unreachable!("json! of an object literal is an object"),
    }
}

fn run() -> Result<(), String> {
    let flags = Flags::from_env()?;
    let count: u64 = flags.parsed("count", 1_000_000)?;
    let sample: u64 = flags.parsed("sample", 1000)?;
    let port: u16 = flags.parsed("port", 0)?;
    let _log = init_request_log();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", port)).map_err(|e| e.to_string())?;
        let server = MockServer::builder()
            .listener(listener)
            .start()
            .await
            .map_err(|e| e.to_string())?;
        // Let the runtime settle so the baseline holds its threads and the
        // listener task.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let rss_empty = vm_rss_kib("self").ok_or("cannot read VmRSS")?;

        let state = server.state();
        // The memory store's sync calls: no future per transaction.
        let store = state.store.as_memory().ok_or("not a memory store")?;
        let product = state.catalog.product("TOPUP").ok_or("no TOPUP product")?;
        let initial: InitialState = product.initial;
        let every = (count / sample.max(1)).max(1);
        let mut ids = Vec::new();
        let mut record_bytes = 0;
        let started = Instant::now();
        for i in 0..count {
            let fields = validate_initiate(&body(i), &state.catalog)
                .map_err(|e| format!("transaction {i} invalid: {e}"))?;
            let now = store.virtual_clock().now();
            let expires_at = now + state.expiry;
            let record = store
                .initiate(fields, initial, now, expires_at)
                .map_err(|refused| format!("transaction {i} not stored: {refused:?}"))?;
            record_bytes = std::mem::size_of_val(&record);
            if i % every == 0 && (ids.len() as u64) < sample {
                ids.push(format!("{} {}", record.id, record.fields.reference_no));
            }
        }
        let load_seconds = started.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let rss_loaded = vm_rss_kib("self").ok_or("cannot read VmRSS")?;
        let per_tx = if count == 0 {
            0.0
        } else {
            (rss_loaded.saturating_sub(rss_empty) * 1024) as f64 / count as f64
        };
        println!("transactions={count}");
        println!("load_seconds={load_seconds:.3}");
        println!("rss_empty_kib={rss_empty}");
        println!("rss_loaded_kib={rss_loaded}");
        println!("bytes_per_transaction={per_tx:.1}");
        // The stored record's inline size, before its heap strings and the
        // two index maps.
        println!("record_inline_bytes={record_bytes}");
        println!("index_bytes={}", store.index_bytes());
        if let Some(path) = flags.text("ids-out") {
            let mut file = std::io::BufWriter::new(
                std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?,
            );
            for line in &ids {
                writeln!(file, "{line}").map_err(|e| format!("{path}: {e}"))?;
            }
            file.flush().map_err(|e| format!("{path}: {e}"))?;
        }
        println!("listening on {}", server.base_url());
        stop_signal().await;
        server.shutdown().await;
        Ok(())
    })
}
