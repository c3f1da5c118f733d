//! `--fresh` on the database every replica shares: refused while another
//! replica serves it (it would delete the whole service's transactions and
//! sandboxes under that replica, which would also keep serving its old
//! settings), and what it deleted logged. The journal numbers on across it
//! (`seq` only grows across the whole service).

use tokio_postgres::types::Type;

use super::*;
use journal::Clear;
use rows::*;

/// How far a list of replica names is quoted in a message, in bytes.
const NAMES_SHOWN: usize = 200;

/// What a `--fresh` start deleted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Deleted {
    /// The root's transactions.
    pub(super) transactions: i64,
    /// The sandboxes (the root aside).
    pub(super) sandboxes: i64,
    /// The transactions those sandboxes held.
    pub(super) sandbox_transactions: i64,
    /// The journal's entries, the root's and every sandbox's.
    pub(super) journal: i64,
    /// The journal's last number: the next entry is numbered after it.
    pub(super) last_seq: i64,
}

/// What a clear of the whole state came to.
#[derive(Debug)]
pub(super) enum Cleared {
    /// Done; with `--fresh`, what it deleted (nothing is counted for a
    /// reset).
    Done(Deleted),
    /// `--fresh` refused, nothing changed: these other replicas (their
    /// names) serve the database.
    Served(Vec<String>),
}

/// Inside the transaction of a `--fresh`, which holds the journal
/// counter's row lock: the other replicas that are live (written within
/// the last 2 s, as [`PostgresStore::barrier`] counts them; each writes
/// every 0.25 s). `mock_journal_replicas` is locked against writes until
/// the transaction ends, so a replica that starts meanwhile registers only
/// after it, and then reads the emptied store.
pub(super) async fn live_others(
    tx: &tokio_postgres::Transaction<'_>,
    instance: Uuid,
) -> Result<Vec<String>, StoreError> {
    tx.batch_execute("LOCK TABLE mock_journal_replicas IN SHARE MODE")
        .await
        .map_err(|e| store_error(&e))?;
    let rows = tx
        .query_typed(
            "SELECT replica FROM mock_journal_replicas \
             WHERE instance <> $1 AND seen_at > now() - interval '2 seconds' ORDER BY replica",
            &[(&instance, Type::UUID)],
        )
        .await
        .map_err(|e| store_error(&e))?;
    Ok(rows.iter().filter_map(|r| r.try_get(0).ok()).collect())
}

/// Inside the transaction of a `--fresh`, before it deletes: what there is
/// (the journal's last number is [`last_seq`]'s, after it).
pub(super) async fn count(tx: &tokio_postgres::Transaction<'_>) -> Result<Deleted, StoreError> {
    let row = tx
        .query_typed_one(
            "SELECT \
               (SELECT count(*) FROM mock_transactions WHERE sandbox = $1), \
               (SELECT count(*) FROM mock_sandboxes WHERE id <> $1), \
               (SELECT count(*) FROM mock_transactions WHERE sandbox <> $1), \
               (SELECT count(*) FROM mock_journal)",
            &[(&Uuid::nil(), Type::UUID)],
        )
        .await
        .map_err(|e| store_error(&e))?;
    Ok(Deleted {
        transactions: row.get(0),
        sandboxes: row.get(1),
        sandbox_transactions: row.get(2),
        journal: row.get(3),
        last_seq: 0,
    })
}

/// Inside the transaction of a `--fresh`, once it has deleted: the
/// journal's last number, after which the next entry is numbered.
pub(super) async fn last_seq(tx: &tokio_postgres::Transaction<'_>) -> Result<i64, StoreError> {
    Ok(tx
        .query_typed_one("SELECT last FROM mock_journal_counter WHERE id = 1", &[])
        .await
        .map_err(|e| store_error(&e))?
        .get(0))
}

/// `names` joined, at most [`NAMES_SHOWN`] bytes of them (cut at a
/// character), with how many more there are.
pub(super) fn quoted_names(names: &[String]) -> String {
    let mut shown = String::new();
    let mut listed = 0;
    for name in names {
        let sep = if shown.is_empty() { "" } else { ", " };
        if shown.len() + sep.len() + name.len() > NAMES_SHOWN {
            break;
        }
        shown.push_str(sep);
        shown.push_str(name);
        listed += 1;
    }
    if listed == 0
        && let Some(first) = names.first()
    {
        let mut end = NAMES_SHOWN.min(first.len());
        while !first.is_char_boundary(end) {
            end -= 1;
        }
        shown.push_str(&first[..end]);
        shown.push('…');
        listed = 1;
    }
    match names.len() - listed {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// `n` `thing`s, in words (`1 sandbox`, `2 sandboxes`, `3 journal
/// entries`).
pub(super) fn counted(n: i64, thing: &str) -> String {
    if n == 1 {
        return format!("1 {thing}");
    }
    let many = if let Some(stem) = thing.strip_suffix('y') {
        format!("{stem}ies")
    } else if thing.ends_with('x') {
        format!("{thing}es")
    } else {
        format!("{thing}s")
    };
    format!("{n} {many}")
}

/// Why a `--fresh` was refused, for [`Store::erase`]'s callers other than
/// a start (a start says it with [`Error::FreshWhileServed`]).
fn refusal(names: &[String]) -> String {
    format!(
        "--fresh refused: other replicas serve this database right now ({}); --fresh would delete every transaction and sandbox of the whole service; stop the other replicas first",
        quoted_names(names)
    )
}

impl PostgresStore {
    /// `--fresh` before serving: empties the database (every transaction,
    /// sandbox and journal entry, the clock and the settings), the
    /// journal numbering on, and logs what it deleted; refused, with
    /// nothing changed, while another replica serves the database.
    ///
    /// # Errors
    ///
    /// [`Error::FreshWhileServed`] (exit 2) naming the live replicas;
    /// [`Error::StoreOpen`] when the database fails.
    pub(crate) async fn fresh(&self) -> Result<(), Error> {
        match self.erase_counted().await {
            Ok(Cleared::Done(_)) => Ok(()),
            Ok(Cleared::Served(names)) => Err(Error::FreshWhileServed {
                store: self.inner.shown.clone(),
                replicas: quoted_names(&names),
            }),
            Err(e) => Err(Error::StoreOpen {
                store: self.inner.shown.clone(),
                reason: e.reason().to_owned(),
            }),
        }
    }

    /// [`Store::erase`]: as [`PostgresStore::fresh`], its refusal a
    /// [`StoreError`].
    pub(super) async fn erase_refusing(&self) -> Result<(), StoreError> {
        match self.erase_counted().await? {
            Cleared::Done(_) => Ok(()),
            Cleared::Served(names) => Err(StoreError::new(refusal(&names))),
        }
    }

    /// The erase on a task of its own, and what it deleted logged (info).
    async fn erase_counted(&self) -> Result<Cleared, StoreError> {
        let store = self.clone();
        let cleared = detached(async move { store.clear_journal(Clear::Erase).await }).await?;
        if let Cleared::Done(d) = &cleared {
            tracing::info!(
                store = %self.inner.shown,
                transactions = d.transactions,
                sandboxes = d.sandboxes,
                sandbox_transactions = d.sandbox_transactions,
                journal_entries = d.journal,
                last_seq = d.last_seq,
                "--fresh deleted {}, {} (holding {}), {}, the clock's offset and the settings; the journal numbers on after seq {}",
                counted(d.transactions, "transaction"),
                counted(d.sandboxes, "sandbox"),
                counted(d.sandbox_transactions, "transaction"),
                counted(d.journal, "journal entry"),
                d.last_seq
            );
        }
        Ok(cleared)
    }
}

#[cfg(test)]
mod tests;
