//! `-v`: nothing the service sends reaches the terminal unescaped, on any
//! line: the client's retry events, the `<` response lines, the `>` line of
//! a poll (whose id is the service's), and the final error line.

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer as Stub, ResponseTemplate};

use crate::common::{Sandbox, run, stderr};

const TX: &str = "01937e1c-0000-7000-8000-0000000000e1";

/// A failure envelope whose code and message carry a screen clear, a
/// window title (OSC) and a bell.
fn hostile(status: u16) -> ResponseTemplate {
    let body = r#"{"isSuccess":false,"errorCode":"X\u001b[2J","message":"m\u001b]0;pwned\u0007","data":null}"#;
    ResponseTemplate::new(status).set_body_raw(body, "application/json")
}

fn assert_escaped(err: &str) {
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(err.contains(r"\u{1b}[2J"), "{err:?}");
}

/// The client's `retrying … error=…` event and the `< HTTP …` line printed
/// the service's text raw (only the final error line escaped it).
#[tokio::test(flavor = "multi_thread")]
async fn the_services_text_is_escaped_on_every_verbose_line() {
    let stub = Stub::start().await;
    Mock::given(method("GET"))
        .respond_with(hostile(503))
        .up_to_n_times(1)
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .respond_with(hostile(400))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["-v", "--base-url", &stub.uri(), "-o", "json", "status", TX]);
    let assert = run(cmd).await.code(1);
    let err = stderr(&assert);
    assert_escaped(&err);
    assert!(err.contains("retrying"), "{err}");
    assert!(err.contains("< HTTP 400"), "{err}");
}

/// A look-up by reference is answered with an id the service chose; `--wait`
/// polls that id, and its `>` line showed it raw.
#[tokio::test(flavor = "multi_thread")]
async fn a_polled_id_from_the_service_is_escaped_on_its_request_line() {
    let stub = Stub::start().await;
    let id = "T9\\u001b[2J";
    let body = format!(
        r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"{id}","referenceNo":"R1","status":"PENDING","amount":10.50,"productCode":"TOPUP","createdAt":"2026-11-29T08:00:00.000Z","lastModifiedAt":null,"providerReference":null,"message":null,"extraProperties":null}}}}"#
    );
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/R1/status"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.clone(), "application/json"))
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .respond_with(hostile(400))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["-v", "--base-url", &stub.uri(), "-o", "json"])
        .args([
            "status",
            "--reference-no",
            "R1",
            "--wait",
            "--wait-timeout",
            "5",
        ]);
    let assert = run(cmd).await.failure();
    let err = stderr(&assert);
    assert_escaped(&err);
    assert!(err.contains("(polling)"), "{err}");
}
