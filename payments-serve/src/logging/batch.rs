//! Log lines to stderr in batches: a serving thread appends its finished
//! line to a shared buffer (one uncontended lock, one copy) and goes on; a
//! background thread writes what gathered every [`INTERVAL`], or at once
//! when it passes [`EAGER`] bytes. Nothing is dropped: a writer that finds
//! [`LIMIT`] bytes waiting writes them out itself.
//!
//! Why not `tracing_appender::non_blocking`: its worker writes and flushes
//! whenever its queue runs dry, which under load is after nearly every
//! line: per request one `write` system call, a wake-up of the worker
//! (a futex call) and the worker's spinning (`sched_yield`) on the serving
//! core. On one shared core that cost the contract proxy ~8 µs of its
//! ~48 µs per exchange (BENCHMARKS.md, "The log written in batches").

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a line may wait before it is written.
pub const INTERVAL: Duration = Duration::from_millis(50);

/// Gathered bytes that wake the writer thread before its interval.
const EAGER: usize = 256 * 1024;

/// Gathered bytes past which a serving thread writes them out itself (the
/// writer thread fell behind: memory stays bounded, nothing is lost).
const LIMIT: usize = 4 * 1024 * 1024;

#[derive(Default)]
struct Gathered {
    bytes: Vec<u8>,
    stop: bool,
}

/// What the serving threads and the writer thread share.
struct Shared<W> {
    gathered: Mutex<Gathered>,
    wake: Condvar,
    out: Mutex<W>,
}

impl<W: Write> Shared<W> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Gathered> {
        self.gathered.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes `bytes` out (a failed write to stderr is dropped: there is
    /// nowhere left to say so).
    fn write_out(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = out.write_all(bytes);
        let _ = out.flush();
    }
}

/// The `MakeWriter` the subscriber writes each event's line to.
pub struct Batched<W> {
    shared: Arc<Shared<W>>,
}

impl<W> std::fmt::Debug for Batched<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batched").finish_non_exhaustive()
    }
}

impl<W> std::fmt::Debug for Line<'_, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Line").finish_non_exhaustive()
    }
}

impl<W> Clone for Batched<W> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// Keeps the writer thread; dropping it writes what is left and ends it.
pub struct BatchGuard<W: Write + Send + 'static> {
    shared: Arc<Shared<W>>,
    thread: Option<JoinHandle<()>>,
}

impl<W: Write + Send + 'static> std::fmt::Debug for BatchGuard<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchGuard").finish_non_exhaustive()
    }
}

/// A batched writer to `out`, and the guard of its writer thread.
pub fn batched<W: Write + Send + 'static>(out: W) -> (Batched<W>, BatchGuard<W>) {
    let shared = Arc::new(Shared {
        gathered: Mutex::new(Gathered::default()),
        wake: Condvar::new(),
        out: Mutex::new(out),
    });
    let thread = std::thread::Builder::new()
        .name("payments-log".to_owned())
        .spawn({
            let shared = Arc::clone(&shared);
            move || run(&shared)
        })
        .ok();
    (
        Batched {
            shared: Arc::clone(&shared),
        },
        BatchGuard { shared, thread },
    )
}

/// The writer thread: every interval (or when woken), takes what gathered
/// and writes it, outside the lock.
fn run<W: Write>(shared: &Shared<W>) {
    let mut spare = Vec::new();
    loop {
        let mut gathered = shared.lock();
        if !gathered.stop && gathered.bytes.len() < EAGER {
            gathered = shared
                .wake
                .wait_timeout(gathered, INTERVAL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let stop = gathered.stop;
        std::mem::swap(&mut gathered.bytes, &mut spare);
        drop(gathered);
        shared.write_out(&spare);
        spare.clear();
        if stop {
            return;
        }
    }
}

impl<W: Write + Send + 'static> Drop for BatchGuard<W> {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        match self.thread.take() {
            Some(thread) => {
                let _ = thread.join();
            }
            // No thread could be started: write what gathered here.
            None => {
                let bytes = std::mem::take(&mut self.shared.lock().bytes);
                self.shared.write_out(&bytes);
            }
        }
    }
}

/// One event's writer: appends to the shared buffer.
pub struct Line<'a, W> {
    shared: &'a Shared<W>,
}

impl<W: Write> Write for Line<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut gathered = self.shared.lock();
        gathered.bytes.extend_from_slice(buf);
        let len = gathered.bytes.len();
        if len >= LIMIT || gathered.stop {
            // The writer thread fell behind, or is gone: write here.
            let bytes = std::mem::take(&mut gathered.bytes);
            drop(gathered);
            self.shared.write_out(&bytes);
        } else if len >= EAGER && len - buf.len() < EAGER {
            drop(gathered);
            self.shared.wake.notify_one();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a, W: Write + Send + 'static> tracing_subscriber::fmt::MakeWriter<'a> for Batched<W> {
    type Writer = Line<'a, W>;

    fn make_writer(&'a self) -> Self::Writer {
        Line {
            shared: &self.shared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::fmt::MakeWriter as _;

    /// A writer the test reads back, counting its writes.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<(Vec<u8>, usize)>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let mut inner = self.0.lock().expect("the sink");
            inner.0.extend_from_slice(buf);
            inner.1 += 1;
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_from_many_threads_arrive_whole_in_few_writes_and_all_at_drop() {
        let sink = Sink::default();
        let (writer, guard) = batched(sink.clone());
        std::thread::scope(|scope| {
            for t in 0..4 {
                let writer = writer.clone();
                scope.spawn(move || {
                    for n in 0..1000 {
                        let line = format!("thread {t} line {n}\n");
                        writer
                            .make_writer()
                            .write_all(line.as_bytes())
                            .expect("written");
                    }
                });
            }
        });
        drop(guard);
        let (bytes, writes) = sink.0.lock().expect("the sink").clone();
        let text = String::from_utf8(bytes).expect("UTF-8");
        let mut lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4000);
        lines.sort_unstable();
        lines.dedup();
        assert_eq!(lines.len(), 4000, "every line once, none torn");
        assert!(writes < 400, "{writes} writes for 4000 lines");
    }

    #[test]
    fn a_line_is_written_within_the_interval_without_more_lines() {
        let sink = Sink::default();
        let (writer, _guard) = batched(sink.clone());
        writer.make_writer().write_all(b"alone\n").expect("written");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while sink.0.lock().expect("the sink").0.is_empty() {
            assert!(std::time::Instant::now() < deadline, "never written");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(sink.0.lock().expect("the sink").0, b"alone\n");
    }

    #[test]
    fn past_the_limit_a_writer_writes_itself() {
        let sink = Sink::default();
        let (writer, guard) = batched(sink.clone());
        let big = vec![b'x'; LIMIT];
        writer.make_writer().write_all(&big).expect("written");
        assert_eq!(
            sink.0.lock().expect("the sink").0.len(),
            LIMIT,
            "written at once, not held"
        );
        drop(guard);
    }
}
