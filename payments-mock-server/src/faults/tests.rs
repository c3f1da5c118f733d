//! Unit tests of `faults.rs`.
use super::*;

#[test]
fn each_kind_is_named_as_its_token() {
    for fault in [
        Fault::InternalError,
        Fault::CommitThenError,
        Fault::Reset,
        Fault::CommitThenReset,
        Fault::Delay(Duration::from_millis(5)),
        Fault::RateLimit,
        Fault::AnswerOther,
        Fault::Hang,
        Fault::CommitThenHang,
        Fault::Truncate,
        Fault::SlowBody(10),
        Fault::Gateway(502),
    ] {
        let token = fault.token();
        let kind = crate::metrics::FAULT_KINDS[fault.kind()];
        assert_eq!(token.split('=').next(), Some(kind));
    }
}

#[test]
fn header_parses_tokens() {
    assert_eq!(
        parse_header(b"commit-then-error, delay=50").expect("valid"),
        vec![
            Fault::CommitThenError,
            Fault::Delay(Duration::from_millis(50))
        ]
    );
    assert!(parse_header(b"explode").is_err());
    assert!(parse_header(b"delay=99999999").is_err());
}

/// Each `delay=` is at most 60000 ms, and so are all of a header's: two
/// of 60000 would hold the request two minutes, and many of them hours.
#[test]
fn header_delays_are_at_most_a_minute_in_all() {
    let minute = Duration::from_millis(60_000);
    assert_eq!(
        parse_header(b"delay=30000, commit-then-error, delay=30000").expect("valid"),
        vec![
            Fault::Delay(minute / 2),
            Fault::CommitThenError,
            Fault::Delay(minute / 2)
        ]
    );
    let refused = parse_header(b"delay=60000,delay=60000").expect_err("two minutes");
    assert_eq!(refused.status.as_u16(), 400);
    assert_eq!(
        refused.message,
        "X-Mock-Fault: the delays add up to 120000 ms; at most 60000 ms in all"
    );
    let many = vec!["delay=60000"; 600].join(",");
    let refused = parse_header(many.as_bytes()).expect_err("ten hours");
    assert!(
        refused.message.contains("36000000 ms"),
        "{}",
        refused.message
    );
    assert!(parse_header(b"delay=60000,delay=0").is_ok());
    assert!(parse_header(b"delay=60000,delay=1").is_err());
}

/// Over HTTP: a header whose delays add up past a minute is refused at
/// once (400 `VALIDATION_ERROR` naming the total), not held.
#[tokio::test]
async fn a_request_asking_for_two_minutes_of_delay_is_refused_at_once() {
    let server = crate::MockServer::start().await;
    let answer = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .header("x-mock-fault", "delay=60000,delay=60000")
        .header("content-type", "application/json")
        .body("{}")
        // Refused before any delay: far less than either delay.
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .expect("an answer before any delay");
    assert_eq!(answer.status().as_u16(), 400);
    let body: serde_json::Value = answer.json().await.expect("the envelope");
    assert_eq!(body["errorCode"], "VALIDATION_ERROR", "{body}");
    assert_eq!(
        body["message"],
        "X-Mock-Fault: the delays add up to 120000 ms; at most 60000 ms in all"
    );
    server.shutdown().await;
}

/// Over HTTP: `X-Mock-Fault` on two lines is one list (RFC 9110): both
/// faults apply (the second line was ignored), and the delays' total
/// counts both lines.
#[tokio::test]
async fn a_fault_header_on_two_lines_is_one_list() {
    let server = crate::MockServer::start().await;
    let send = |lines: [&'static str; 2]| {
        let mut headers = reqwest::header::HeaderMap::new();
        for line in lines {
            headers.append("x-mock-fault", line.parse().expect("a value"));
        }
        reqwest::Client::new()
            .get(format!(
                "{}/api/payments/0193a0b4-0000-7000-8000-000000000000/status",
                server.base_url()
            ))
            .headers(headers)
            .timeout(Duration::from_secs(20))
            .send()
    };
    let answer = send(["delay=1", "internal-error"])
        .await
        .expect("an answer");
    assert_eq!(answer.status().as_u16(), 500, "the second line applies");
    let answer = send(["delay=60000", "delay=1"]).await.expect("an answer");
    assert_eq!(answer.status().as_u16(), 400);
    let body: serde_json::Value = answer.json().await.expect("the envelope");
    assert_eq!(
        body["message"],
        "X-Mock-Fault: the delays add up to 60001 ms; at most 60000 ms in all"
    );
    server.shutdown().await;
}

fn drawn(faults: &Faults, key: u64) -> Plan {
    let mut plan = faults.plan(Vec::new());
    faults.draw(key, &mut plan);
    plan
}

#[test]
fn seeded_fail_rate_repeats_per_key_in_any_order() {
    let latency = Some(Duration::from_millis(1)..=Duration::from_millis(9));
    let a = Faults::new(0.5, Some(7), latency.clone(), None);
    let b = Faults::new(0.5, Some(7), latency, None);
    // Each key three times (a request and two retries): in order, and
    // with the keys reversed and interleaved.
    let mut pa: Vec<_> = (0..50u64)
        .flat_map(|k| [k, k, k])
        .map(|k| (k, drawn(&a, k)))
        .collect();
    let mut pb: Vec<_> = (0..3)
        .flat_map(|_| (0..50u64).rev())
        .map(|k| (k, drawn(&b, k)))
        .collect();
    // The n-th draw of a key is the same in both (stable sorts keep
    // each key's attempts in their order).
    pa.sort_by_key(|(k, _)| *k);
    pb.sort_by_key(|(k, _)| *k);
    assert_eq!(pa, pb);
    let actions: Vec<_> = pa.iter().map(|(_, p)| p.action.clone()).collect();
    assert!(actions.iter().any(Option::is_some) && actions.iter().any(Option::is_none));
    // Retries of one key do not all repeat the first draw.
    assert!(pa.chunks(3).any(|c| c[0].1 != c[1].1 || c[1].1 != c[2].1));
    assert!(
        pa.iter()
            .all(|(_, p)| (1..=9).contains(&p.delay.as_millis()))
    );
    // Another seed draws otherwise.
    let c = Faults::new(0.5, Some(8), None, None);
    let pc: Vec<_> = (0..50u64).map(|k| drawn(&c, k).action).collect();
    let a2 = Faults::new(0.5, Some(7), None, None);
    let pa2: Vec<_> = (0..50u64).map(|k| drawn(&a2, k).action).collect();
    assert_ne!(pc, pa2);
}

#[test]
fn the_fault_mix_is_uniform_over_the_four_faults() {
    let faults = Faults::new(1.0, Some(1), None, None);
    let mut counts = HashMap::new();
    for key in 0..40_000u64 {
        let action = drawn(&faults, key).action.expect("fail rate 1");
        *counts.entry(action.token()).or_insert(0u32) += 1;
    }
    assert_eq!(counts.len(), 4, "{counts:?}");
    assert!(
        counts.values().all(|&n| (9_500..=10_500).contains(&n)),
        "{counts:?}"
    );
}

#[test]
fn the_fail_rate_is_kept() {
    let faults = Faults::new(0.3, Some(5), None, None);
    let failed = (0..20_000u64)
        .filter(|&k| drawn(&faults, k).action.is_some())
        .count();
    assert!((5_600..=6_400).contains(&failed), "{failed}");
    let never = Faults::new(0.0, Some(5), None, None);
    assert!((0..1000u64).all(|k| drawn(&never, k).action.is_none()));
}

#[test]
fn clearing_forgets_the_counters() {
    let faults = Faults::new(
        0.5,
        None,
        Some(Duration::ZERO..=Duration::from_secs(1)),
        None,
    );
    let first: Vec<_> = (0..20u64).map(|k| drawn(&faults, k % 4)).collect();
    faults.clear();
    let again: Vec<_> = (0..20u64).map(|k| drawn(&faults, k % 4)).collect();
    assert_eq!(first, again);
}

#[test]
fn the_rate_limit_lifts_one_second_after_its_window_opened() {
    let faults = Faults::new(0.0, Some(1), None, Some(2));
    // The window `new` opened has ended by `t0`: the first request
    // opens the next one, at `t0` exactly (however slow this thread).
    let t0 = Instant::now() + Duration::from_secs(2);
    assert_eq!(faults.admit_at(t0), Ok(()));
    assert_eq!(faults.admit_at(t0 + Duration::from_millis(10)), Ok(()));
    // Over the limit: 429 with Retry-After: 1, until the window ends.
    assert_eq!(faults.admit_at(t0 + Duration::from_millis(20)), Err(1));
    assert_eq!(faults.admit_at(t0 + Duration::from_millis(999)), Err(1));
    // A second after the window opened, a new one opens with this request.
    let t1 = t0 + Duration::from_secs(1);
    assert_eq!(faults.admit_at(t1), Ok(()));
    assert_eq!(faults.admit_at(t1 + Duration::from_millis(500)), Ok(()));
    assert_eq!(faults.admit_at(t1 + Duration::from_millis(999)), Err(1));
    // An idle gap of any length: one window, counted from its first request.
    let t2 = t1 + Duration::from_secs(3600);
    assert_eq!(faults.admit_at(t2), Ok(()));
    assert_eq!(faults.admit_at(t2), Ok(()));
    assert_eq!(faults.admit_at(t2), Err(1));
    // A refused request does not count: the next window is not shortened.
    assert_eq!(faults.admit_at(t2 + Duration::from_secs(1)), Ok(()));
}

#[test]
fn without_a_rate_limit_everything_is_admitted() {
    let faults = Faults::new(0.0, Some(1), None, None);
    for _ in 0..10_000 {
        assert_eq!(faults.admit(), Ok(()));
    }
}

#[test]
fn key_parts_are_length_prefixed() {
    let ab_c = KeyHasher::new().part(b"ab").part(b"c").finish();
    let a_bc = KeyHasher::new().part(b"a").part(b"bc").finish();
    assert_ne!(ab_c, a_bc);
    // FNV-1a is fixed: this value never changes between runs or builds.
    assert_eq!(KeyHasher::new().finish(), 0xcbf2_9ce4_8422_2325);
}
