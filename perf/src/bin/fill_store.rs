//! `perf-fill-store`: writes N transactions into a store through the
//! library's store API (what the initiate handler calls), for the store
//! benchmarks of `scripts/bench-store.sh` (issue 23): a SQLite file with a
//! million transactions to time a start on, and its size on disk.
//!
//! `perf-fill-store --store sqlite:PATH --count 1000000 [--concurrency 256]`
//! prints `transactions=N seconds=S`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use payments_mock_server::domain::port::Store as _;
use payments_mock_server::domain::validate::initiate as validate_initiate;
use payments_mock_server::store::AnyStore;
use payments_mock_server::{Catalog, Durability, InitialState, StoreSpec};
use payments_perf::Flags;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-fill-store: {e}");
            ExitCode::FAILURE
        }
    }
}

fn body(n: u64) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::json!({
        "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
        "referenceNo": format!("FILL-{n:08}"),
        "amount": 1050,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
    }) {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

fn run() -> Result<(), String> {
    let flags = Flags::from_env()?;
    let spec: StoreSpec = flags.text("store").ok_or("--store is required")?.parse()?;
    let count: u64 = flags.parsed("count", 1_000_000)?;
    let concurrency: u64 = flags.parsed("concurrency", 256)?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let store = Arc::new(
            AnyStore::open(&spec, Durability::Process, "fill")
                .await
                .map_err(|e| e.to_string())?,
        );
        let catalog = Arc::new(Catalog::default());
        let started = Instant::now();
        let tasks: Vec<_> = (0..concurrency)
            .map(|t| {
                let (store, catalog) = (store.clone(), catalog.clone());
                tokio::spawn(async move {
                    let mut n = t;
                    while n < count {
                        let fields =
                            validate_initiate(&body(n), &catalog).map_err(|e| e.to_string())?;
                        store
                            .create(
                                fields,
                                InitialState::Initiated,
                                std::time::Duration::from_secs(900),
                            )
                            .await
                            .map_err(|e| e.to_string())?
                            .map_err(|e| format!("{e:?}"))?;
                        n += concurrency;
                    }
                    Ok::<(), String>(())
                })
            })
            .collect();
        for task in tasks {
            task.await.map_err(|e| e.to_string())??;
        }
        println!("transactions={count}");
        println!("seconds={:.1}", started.elapsed().as_secs_f64());
        Ok(())
    })
}
