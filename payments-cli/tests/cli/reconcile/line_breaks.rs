//! Ledgers whose lines end with a carriage return alone.

use super::{reconcile, shop};
use crate::common::{Sandbox, run, stdout};

/// A "CSV (Macintosh)" export ends its lines with a carriage return alone,
/// and a stray one can sit in any file: each row keeps a line of its own,
/// so a reference listed twice is still a duplicate (it once matched twice
/// on one line number, exit 0).
#[tokio::test(flavor = "multi_thread")]
async fn rows_ended_by_a_carriage_return_alone_keep_their_lines_and_duplicates() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    for (name, text) in [
        (
            "stray.csv",
            "referenceNo,amount\nINV-1002,12.00\nINV-1001,49.90\rINV-1001,49.90\nINV-1006,20.00\n",
        ),
        (
            "mac.csv",
            "referenceNo,amount\rINV-1002,12.00\rINV-1001,49.90\rINV-1001,49.90\rINV-1006,20.00\r",
        ),
    ] {
        let ledger = sandbox.write_file(name, text);
        let assert = run(reconcile(&sandbox, &server, &ledger)).await.code(6);
        let rows: Vec<serde_json::Value> = stdout(&assert)
            .lines()
            .map(|line| serde_json::from_str(line).expect("JSON lines"))
            .collect();
        let lines: Vec<(u64, &str)> = rows
            .iter()
            .filter_map(|r| Some((r["line"].as_u64()?, r["class"].as_str()?)))
            .collect();
        assert_eq!(
            lines,
            [(2, "match"), (3, "match"), (4, "duplicate"), (5, "match")],
            "{name}"
        );
    }
}
