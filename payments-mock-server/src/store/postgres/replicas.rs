//! How replicas keep one exact journal (CONTRACT section 15) while each
//! writes its entries behind its answers, so that no answer waits for the
//! journal.
//!
//! - **A read waits for the writes it must see** (a barrier,
//!   [`PostgresStore::barrier`]). It takes a tick of the sequence
//!   `mock_journal_tick`, asks every replica to write now (`NOTIFY
//!   mock_journal`), writes this replica's own pending entries and
//!   watermarks (also with nothing pending), and waits
//!   until the row of every live replica in `mock_journal_replicas` shows
//!   a write with a later tick. A replica takes its write's tick before it
//!   takes its pending entries (`journal.rs`, `write`), so such a write
//!   holds every request that replica answered before the read started. At
//!   most `journal::READ_WAIT`: a replica that does not write by then (stuck, or
//!   killed a moment ago) is not waited for longer, and the read says so
//!   in the log.
//! - **In the order answered** (issue 40): an entry is stamped when its
//!   request is answered, by its replica's clock (the wall clock, never
//!   going back per replica), and written unnumbered; a write also records
//!   a watermark stamp in its row (`watermark_at`), taken with the entries
//!   it writes, so every entry stamped before it is written. Entries
//!   stamped before every live replica's watermark stamp are numbered, in
//!   stamp order, by the next write that brings entries, and by a read
//!   once its wait is over (its bound: the replicas that wrote since it
//!   started). A request answered before another was received has the
//!   earlier stamp, so the lower number, whichever replicas served them
//!   (on several machines, within their clocks' skew). A replica the wait
//!   gave up on (stuck) has what it writes later numbered after entries
//!   stamped later, rather than missing from the read.
//! - **Which replicas are live**: each writes at least every
//!   [`HEARTBEAT`], also when idle; one silent for 2 s is gone (a
//!   `kill -9`) and not waited for; one that stops cleanly writes what it
//!   has and removes its row.
//! - **A reset is fenced by an epoch** in the counter row, moved on by every
//!   reset: entries carry the epoch their replica knew when it captured
//!   them, and a write drops those of an older epoch than the one it reads
//!   (after its tick, and again under the counter row's lock); the reset
//!   empties the journal, numbered or not (the unnumbered entries' numbers
//!   are taken, as those of every entry dropped unwritten). The reset
//!   then waits as a read does (at most `journal::RESET_WAIT`), so by its answer
//!   every live replica knows the new epoch and keeps what it serves from
//!   then on.
//! - **Notifications only make it quick.** Without them (the listening
//!   connection lost, being reconnected) every replica still writes each
//!   [`HEARTBEAT`] and a read looks again every [`LOOK_AGAIN`]: reads are
//!   slower, never wrong.

use std::time::Instant;

use futures_util::StreamExt as _;
use tokio::sync::{Notify, watch};
use tokio_postgres::AsyncMessage;
use tokio_postgres::types::Type;

use super::*;
use journal::flush;
use rows::*;

/// The channel replicas notify each other on.
const CHANNEL: &str = "mock_journal";
/// The payload of a replica's write.
const WRITTEN: &str = "written";
/// The longest a replica goes without writing (its row's `seen_at`).
pub(super) const HEARTBEAT: Duration = Duration::from_millis(250);
/// How often a waiting read looks again without a notification.
const LOOK_AGAIN: Duration = Duration::from_millis(20);
/// The pause before listening again after the connection was lost.
const RECONNECT: Duration = Duration::from_secs(1);

/// What the listener tells this replica's writer and its waiting reads.
#[derive(Debug)]
pub(super) struct Signals {
    /// Wakes the writer now: a read on another replica waits for it.
    wanted: Notify,
    /// Moves on with every write a replica announces: a waiting read looks
    /// again.
    written: watch::Sender<u64>,
}

impl Default for Signals {
    fn default() -> Self {
        Self {
            wanted: Notify::new(),
            written: watch::Sender::new(0),
        }
    }
}

/// What a read on this replica notifies: the others write at once.
pub(super) fn read_payload(instance: Uuid) -> String {
    format!("read {instance}")
}

/// Listens on [`CHANNEL`] on a connection of its own (LISTEN needs one
/// session), reconnecting when it is lost, until `closed` says the store is
/// gone.
pub(super) async fn listen(
    config: tokio_postgres::Config,
    own_read: String,
    signals: Arc<Signals>,
    mut closed: watch::Receiver<()>,
) {
    loop {
        let session = async {
            let (client, mut connection) =
                config.connect(NoTls).await.map_err(|e| store_error(&e))?;
            let driver = async {
                let mut messages =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                while let Some(Ok(message)) = messages.next().await {
                    if let AsyncMessage::Notification(note) = message {
                        heard(&signals, note.payload(), &own_read);
                    }
                }
            };
            tokio::pin!(driver);
            tokio::select! {
                () = &mut driver => return Err(StoreError::new("the connection closed")),
                listening = client.batch_execute("LISTEN mock_journal") => {
                    listening.map_err(|e| store_error(&e))?;
                }
            }
            // A write announced before we listened may have been missed.
            signals.written.send_modify(|n| *n = n.wrapping_add(1));
            driver.await;
            Ok::<(), StoreError>(())
        };
        tokio::select! {
            _ = closed.changed() => return,
            ended = session => {
                let reason = ended.err().map(|e| e.reason().to_owned()).unwrap_or_default();
                tracing::debug!(reason = %reason, "not listening for the other replicas' journal writes; listening again in 1 s");
            }
        }
        tokio::select! {
            _ = closed.changed() => return,
            () = tokio::time::sleep(RECONNECT) => {}
        }
    }
}

fn heard(signals: &Signals, payload: &str, own_read: &str) {
    if payload == WRITTEN {
        signals.written.send_modify(|n| *n = n.wrapping_add(1));
    } else if payload.starts_with("read ") && payload != own_read {
        signals.wanted.notify_one();
    }
}

/// This replica's journal writer, until the store is dropped: what is
/// pending every [`JOURNAL_EVERY`], at once when a read on another replica
/// asks, and at least every [`HEARTBEAT`].
pub(super) async fn write_journal(inner: Weak<Inner>, signals: Arc<Signals>) {
    let mut tick = tokio::time::interval(JOURNAL_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // `open` registered this replica with a write.
    let mut last = Instant::now();
    loop {
        let wanted = tokio::select! {
            _ = tick.tick() => false,
            () = signals.wanted.notified() => true,
        };
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let heartbeat = wanted || last.elapsed() >= HEARTBEAT;
        match flush(&inner, heartbeat).await {
            Ok(()) => {
                if heartbeat {
                    last = Instant::now();
                }
            }
            Err(e) => {
                inner.noted(&e);
                tracing::debug!(error = %e, "the request journal could not be written to PostgreSQL yet");
            }
        }
    }
}

impl PostgresStore {
    /// Waits until every request answered before this call, by this
    /// replica or any live one, is written: this replica's own entries at
    /// once, the others' at most `wait` (`journal::READ_WAIT` for a read; see the
    /// module's doc). The tick it took: every replica whose watermark is
    /// past it has written since this call began.
    pub(super) async fn barrier(&self, wait: Duration) -> Result<i64, StoreError> {
        bounded(async {
            let started = Instant::now();
            let mut written = self.inner.signals.written.subscribe();
            let client = self.client().await?;
            let tick: i64 = client
                .query_typed_one(
                    "SELECT nextval('mock_journal_tick'), pg_notify($1, $2)",
                    &[(&CHANNEL, Type::TEXT), (&self.inner.own_read, Type::TEXT)],
                )
                .await
                .map_err(|e| store_error(&e))?
                .get(0);
            // Also with nothing pending: this replica's watermarks move
            // past the tick, so what is due by them is numbered.
            self.flush().await?;
            loop {
                written.borrow_and_update();
                let behind = client
                    .query_typed(
                        "SELECT replica FROM mock_journal_replicas \
                         WHERE instance <> $1 AND watermark < $2 \
                         AND seen_at > now() - interval '2 seconds' ORDER BY replica",
                        &[(&self.inner.instance, Type::UUID), (&tick, Type::INT8)],
                    )
                    .await
                    .map_err(|e| store_error(&e))?;
                if behind.is_empty() {
                    return Ok(tick);
                }
                let left = wait.saturating_sub(started.elapsed());
                if left.is_zero() {
                    let names: Vec<String> =
                        behind.iter().filter_map(|r| r.try_get(0).ok()).collect();
                    tracing::warn!(
                        replicas = %names.join(", "),
                        waited_ms = wait.as_millis(),
                        "the journal waited for replicas that did not write; it goes on without their newest entries"
                    );
                    return Ok(tick);
                }
                if let Ok(Err(_)) =
                    tokio::time::timeout(left.min(LOOK_AGAIN), written.changed()).await
                {
                    tokio::time::sleep(left.min(LOOK_AGAIN)).await;
                }
            }
        })
        .await
    }

    /// Writes this replica's pending journal entries, and its watermarks
    /// even when nothing is pending, on a task of its own.
    pub(super) async fn flush(&self) -> Result<(), StoreError> {
        let inner = self.inner.clone();
        detached(async move { flush(&inner, true).await }).await
    }
}

/// Registers a replica that starts: rows of replicas gone for a minute
/// are removed, and this one's written, so reads wait for it, and the
/// journal's numbering for what it captures, from now on. The reset epoch
/// it starts in, and its first watermark stamp (every entry it captures
/// is stamped later).
pub(super) async fn register(
    client: &tokio_postgres::Client,
    instance: Uuid,
    replica: &str,
) -> Result<(u64, i64), tokio_postgres::Error> {
    client
        .execute(
            "DELETE FROM mock_journal_replicas WHERE seen_at < now() - interval '1 minute'",
            &[],
        )
        .await?;
    let stamp = journal::wall_clock();
    client
        .execute(
            "INSERT INTO mock_journal_replicas (instance, replica, watermark, watermark_at, seen_at) \
             VALUES ($1, $2, nextval('mock_journal_tick'), $3, now())",
            &[&instance, &replica, &stamp],
        )
        .await?;
    let epoch: i64 = client
        .query_one("SELECT epoch FROM mock_journal_counter WHERE id = 1", &[])
        .await?
        .get(0);
    Ok((u64::try_from(epoch).unwrap_or(0), stamp))
}
