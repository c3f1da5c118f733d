//! `status --wait`, driven by the mock's virtual clock instead of sleeping.

use std::time::Duration;

use payments_mock_server::MockServer;
use predicates::str::contains;

use crate::common::{Sandbox, confirm, initiate, run, stderr, stdout};

fn wait_cmd(sandbox: &Sandbox, base_url: &str, id: &str, timeout: &str) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        base_url,
        "status",
        id,
        "--wait",
        "--wait-timeout",
        timeout,
    ]);
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_returns_once_a_bill_payment_settles() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "BILL-1", "BILLPAY").await;
    confirm(&sandbox, &base, &id, "BILL-1").await;

    let waiting = tokio::spawn(run(wait_cmd(&sandbox, &base, &id, "30")));
    // The mock settles BILLPAY 2 s (virtual) after confirm: move its clock on
    // while the command polls.
    server.advance_clock(Duration::from_secs(3)).await;
    let assert = waiting.await.expect("the command ran").success();
    let envelope: serde_json::Value =
        serde_json::from_str(stdout(&assert).trim()).expect("one envelope");
    assert_eq!(envelope["data"]["status"], "SUCCESSFUL");
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_on_a_final_state_returns_at_once() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "EXP-1", "TOPUP").await;
    // Unconfirmed transactions expire after 15 minutes.
    server.advance_clock(Duration::from_secs(16 * 60)).await;
    let mut cmd = wait_cmd(&sandbox, &base, &id, "30");
    cmd.args(["-o", "table"]);
    run(cmd).await.success().stdout(contains("EXPIRED"));
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_gives_up_with_exit_5_and_shows_the_last_state() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "STUCK-1", "TOPUP").await;

    let assert = run(wait_cmd(&sandbox, &base, &id, "0.3")).await.code(5);
    let envelope: serde_json::Value =
        serde_json::from_str(stdout(&assert).trim()).expect("the last envelope");
    assert_eq!(envelope["data"]["status"], "INITIATED");
    let err = stderr(&assert);
    assert!(
        err.contains("final state") && err.contains("--wait-timeout"),
        "{err}"
    );

    let mut cmd = wait_cmd(&sandbox, &base, &id, "0.3");
    cmd.args(["-o", "table"]);
    run(cmd)
        .await
        .code(5)
        .stdout(contains("INITIATED"))
        .stdout(contains("gave up waiting"));
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_by_reference_follows_the_transaction() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "BILL-2", "BILLPAY").await;
    confirm(&sandbox, &base, &id, "BILL-2").await;
    server.advance_clock(Duration::from_secs(3)).await;
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &base,
        "status",
        "--reference-no",
        "BILL-2",
        "--wait",
    ]);
    run(cmd).await.success().stdout(contains("SUCCESSFUL"));
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_timeout_needs_wait() {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        "http://127.0.0.1:9",
        "status",
        "x",
        "--wait-timeout",
        "5",
    ]);
    run(cmd).await.code(2).stderr(contains("--wait"));
}

/// What the first read saw is what was last seen when no later poll
/// answers in time (every poll after it hangs): exit 5 with that envelope,
/// where the wait said nothing of it.
#[tokio::test(flavor = "multi_thread")]
async fn the_first_read_is_part_of_the_wait_and_is_what_was_last_seen() {
    use payments_mock_server::{Endpoint, Fault, FaultRule};
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "SLOW-1", "TOPUP").await;
    server
        .add_fault_rule(
            FaultRule::new(Fault::Hang)
                .on(Endpoint::StatusById)
                .after(1),
        )
        .expect("a rule");
    let assert = run(wait_cmd(&sandbox, &base, &id, "1")).await.code(5);
    let envelope: serde_json::Value =
        serde_json::from_str(stdout(&assert).trim()).expect("the first read's envelope");
    assert_eq!(envelope["data"]["status"], "INITIATED");
    let err = stderr(&assert);
    assert!(err.contains("last seen INITIATED"), "{err}");
}
