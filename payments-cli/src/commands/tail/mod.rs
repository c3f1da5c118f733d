//! `payments tail` (issue 44): the mock's request journal, or with
//! `--proxy` the contract proxy's exchanges and verdicts, newest last: a
//! table on a terminal, the entries as JSON lines otherwise; `--follow`
//! keeps printing new entries until Ctrl-C, SIGTERM or SIGHUP (exit 0;
//! `docker stop` sends SIGTERM, to PID 1 too).
//!
//! Entries are read a page at a time with `after=SEQ`, from `--since`
//! (or 0: everything the server keeps) on, the proxy's from its start
//! (its `after` is in the order judged: `cursor.rs`); with `--follow`,
//! again every poll interval from the last entry read, at once while
//! pages come back full. The filters are applied here, to every entry
//! read, so the cursor moves over what they leave out too, and a seq the
//! server skipped is an entry lost, said on stderr. A journal that
//! started again (the server restarted, its journal numbered from 1
//! again: below the cursor, or past it already, `cursor.rs`,
//! `relist.rs`): said, and read from its start.
//!
//! - `source.rs`: the HTTP reads and retries; `source/failure.rs`: what a
//!   failure is and says;
//! - `cursor.rs`: where a run is, what it lost, what it showed;
//! - `relist.rs`: the proxy's listing when a page did not start where
//!   the last one ended;
//! - `entry.rs`: an entry of either server, and the filters;
//! - `table.rs`: the table's lines.

mod cursor;
mod entry;
mod path;
mod relist;
mod source;
mod table;

use std::time::Duration;

use crate::{cli::TailArgs, commands::Context, error::CliError, exit::Exit};

use cursor::{Cursor, Mark, Overlap};
use entry::{Entry, Filter};
use source::{Kind, Source};
use table::Layout;

/// Between two attempts at a page the server failed (times the attempt's
/// number), at most: shorter when the poll interval is.
const RETRY_DELAY: Duration = Duration::from_millis(500);

/// Runs `payments tail`.
///
/// # Errors
///
/// A page that could not be read (exit 1 for a refused key or an unknown
/// sandbox, 4 for a server that cannot be reached, fails, or went away),
/// or stdout closed.
pub async fn run(ctx: &Context, args: TailArgs) -> Result<Exit, CliError> {
    let kind = match (&args.sandbox, args.proxy) {
        (_, true) => Kind::Proxy,
        (Some(id), false) => Kind::Sandbox(id.clone()),
        (None, false) => Kind::Mock,
    };
    let proxy = kind == Kind::Proxy;
    let source = Source::new(ctx, kind, RETRY_DELAY.min(args.poll_interval))?;
    // All filters here: the server's pages are every seq, so a gap in
    // them is an entry lost, not one left out.
    let filter = Filter::new(args.path.clone(), args.status, args.reference_no.clone());
    let mut tail = Tail {
        ctx,
        source: &source,
        filter,
        layout: None,
        cursor: Cursor::new(proxy, args.since),
        read: 0,
        shown: 0,
        proxy,
        named: named_filters(&args),
    };
    if !args.follow {
        tail.drain(false).await?;
        if tail.shown == 0 {
            super::stderr_line(tail.nothing_shown());
        }
        return Ok(Exit::Ok);
    }
    // Ctrl-C, SIGTERM and SIGHUP are listened for before the first read,
    // so none of them is its default action (a kill mid-page, exit 130,
    // 143 or 129; as PID 1, none at all) once anything was printed.
    let mut signals = super::signals::Signals::new().map_err(CliError::Runtime)?;
    let interrupted = signals.received();
    tokio::pin!(interrupted);
    let follow = async {
        tail.drain(false).await?;
        // The table's header at once, so a terminal shows what it waits for.
        tail.header()?;
        loop {
            tokio::time::sleep(args.poll_interval).await;
            tail.drain(true).await?;
        }
    };
    tokio::select! {
        biased;
        _ = &mut interrupted => {
            ctx.flush_queued()?;
            Ok(Exit::Ok)
        }
        result = follow => result,
    }
}

/// What a run has read and shown so far.
struct Tail<'a> {
    ctx: &'a Context,
    source: &'a Source,
    filter: Filter,
    /// Set when the first line is printed (the columns then stay).
    layout: Option<Layout>,
    /// The next page's `after`, and what was read.
    cursor: Cursor,
    read: u64,
    shown: u64,
    proxy: bool,
    /// The filters as the command line gave them, for a note.
    named: Vec<String>,
}

impl Tail<'_> {
    /// Reads and prints every page after `after`; `following`: a read
    /// succeeded before (a failure then says the server went away).
    /// A full page is followed by the next at once (no wait), so a busy
    /// server drops less. Pages start with the last entry read again
    /// (`cursor.rs`): another one there, or none where the journal still
    /// holds it and its start is not what was read (the proxy's: its
    /// listing, `relist.rs`), is a journal that started again (said once,
    /// and read from its start).
    async fn drain(&mut self, following: bool) -> Result<(), CliError> {
        // One start again a drain: a server whose entries change under
        // the same seq at each read is not read from its start forever.
        let mut restarted = false;
        loop {
            let after = self.cursor.after;
            let asked = self.cursor.asked();
            self.cursor.from(asked);
            let judged = self.cursor.asked_judged();
            let mut page = self.read(asked, judged, following).await?;
            let mut newest = None;
            match self.cursor.overlap(page.entries.first().map(Mark::from)) {
                Overlap::None => {}
                Overlap::Same => {
                    // Shown already.
                    page.entries.remove(0);
                    if page.entries.is_empty() {
                        return Ok(());
                    }
                    self.cursor.from(after);
                }
                Overlap::Other if !restarted => {
                    restarted = self.restart();
                    continue;
                }
                Overlap::Other | Overlap::Missing if self.proxy => {
                    let Some(last) = self.cursor.last() else {
                        return Ok(());
                    };
                    match self.relist(last, following, restarted).await? {
                        Some(listed) => page = listed,
                        None => {
                            restarted = self.restart();
                            continue;
                        }
                    }
                }
                Overlap::Other | Overlap::Missing => {
                    let known = self.newest().await;
                    newest = Some(known);
                    if !restarted
                        && self.cursor.could_hold(known)
                        && self.started_again(known, following).await?
                    {
                        restarted = self.restart();
                        continue;
                    }
                }
            }
            let (Some(first), Some(last)) = (page.entries.first(), page.entries.last()) else {
                // Nothing after the cursor: a journal that now ends below
                // it started again (the proxy's; the mock's was looked at).
                if newest.is_none()
                    && !restarted
                    && self.cursor.read_here()
                    && self.newest().await.is_some_and(|n| n < after)
                {
                    restarted = self.restart();
                    continue;
                }
                return Ok(());
            };
            let (first, last) = (first.seq, last.seq);
            if self.cursor.lost(first, u64::MAX).is_some() {
                let known = match newest {
                    Some(known) => known,
                    None => self.newest().await,
                };
                let newest = known.unwrap_or(0).max(last);
                if let Some((low, high)) = self.cursor.lost(first, newest) {
                    super::stderr_line(cursor::lost_note(low, high));
                }
            }
            let full = page.full;
            self.print(page.entries)?;
            self.cursor.placed(page.last_judged);
            if !full {
                return Ok(());
            }
        }
    }

    /// A page after `after` (on the proxy, after the place `judged` in
    /// the order judged, when known).
    async fn read(
        &self,
        after: u64,
        judged: Option<u64>,
        following: bool,
    ) -> Result<source::Page, CliError> {
        self.source.page(after, judged).await.map_err(|failure| {
            let last = (self.read > 0).then_some(self.cursor.after);
            self.source.error(&failure, following.then_some(last))
        })
    }

    /// Whether the journal started again, the last entry read missing from
    /// it while it could hold it: its first page says (`newest`: the
    /// newest seq this key sees).
    async fn started_again(&self, newest: Option<u64>, following: bool) -> Result<bool, CliError> {
        let start = self.read(self.cursor.start(), None, following).await?;
        let marks: Vec<Mark> = start.entries.iter().map(Mark::from).collect();
        Ok(self.cursor.started_again(&marks, newest))
    }

    /// Says that the journal started again, and reads it from its start.
    fn restart(&mut self) -> bool {
        super::stderr_line(cursor::RESTARTED);
        self.cursor.restart();
        true
    }

    /// The newest seq the server keeps, when it says (a failure here is
    /// the next page's to report).
    async fn newest(&self) -> Option<u64> {
        self.source.newest().await.ok().flatten()
    }

    fn print(&mut self, entries: Vec<Entry>) -> Result<(), CliError> {
        if entries.is_empty() {
            return Ok(());
        }
        self.read += entries.len() as u64;
        let marks: Vec<Mark> = entries.iter().map(Mark::from).collect();
        let new = self.cursor.advance(&marks);
        let kept: Vec<Entry> = entries
            .into_iter()
            .zip(new)
            // The filter sees every entry (one before `--since` may tie a
            // transaction to `--reference-no`).
            .filter(|(e, new)| self.filter.keeps(e) && *new)
            .map(|(e, _)| e)
            .collect();
        if kept.is_empty() {
            return Ok(());
        }
        self.shown += kept.len() as u64;
        if self.ctx.is_json() {
            for entry in &kept {
                self.ctx.queue_line(&one_line(entry.raw.get()))?;
            }
            return self.ctx.flush_queued();
        }
        let mut text = String::new();
        if self.layout.is_none() {
            let seen = kept
                .iter()
                .map(|e| e.seq)
                .max()
                .unwrap_or(0)
                .max(self.cursor.after);
            let layout = Layout::new(self.ctx.style(), self.proxy, seen);
            text.push_str(&layout.header());
            self.layout = Some(layout);
        }
        if let Some(layout) = &self.layout {
            for entry in &kept {
                text.push_str(&layout.row(entry));
            }
        }
        self.ctx.print(&text)
    }

    /// The table's header, when no line has been printed yet.
    fn header(&mut self) -> Result<(), CliError> {
        if self.ctx.is_json() || self.layout.is_some() {
            return Ok(());
        }
        let layout = Layout::new(self.ctx.style(), self.proxy, self.cursor.after);
        self.layout = Some(layout);
        self.ctx.print(&layout.header())
    }

    /// Said on stderr when nothing was shown.
    fn nothing_shown(&self) -> String {
        let what = if self.proxy { "exchanges" } else { "entries" };
        if self.named.is_empty() {
            format!("note: no {what} to show")
        } else {
            format!(
                "note: no {what} match {} ({} read)",
                self.named.join(", "),
                self.read
            )
        }
    }
}

/// The filters of the command line, as typed.
fn named_filters(args: &TailArgs) -> Vec<String> {
    let quote = crate::usage::quote;
    let mut named = Vec::new();
    if let Some(path) = &args.path {
        named.push(format!("--path {}", quote(path)));
    }
    if let Some(status) = args.status {
        named.push(format!("--status {status}"));
    }
    if let Some(reference) = &args.reference_no {
        named.push(format!("--reference-no {}", quote(reference)));
    }
    if let Some(since) = args.since {
        named.push(format!("--since {since}"));
    }
    named
}

/// An entry as one line of JSON: as the server wrote it when it is one
/// line (the mock's and the proxy's are), else written again compactly (a
/// server that pretty-prints would break a reader of JSON lines).
fn one_line(raw: &str) -> std::borrow::Cow<'_, str> {
    if !raw.contains(['\n', '\r']) {
        return std::borrow::Cow::Borrowed(raw);
    }
    serde_json::from_str::<serde_json::Value>(raw).map_or_else(
        |_| raw.replace(['\n', '\r'], " ").into(),
        |v| v.to_string().into(),
    )
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn an_entry_is_printed_on_one_line() {
        let compact = r#"{"seq":1,"path":"/api/x"}"#;
        assert!(matches!(one_line(compact), std::borrow::Cow::Borrowed(s) if s == compact));
        let pretty = "{\n  \"seq\": 1,\r\n  \"body\": \"a\\nb\",\n  \"amount\": 10.50\n}";
        let line = one_line(pretty);
        assert!(!line.contains(['\n', '\r']), "{line}");
        let back: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(back["seq"], 1);
        assert_eq!(back["body"], "a\nb");
        assert_eq!(back["amount"].to_string(), "10.50", "numbers as written");
    }
}
