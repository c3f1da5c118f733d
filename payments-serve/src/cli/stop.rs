//! A stop (SIGINT, SIGTERM, SIGHUP) heard from the very start ([`Stop`]):
//! a binary installs the handlers before anything slow (the TLS
//! directory, the mock's store opened and migrated, a `--seed-from`
//! recording read and placed), so a stop while it starts ends the start
//! instead of being lost (PID 1 in a container ignores a signal without
//! a handler) or killing it mid-write (the default action anywhere
//! else).

use std::future::Future;

use tokio::sync::watch;

use crate::logging::LogFormat;

/// Whether a stop came, told to every step of the start and then to the
/// server as its shutdown. Cheap to clone.
///
/// ```no_run
/// use payments_serve::cli::Stop;
/// use payments_serve::logging::LogFormat;
///
/// # async fn demo() -> std::process::ExitCode {
/// let stop = Stop::watch(LogFormat::Text); // the handlers, first
/// let Some(opened) = stop.unless_stopped(async { 42 }).await else {
///     return Stop::said_before_serving("opening the store");
/// };
/// # let _ = opened;
/// // …then serve until `stop.stopped()` completes.
/// # std::process::ExitCode::SUCCESS }
/// ```
#[derive(Debug, Clone)]
pub struct Stop {
    stopped: watch::Receiver<bool>,
}

impl Stop {
    /// Installs the signal handlers now and watches them from a task of
    /// their own, so a step that does not yield (a recording read,
    /// seeding the memory store) still sees the stop ([`Stop::is_stopped`]).
    /// A second signal ends the process at once ([`super::stop_signal`]).
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn watch(format: LogFormat) -> Self {
        let (tell, stopped) = watch::channel(false);
        let signal = super::stop_signal(format);
        tokio::spawn(async move {
            signal.await;
            // A wait for a local CA's lock (`--tls-self-signed`) ends now,
            // not when the other process lets go or in 30 s.
            crate::tls::stop_waiting();
            let _ = tell.send(true);
            // Kept until the process ends: a dropped sender would read as
            // a stop to every receiver.
            std::future::pending::<()>().await;
        });
        Self { stopped }
    }

    /// Whether a stop came.
    pub fn is_stopped(&self) -> bool {
        *self.stopped.borrow()
    }

    /// Completes when a stop comes.
    pub async fn stopped(mut self) {
        let _ = self.stopped.wait_for(|stopped| *stopped).await;
    }

    /// `step`'s output, or `None` when a stop comes first (`step` is then
    /// dropped at its await point: a store being opened off the runtime
    /// finishes there and is closed, never cut off mid-write).
    pub async fn unless_stopped<T>(&self, step: impl Future<Output = T>) -> Option<T> {
        let stop = self.clone().stopped();
        tokio::select! {
            biased;
            () = stop => None,
            done = step => Some(done),
        }
    }

    /// `read` wrapped so that a read after a stop fails: a recording read
    /// off the runtime ends within one buffer.
    pub fn reader<R>(&self, read: R) -> StoppableRead<R> {
        StoppableRead {
            read,
            stop: self.clone(),
        }
    }
}

/// A reader that fails once a stop came ([`Stop::reader`]).
#[derive(Debug)]
pub struct StoppableRead<R> {
    read: R,
    stop: Stop,
}

impl<R: std::io::Read> std::io::Read for StoppableRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.is_stopped() {
            return Err(std::io::Error::other("stopped"));
        }
        self.read.read(buf)
    }
}

impl Stop {
    /// Says in the log that a stop ended the start while it was
    /// `during` (`"opening the store"`), once what was opened is closed;
    /// the exit code a stop gets: 0.
    #[must_use]
    pub fn said_before_serving(during: &str) -> std::process::ExitCode {
        tracing::info!(
            during,
            "stopped before serving: a signal came while {during}; nothing was served"
        );
        std::process::ExitCode::SUCCESS
    }
}
