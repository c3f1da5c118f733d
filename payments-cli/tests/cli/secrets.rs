//! The API key never appears in stdout or stderr, with `-v`, on success or
//! failure, whether it came from a flag, the environment or a profile.

use payments_mock_server::MockServer;

use crate::common::{Sandbox, closed_port_url, run};

const FLAG_KEY: &str = "sk_live_FLAGSECRET_1234567890";
const ENV_KEY: &str = "sk_live_ENVSECRET_1234567890";
const PROFILE_KEY: &str = "sk_live_PROFILESECRET_1234567890";

fn assert_no_key(assert: &assert_cmd::assert::Assert, what: &str) {
    let output = assert.get_output();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    for key in [FLAG_KEY, ENV_KEY, PROFILE_KEY, "SECRET_1234"] {
        assert!(!text.contains(key), "{what}: key {key} leaked in:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_is_never_printed_from_any_source_with_verbose() {
    // The mock accepts only the flag's key, so the other sources fail with
    // 401 and their error paths are covered too.
    let server = MockServer::builder()
        .api_key(FLAG_KEY, None)
        .start()
        .await
        .expect("the mock starts");
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{}\"\napi_key = \"{PROFILE_KEY}\"\n\
         merchant_id = \"{}\"\n",
        server.base_url(),
        crate::common::MERCHANT
    ));
    let commands: [&[&str]; 6] = [
        &[
            "initiate",
            "--reference-no",
            "K-1",
            "--amount",
            "1",
            "--product",
            "TOPUP",
            "--store-id",
            "S",
            "--payer-id",
            "P",
        ],
        &["status", "01937e1c-0000-7000-8000-000000000000"],
        &[
            "status",
            "--reference-no",
            "K-1",
            "--wait",
            "--wait-timeout",
            "0.2",
        ],
        &[
            "confirm",
            "01937e1c-0000-7000-8000-000000000000",
            "--reference-no",
            "K-1",
        ],
        &["tail"],
        &["tail", "--proxy"],
    ];
    for output in ["json", "table"] {
        for args in commands {
            let mut by_flag = sandbox.payments();
            by_flag
                .args(["-v", "-o", output, "--api-key", FLAG_KEY])
                .args(args);
            assert_no_key(&run(by_flag).await, "flag");

            let mut by_env = sandbox.payments();
            by_env
                .env("PAYMENTS_API_KEY", ENV_KEY)
                .args(["-v", "-o", output])
                .args(args);
            assert_no_key(&run(by_env).await, "env");

            let mut by_profile = sandbox.payments();
            by_profile.args(["-v", "-o", output]).args(args);
            assert_no_key(&run(by_profile).await, "profile");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_is_not_printed_when_the_service_is_unreachable() {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args([
        "-v",
        "--retries",
        "1",
        "--base-url",
        &closed_port_url(),
        "--api-key",
        FLAG_KEY,
    ])
    .args(["status", "x"]);
    assert_no_key(&run(cmd).await.code(4), "unreachable");
}

#[test]
fn the_key_is_not_in_help_or_usage_errors() {
    let sandbox = Sandbox::new();
    let help = sandbox
        .payments()
        .env("PAYMENTS_API_KEY", ENV_KEY)
        .arg("--help")
        .assert()
        .success();
    assert_no_key(&help, "help");
    let usage = sandbox
        .payments()
        .args(["--api-key", FLAG_KEY, "status", "--bogus"])
        .assert()
        .code(2);
    assert_no_key(&usage, "usage error");
    // A key or a code that starts with '-' is read as an argument of its
    // own: its "unknown argument" error never repeats it.
    for args in [
        vec![
            "--api-key",
            "--sk_live_FLAGSECRET_1234567890",
            "status",
            "x",
        ],
        vec!["--api-key", "-sk_live_FLAGSECRET_1234567890", "status", "x"],
        vec![
            "confirm",
            "x",
            "--reference-no",
            "R",
            "--code",
            "--SECRET_123456",
        ],
    ] {
        let usage = sandbox.payments().args(&args).assert().code(2);
        assert_no_key(&usage, "a value that starts with '-'");
        let err = crate::common::stderr(&usage);
        assert!(!err.contains("SECRET"), "{err}");
        assert!(err.contains("needs a value"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_prints_request_and_response_lines_on_stderr() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args([
        "-v",
        "--base-url",
        &server.base_url(),
        "--api-key",
        FLAG_KEY,
    ])
    .args(["status", "01937e1c-0000-7000-8000-000000000000"]);
    let assert = run(cmd).await.code(3);
    let err = crate::common::stderr(&assert);
    assert!(err.contains("> GET http://127.0.0.1"), "{err}");
    assert!(err.contains("Bearer [REDACTED]"), "{err}");
    assert!(err.contains("< HTTP 404"), "{err}");
    assert!(err.contains("request id"), "{err}");
    assert_no_key(&assert, "verbose");
}

/// A password in the service's URL (`https://user:pass@host`) is shown as
/// `***@` by `-v`, by the hints of a failed call and by the usage error of
/// a URL that does not parse, in every command.
#[tokio::test(flavor = "multi_thread")]
async fn a_password_in_the_base_url_is_never_printed() {
    const PASSWORD: &str = "S3cretURLpass";
    let server = MockServer::start().await;
    let with_password = |base: &str| base.replacen("://", &format!("://alice:{PASSWORD}@"), 1);
    let live = with_password(&server.base_url());
    let closed = with_password(&closed_port_url());
    let sandbox = Sandbox::new();
    let id = "01937e1c-0000-7000-8000-000000000000";
    let runs: [(&str, Vec<&str>, i32); 5] = [
        (
            "-v, answered",
            vec!["-v", "--base-url", &live, "status", id],
            3,
        ),
        (
            "-v, unreachable",
            vec!["-v", "--retries", "0", "--base-url", &closed, "status", id],
            4,
        ),
        (
            "a port that cannot be",
            vec![
                "--base-url",
                "http://alice:S3cretURLpass@127.0.0.1:99999",
                "status",
                id,
            ],
            2,
        ),
        (
            "tail, a port that cannot be",
            vec![
                "--base-url",
                "http://alice:S3cretURLpass@127.0.0.1:99999",
                "tail",
            ],
            2,
        ),
        ("tail, unreachable", vec!["--base-url", &closed, "tail"], 4),
    ];
    for (what, args, code) in runs {
        let mut cmd = sandbox.payments();
        cmd.args(&args);
        let assert = run(cmd).await.code(code);
        let output = assert.get_output();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            !text.contains(PASSWORD),
            "{what}: the password leaked in:\n{text}"
        );
        assert!(
            text.contains("127.0.0.1"),
            "{what}: the host is still named:\n{text}"
        );
    }
}

/// A service (or a proxy) that echoes the key and the code in its message:
/// `-v` and the error line show them as `[REDACTED]`, as written or
/// percent-encoded; `-o json` still prints the envelope as received.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_or_code_the_service_echoes_is_never_shown_on_stderr() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer as Stub, ResponseTemplate};
    const KEY: &str = "sk_ECHO_CANARY/9+x=";
    const CODE: &str = "otp_ECHO_CANARY_7";
    let stub = Stub::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(ResponseTemplate::new(400).set_body_json(serde_json::json!({
            "isSuccess": false,
            "errorCode": "VALIDATION_ERROR",
            "message": format!(
                "bad code {CODE} for key Bearer {KEY} (sk_ECHO_CANARY%2f9%2bx%3d)"
            ),
            "data": null,
        })))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    for output in ["table", "json"] {
        let mut cmd = sandbox.payments();
        cmd.args(["-v", "--base-url", &stub.uri(), "--api-key", KEY])
            .args(["--retries", "0", "-o", output, "confirm"])
            .args([
                "01930000-0000-7000-8000-000000000000",
                "--reference-no",
                "R1",
            ])
            .args(["--code", CODE]);
        let assert = run(cmd).await.code(1);
        let err = crate::common::stderr(&assert);
        assert!(!err.contains("CANARY"), "{output}: {err}");
        assert!(
            err.contains("bad code [REDACTED] for key Bearer [REDACTED]"),
            "{err}"
        );
    }
}

/// Before: `PAYMENTS_BASE_URL='http://user:S3CRETPW@…' payments status -h`
/// printed the password in `[env: PAYMENTS_BASE_URL=…]`: no variable's
/// value that may hold a secret is shown by help.
#[test]
fn help_never_shows_a_secret_from_the_environment() {
    let sandbox = Sandbox::new();
    for args in [
        &["status", "-h"][..],
        &["status", "--help"],
        &["--help"],
        &["-h"],
    ] {
        let assert = sandbox
            .payments()
            .env("PAYMENTS_BASE_URL", "http://user:S3CRETPW@127.0.0.1:1")
            .env("PAYMENTS_API_KEY", ENV_KEY)
            .args(args)
            .assert()
            .success();
        let out = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
        assert!(out.contains("PAYMENTS_BASE_URL"), "{args:?}: {out}");
        assert!(!out.contains("S3CRETPW"), "{args:?}: {out}");
        assert_no_key(&assert, "help");
    }
}

/// `user:pass@` in the service's URL beside an API key, which the client
/// refuses to build (both would be `Authorization`): a usage error (exit
/// 2) naming where each was given (flag or environment, or the profile),
/// whole, with the CLI's advice, and neither value. It said "invalid
/// service URL …: invalid client configuration: … (the first 200 of 232
/// bytes)", blamed the URL alone and pointed at the client's
/// `auth_header`, which the CLI has not. Either alone still works.
#[tokio::test(flavor = "multi_thread")]
async fn user_pass_in_the_url_and_an_api_key_are_a_usage_error_naming_both() {
    const PASSWORD: &str = "S3cretURLpass";
    let server = MockServer::start().await;
    let with_password = |base: &str| base.replacen("://", &format!("://alice:{PASSWORD}@"), 1);
    let closed = with_password(&closed_port_url());
    let id = "01937e1c-0000-7000-8000-000000000000";
    let said = |url_from: &str, key_from: &str| {
        format!(
            "error: the service URL has user:pass@ (from {url_from}) and an API key is set (from \
             {key_from}): both would be sent as the Authorization header (Basic and Bearer), and \
             only one can be; remove one of them: the user:pass@ from the URL, or the API key\n"
        )
    };
    let sandbox = Sandbox::new();
    let flags = "--base-url or PAYMENTS_BASE_URL";
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &closed, "--api-key", FLAG_KEY])
        .args(["status", "--reference-no", "x", "--merchant-id"])
        .arg(crate::common::MERCHANT);
    let assert = run(cmd).await.code(2);
    assert_eq!(
        crate::common::stderr(&assert),
        said(flags, "--api-key or PAYMENTS_API_KEY")
    );
    assert_no_key(&assert, "flags");
    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_BASE_URL", &closed)
        .env("PAYMENTS_API_KEY", ENV_KEY)
        .args(["initiate", "--reference-no", "R1", "--amount", "1.00"])
        .args(["--product", "TOPUP", "--store-id", "S1", "--merchant-id"])
        .arg(crate::common::MERCHANT);
    let assert = run(cmd).await.code(2);
    assert_eq!(
        crate::common::stderr(&assert),
        said(flags, "--api-key or PAYMENTS_API_KEY")
    );
    assert_no_key(&assert, "environment");
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{closed}\"\napi_key = \"{PROFILE_KEY}\"\n"
    ));
    let mut cmd = sandbox.payments();
    cmd.args(["status", id]);
    let assert = run(cmd).await.code(2);
    assert_eq!(
        crate::common::stderr(&assert),
        said("base_url in the profile", "api_key in the profile")
    );
    assert_no_key(&assert, "profile");

    // Control: either alone reaches the service (the mock has no such
    // transaction: exit 3).
    let base = server.base_url();
    let live = with_password(&base);
    for args in [
        vec!["--base-url", live.as_str()],
        vec!["--base-url", base.as_str(), "--api-key", FLAG_KEY],
    ] {
        let mut cmd = Sandbox::new().payments();
        cmd.args(&args).args(["status", id]);
        let assert = run(cmd).await.code(3);
        assert_no_key(&assert, "either alone");
    }
}

/// A key in the service URL's query or fragment (`?api_key=…`) is hidden
/// in the usage error as a password is: the error quoted it.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_in_the_base_urls_query_or_fragment_is_never_printed() {
    const CANARY: &str = "QCLICANARY66";
    let sandbox = Sandbox::new();
    for (url, shown) in [
        (
            format!("http://127.0.0.1:1/?api_key={CANARY}"),
            "'http://127.0.0.1:1/?***'",
        ),
        (
            format!("http://u:p@127.0.0.1:1/p#key={CANARY}"),
            "'http://***@127.0.0.1:1/p#***'",
        ),
    ] {
        for command in [vec!["status", "x"], vec!["tail"]] {
            let mut cmd = sandbox.payments();
            cmd.args(["--base-url", &url]).args(&command);
            let assert = run(cmd).await.code(2);
            let output = assert.get_output();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(!text.contains(CANARY), "{url} {command:?}:\n{text}");
            assert!(
                text.contains(&format!("error: invalid service URL {shown}")),
                "{url} {command:?}:\n{text}"
            );
        }
    }
}

/// A service (or a proxy) that echoes the key and the code in the fields a
/// table shows (message, provider reference, confirm's errorMessage and
/// extraProperties, in status, confirm, verify-return and a table of
/// many): the table shows them as `[REDACTED]`, as stderr does. Before,
/// only the error lines hid them. `-o json` still prints the envelope as
/// received.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_or_code_the_service_echoes_is_never_shown_in_a_table() {
    use wiremock::matchers::{method, path, path_regex};
    use wiremock::{Mock, MockServer as Stub, ResponseTemplate};
    const KEY: &str = "sk_live_TABLE_CANARY77";
    const CODE: &str = "99887766";
    const TX: &str = "01937e1c-0000-7000-8000-0000000000e1";
    let echo = |text: &str| {
        text.replace("{KEY}", KEY)
            .replace("{CODE}", CODE)
            .replace("{TX}", TX)
    };
    let stub = Stub::start().await;
    Mock::given(method("GET"))
        .and(path_regex("^/api/payments/[^/]+/status$"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            echo(
                r#"{"isSuccess":true,"errorCode":null,"message":null,"data":{"transactionId":"{TX}","referenceNo":"R1","status":"FAILED","amount":10.50,"productCode":"TOPUP","createdAt":"2026-11-22T08:15:30.123Z","lastModifiedAt":null,"providerReference":"PRV-Bearer {KEY}","message":"declined: you sent Bearer {KEY}","extraProperties":null}}"#,
            ),
            "application/json",
        ))
        .mount(&stub)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            echo(
                r#"{"isSuccess":true,"errorCode":null,"message":null,"data":{"transactionId":"{TX}","referenceNo":"R1","status":"FAILED","amount":10.50,"providerReference":"PRV-{CODE}","confirmedAt":"2026-11-22T08:16:00.000Z","errorMessage":"code {CODE} auth Bearer {KEY}","extraProperties":{"otp":"{CODE}","auth":"Bearer {KEY}"}}}"#,
            ),
            "application/json",
        ))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let return_url =
        format!("https://shop.example/back?transactionId={TX}&referenceNo=R1&status=FAILED");
    let runs: [(&str, Vec<&str>, i32); 4] = [
        ("status", vec!["status", TX], 0),
        ("many", vec!["status", TX, TX], 0),
        (
            "confirm",
            vec!["confirm", TX, "--reference-no", "R1", "--code", CODE],
            0,
        ),
        ("verify-return", vec!["verify-return", &return_url], 0),
    ];
    for (what, args, code) in &runs {
        let mut cmd = sandbox.payments();
        cmd.env("COLUMNS", "250")
            .args(["--base-url", &stub.uri(), "--api-key", KEY, "-o", "table"])
            .args(args);
        let assert = run(cmd).await.code(*code);
        let out = crate::common::stdout(&assert);
        let err = crate::common::stderr(&assert);
        assert!(
            !out.contains("CANARY") && !out.contains(CODE),
            "{what}: the key or the code in the table:\n{out}"
        );
        assert!(!err.contains("CANARY"), "{what}: {err}");
        assert!(out.contains("Bearer [REDACTED]"), "{what}: {out}");
    }
    // json: the envelope exactly as received.
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "--api-key", KEY, "-o", "json"])
        .args(["status", TX]);
    let out = crate::common::stdout(&run(cmd).await.code(0));
    assert!(out.contains(&format!("you sent Bearer {KEY}")), "{out}");
}
