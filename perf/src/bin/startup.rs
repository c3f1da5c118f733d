//! `perf-startup`: process start to the first successful `/_mock/health`
//! answer of the mock binary (issue #7, item 3).
//!
//! `perf-startup --bin PATH [--runs 20]`: spawns `PATH --port 0`, reads the
//! banner from its stdout, polls `GET /_mock/health` over a fresh
//! connection until it answers 200, records the time since just before the
//! spawn, stops the process, and repeats. Prints each run, then
//! `median_ms=`, `min_ms=`, `max_ms=`.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use payments_perf::Flags;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-startup: {e}");
            ExitCode::FAILURE
        }
    }
}

fn healthy(addr: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return false;
    };
    let request =
        format!("GET /_mock/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

fn one_start(bin: &str) -> Result<Duration, String> {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {bin}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut banner = String::new();
    BufReader::new(stdout)
        .read_line(&mut banner)
        .map_err(|e| format!("reading the banner: {e}"))?;
    let addr = banner
        .trim()
        .strip_prefix("listening on http://")
        .ok_or_else(|| format!("unexpected banner {banner:?}"))?
        .to_owned();
    let result = loop {
        if healthy(&addr) {
            break Ok(started.elapsed());
        }
        if started.elapsed() > Duration::from_secs(10) {
            break Err("no healthy answer within 10 s".to_owned());
        }
        std::thread::sleep(Duration::from_micros(100));
    };
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn run() -> Result<(), String> {
    let flags = Flags::from_env()?;
    let bin = flags
        .text("bin")
        .ok_or("--bin PATH is required")?
        .to_owned();
    let runs: usize = flags.parsed("runs", 20)?;
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        let t = one_start(&bin)?;
        println!("run={} ms={:.3}", i + 1, t.as_secs_f64() * 1000.0);
        times.push(t);
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = if runs % 2 == 1 {
        ms(times[runs / 2])
    } else {
        (ms(times[runs / 2 - 1]) + ms(times[runs / 2])) / 2.0
    };
    println!("runs={runs}");
    println!("median_ms={median:.3}");
    println!("min_ms={:.3}", ms(times[0]));
    println!("max_ms={:.3}", ms(times[runs - 1]));
    Ok(())
}
