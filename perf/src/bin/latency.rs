//! `perf-latency`: GETs a URL at a fixed rate (open loop: each request is
//! timed from when it was due, so a slow answer is not hidden by the
//! requests it delayed) and prints the latency percentiles, for the
//! contract proxy's added latency (`scripts/bench-proxy.sh`, issue 24).
//!
//! `perf-latency --url URL [--rate 1000] [--seconds 10] [--warmup 2]`
//! prints `requests=N errors=E p50_us=… p90_us=… p99_us=… max_us=…`.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use payments_perf::Flags;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-latency: {e}");
            ExitCode::FAILURE
        }
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn run() -> Result<(), String> {
    let flags = Flags::from_env()?;
    let url = flags.text("url").ok_or("--url is required")?.to_owned();
    let rate: u64 = flags.parsed("rate", 1000)?;
    let seconds: u64 = flags.parsed("seconds", 10)?;
    let warmup: u64 = flags.parsed("warmup", 2)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(256)
            .build()
            .map_err(|e| e.to_string())?;
        let latencies = Arc::new(Mutex::new(Vec::with_capacity((rate * seconds) as usize)));
        let errors = Arc::new(Mutex::new(0u64));
        let period = Duration::from_nanos(1_000_000_000 / rate.max(1));
        let total = rate * (seconds + warmup);
        let start = Instant::now();
        let mut tasks = Vec::with_capacity(total as usize);
        for n in 0..total {
            let due = start + period * u32::try_from(n).unwrap_or(u32::MAX);
            tokio::time::sleep_until(due.into()).await;
            let (http, url, latencies, errors) =
                (http.clone(), url.clone(), latencies.clone(), errors.clone());
            let measured = n >= rate * warmup;
            tasks.push(tokio::spawn(async move {
                let ok = match http.get(&url).send().await {
                    Ok(r) => r.bytes().await.is_ok(),
                    Err(_) => false,
                };
                let took = due.elapsed().as_micros() as u64;
                if measured {
                    if ok {
                        latencies.lock().expect("not poisoned").push(took);
                    } else {
                        *errors.lock().expect("not poisoned") += 1;
                    }
                }
            }));
        }
        for task in tasks {
            let _ = task.await;
        }
        let mut sorted = latencies.lock().expect("not poisoned").clone();
        sorted.sort_unstable();
        println!(
            "requests={} errors={} p50_us={} p90_us={} p99_us={} max_us={}",
            sorted.len(),
            errors.lock().expect("not poisoned"),
            percentile(&sorted, 50.0),
            percentile(&sorted, 90.0),
            percentile(&sorted, 99.0),
            sorted.last().copied().unwrap_or(0)
        );
        Ok(())
    })
}
