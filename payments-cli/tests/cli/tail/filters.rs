//! `payments tail`'s filters: each narrows the journal (`--path`,
//! `--status`, `--reference-no`, `--since`, together), and bad values are
//! usage errors naming the flag (exit 2).

use serde_json::Value;

use crate::common::{Sandbox, closed_port_url, run, stderr, stdout};

use super::{ADMIN, UNKNOWN, lines, mock, seqs, story, tail};

/// `(method, path)` of each entry.
fn requests(entries: &[Value]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|e| {
            (
                e["method"].as_str().unwrap_or_default().to_owned(),
                e["path"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_filter_narrows_the_journal() {
    let server = mock().await;
    let base = server.base_url();
    let id = story(&base).await;
    let sandbox = Sandbox::new();
    let json = |args: &[&str]| tail(&sandbox, &base, ADMIN, "json", args);

    let initiates = lines(&stdout(
        &run(json(&["--path", "/api/payments/initiate"]))
            .await
            .success(),
    ));
    assert_eq!(seqs(&initiates), [1, 2, 7]);

    let not_found = lines(&stdout(&run(json(&["--status", "404"])).await.success()));
    assert_eq!(seqs(&not_found), [6]);

    // INV-A1: its initiate, its confirm, and the reads of its transaction
    // from the confirm on (by id and by reference).
    let about = lines(&stdout(
        &run(json(&["--reference-no", "INV-A1"])).await.success(),
    ));
    assert_eq!(
        requests(&about),
        [
            ("POST".to_owned(), "/api/payments/initiate".to_owned()),
            ("POST".to_owned(), "/api/payments/confirm".to_owned()),
            ("GET".to_owned(), format!("/api/payments/{id}/status")),
            (
                "GET".to_owned(),
                "/api/payments/reference/INV-A1/status".to_owned()
            ),
        ]
    );

    let since = lines(&stdout(&run(json(&["--since", "5"])).await.success()));
    assert_eq!(seqs(&since), [6, 7]);

    // Together: every filter applies.
    let both = lines(&stdout(
        &run(json(&[
            "--path",
            "/api/payments/initiate",
            "--since",
            "1",
            "--status",
            "200",
        ]))
        .await
        .success(),
    ));
    assert_eq!(seqs(&both), [2, 7]);

    // Nothing left: no line, a note on stderr, exit 0.
    let none = run(json(&["--status", "503"])).await.success();
    assert_eq!(stdout(&none), "");
    assert!(
        stderr(&none).contains("no entries match --status 503 (7 read)"),
        "{}",
        stderr(&none)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_filters_are_usage_errors_naming_the_flag() {
    let sandbox = Sandbox::new();
    // Nothing listens here: a usage error is found before any call.
    let base = closed_port_url();
    for (args, says) in [
        (
            &["--status", "abc"][..],
            "--status 'abc': not an HTTP status",
        ),
        (&["--status", "99"][..], "--status '99': not an HTTP status"),
        (&["--status", "600"][..], "--status '600'"),
        (&["--since", "-1"][..], "--since '-1': not a seq"),
        (
            &["--status", "-404"][..],
            "--status '-404': not an HTTP status",
        ),
        (&["--since", "x"][..], "--since 'x': not a seq"),
        (
            &["--since", "9223372036854775808"][..],
            "--since '9223372036854775808': not a seq",
        ),
        (
            &["--path", "api/payments"][..],
            "--path 'api/payments': must start with /",
        ),
        (
            &["--sandbox", "nope"][..],
            "--sandbox 'nope': not a sandbox id",
        ),
        (
            &["--proxy", "--sandbox", UNKNOWN][..],
            "cannot be used with",
        ),
    ] {
        let assert = run(tail(&sandbox, &base, ADMIN, "json", args))
            .await
            .code(2);
        let err = stderr(&assert);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains(ADMIN), "{args:?}: the key in {err}");
        assert_eq!(stdout(&assert), "", "{args:?}");
    }
}
