//! The table on narrow terminals: every line within the width, whatever
//! the references' length and script (a CJK character takes two columns).

use unicode_width::UnicodeWidthStr as _;

use super::{reconcile, settings, shop};
use crate::common::{Sandbox, run, stdout};

/// Rows of 64-character and CJK references, with long details: an invalid
/// status and amount, references the service does not have (one of 65
/// characters: over the mock's limit, not the CLI's), a match.
fn wide_ledger() -> String {
    let long = format!("INV-{}", "0123456789".repeat(6));
    let cjk = "請求書".repeat(21);
    format!(
        "referenceNo,amount,currency,status\n\
         {long},abc,MYR,PAID\n\
         {cjk},10.505,MYR,PAID\n\
         {long}X,1.00,MYR,SUCCESSFUL\n\
         INV-1001,49.90,MYR,SUCCESSFUL\n\
         INV-1099,5.00,MYR,SUCCESSFUL\n"
    )
}

/// Under about 56 columns the detail stopped wrapping (its column under
/// 20) and lines ran to 123 columns: each line now fits from 100 columns
/// down to 40 (blocks of fields below about 48), and every row is there.
#[tokio::test(flavor = "multi_thread")]
async fn every_line_fits_from_100_columns_down_to_40() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("wide.csv", &wide_ledger());
    for width in (40..=100).rev() {
        let mut cmd = reconcile(&sandbox, &server, &ledger);
        cmd.args(["-o", "table"]).env("COLUMNS", width.to_string());
        let table = stdout(&run(cmd).await.code(6));
        for line in table.lines() {
            assert!(
                line.width() <= width,
                "{} columns at {width}: {line}\n{table}",
                line.width()
            );
        }
        for (line, class) in [
            ("2", "invalid"),
            ("3", "invalid"),
            ("4", "missing"),
            ("6", "missing"),
        ] {
            let shown = table.lines().any(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words.windows(2).any(|w| w == ["Line", line]) || words.first() == Some(&line)
            });
            assert!(shown, "line {line} at {width}:\n{table}");
            assert!(table.contains(class), "{class} at {width}:\n{table}");
        }
        let name = match width {
            55 => "reconcile_55_columns",
            44 => "reconcile_44_columns",
            _ => continue,
        };
        let mut settings = settings();
        // Beside the other snapshots (this file is a level deeper).
        settings.set_snapshot_path("../../snapshots");
        settings.bind(|| insta::assert_snapshot!(name, table));
    }
}
