//! The proxy's limits (the upstream giving no whole answer is
//! `unanswered.rs`): bodies over the judging limit streamed whole
//! and never a 413, a compressed answer untouched, `--enforce` replacing
//! only a violation, the proxy's own paths, and nothing retried.

use axum::http::Method;
use payments_contract_proxy::JUDGE_LIMIT;
use serde_json::{Value, json};

use crate::passthrough::{assert_same_bytes, bytes_of, pattern, values};
use crate::rig::{Reply, Rig, Setup, failure, initiate_body, initiate_data};
use crate::unanswered::assert_upstream_unavailable;
use crate::upstream::Canned;

#[tokio::test]
async fn bodies_larger_than_the_judging_limit_pass_through_whole_and_unchecked_never_413() {
    let rig = Rig::start().await;
    let big = JUDGE_LIMIT + 1024 * 1024;
    let request_body = pattern(big);
    let answer_body = pattern(big + 7);

    // A large request, a small answer.
    rig.upstream.push(Canned::ok(json!({})));
    let reply = Reply::of(
        rig.client
            .post(rig.url("/api/payments/initiate"))
            .header("content-type", "application/json")
            .body(request_body.clone())
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200, "never a 413");
    assert_eq!(reply.verdict(), "unchecked");
    let received = rig.upstream.only_request();
    assert_same_bytes(&received.body, &request_body, "the large request");
    assert_eq!(
        received.values("content-length"),
        bytes_of(&[&big.to_string()]),
        "one Content-Length, the body's"
    );

    // A small request, a large answer.
    rig.upstream.push(
        Canned::raw(200, answer_body.clone()).header("content-type", "application/octet-stream"),
    );
    let reply = rig
        .send(
            &Method::POST,
            "/api/payments/initiate",
            Some(&initiate_body("R-big", 1050)),
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.verdict(), "unchecked");
    assert_same_bytes(&reply.body, &answer_body, "the large answer");

    // Both large.
    rig.upstream.push(Canned::raw(201, answer_body.clone()));
    let reply = Reply::of(
        rig.client
            .put(rig.url("/api/payments/t-big/status"))
            .body(request_body.clone())
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 201);
    assert_eq!(reply.verdict(), "unchecked");
    assert_same_bytes(&reply.body, &answer_body, "the large answer");
    let received = rig.upstream.received();
    assert_same_bytes(
        &received.last().expect("the third request").body,
        &request_body,
        "the large request",
    );

    // At the limit exactly, a body is still read whole and judged.
    rig.upstream.push(Canned::raw(200, pattern(JUDGE_LIMIT)));
    let reply = rig
        .send(&Method::GET, "/api/payments/t-edge/status", None)
        .await;
    assert_eq!(reply.body.len(), JUDGE_LIMIT);
    assert_eq!(reply.verdict(), "violation", "judged: not the envelope");

    let summary = rig.proxy.summary();
    assert_eq!(summary.verdicts.get("unchecked"), Some(&3));
    assert_eq!(rig.upstream.count(), 4);
}

/// A gzip member holding `data` in one stored (uncompressed) deflate block.
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    let len = u16::try_from(data.len()).expect("one stored block holds it");
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1];
    out.extend(len.to_le_bytes());
    out.extend((!len).to_le_bytes());
    out.extend(data);
    out.extend((!crc).to_le_bytes());
    out.extend(u32::from(len).to_le_bytes());
    out
}

#[tokio::test]
async fn a_compressed_answer_passes_through_untouched_and_unchecked() {
    let rig = Rig::start().await;
    // Decoded and judged, this would be a violation (not the envelope).
    let compressed = gzip(br#"{"ok":true}"#);
    rig.upstream.push(
        Canned::raw(200, compressed.clone())
            .header("content-type", "application/json")
            .header("content-encoding", "gzip")
            .header("vary", "Accept-Encoding"),
    );
    let reply = Reply::of(
        rig.client
            .get(rig.url("/api/payments/t-gzip/status"))
            .header("accept-encoding", "gzip")
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, compressed, "the compressed bytes, not decoded");
    assert_eq!(
        values(&reply.headers, "content-encoding"),
        bytes_of(&["gzip"])
    );
    assert_eq!(
        values(&reply.headers, "content-length"),
        bytes_of(&[&compressed.len().to_string()])
    );
    assert_eq!(reply.verdict(), "unchecked");
    assert_eq!(
        rig.upstream.only_request().values("accept-encoding"),
        bytes_of(&["gzip"])
    );
    assert!(rig.proxy.summary().rules.is_empty());
}

#[tokio::test]
async fn with_enforce_a_violation_is_replaced_by_502_contract_violation_and_the_rest_is_answered_unchanged()
 {
    let rig = Rig::with(Setup {
        enforce: true,
        ..Setup::default()
    })
    .await;

    let reply = rig
        .exchange(
            &Method::GET,
            "/api/payments/t-enforce/status",
            None,
            Canned::raw(502, "<html>Bad Gateway</html>").header("content-type", "text/html"),
        )
        .await;
    assert_eq!(reply.status, 502);
    assert_eq!(reply.verdict(), "violation");
    assert_eq!(reply.code(), "CONTRACT_VIOLATION");
    let body = reply.json();
    assert_eq!(body["isSuccess"], json!(false));
    assert_eq!(body["data"], Value::Null);
    let message = body["message"].as_str().expect("a message");
    assert!(message.contains("envelope.shape"), "{message}");
    assert!(
        !message.contains("http.undocumented"),
        "only violations are listed: {message}"
    );

    let mut major = initiate_data("t-enforce-2", "R-enforce-2", 1050);
    major["amount"] = json!(10.5);
    let reply = rig
        .exchange(
            &Method::POST,
            "/api/payments/initiate",
            Some(&initiate_body("R-enforce-2", 1050)),
            Canned::ok(major),
        )
        .await;
    assert_eq!(
        (reply.status, reply.code()),
        (502, "CONTRACT_VIOLATION".to_owned())
    );
    let message = reply.json()["message"].as_str().unwrap_or("").to_owned();
    assert!(
        message.contains("data.echo") && message.contains("data.fields"),
        "{message}"
    );

    // A pass, an undocumented answer, and a client finding: unchanged.
    let passing =
        Canned::ok(initiate_data("t-enforce-3", "R-enforce-3", 1050)).header("x-upstream", "kept");
    let passing_body = passing.body().clone();
    let reply = rig
        .exchange(
            &Method::POST,
            "/api/payments/initiate",
            Some(&initiate_body("R-enforce-3", 1050)),
            passing,
        )
        .await;
    assert_eq!((reply.status, reply.verdict()), (200, "pass"));
    assert_eq!(reply.body, passing_body);
    assert_eq!(values(&reply.headers, "x-upstream"), bytes_of(&["kept"]));

    let limited = Canned::failure(429, "RATE_LIMITED");
    let limited_body = limited.body().clone();
    let reply = rig
        .exchange(
            &Method::GET,
            "/api/payments/t-enforce-4/status",
            None,
            limited,
        )
        .await;
    assert_eq!((reply.status, reply.verdict()), (429, "undocumented"));
    assert_eq!(reply.body, limited_body);

    let mut not_uuid = initiate_body("R-enforce-5", 1050);
    not_uuid["merchantId"] = json!("merchant-1");
    let refused = Canned::failure(400, "VALIDATION_ERROR");
    let refused_body = refused.body().clone();
    let reply = rig
        .exchange(
            &Method::POST,
            "/api/payments/initiate",
            Some(&not_uuid),
            refused,
        )
        .await;
    assert_eq!((reply.status, reply.verdict()), (400, "pass"));
    assert_eq!(reply.body, refused_body);

    // The upstream's own failure stays UPSTREAM_UNAVAILABLE.
    let reply = rig
        .exchange(
            &Method::GET,
            "/api/payments/t-enforce-6/status",
            None,
            Canned::drop_connection(),
        )
        .await;
    assert_upstream_unavailable(&reply, "a dropped connection under --enforce");
    assert_eq!(rig.upstream.count(), 6, "each forwarded once");
}

#[tokio::test]
async fn the_report_endpoint_answers_the_running_summary_and_is_never_forwarded() {
    let rig = Rig::start().await;
    let scripted = [
        (
            Method::POST,
            "/api/payments/initiate",
            Some(initiate_body("R-report", 1050)),
            Canned::ok(initiate_data("t-report", "R-report", 1050)),
        ),
        (
            Method::GET,
            "/api/payments/t-report/status",
            None,
            Canned::raw(502, "<html>Bad Gateway</html>"),
        ),
        (
            Method::GET,
            "/api/payments/reference/R-report/status",
            None,
            Canned::failure(429, "RATE_LIMITED"),
        ),
        (
            Method::GET,
            "/api/payments/t-report/status",
            None,
            Canned::drop_connection(),
        ),
    ];
    for (method, path, body, canned) in scripted {
        rig.exchange(&method, path, body.as_ref(), canned).await;
    }
    let reply = Reply::of(
        rig.client
            .get(rig.url("/_proxy/report"))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["isSuccess"], json!(true));
    assert_eq!(body["errorCode"], Value::Null);
    let data = &body["data"];
    assert_eq!(data["exchanges"], json!(4));
    assert_eq!(
        data["verdicts"],
        json!({ "pass": 1, "violation": 1, "undocumented": 1, "unchecked": 1 })
    );
    assert_eq!(
        data["endpoints"],
        json!({ "initiate": 1, "statusById": 2, "statusByReference": 1 })
    );
    let first = &data["rules"]["envelope.shape"]["first"];
    assert_eq!(first["seq"], json!(2));
    assert_eq!(first["request"], json!("GET /api/payments/t-report/status"));
    assert_eq!(first["status"], json!(502));
    assert_eq!(
        data["rules"]["code.undocumented"]["levels"],
        json!({ "undocumented": 1 })
    );
    assert_eq!(
        *data,
        serde_json::to_value(rig.proxy.summary()).expect("the summary as JSON"),
        "the report is the running summary"
    );
    assert_eq!(rig.upstream.count(), 4, "the report is the proxy's own");
}

#[tokio::test]
async fn a_path_outside_api_is_404_not_found_and_never_forwarded() {
    let rig = Rig::start().await;
    for path in [
        "/",
        "/nope",
        "/apix/payments/initiate",
        "/API/payments/initiate",
        "/payments/initiate",
        "/v1/api/payments/initiate",
        "/_mock/nothing",
        "/_proxy/nothing",
    ] {
        for method in [Method::GET, Method::POST] {
            let reply = rig
                .send(&method, path, Some(&initiate_body("R-404", 1050)))
                .await;
            assert_eq!(reply.status, 404, "{method} {path}");
            assert_eq!(reply.code(), "NOT_FOUND", "{method} {path}");
        }
    }
    assert_eq!(rig.upstream.count(), 0, "nothing was forwarded");
    assert_eq!(rig.proxy.summary().exchanges, 0);
}

#[tokio::test]
async fn nothing_is_retried() {
    let rig = Rig::start().await;
    let cases = [
        (
            Method::POST,
            "/api/payments/initiate",
            Some(initiate_body("R-retry", 1050)),
            Canned::json(500, &failure("INTERNAL_ERROR")),
            500,
        ),
        (
            Method::POST,
            "/api/payments/confirm",
            Some(json!({ "transactionId": "t-retry", "referenceNo": "R-retry" })),
            Canned::raw(503, "Service Unavailable").header("retry-after", "1"),
            503,
        ),
        (
            Method::GET,
            "/api/payments/t-retry/status",
            None,
            Canned::raw(502, ""),
            502,
        ),
        (
            Method::GET,
            "/api/payments/t-retry/status",
            None,
            Canned::drop_connection(),
            502,
        ),
        (
            Method::POST,
            "/api/payments/initiate",
            Some(initiate_body("R-retry-2", 1050)),
            Canned::drop_connection(),
            502,
        ),
    ];
    for (n, (method, path, body, canned, status)) in cases.into_iter().enumerate() {
        let reply = rig.exchange(&method, path, body.as_ref(), canned).await;
        assert_eq!(reply.status, status, "{method} {path}");
        assert_eq!(
            rig.upstream.count(),
            n + 1,
            "{method} {path} → {status}: the upstream saw it exactly once"
        );
    }
}
