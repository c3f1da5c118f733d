//! A request's path as `tail`'s table shows it: decoded for reading, the
//! way the mock's console shows it (its `web/console/target.rs`, the same
//! rules): an escape of a byte beyond ASCII is decoded where the escapes
//! form valid UTF-8, and so is one of an unreserved ASCII character but the
//! dot (`A-Z a-z 0-9 - _ ~`), as RFC 3987 (section 3.2) turns a URI into
//! an IRI. Every other escape stays as sent: `%2F` is not the `/` between
//! segments, `%3F` not the start of a query, `%23` not a fragment, `%25`
//! not the start of an escape, `%20` a space that would not be seen, a
//! control character or a byte that is not UTF-8 as its escape; so no two
//! paths read alike. The decoded path is then made [`printable`] (what the
//! CLI escapes), and shortened by display width between grapheme clusters.
//! `-o json` keeps the path as sent.

use unicode_segmentation::UnicodeSegmentation as _;

use payments_interface::readable::readable_target as decoded;

use crate::output::printable;
use crate::text::{printable_within, text_columns};

/// The prefix of the interface's four endpoints, the first thing a path
/// too long for its column gives up (as `…`).
const PAYMENTS: &str = "/api/payments";

/// The columns `text` takes once [`printable`].
fn width(text: &str) -> usize {
    text_columns(&printable(text))
}

/// An id (or any long segment) as its first eight and last four clusters,
/// `…` between them (as `output::short_id` shows ids), never cut inside a
/// cluster.
fn short_segment(segment: &str) -> String {
    const HEAD: usize = 8;
    const TAIL: usize = 4;
    let clusters: Vec<&str> = segment.graphemes(true).collect();
    if clusters.len() <= HEAD + TAIL + 1 {
        return segment.to_owned();
    }
    format!(
        "{}…{}",
        clusters[..HEAD].concat(),
        clusters[clusters.len() - TAIL..].concat()
    )
}

/// A path in at most `room` columns once [`printable`], read [`decoded`]
/// (the journal's JSON keeps it as sent), giving up the least first: the path whole; long segments (ids) as their first and
/// last characters; the interface's `/api/payments` prefix as `…` (and
/// `reference` of a status read by reference as `ref`); then the longest
/// segment shorter still; then the end. Shortened as written, escaped
/// after: an escape (`\u{202e}`) is never cut.
pub(super) fn fit_path(path: &str, room: usize) -> String {
    let path = &*decoded(path);
    if width(path) <= room {
        return printable(path);
    }
    // Each segment as written, and as it will be shown (before escaping).
    let mut raw: Vec<&str> = path.split('/').collect();
    let mut segments: Vec<String> = raw.iter().map(|s| short_segment(s)).collect();
    let joined = |segments: &[String]| segments.join("/");
    let mut shown = joined(&segments);
    if width(&shown) <= room {
        return printable(&shown);
    }
    if path.starts_with(&format!("{PAYMENTS}/")) {
        // "", "api", "payments", rest… → "…", rest…
        raw.splice(0..3, ["…"]);
        segments.splice(0..3, ["…".to_owned()]);
        shown = joined(&segments);
        if width(&shown) <= room {
            return printable(&shown);
        }
        // The status read by reference: the reference counts, not the word.
        if segments.len() == 4 && segments[1] == "reference" && segments[3] == "status" {
            raw[1] = "ref";
            segments[1] = "ref".to_owned();
            shown = joined(&segments);
            if width(&shown) <= room {
                return printable(&shown);
            }
        }
    }
    // The longest segment, as its first and last characters, from what
    // was written.
    if let Some(longest) = (0..segments.len()).max_by_key(|&i| width(&segments[i])) {
        let over = width(&shown) - room;
        let budget = width(&segments[longest]).saturating_sub(over + 1);
        if let Some(short) = ends(raw[longest], budget) {
            segments[longest] = short;
            shown = joined(&segments);
        }
    }
    printable_within(&shown, room)
}

/// `segment` as its first and last clusters (at least two of each) in
/// about `budget` columns once printable, `…` between them; `None` when
/// that would keep all of it.
fn ends(segment: &str, budget: usize) -> Option<String> {
    let clusters: Vec<&str> = segment.graphemes(true).collect();
    let take = |from: &mut dyn Iterator<Item = &&str>, budget: usize| {
        let (mut count, mut used) = (0, 0);
        for &cluster in from {
            if count >= 2 && used + width(cluster) > budget {
                break;
            }
            used += width(cluster);
            count += 1;
        }
        (count, used)
    };
    let (head, used) = take(&mut clusters.iter(), budget.div_ceil(2));
    let (tail, _) = take(&mut clusters.iter().rev(), budget.saturating_sub(used));
    if head + tail + 1 >= clusters.len() {
        return None;
    }
    let mut short = clusters[..head].concat();
    short.push('…');
    short.push_str(&clusters[clusters.len() - tail..].concat());
    Some(short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decoded_path_is_shortened_between_clusters() {
        let cjk = "/api/payments/reference/%E8%AB%8B%E6%B1%82%E6%9B%B8/status";
        assert_eq!(fit_path(cjk, 80), "/api/payments/reference/請求書/status");
        let long = format!(
            "/api/payments/reference/{}/status",
            "%F0%9F%91%8D%F0%9F%8F%BD".repeat(20)
        );
        for room in 12..80 {
            let shown = fit_path(&long, room);
            assert!(width(&shown) <= room, "{room}: {shown}");
            assert!(!shown.contains('%'), "{room}: {shown}");
            let bare = shown.replace("👍🏽", "");
            assert!(
                !bare.contains('🏽') && !bare.contains('👍'),
                "{room}: {shown}"
            );
        }
        let flags = format!("/api/payments/reference/{}/status", "🇲🇾".repeat(20));
        for room in 12..80 {
            let shown = fit_path(&flags, room);
            assert!(width(&shown) <= room, "{room}: {shown}");
            assert!(
                shown
                    .split("🇲🇾")
                    .all(|p| !p.contains('🇲') && !p.contains('🇾'))
            );
        }
        // A control character sent escaped stays its escape; one sent raw
        // is escaped by printable.
        assert_eq!(fit_path("/r/a%1Bb", 40), "/r/a%1Bb");
        assert_eq!(fit_path("/r/a\u{1b}b", 40), "/r/a\\u{1b}b");
    }
}
