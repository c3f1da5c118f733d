//! The proxy's page that did not start with the last exchange read: its
//! whole listing (it keeps the last 1,000, one page) says why.
//!
//! Asked after the exchange judged before the last one read, the proxy's
//! listing starts with it again while it keeps both. When it does not:
//!
//! - the listing still holds it (the one before it no longer kept, or
//!   never was: the proxy then lists what is numbered above that seq, not
//!   what was judged after it): the same proxy, and what was judged after
//!   it is the page;
//! - it holds it no more, and could (fewer than 1,000 listed, or its
//!   newest numbered fewer than 1,000 above it): a proxy that started
//!   again, numbering from 1;
//! - it could not: 1,000 or more judged since, each new: the whole
//!   listing is the page; those judged after it and before the oldest
//!   the listing keeps (the places it says) were lost, and said.

use super::Tail;
use super::cursor::Mark;
use super::source::Page;
use crate::error::CliError;

/// Exchanges the proxy lists (docs/contract-proxy.md).
const PROXY_KEEPS: u64 = 1000;

/// Where the last exchange read is in the proxy's whole listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relisted {
    /// At this index: the same proxy.
    At(usize),
    /// Not there while the listing could hold it: the proxy started again.
    StartedAgain,
    /// Not there, and the listing could not hold it (or lists nothing):
    /// everything it lists is new.
    Beyond,
}

/// Where `last` is in `listing`, the proxy's listing from its start
/// (`full`: as many as a page holds, it may keep more).
#[must_use]
pub fn relisted(last: Mark, listing: &[Mark], full: bool) -> Relisted {
    if let Some(at) = listing.iter().rposition(|m| *m == last) {
        return Relisted::At(at);
    }
    match listing.iter().map(|m| m.seq).max() {
        None => Relisted::Beyond,
        Some(_) if !full => Relisted::StartedAgain,
        Some(newest) if newest < last.seq.saturating_add(PROXY_KEEPS) => Relisted::StartedAgain,
        Some(_) => Relisted::Beyond,
    }
}

impl Tail<'_> {
    /// The page instead of one that did not start with the last exchange
    /// read (`last`), from the proxy's whole listing; `None` when the
    /// proxy started again (and it was not said yet: `restarted`).
    pub(super) async fn relist(
        &mut self,
        last: Mark,
        following: bool,
        restarted: bool,
    ) -> Result<Option<Page>, CliError> {
        let mut listing = self.read(0, None, following).await?;
        let marks: Vec<Mark> = listing.entries.iter().map(Mark::from).collect();
        match relisted(last, &marks, listing.full) {
            Relisted::At(at) => {
                listing.entries.drain(..=at);
                self.cursor.from(last.seq);
            }
            Relisted::StartedAgain if !restarted => return Ok(None),
            Relisted::StartedAgain => self.cursor.from(0),
            Relisted::Beyond => {
                // Judged after it and no longer kept, when the proxy says
                // where the last one read and its oldest are in that order.
                if let Some(lost) = self.cursor.lost_judged(listing.oldest_judged) {
                    crate::commands::stderr_line(super::cursor::lost_exchanges_note(
                        lost, last.seq,
                    ));
                }
                self.cursor.from(0);
            }
        }
        Ok(Some(listing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exchanges numbered `seqs`, of one proxy's life (`life`).
    fn of(life: u64, seqs: impl IntoIterator<Item = u64>) -> Vec<Mark> {
        seqs.into_iter()
            .map(|seq| Mark::test(seq, life * 1_000_000 + seq))
            .collect()
    }

    #[test]
    fn the_last_exchange_read_is_found_or_the_proxy_started_again() {
        let last = of(1, [5])[0];
        // Listed still (4, judged before it, evicted or slow).
        assert_eq!(relisted(last, &of(1, [6, 5, 7]), false), Relisted::At(1));
        // A proxy numbering from 1 again, past 5 already.
        assert_eq!(
            relisted(last, &of(2, 1..=20), false),
            Relisted::StartedAgain
        );
        // Not yet past it.
        assert_eq!(
            relisted(last, &of(2, [1, 2]), false),
            Relisted::StartedAgain
        );
        // Nothing listed: nothing to tell yet.
        assert_eq!(relisted(last, &[], false), Relisted::Beyond);
        // A full listing: numbered fewer than 1,000 above it, it could
        // hold it; else 1,000 or more were judged since.
        assert_eq!(
            relisted(last, &of(2, 5..=1004), true),
            Relisted::StartedAgain
        );
        assert_eq!(relisted(last, &of(1, 6..=1005), true), Relisted::Beyond);
    }
}
