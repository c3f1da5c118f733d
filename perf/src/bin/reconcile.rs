//! `perf-reconcile`: `payments reconcile` of a large ledger against the
//! mock binary (issue 34): throughput in rows per second and the CLI's
//! peak resident set size.
//!
//! `perf-reconcile [--rows 100000] [--concurrency 8] [--runs 3]
//! [--bin target/release] [--out target/perf/reconcile]`
//!
//! Starts `BIN/payments-mock-server --port 0` (its request log to
//! /dev/null), initiates and confirms ROWS transactions over HTTP (TOPUP,
//! so each is SUCCESSFUL), writes a ledger of ROWS rows (`referenceNo,
//! amount,currency,status`): every 100th row's amount one cent off (class
//! `amount`) and every 100th, one later, a reference the service never saw
//! (`missing`); the rest match. Then runs, RUNS times each,
//! `/usr/bin/time -f %M BIN/payments --base-url URL --merchant-id M
//! reconcile LEDGER --concurrency C -o json` and `-o table`, stdout to
//! /dev/null, and prints `key=value` lines: the median wall time, rows
//! per second, the largest peak RSS (`%M`, KiB) and the exit code (6: the
//! ledger has rows that do not match, as intended).

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use futures::StreamExt as _;
use payments_perf::Flags;

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-reconcile: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The amount of row `i`, in minor units (10.00 to 99.99 MYR).
fn minor(i: usize) -> usize {
    1000 + i % 9000
}

fn reference(i: usize) -> String {
    format!("REC-{i:07}")
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

/// Initiates and confirms transaction `i`.
async fn pay(http: &reqwest::Client, base: &str, i: usize) -> Result<(), String> {
    let body = serde_json::json!({
        "merchantId": MERCHANT,
        "referenceNo": reference(i),
        "amount": minor(i),
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
        .ok_or_else(|| format!("initiate failed: {value}"))?;
    let body = serde_json::json!({ "transactionId": id, "referenceNo": reference(i) });
    let value = post(
        http,
        &format!("{base}/api/payments/confirm"),
        body.to_string(),
    )
    .await?;
    if value["isSuccess"] != serde_json::Value::Bool(true) {
        return Err(format!("confirm failed: {value}"));
    }
    Ok(())
}

fn write_ledger(path: &Path, rows: usize) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let mut write = || -> std::io::Result<()> {
        writeln!(out, "referenceNo,amount,currency,status")?;
        for i in 0..rows {
            let (reference, minor) = match i % 100 {
                0 => (reference(i), minor(i) + 1),
                1 => (format!("NEVER-{i:07}"), minor(i)),
                _ => (reference(i), minor(i)),
            };
            writeln!(
                out,
                "{reference},{}.{:02},MYR,SUCCESSFUL",
                minor / 100,
                minor % 100
            )?;
        }
        out.flush()
    };
    write().map_err(|e| format!("{}: {e}", path.display()))
}

/// Starts the mock binary; returns the child and its base URL.
fn start_mock(bin: &Path) -> Result<(std::process::Child, String), String> {
    let mut child = Command::new(bin.join("payments-mock-server"))
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", bin.join("payments-mock-server").display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| format!("unexpected banner {line:?}"))?
        .to_owned();
    Ok((child, base))
}

/// One run under `/usr/bin/time -f %M`: wall seconds, peak RSS in KiB,
/// exit code.
fn reconcile(
    bin: &Path,
    base: &str,
    ledger: &Path,
    output: &str,
    concurrency: usize,
) -> Result<(f64, u64, i32), String> {
    let started = Instant::now();
    let done = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(bin.join("payments"))
        .args(["--base-url", base, "--merchant-id", MERCHANT, "-o", output])
        .arg("reconcile")
        .arg(ledger)
        .args(["--concurrency", &concurrency.to_string()])
        .env_remove("PAYMENTS_PROFILE")
        .env("XDG_CONFIG_HOME", ledger.with_extension("no-config"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("/usr/bin/time: {e}"))?;
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&done.stderr);
    let rss = stderr
        .lines()
        .last()
        .and_then(|line| line.trim().parse().ok())
        .ok_or_else(|| format!("no peak RSS in {stderr:?}"))?;
    // time exits with the command's code.
    let code = done.status.code().unwrap_or(-1);
    if code != 0 && code != 6 {
        return Err(format!("reconcile exited {code}: {stderr}"));
    }
    Ok((seconds, rss, code))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn run() -> Result<(), String> {
    let flags = Flags::from_env()?;
    let rows: usize = flags.parsed("rows", 100_000)?;
    let concurrency: usize = flags.parsed("concurrency", 8)?;
    let runs: usize = flags.parsed("runs", 3)?.max(1);
    let bin = PathBuf::from(flags.text("bin").unwrap_or("target/release"));
    let out = PathBuf::from(flags.text("out").unwrap_or("target/perf/reconcile"));
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;

    let (mut mock, base) = start_mock(&bin)?;
    let result = (|| {
        let started = Instant::now();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let http = reqwest::Client::new();
            futures::stream::iter(0..rows)
                .map(|i| pay(&http, &base, i))
                .buffer_unordered(64)
                .collect::<Vec<_>>()
                .await
                .into_iter()
                .collect::<Result<Vec<()>, String>>()
        })?;
        println!(
            "preloaded={rows} seconds={:.1}",
            started.elapsed().as_secs_f64()
        );
        let ledger = out.join("ledger.csv");
        write_ledger(&ledger, rows)?;
        let size = std::fs::metadata(&ledger).map_err(|e| e.to_string())?.len();
        println!("ledger={} bytes={size}", ledger.display());
        for output in ["json", "table"] {
            let mut times = Vec::new();
            let mut peak = 0;
            let mut code = 0;
            for _ in 0..runs {
                let (seconds, rss, exit) = reconcile(&bin, &base, &ledger, output, concurrency)?;
                times.push(seconds);
                peak = peak.max(rss);
                code = exit;
            }
            let seconds = median(times.clone());
            println!(
                "output={output} concurrency={concurrency} rows={rows} runs={runs} \
                 median_seconds={seconds:.3} rows_per_second={:.0} peak_rss_kib={peak} \
                 peak_rss_mib={:.1} exit={code} all_seconds={}",
                rows as f64 / seconds,
                peak as f64 / 1024.0,
                times
                    .iter()
                    .map(|t| format!("{t:.3}"))
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
        Ok(())
    })();
    let _ = mock.kill();
    let _ = mock.wait();
    result
}
