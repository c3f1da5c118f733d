//! Tables fitted to the width (`COLUMNS` pins it here; no terminal in
//! tests, so 80 when unset), and the currency beside every amount the CLI
//! knows it for.

use payments_mock_server::MockServer;

use crate::common::{Sandbox, confirm, initiate, run, snapshot_settings, stderr, stdout};

fn settings() -> insta::Settings {
    let mut settings = snapshot_settings();
    settings.add_filter(r"PRV-[0-9A-F]{32}", "PRV-[PROVIDER-REF]");
    // Ids shortened to their first and last characters.
    settings.add_filter(r"[0-9a-f]{8}…[0-9a-f]{4}", "xxxxxxxx…xxxx");
    settings
}

fn status(sandbox: &Sandbox, base: &str, columns: Option<&str>) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    if let Some(columns) = columns {
        cmd.env("COLUMNS", columns);
    }
    cmd.args(["--base-url", base, "-o", "table", "status"]);
    cmd
}

/// Before: one 195-column row in any terminal.
#[tokio::test(flavor = "multi_thread")]
async fn a_single_status_is_vertical_when_its_row_would_not_fit() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "WIDE-1", "TOPUP").await;
    confirm(&sandbox, &base, &id, "WIDE-1").await;

    let mut cmd = status(&sandbox, &base, None);
    cmd.args([&id, "--currency", "MYR"]);
    let narrow = stdout(&run(cmd).await.success());
    assert!(
        narrow.lines().all(|line| line.chars().count() <= 80),
        "{narrow}"
    );

    let mut cmd = status(&sandbox, &base, Some("250"));
    cmd.args([&id, "--currency", "MYR"]);
    let wide = stdout(&run(cmd).await.success());
    assert_eq!(wide.lines().count(), 2, "{wide}");

    settings().bind(|| {
        insta::assert_snapshot!("layout_status_80_columns", narrow);
        insta::assert_snapshot!("layout_status_250_columns", wide);
    });
}

/// Issue 40: four look-ups with 25-character references printed a 9-line
/// block each at 80 columns (36 lines). Many look-ups stay one row per
/// input at 80 columns and up: columns dropped, ids shortened (whole in
/// `-o json`), then references and messages wrapped.
#[tokio::test(flavor = "multi_thread")]
async fn many_rows_stay_one_row_per_input_from_80_columns() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let first = initiate(&sandbox, &base, "SHOP-ORDER-2026-21333-001", "TOPUP").await;
    let second = initiate(&sandbox, &base, "SHOP-ORDER-2026-21333-002", "DECLINED").await;
    confirm(&sandbox, &base, &second, "SHOP-ORDER-2026-21333-002").await;
    let third = initiate(&sandbox, &base, "SHOP-ORDER-2026-21333-003", "TOPUP").await;
    let unknown = "01937e1c-0000-7000-8000-000000000000";
    let file = sandbox.write_file(
        "ids.txt",
        &format!("{first}\n{second}\n{third}\n{unknown}\nnot an id\n"),
    );
    let mut layouts = Vec::new();
    for columns in ["200", "120", "100", "80"] {
        let mut cmd = status(&sandbox, &base, Some(columns));
        cmd.arg("--from-file").arg(&file);
        let out = stdout(&run(cmd).await.code(3));
        let width: usize = columns.parse().expect("a number");
        assert!(
            out.lines().all(|line| line.chars().count() <= width),
            "{out}"
        );
        assert!(out.starts_with("TRANSACTION ID"), "a table: {out}");
        assert!(!out.contains("Transaction ID"), "no vertical blocks: {out}");
        for id in [&first, &second, &third] {
            let (head, tail) = (&id[..8], &id[id.len() - 4..]);
            assert_eq!(
                out.lines()
                    .filter(|line| line.starts_with(head) && line.contains(tail))
                    .count(),
                1,
                "one row for {id} at {columns}: {out}"
            );
        }
        layouts.push(format!("## COLUMNS={columns}\n{out}"));
    }
    // The whole id is in the json.
    let mut cmd = sandbox.payments();
    cmd.env("COLUMNS", "80")
        .args(["--base-url", &base, "-o", "json", "status", "--from-file"])
        .arg(&file);
    let json = stdout(&run(cmd).await.code(3));
    assert!(json.contains(&first) && json.contains(&third), "{json}");
    settings().bind(|| insta::assert_snapshot!("layout_many_rows", layouts.join("\n")));
}

/// Before: `Amount 49.90` in confirm and status, whatever the currency.
#[tokio::test(flavor = "multi_thread")]
async fn amounts_carry_the_currency_the_cli_was_given() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "CUR-1", "TOPUP").await;

    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "-o", "table", "confirm", &id])
        .args(["--reference-no", "CUR-1", "--currency", "myr"]);
    let confirmed = run(cmd).await.success();
    assert!(
        stdout(&confirmed).contains("Amount           10.50 MYR"),
        "{}",
        stdout(&confirmed)
    );

    let mut cmd = status(&sandbox, &base, None);
    cmd.args([&id, "--currency", "MYR"]);
    assert!(stdout(&run(cmd).await.success()).contains("10.50 MYR"));

    // Without --currency the amount is as the service wrote it.
    let mut cmd = status(&sandbox, &base, None);
    cmd.arg(&id);
    let plain = stdout(&run(cmd).await.success());
    assert!(
        plain.contains("10.50\n") && !plain.contains("MYR"),
        "{plain}"
    );

    // A currency whose decimals the amount does not have is not shown.
    let mut cmd = status(&sandbox, &base, None);
    cmd.args([&id, "--currency", "JPY"]);
    let assert = run(cmd).await.success();
    assert!(!stdout(&assert).contains("JPY"));
    assert!(
        stderr(&assert).contains("the amount 10.50, which cannot be in JPY (no decimal places)"),
        "{}",
        stderr(&assert)
    );
}
