//! A service none of whose answers can be used (every `createdAt` a
//! number) is the service's failure or the client's, not the ledger's: the
//! run stops after the first 10 rows looked up, with exit 4 and the first
//! one's failure, as it did at the first row before rows could be
//! `unverified`. It made every row of a 2,000-row ledger `unverified`,
//! exit 6, nothing on stderr, after 11 s. Once an answer is usable, a later
//! unusable one stays that row's own `unverified`.

use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer as Stub, ResponseTemplate};

use super::unverified::answer;
use crate::common::{MERCHANT, Sandbox, run, stderr, stdout};

/// Answers every status by reference for that reference: usable for the
/// references in `usable`, else with `createdAt` as epoch milliseconds.
struct Service {
    usable: Vec<String>,
}

impl wiremock::Respond for Service {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let reference = request
            .url
            .path()
            .trim_start_matches("/api/payments/reference/")
            .trim_end_matches("/status")
            .to_owned();
        let usable = answer(&reference, "10.00");
        let body = if self.usable.contains(&reference) {
            usable
        } else {
            usable.replace(r#""2026-11-22T08:15:30.123Z""#, "1767225600000")
        };
        ResponseTemplate::new(200).set_body_raw(body, "application/json")
    }
}

async fn service(usable: &[&str]) -> Stub {
    let stub = Stub::start().await;
    Mock::given(method("GET"))
        .and(path_regex("^/api/payments/reference/[^/]+/status$"))
        .respond_with(Service {
            usable: usable.iter().map(|r| (*r).to_owned()).collect(),
        })
        .mount(&stub)
        .await;
    stub
}

/// A ledger of `rows` rows R-1, R-2, ... (references of different lengths:
/// the fault sits at another position of each answer), each 10.00.
fn ledger(rows: usize) -> String {
    let mut text = "referenceNo,amount\n".to_owned();
    for n in 1..=rows {
        text.push_str(&format!("R-{}{n},10.00\n", "x".repeat(n % 4)));
    }
    text
}

fn reconcile(sandbox: &Sandbox, stub: &Stub, ledger: &str) -> assert_cmd::Command {
    let ledger = sandbox.write_file("ledger.csv", ledger);
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "--merchant-id", MERCHANT])
        .args([
            "-o",
            "json",
            "--retries",
            "0",
            "reconcile",
            "--concurrency",
            "1",
        ])
        .arg(ledger);
    cmd
}

fn lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect()
}

const REASON: &str = "could not decode the response at data.createdAt: ";

#[tokio::test(flavor = "multi_thread")]
async fn no_usable_answer_in_the_first_ten_rows_stops_the_run_with_exit_4() {
    let stub = service(&[]).await;
    let sandbox = Sandbox::new();
    // An invalid row first: not looked up, not counted.
    let text = ledger(40).replacen("R-x1,10.00", "R-x1,ten", 1);
    let assert = run(reconcile(&sandbox, &stub, &text)).await.code(4);
    let out = stdout(&assert);
    let lines = lines(&out);
    let classes = super::classes(&lines);
    let mut expected = vec!["invalid"];
    expected.extend(["unverified"; 9]);
    assert_eq!(classes, expected, "{out}");
    let summary = &lines[lines.len() - 1]["summary"];
    assert_eq!(summary["complete"], false, "{out}");
    assert_eq!(summary["unverified"], 9, "{out}");
    // The detail does not move with the JSON position: the same fault in
    // answers of different lengths reads alike, its field path kept.
    let details: Vec<&str> = lines[1..lines.len() - 1]
        .iter()
        .map(|line| line["detail"].as_str().expect("a detail"))
        .collect();
    assert!(details.iter().all(|d| *d == details[0]), "{out}");
    assert!(
        details[0].contains(REASON) && !details[0].contains(" at line "),
        "{out}"
    );
    let err = stderr(&assert);
    let err_lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        err_lines.first().copied(),
        Some(
            "reconcile stopped at ledger line 12: the service's answer could not be used for \
             any of the first 10 rows looked up (ledger lines 3 to 12): the service or this \
             client is at fault, not the ledger; the rows before it are shown, none after it \
             was judged; the first one's failure follows"
        ),
        "{err}"
    );
    let first = err_lines.get(1).copied().unwrap_or_default();
    assert!(
        first.starts_with(&format!(
            "error: status of reference R-xx2 failed: {REASON}"
        )) && !first.contains(" at line ")
            && first.contains("(request id "),
        "{err}"
    );
    assert_eq!(err_lines.len(), 2, "{err}");
    // One look-up at a time: nothing was asked after the tenth.
    let asked = stub.received_requests().await.expect("recorded").len();
    assert_eq!(asked, 10);
}

/// A ledger with fewer rows to look up, none of them usable, ends the same
/// way once every row is judged (all shown, the run complete).
#[tokio::test(flavor = "multi_thread")]
async fn a_short_ledger_with_no_usable_answer_exits_4_with_every_row_shown() {
    let stub = service(&[]).await;
    let sandbox = Sandbox::new();
    let assert = run(reconcile(&sandbox, &stub, &ledger(3))).await.code(4);
    let out = stdout(&assert);
    let lines = lines(&out);
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[3]["summary"]["unverified"], 3, "{out}");
    assert_eq!(lines[3]["summary"]["complete"], true, "{out}");
    let err = stderr(&assert);
    assert!(
        err.starts_with(
            "reconcile: the service's answer could not be used for any of the 3 rows looked up \
             (ledger lines 2 to 4): the service or this client is at fault, not the ledger; the \
             first one's failure follows\nerror: status of reference R-x1 failed: "
        ),
        "{err}"
    );
}

/// Control: one usable answer among the first ten (the tenth), and the
/// unusable ones before and after it are rows `unverified`, exit 6, the run
/// complete.
#[tokio::test(flavor = "multi_thread")]
async fn one_usable_answer_in_the_first_ten_keeps_the_others_unverified() {
    let stub = service(&["R-xx10"]).await;
    let sandbox = Sandbox::new();
    let assert = run(reconcile(&sandbox, &stub, &ledger(25))).await.code(6);
    assert_eq!(stderr(&assert), "");
    let out = stdout(&assert);
    let lines = lines(&out);
    let summary = &lines[lines.len() - 1]["summary"];
    assert_eq!(summary["match"], 1, "{out}");
    assert_eq!(summary["unverified"], 24, "{out}");
    assert_eq!(summary["complete"], true, "{out}");
}
