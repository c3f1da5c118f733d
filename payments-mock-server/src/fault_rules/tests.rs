//! Unit tests of `fault_rules.rs`.
use super::parse::{check_reference, uuid_field};
use super::*;
use serde_json::json;

fn parsed(body: Value) -> Result<FaultRule, RuleError> {
    parse_rule(body.as_object().expect("an object"))
}

fn facts(endpoint: Endpoint, reference: Option<&str>) -> Facts {
    Facts {
        endpoint: Some(endpoint),
        reference_no: reference.map(str::to_owned),
        complete: true,
        ..Facts::default()
    }
}

#[test]
fn a_rule_parses_with_its_defaults() {
    let rule = parsed(json!({"fault": "commit-then-hang"})).expect("valid");
    assert_eq!(rule, FaultRule::new(Fault::CommitThenHang));
    let rule = parsed(json!({
        "match": {"endpoint": "confirm", "referenceNo": "ORDER-1",
                  "merchantId": "6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10",
                  "transactionId": "01937e1c-0000-7000-8000-0000000000c1"},
        "after": 2, "times": 0, "probability": 0.25, "fault": "slow-body=100"
    }))
    .expect("valid");
    assert_eq!(rule.matching.endpoint, Some(Endpoint::Confirm));
    assert_eq!(rule.after, 2);
    assert_eq!(rule.times, 0);
    assert_eq!(rule.fault, Fault::SlowBody(100));
    // JSON Schema's integer: 2.0 is 2.
    let whole = parsed(json!({"fault": "hang", "after": 2.0, "times": 0.0})).expect("valid");
    assert_eq!((whole.after, whole.times), (2, 0));
    // And back to JSON as it came.
    assert_eq!(parsed(rule.to_json()).expect("round trip"), rule);
}

#[test]
fn bad_rules_name_their_field() {
    for (body, field) in [
        (json!({}), "fault"),
        (json!({"fault": "explode"}), "fault"),
        (json!({"fault": 3}), "fault"),
        (json!({"fault": "gateway=500"}), "fault"),
        (json!({"fault": "slow-body=0"}), "fault"),
        (json!({"fault": "slow-body=-1"}), "fault"),
        (json!({"fault": "delay=60001"}), "fault"),
        (json!({"fault": "hang", "after": -1}), "after"),
        (json!({"fault": "hang", "times": 1.5}), "times"),
        (json!({"fault": "hang", "times": 4_294_967_296.0}), "times"),
        (json!({"fault": "hang", "after": -0.5}), "after"),
        (json!({"fault": "hang", "times": "1"}), "times"),
        (json!({"fault": "hang", "probability": 1.01}), "probability"),
        (json!({"fault": "hang", "probability": -0.1}), "probability"),
        (json!({"fault": "hang", "probability": "1"}), "probability"),
        (json!({"fault": "hang", "match": []}), "match"),
        (
            json!({"fault": "hang", "match": {"endpoint": "refund"}}),
            "match.endpoint",
        ),
        (
            json!({"fault": "hang", "match": {"merchantId": "x"}}),
            "match.merchantId",
        ),
        (
            json!({"fault": "hang", "match": {"transactionId": "{01937e1c-0000-7000-8000-0000000000c1}"}}),
            "match.transactionId",
        ),
        (
            json!({"fault": "hang", "match": {"referenceNo": ""}}),
            "match.referenceNo",
        ),
        (
            json!({"fault": "hang", "match": {"referenceNo": "x".repeat(65)}}),
            "match.referenceNo",
        ),
        (
            json!({"fault": "hang", "match": {"referenceNo": "a\u{7}b"}}),
            "match.referenceNo",
        ),
        (json!({"fault": "hang", "match": {"amount": 1}}), "match"),
        (json!({"fault": "hang", "then": "reset"}), "body"),
        (
            json!({"fault": "hang", "after": 4_294_967_296_u64}),
            "after",
        ),
        (json!({"fault": "hang", "times": u64::MAX}), "times"),
    ] {
        let error = parsed(body.clone()).expect_err("refused");
        assert_eq!(error.field, field, "{body}: {error}");
    }
}

/// Numbers are read from their text, exactly, not rounded to an `f64`
/// first: `0.99999999999999999` is no whole number and
/// `1.00000000000000001` is more than 1, though both are 1 as an `f64`.
#[test]
fn numbers_are_read_exactly_not_rounded() {
    let text = |body: &str| {
        let body: Value = serde_json::from_str(body).expect("JSON");
        parsed(body)
    };
    for (body, field) in [
        (r#"{"fault":"hang","after":0.99999999999999999}"#, "after"),
        (r#"{"fault":"hang","times":1.00000000000000001}"#, "times"),
        (r#"{"fault":"hang","after":1e-400}"#, "after"),
        (r#"{"fault":"hang","times":4294967295.0000001}"#, "times"),
        (r#"{"fault":"hang","times":4.294967296e9}"#, "times"),
        (r#"{"fault":"hang","times":1e400}"#, "times"),
        (r#"{"fault":"hang","after":-1e-400}"#, "after"),
        (
            r#"{"fault":"hang","probability":1.00000000000000001}"#,
            "probability",
        ),
        (r#"{"fault":"hang","probability":1e400}"#, "probability"),
        (r#"{"fault":"hang","probability":11e-1}"#, "probability"),
        (r#"{"fault":"hang","probability":-1e-400}"#, "probability"),
        (
            r#"{"fault":"hang","probability":0.1e1000000000000000000001}"#,
            "probability",
        ),
    ] {
        let error = text(body).expect_err(body);
        assert_eq!(error.field, field, "{body}: {error}");
        assert!(error.to_string().starts_with(field), "{error}");
    }
    let refused = text(r#"{"fault":"hang","after":0.99999999999999999}"#).expect_err("fraction");
    assert_eq!(
        refused.to_string(),
        "after: must be a whole number from 0 to 4294967295"
    );
    for (body, after, times, probability) in [
        (
            r#"{"fault":"hang","after":4.294967295e9,"times":2E0}"#,
            MAX_COUNT,
            2,
            1.0,
        ),
        (
            r#"{"fault":"hang","after":-0,"times":0e7,"probability":1.000}"#,
            0,
            0,
            1.0,
        ),
        (
            r#"{"fault":"hang","after":100e-2,"times":1,"probability":0.1e1}"#,
            1,
            1,
            1.0,
        ),
        (
            r#"{"fault":"hang","probability":0.99999999999999999}"#,
            0,
            1,
            1.0,
        ),
        (r#"{"fault":"hang","probability":25e-2}"#, 0, 1, 0.25),
        (r#"{"fault":"hang","probability":1e-400}"#, 0, 1, 0.0),
        (r#"{"fault":"hang","probability":-0.0e-5}"#, 0, 1, 0.0),
    ] {
        let rule = text(body).expect(body);
        assert_eq!((rule.after, rule.times), (after, times), "{body}");
        assert_eq!(
            rule.probability.to_bits(),
            f64::to_bits(probability),
            "{body}"
        );
    }
}

/// A rule built in-process meets the limits a parsed one does, in one
/// place (`FaultRule::check`), and `-0.0` is 0 either way.
#[test]
fn built_and_parsed_rules_have_one_set_of_limits() {
    for mut rule in [
        FaultRule::new(Fault::Hang).probability(-0.0),
        parsed(json!({"fault": "hang", "probability": -0.0})).expect("valid"),
    ] {
        rule.check().expect("valid");
        assert!(rule.probability.is_sign_positive(), "{rule:?}");
        assert_eq!(rule.to_json()["probability"], json!(0.0));
    }
    let max = FaultRule::new(Fault::Hang)
        .after(MAX_COUNT)
        .times(MAX_COUNT);
    assert_eq!(parsed(max.to_json()), Ok(max));
    for (mut rule, field) in [
        (FaultRule::new(Fault::Hang).after(MAX_COUNT + 1), "after"),
        (FaultRule::new(Fault::Hang).times(MAX_COUNT + 1), "times"),
        (FaultRule::new(Fault::SlowBody(1_000_000_000)), "fault"),
        (
            FaultRule::new(Fault::Delay(std::time::Duration::from_micros(1))),
            "fault",
        ),
    ] {
        assert_eq!(rule.check().map_err(|e| e.field), Err(field), "{rule:?}");
    }
}

#[test]
fn the_published_patterns_are_the_parsers() {
    let token = regex::Regex::new(FAULT_RULE_TOKEN).expect("a pattern");
    for text in [
        "hang",
        "commit-then-hang",
        "truncate",
        "gateway=502",
        "gateway=503",
        "gateway=504",
        "delay=0",
        "delay=7",
        "delay=59999",
        "delay=60000",
        "slow-body=1",
        "slow-body=999999999",
        "internal-error",
        "commit-then-error",
        "reset",
        "commit-then-reset",
        "rate-limit",
        "answer-other",
        "gateway=500",
        "gateway=5020",
        "delay=60001",
        "delay=01",
        "delay=",
        "slow-body=0",
        "slow-body=01",
        "slow-body=1000000000",
        "slow-body=-1",
        "HANG",
        "hang ",
        " hang",
        "",
        "hang,reset",
    ] {
        assert_eq!(
            token.is_match(text),
            Fault::from_rule_token(text).is_ok(),
            "{text:?}"
        );
    }
    let reference = regex::Regex::new(RULE_REFERENCE).expect("a pattern");
    for text in [
        "ORDER-1",
        "a",
        "x\u{202e}y",
        " spaced ",
        "\u{7}",
        "a\u{85}b",
        "a\u{9f}",
        "",
        &"x".repeat(64),
        &"x".repeat(65),
        &"é".repeat(64),
    ] {
        assert_eq!(
            reference.is_match(text),
            check_reference(text).is_ok(),
            "{text:?}"
        );
    }
    let uuid = regex::Regex::new(UUID_PATTERN).expect("a pattern");
    for text in [
        "6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10",
        "6F1C0F0E-8D4B-4C47-9A4E-2F4F7F9D8A10",
        "6f1c0f0e8d4b4c479a4e2f4f7f9d8a10",
        "{6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10}",
        "urn:uuid:6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10",
        "x",
    ] {
        let parsed = uuid_field(
            json!({ "merchantId": text })
                .as_object()
                .expect("an object"),
            "merchantId",
            "match.merchantId",
        );
        assert_eq!(uuid.is_match(text), parsed.is_ok(), "{text:?}");
    }
}

#[test]
fn after_then_times_then_spent() {
    let book = RuleBook::default();
    book.add(
        FaultRule::new(Fault::InternalError)
            .on(Endpoint::Confirm)
            .after(1)
            .times(2),
    )
    .expect("added");
    let confirm = facts(Endpoint::Confirm, None);
    let faults: Vec<bool> = (0..5)
        .map(|_| book.meet(&confirm, 1).expect("decided").is_some())
        .collect();
    assert_eq!(faults, [false, true, true, false, false]);
    // Another endpoint never matched it.
    assert_eq!(book.meet(&facts(Endpoint::Initiate, None), 1), Ok(None));
    let view = &book.list()[0];
    assert_eq!((view.met, view.fired, view.remaining), (3, 2, Some(0)));
}

#[test]
fn the_first_live_rule_in_creation_order_wins() {
    let book = RuleBook::default();
    let first = book
        .add(FaultRule::new(Fault::Gateway(502)).reference("A"))
        .expect("added");
    book.add(FaultRule::new(Fault::Hang).times(0))
        .expect("added");
    let a = facts(Endpoint::Initiate, Some("A"));
    let hit = book.meet(&a, 1).expect("decided").expect("a fault");
    assert_eq!(
        (hit.fault, hit.rule.to_string()),
        (Fault::Gateway(502), first.id)
    );
    // Spent: the next one goes on to the second rule.
    let hit = book.meet(&a, 1).expect("decided").expect("a fault");
    assert_eq!(hit.fault, Fault::Hang);
}

#[test]
fn a_rule_naming_a_reference_asks_for_the_stored_transaction() {
    let book = RuleBook::default();
    book.add(FaultRule::new(Fault::Truncate).reference("A"))
        .expect("added");
    let mut by_id = Facts {
        endpoint: Some(Endpoint::StatusById),
        transaction_id: Some(Uuid::nil()),
        ..Facts::default()
    };
    assert_eq!(book.meet(&by_id, 1), Err(()));
    assert_eq!(book.list()[0].met, 0, "nothing counted");
    by_id.reference_no = Some("A".into());
    by_id.complete = true;
    assert!(book.meet(&by_id, 1).expect("decided").is_some());
}

#[test]
fn a_transaction_looked_up_once_is_recalled_in_its_scope_until_the_rules_go() {
    let book = RuleBook::default();
    book.add(FaultRule::new(Fault::Truncate).reference("A").times(0))
        .expect("added");
    let (id, merchant, other) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    let by_id = || Facts {
        endpoint: Some(Endpoint::StatusById),
        transaction_id: Some(id),
        ..Facts::default()
    };
    let mut unknown = by_id();
    assert!(!book.recall(&mut unknown, None), "never looked up");
    book.remember(id, merchant, "A");
    let mut admin = by_id();
    assert!(book.recall(&mut admin, None));
    assert!(book.meet(&admin, 1).expect("decided").is_some());
    let mut own = by_id();
    assert!(book.recall(&mut own, Some(merchant)));
    assert_eq!(own.reference_no.as_deref(), Some("A"));
    // Another merchant's key does not find it: the rule does not match.
    let mut theirs = by_id();
    assert!(book.recall(&mut theirs, Some(other)));
    assert_eq!(
        (theirs.reference_no.as_deref(), theirs.complete),
        (None, true)
    );
    assert_eq!(book.meet(&theirs, 1), Ok(None));
    book.clear();
    assert!(!book.recall(&mut by_id(), None), "forgotten with the rules");
}

#[test]
fn probabilities_repeat_with_the_seed() {
    let run = |seed| {
        let book = RuleBook::default();
        book.add(FaultRule::new(Fault::RateLimit).times(0).probability(0.3))
            .expect("added");
        let any = facts(Endpoint::StatusById, None);
        (0..2000)
            .map(|_| book.meet(&any, seed).expect("decided").is_some())
            .collect::<Vec<_>>()
    };
    let a = run(7);
    assert_eq!(a, run(7));
    assert_ne!(a, run(8));
    let fired = a.iter().filter(|f| **f).count();
    assert!((500..=700).contains(&fired), "{fired}");
}

#[test]
fn rules_are_bounded_and_removed() {
    let book = RuleBook::default();
    let mut last = None;
    for _ in 0..MAX_RULES {
        last = Some(book.add(FaultRule::new(Fault::Hang)).expect("added"));
    }
    assert!(book.add(FaultRule::new(Fault::Hang)).is_err());
    let id = Uuid::parse_str(&last.expect("one").id).expect("a uuid");
    assert!(book.remove(id));
    assert!(!book.remove(id));
    assert_eq!(book.clear(), MAX_RULES - 1);
    assert!(!book.any());
    assert!(
        book.add(FaultRule::new(Fault::Hang).probability(2.0))
            .is_err()
    );
}

/// The first live matching rule by a plain walk in creation order: what
/// the book's positions by reference must always agree with.
fn first_by_walk(rules: &Rules, facts: &Facts) -> Result<Option<usize>, ()> {
    for (i, installed) in rules.installed.iter().enumerate() {
        if !installed.live() {
            continue;
        }
        match installed.rule.matching.against(facts) {
            Verdict::No => {}
            Verdict::NeedsLookup => return Err(()),
            Verdict::Yes => return Ok(Some(i)),
        }
    }
    Ok(None)
}

#[test]
fn rules_found_by_reference_are_the_walks_in_creation_order() {
    // A small deterministic generator: many books of rules naming a
    // reference or not, an endpoint or not, some spent; many requests.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let endpoints = [Endpoint::Initiate, Endpoint::Confirm, Endpoint::StatusById];
    let references = ["A", "B", "C"];
    for _ in 0..300 {
        let book = RuleBook::default();
        for _ in 0..next(12) {
            let mut rule = FaultRule::new(Fault::InternalError).times(next(3));
            if next(2) == 0 {
                rule = rule.reference(references[next(3) as usize]);
            }
            if next(3) == 0 {
                rule = rule.on(endpoints[next(3) as usize]);
            }
            book.add(rule).expect("added");
        }
        if next(4) == 0
            && let Some(first) = book.list().first()
        {
            book.remove(first.id.parse().expect("an id"));
        }
        for _ in 0..20 {
            let reference = (next(4) > 0).then(|| references[next(3) as usize]);
            let mut facts = facts(endpoints[next(3) as usize], reference);
            facts.complete = next(5) > 0;
            let rules = book.lock();
            assert_eq!(
                rules.first(&facts),
                first_by_walk(&rules, &facts),
                "{facts:?}"
            );
            drop(rules);
            // Spend some rules as requests would.
            let _ = book.meet(&facts, 1);
        }
    }
}
