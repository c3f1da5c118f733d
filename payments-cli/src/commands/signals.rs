//! The signals that end a run: Ctrl-C (SIGINT), SIGTERM (`docker stop`,
//! Kubernetes, systemd) and SIGHUP (the terminal went away), taken alike by
//! every command, also as a container's PID 1, where a signal without a
//! handler is ignored (the kernel does not apply the default action to a
//! namespace's init), so `docker stop` waited its 10 s for SIGKILL.
//!
//! - `reconcile` stops its look-ups, writes the rows judged whole and
//!   exits 130, 143 or 129 ([`Signal::exit_code`]);
//! - `tail --follow` stops following and exits 0, the page read written
//!   whole;
//! - every other command ends at the signal with the same code a shell
//!   gives a program that signal stopped ([`guard`]).

use tokio::signal::unix::{SignalKind, signal};

/// The signal that ended the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
    Hangup,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "Ctrl-C (SIGINT)",
            Self::Terminate => "SIGTERM",
            Self::Hangup => "SIGHUP",
        }
    }

    /// 128 + the signal's number, as a shell reports it.
    pub fn exit_code(self) -> i32 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
            Self::Hangup => 129,
        }
    }
}

/// Listens for them from its creation (before the first call).
#[derive(Debug)]
pub struct Signals {
    /// None: Ctrl-C is left to its default action ([`guard`]).
    interrupt: Option<tokio::signal::unix::Signal>,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    /// All three.
    ///
    /// # Errors
    ///
    /// The handlers cannot be installed.
    pub fn new() -> std::io::Result<Self> {
        Self::listening(true)
    }

    /// SIGTERM and SIGHUP, and SIGINT when `interrupt`.
    fn listening(interrupt: bool) -> std::io::Result<Self> {
        Ok(Self {
            interrupt: if interrupt {
                Some(signal(SignalKind::interrupt())?)
            } else {
                None
            },
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next of them to come.
    pub async fn received(&mut self) -> Signal {
        let interrupt = async {
            match &mut self.interrupt {
                Some(interrupt) => interrupt.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = interrupt => Signal::Interrupt,
            _ = self.terminate.recv() => Signal::Terminate,
            _ = self.hangup.recv() => Signal::Hangup,
        }
    }
}

/// For the commands that do not take the signals themselves: a thread
/// that ends the process at SIGTERM or SIGHUP with 143 or 129, as their
/// default action does, and so also as PID 1, where that action is not
/// taken. What was not written yet is lost, as at a kill. A thread, not
/// the command's runtime: a command blocked reading stdin
/// (`status --from-file -`) still ends at once.
///
/// Ctrl-C is left to its default action (a shell then sees the command
/// stopped by it, and stops a script's loop too), except as PID 1, where
/// that is none.
///
/// Returns when the handlers are in place; when they cannot be, the
/// default actions stay.
pub fn guard() {
    let interrupt = std::process::id() == 1;
    let (ready, installed) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("signals".to_owned())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            else {
                let _ = ready.send(());
                return;
            };
            let signal = runtime.block_on(async {
                let listening = Signals::listening(interrupt);
                let _ = ready.send(());
                match listening {
                    Ok(mut signals) => Some(signals.received().await),
                    Err(_) => None,
                }
            });
            if let Some(signal) = signal {
                // Not stdout's lock: a command blocked writing to a reader
                // that does not read holds it, and would never end. What
                // stdout's buffer holds is written (`exit` flushes it when
                // it is free), as a kill would lose it.
                std::process::exit(signal.exit_code());
            }
        });
    if spawned.is_ok() {
        let _ = installed.recv();
    }
}
