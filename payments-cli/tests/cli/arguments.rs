//! Values as they are typed: whitespace at an end of an id or a reference,
//! a value that starts with `-`, bytes that are not UTF-8, and the order of
//! ids and references on the command line. Each message pinned, with what
//! it said before in the comment above it.

use std::{ffi::OsStr, os::unix::ffi::OsStrExt as _};

use payments_mock_server::MockServer;

use crate::common::{
    MERCHANT, Sandbox, closed_port_url, initiate, run, snapshot_settings, stderr, stdout,
};

/// One section per command: exit code and stderr.
fn section(transcript: &mut String, name: &str, assert: &assert_cmd::assert::Assert) {
    let code = assert.get_output().status.code().unwrap_or(-1);
    transcript.push_str(&format!("## {name}: exit {code}\n{}\n", stderr(assert)));
}

/// Before: `status "$ID "`, `status --reference-no "R1 "` and `confirm
/// "$ID " --reference-no R1` were sent as typed and exited 3 (not found),
/// though the transaction exists; initiate refused `--reference-no "R7 "`
/// (exit 2) and a `--from-file` line is trimmed.
#[tokio::test(flavor = "multi_thread")]
async fn an_id_or_reference_with_whitespace_at_an_end_is_a_usage_error() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let sandbox = Sandbox::new();
    let id = initiate(&sandbox, &base, "INV-EDGE-1", "TOPUP").await;
    let service = ["--base-url", base.as_str(), "--merchant-id", MERCHANT];
    let mut transcript = String::new();
    let spaced = format!("{id} ");
    let leading = format!(" {id}");
    for (name, args, code) in [
        ("status \"ID \"", vec!["status", spaced.as_str()], 2),
        ("status \" ID\"", vec!["status", leading.as_str()], 2),
        (
            "status --reference-no \"INV-EDGE-1 \"",
            vec!["status", "--reference-no", "INV-EDGE-1 "],
            2,
        ),
        (
            "confirm \"ID \" --reference-no INV-EDGE-1",
            vec!["confirm", spaced.as_str(), "--reference-no", "INV-EDGE-1"],
            2,
        ),
        // Control: the same values without the space are found.
        ("status ID", vec!["status", id.as_str()], 0),
        (
            "status --reference-no INV-EDGE-1",
            vec!["status", "--reference-no", "INV-EDGE-1"],
            0,
        ),
    ] {
        let mut cmd = sandbox.payments();
        cmd.args(service).args(["-o", "json"]).args(&args);
        let assert = run(cmd).await.code(code);
        section(&mut transcript, name, &assert);
    }
    snapshot_settings().bind(|| insta::assert_snapshot!("arguments_edge_whitespace", transcript));
}

/// Before: `error: unknown argument '-D' (see --help)` for
/// `--reference-no -DASH1`; the hint was given for --api-key and --code
/// only.
#[tokio::test(flavor = "multi_thread")]
async fn a_value_that_starts_with_a_dash_is_said_with_its_flag() {
    let sandbox = Sandbox::new();
    let base = closed_port_url();
    let initiate = [
        "initiate",
        "--reference-no",
        "R1",
        "--amount",
        "1",
        "--product",
        "TOPUP",
        "--store-id",
        "S1",
    ];
    let mut transcript = String::new();
    for (name, args) in [
        (
            "status --reference-no -DASH1",
            vec!["status", "--reference-no", "-DASH1"],
        ),
        (
            "initiate … --payer-id -60123",
            [&initiate[..], &["--payer-id", "-60123"]].concat(),
        ),
        (
            "initiate … --description \"-- sale --\"",
            [&initiate[..], &["--description", "-- sale --"]].concat(),
        ),
        (
            "confirm -01a2 --reference-no R1",
            vec!["confirm", "-01a2", "--reference-no", "R1"],
        ),
        (
            "--api-key -(a key) status X",
            vec!["--api-key", "-SECRETKEY", "status", "X"],
        ),
        // Unchanged: a flag that does not exist.
        ("status --bogus", vec!["status", "--bogus"]),
    ] {
        let mut cmd = sandbox.payments();
        cmd.args(["--base-url", &base, "--merchant-id", MERCHANT])
            .args(&args);
        let assert = run(cmd).await.code(2);
        section(&mut transcript, name, &assert);
    }
    assert!(!transcript.contains("SECRETKEY"), "{transcript}");
    snapshot_settings().bind(|| insta::assert_snapshot!("arguments_leading_dash", transcript));

    // Control: given as the hints say, they are sent (nothing listens:
    // exit 4, after no retry).
    for args in [
        vec!["status", "--reference-no=-DASH1"],
        vec!["confirm", "--reference-no", "R1", "--", "-01a2"],
    ] {
        let mut cmd = sandbox.payments();
        cmd.args(["--base-url", &base, "--retries", "0"])
            .args(&args);
        run(cmd).await.code(4);
    }
}

/// Before: clap's `invalid UTF-8 was detected in one or more arguments`,
/// naming nothing.
#[tokio::test(flavor = "multi_thread")]
async fn bytes_that_are_not_utf8_are_said_with_their_flag_or_variable() {
    let sandbox = Sandbox::new();
    let base = closed_port_url();
    let bad = OsStr::from_bytes(b"R\xff1");
    let mut transcript = String::new();
    let cases: [(&str, Vec<&OsStr>); 4] = [
        (
            "status --reference-no R\\xff1",
            vec!["status".as_ref(), "--reference-no".as_ref(), bad],
        ),
        (
            "status --reference-no=R\\xff1",
            vec![
                "status".as_ref(),
                OsStr::from_bytes(b"--reference-no=R\xff1"),
            ],
        ),
        ("status R\\xff1", vec!["status".as_ref(), bad]),
        (
            "confirm ID --reference-no R1 --code \\xff",
            vec![
                "confirm".as_ref(),
                "X".as_ref(),
                "--reference-no".as_ref(),
                "R1".as_ref(),
                "--code".as_ref(),
                OsStr::from_bytes(b"\xffOTPSECRET"),
            ],
        ),
    ];
    for (name, args) in cases {
        let mut cmd = sandbox.payments();
        cmd.args(["--base-url", &base]).args(&args);
        let assert = run(cmd).await.code(2);
        section(&mut transcript, name, &assert);
    }
    for variable in ["PAYMENTS_API_KEY", "PAYMENTS_BASE_URL"] {
        let mut cmd = sandbox.payments();
        cmd.env(variable, OsStr::from_bytes(b"sk_\xffENVSECRET"))
            .env("PAYMENTS_BASE_URL", &base)
            .args(["status", "X"]);
        if variable == "PAYMENTS_BASE_URL" {
            cmd.env(variable, OsStr::from_bytes(b"http://u:\xffENVSECRET@h"));
        }
        let assert = run(cmd).await.code(2);
        section(&mut transcript, &format!("{variable}=…\\xff…"), &assert);
    }
    assert!(!transcript.contains("SECRET"), "{transcript}");
    snapshot_settings().bind(|| insta::assert_snapshot!("arguments_not_utf8", transcript));
}

/// Before: `status --reference-no R -- ID` numbered the id `arg` 1 and the
/// reference 2, and printed the id's line first: the order the command
/// line gave was lost (docs/cli.md: `"arg": N`, its position among them).
#[tokio::test(flavor = "multi_thread")]
async fn ids_and_references_keep_the_order_typed() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let sandbox = Sandbox::new();
    let id = initiate(&sandbox, &base, "INV-ORDER-1", "TOPUP").await;
    let other = initiate(&sandbox, &base, "INV-ORDER-2", "TOPUP").await;
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "--merchant-id", MERCHANT, "-o", "json"])
        .args(["status", &other, "--reference-no", "INV-ORDER-1", "--", &id]);
    let assert = run(cmd).await.success();
    let inputs: Vec<serde_json::Value> = stdout(&assert)
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).expect("a JSON line")["input"].clone()
        })
        .collect();
    assert_eq!(
        inputs,
        [
            serde_json::json!({"arg": 1, "value": other}),
            serde_json::json!({"arg": 2, "value": "INV-ORDER-1"}),
            serde_json::json!({"arg": 3, "value": id}),
        ]
    );
}
