//! Ctrl-C (SIGINT) and SIGTERM during a run: they stop the look-ups like a
//! failure does (the rows judged are written whole, the report left in
//! `FILE.partial`, stderr says so), and the process exits with the code a
//! shell gives a program that signal stopped: 130, or 143.

use tokio::signal::unix::{SignalKind, signal};

/// The signal that stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "Ctrl-C (SIGINT)",
            Self::Terminate => "SIGTERM",
        }
    }

    /// 128 + the signal's number, as a shell reports it.
    pub fn exit_code(self) -> i32 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
        }
    }
}

/// Listens for both from its creation (before the first look-up).
#[derive(Debug)]
pub struct Interrupt {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Interrupt {
    /// # Errors
    ///
    /// The handlers cannot be installed.
    pub fn new() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// The next of them to come.
    pub async fn received(&mut self) -> Signal {
        tokio::select! {
            _ = self.interrupt.recv() => Signal::Interrupt,
            _ = self.terminate.recv() => Signal::Terminate,
        }
    }
}
