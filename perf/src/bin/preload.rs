//! `perf-preload`: initiates N transactions over HTTP and writes
//! `transactionId referenceNo` per line, the pool the confirm load of
//! `scripts/load.sh` confirms (each transaction confirms once).
//!
//! `perf-preload --base URL --count N --out FILE [--tag T] [--concurrency 64]
//! [--confirm 1]`: with `--confirm 1` each transaction is also confirmed
//! once, so that confirming the pool again meets only
//! `TRANSACTION_ALREADY_CONFIRMED`.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use futures::StreamExt as _;
use payments_perf::Flags;

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-preload: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    body: String,
) -> Result<serde_json::Value, String> {
    let reply = http
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| e.to_string())?
        .bytes()
        .await
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&reply).map_err(|e| e.to_string())
}

async fn initiate(
    http: &reqwest::Client,
    base: &str,
    reference: String,
    confirm: bool,
) -> Result<(String, String), String> {
    let body = serde_json::json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": 1050,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
    });
    let value = post(
        http,
        &format!("{base}/api/payments/initiate"),
        body.to_string(),
    )
    .await?;
    let id = value["data"]["transactionId"]
        .as_str()
        .ok_or_else(|| format!("initiate failed: {value}"))?
        .to_owned();
    if confirm {
        let body = serde_json::json!({ "transactionId": id, "referenceNo": reference });
        let value = post(
            http,
            &format!("{base}/api/payments/confirm"),
            body.to_string(),
        )
        .await?;
        if value["isSuccess"] != serde_json::Value::Bool(true) {
            return Err(format!("confirm failed: {value}"));
        }
    }
    Ok((id, reference))
}

fn run() -> Result<(), String> {
    let flags = Flags::from_env()?;
    let base = flags
        .text("base")
        .ok_or("--base URL is required")?
        .to_owned();
    let out = flags
        .text("out")
        .ok_or("--out FILE is required")?
        .to_owned();
    let count: usize = flags.parsed("count", 10_000)?;
    let concurrency: usize = flags.parsed("concurrency", 64)?;
    let tag = flags.text("tag").unwrap_or("pool").to_owned();
    let confirm = flags.parsed::<u8>("confirm", 0)? == 1;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let pairs = runtime.block_on(async {
        let http = reqwest::Client::new();
        futures::stream::iter(0..count)
            .map(|i| initiate(&http, &base, format!("{tag}-{i}"), confirm))
            .buffer_unordered(concurrency)
            .collect::<Vec<_>>()
            .await
    });
    let mut file =
        std::io::BufWriter::new(std::fs::File::create(&out).map_err(|e| format!("{out}: {e}"))?);
    for pair in pairs {
        let (id, reference) = pair?;
        writeln!(file, "{id} {reference}").map_err(|e| format!("{out}: {e}"))?;
    }
    file.flush().map_err(|e| format!("{out}: {e}"))?;
    println!(
        "preloaded={count} seconds={:.3}",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
