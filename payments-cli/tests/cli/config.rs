//! The config file, profiles, and the precedence flag > environment > profile.

use payments_mock_server::MockServer;
use predicates::prelude::*;
use predicates::str::contains;

use crate::common::{MERCHANT, Sandbox, closed_port_url, run, stderr};

/// The URL an unreachable call names tells which setting won.
fn assert_tried(assert: &assert_cmd::assert::Assert, winner: &str, losers: &[&str]) {
    let err = stderr(assert);
    assert!(err.contains(winner), "{winner} not named in: {err}");
    for loser in losers {
        assert!(!err.contains(loser), "{loser} named in: {err}");
    }
}

#[test]
fn base_url_precedence_is_flag_then_env_then_profile() {
    let sandbox = Sandbox::new();
    let (from_profile, from_env, from_flag) =
        (closed_port_url(), closed_port_url(), closed_port_url());
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{from_profile}\"\nretries = 0\n"
    ));

    let only_profile = sandbox.payments().args(["status", "abc"]).assert().code(4);
    assert_tried(&only_profile, &from_profile, &[&from_env, &from_flag]);

    let env_too = sandbox
        .payments()
        .env("PAYMENTS_BASE_URL", &from_env)
        .args(["status", "abc"])
        .assert()
        .code(4);
    assert_tried(&env_too, &from_env, &[&from_profile, &from_flag]);

    let flag_too = sandbox
        .payments()
        .env("PAYMENTS_BASE_URL", &from_env)
        .args(["--base-url", &from_flag, "status", "abc"])
        .assert()
        .code(4);
    assert_tried(&flag_too, &from_flag, &[&from_profile, &from_env]);
}

#[test]
fn a_profile_is_chosen_by_flag_env_or_default_profile() {
    let sandbox = Sandbox::new();
    let (a, b, c) = (closed_port_url(), closed_port_url(), closed_port_url());
    sandbox.write_config(&format!(
        "default_profile = \"a\"\n\
         [profiles.a]\nbase_url = \"{a}\"\nretries = 0\n\
         [profiles.b]\nbase_url = \"{b}\"\nretries = 0\n\
         [profiles.c]\nbase_url = \"{c}\"\nretries = 0\n"
    ));
    let by_default = sandbox.payments().args(["status", "x"]).assert().code(4);
    assert_tried(&by_default, &a, &[&b, &c]);
    let by_env = sandbox
        .payments()
        .env("PAYMENTS_PROFILE", "b")
        .args(["status", "x"])
        .assert()
        .code(4);
    assert_tried(&by_env, &b, &[&a, &c]);
    let by_flag = sandbox
        .payments()
        .env("PAYMENTS_PROFILE", "b")
        .args(["--profile", "c", "status", "x"])
        .assert()
        .code(4);
    assert_tried(&by_flag, &c, &[&a, &b]);
}

#[test]
fn an_unknown_profile_lists_the_known_ones() {
    let sandbox = Sandbox::new();
    let path = sandbox.write_config("[profiles.prod]\n[profiles.staging]\n");
    sandbox
        .payments()
        .args(["--profile", "dev", "status", "x"])
        .assert()
        .code(2)
        .stderr(contains("profile 'dev' not found"))
        .stderr(contains("prod, staging"))
        .stderr(contains(path.display().to_string()));
}

#[test]
fn a_malformed_config_names_the_file_and_line() {
    let sandbox = Sandbox::new();
    let path =
        sandbox.write_config("[profiles.default]\nbase_url = \"http://x\"\nretries = \"two\"\n");
    sandbox
        .payments()
        .args(["status", "x"])
        .assert()
        .code(2)
        .stderr(contains(format!("config file {}, line 3", path.display())));

    sandbox.write_config("[profiles.default]\nbase_ur = \"http://x\"\n");
    sandbox
        .payments()
        .args(["status", "x"])
        .assert()
        .code(2)
        .stderr(contains("line 2").and(contains("base_ur")));
}

#[test]
fn a_missing_default_config_is_fine_but_a_missing_explicit_one_is_not() {
    let sandbox = Sandbox::new();
    sandbox
        .payments()
        .args([
            "--base-url",
            &closed_port_url(),
            "--retries",
            "0",
            "status",
            "x",
        ])
        .assert()
        .code(4);
    sandbox
        .payments()
        .args(["--config", "/nonexistent/payments.toml", "status", "x"])
        .assert()
        .code(2)
        .stderr(contains("/nonexistent/payments.toml"));
}

#[test]
fn config_can_be_given_with_a_path() {
    let sandbox = Sandbox::new();
    let url = closed_port_url();
    let path = sandbox.write_file(
        "elsewhere.toml",
        &format!("[profiles.default]\nbase_url = \"{url}\"\nretries = 0\n"),
    );
    let assert = sandbox
        .payments()
        .arg("--config")
        .arg(&path)
        .args(["status", "x"])
        .assert()
        .code(4);
    assert_tried(&assert, &url, &[]);
}

/// A flag on the command line beats its variable, which is then not read
/// at all: a bad or empty one cannot break the command; an empty variable
/// is unset (COMMANDS.md: a flag beats the environment).
#[tokio::test(flavor = "multi_thread")]
async fn a_typed_flag_is_never_broken_by_its_variable_and_an_empty_one_is_unset() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let id = "01a20813-0000-7000-8000-000000000000";
    for args in [
        vec![
            "--merchant-id",
            MERCHANT,
            "-o",
            "json",
            "--api-key",
            "k",
            "status",
            id,
        ],
        vec![
            "status",
            id,
            "--merchant-id",
            MERCHANT,
            "--output=json",
            "--api-key=k",
        ],
    ] {
        let mut cmd = sandbox.payments();
        cmd.env("PAYMENTS_MERCHANT_ID", "bad")
            .env("PAYMENTS_OUTPUT", "yaml")
            .env("PAYMENTS_API_KEY", "")
            .env("PAYMENTS_CA_CERT", "")
            .args(["--base-url", &server.base_url()])
            .args(&args);
        let out = run(cmd).await.code(3);
        let err = crate::common::stderr(&out);
        assert!(!err.contains("PAYMENTS_"), "{args:?}: {err}");
        let line: serde_json::Value =
            serde_json::from_str(crate::common::stdout(&out).trim()).expect("json");
        assert_eq!(line["errorCode"], "TRANSACTION_NOT_FOUND");
    }
    // Empty variables alone: as if unset (no key, json when piped).
    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_API_KEY", "")
        .env("PAYMENTS_OUTPUT", "")
        .env("PAYMENTS_MERCHANT_ID", "")
        .env("PAYMENTS_CONFIG", "")
        .args(["--base-url", &server.base_url(), "status", id]);
    let out = run(cmd).await.code(3);
    assert!(crate::common::stdout(&out).starts_with('{'));
    // A bad variable without its flag is still a usage error naming it.
    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_MERCHANT_ID", "bad")
        .args(["--base-url", &server.base_url(), "status", id]);
    let err = crate::common::stderr(&run(cmd).await.code(2));
    assert!(
        err.contains("PAYMENTS_MERCHANT_ID (for --merchant-id)"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn merchant_precedence_is_flag_then_env_then_profile() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let (profile, env) = (
        "11111111-1111-4111-8111-111111111111",
        "22222222-2222-4222-8222-222222222222",
    );
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{}\"\nmerchant_id = \"{profile}\"\n",
        server.base_url()
    ));
    let initiate = |reference: &str| {
        let mut cmd = sandbox.payments();
        cmd.args([
            "initiate",
            "--reference-no",
            reference,
            "--amount-minor",
            "100",
        ])
        .args(["--product", "TOPUP", "--store-id", "S1", "--payer-id", "P1"]);
        cmd
    };
    run(initiate("from-profile")).await.success();
    let mut cmd = initiate("from-env");
    cmd.env("PAYMENTS_MERCHANT_ID", env);
    run(cmd).await.success();
    let mut cmd = initiate("from-flag");
    cmd.env("PAYMENTS_MERCHANT_ID", env)
        .args(["--merchant-id", MERCHANT]);
    run(cmd).await.success();

    let merchants: Vec<(String, String)> = server
        .transactions()
        .await
        .into_iter()
        .map(|t| (t.reference_no, t.merchant_id.to_string()))
        .collect();
    assert_eq!(
        merchants,
        [
            ("from-profile".to_owned(), profile.to_owned()),
            ("from-env".to_owned(), env.to_owned()),
            ("from-flag".to_owned(), MERCHANT.to_owned()),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn api_key_precedence_is_flag_then_env_then_profile() {
    let server = MockServer::builder()
        .api_key("sk_right", None)
        .start()
        .await
        .expect("the mock starts");
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{}\"\napi_key = \"sk_profile\"\n",
        server.base_url()
    ));
    let status = || {
        let mut cmd = sandbox.payments();
        cmd.args(["status", "01937e1c-0000-7000-8000-000000000000"]);
        cmd
    };
    // The profile's key is wrong: 401 is a rejection.
    run(status()).await.code(1).stderr(contains("UNAUTHORIZED"));
    // A right env key beats it: the id is simply unknown.
    let mut cmd = status();
    cmd.env("PAYMENTS_API_KEY", "sk_right");
    run(cmd).await.code(3);
    // A wrong flag beats a right env key.
    let mut cmd = status();
    cmd.env("PAYMENTS_API_KEY", "sk_right")
        .args(["--api-key", "sk_flag"]);
    run(cmd).await.code(1);
    // And a right flag beats a wrong profile.
    let mut cmd = status();
    cmd.args(["--api-key", "sk_right"]);
    run(cmd).await.code(3);
}

/// Issue 34: the README's own profile said `output = "table"`, and
/// `payments initiate ... | jq` failed. A profile's `output` applies on a
/// terminal only (the choice itself is unit-tested in `config.rs`, as these
/// tests have no terminal); a flag or `PAYMENTS_OUTPUT` applies everywhere.
#[tokio::test(flavor = "multi_thread")]
async fn a_profiles_table_output_does_not_reach_a_pipe() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{}\"\nmerchant_id = \"{MERCHANT}\"\noutput = \"table\"\n",
        server.base_url()
    ));
    let mut cmd = sandbox.payments();
    cmd.args(["initiate", "--reference-no", "PIPE-1", "--amount", "1"])
        .args(["--product", "TOPUP", "--store-id", "S1", "--payer-id", "P"]);
    let piped = run(cmd).await.success();
    let envelope: serde_json::Value = serde_json::from_str(crate::common::stdout(&piped).trim())
        .expect("a pipe gets the envelope, whatever the profile says");
    let id = envelope["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();

    let table = || contains(id.as_str()).and(contains("isSuccess").not());
    let mut cmd = sandbox.payments();
    cmd.args(["-o", "table", "status", &id]);
    run(cmd).await.success().stdout(table());

    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_OUTPUT", "table").args(["status", &id]);
    run(cmd).await.success().stdout(table());

    let mut cmd = sandbox.payments();
    cmd.args(["status", "nope"]);
    run(cmd)
        .await
        .code(3)
        .stdout(contains("\"errorCode\":\"TRANSACTION_NOT_FOUND\""));
}

#[tokio::test(flavor = "multi_thread")]
async fn retries_come_from_the_profile_unless_a_flag_says_otherwise() {
    use payments_mock_server::Fault;
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{}\"\nretries = 0\n",
        server.base_url()
    ));
    server.inject_faults(std::iter::repeat_n(Fault::InternalError, 4));
    let mut cmd = sandbox.payments();
    cmd.args(["status", "abc"]);
    run(cmd).await.code(4);
    assert_eq!(
        server.requests().await.len(),
        1,
        "the profile said no retries"
    );

    let mut cmd = sandbox.payments();
    cmd.args(["--retries", "2", "status", "abc"]);
    run(cmd).await.code(4);
    assert_eq!(
        server.requests().await.len(),
        4,
        "the flag said two retries"
    );
}
