//! Values longer than the memory keeps: not remembered and never cut, so
//! what it holds stays bounded whatever is sent, the rules work as before
//! for ids and references up to [`KEPT`] bytes, and two longer ones that
//! begin alike are never taken for one.

use serde_json::{Value, json};

use super::*;
use crate::exchange::{Exchange, Parsed};
use crate::rules::test_support::{
    MERCHANT, confirm_data, exchange, found, initiate_body, initiate_data, initiate_of, ok,
    status_data,
};
use crate::rules::{Finding, judge, remember};

const INITIATE: &str = "/api/payments/initiate";
const CONFIRM: &str = "/api/payments/confirm";

/// 64 KiB of `c`.
fn huge(c: char) -> String {
    c.to_string().repeat(64 * 1024)
}

/// [`KEPT`] bytes of `x`, then `tail`: values that begin alike.
fn alike(tail: &str) -> String {
    format!("{}{tail}", "x".repeat(KEPT))
}

/// Judges `e`, then remembers it, as the proxy and `check` do.
fn pass(memory: &mut Memory, e: &Exchange) -> Vec<Finding> {
    let parsed = Parsed::of(e);
    let findings = judge(&parsed, memory);
    remember(&parsed, memory);
    findings
}

fn confirm(id: &str, reference: &str) -> Exchange {
    exchange(
        "POST",
        CONFIRM,
        json!({ "transactionId": id, "referenceNo": reference }),
        200,
        ok(confirm_data(id, reference, "CONFIRMED", "10.50")),
    )
}

fn by_id(id: &str, data: Value) -> Exchange {
    let path = format!("/api/payments/{id}/status");
    exchange("GET", &path, json!(null), 200, ok(data))
}

#[test]
fn what_is_held_stays_bounded_whatever_is_sent() {
    let mut memory = Memory::default();
    for n in 0..20 {
        let short = format!("t{n}");
        // A 64 KiB reference and merchant, a 64 KiB currency.
        let mut body = initiate_body(&format!("{}{n}", huge('r')), 1050);
        body["merchantId"] = json!(format!("{}{n}", huge('m')));
        body["currencyCode"] = json!(huge('c'));
        let data = initiate_data(&short, &format!("{}{n}", huge('r')), 1050);
        pass(
            &mut memory,
            &exchange("POST", INITIATE, body, 200, ok(data)),
        );
        // A 64 KiB transaction id, initiated and confirmed.
        let long = format!("{}{n}", huge('t'));
        pass(&mut memory, &initiate_of(MERCHANT, &format!("R{n}"), &long));
        pass(&mut memory, &confirm(&long, &format!("R{n}")));
        // A status read of a short id with a 64 KiB productCode.
        let mut data = status_data(&short, "R", "INITIATED", "10.50");
        data["productCode"] = json!(huge('p'));
        pass(&mut memory, &by_id(&short, data));
    }
    // The last change is bounded at the next one.
    memory.seen("t0");
    let kept = memory.kept_bytes();
    assert!(kept < 4 * 1024, "{kept} bytes held for 80 exchanges");
    // What fits is still kept: the references of the 64 KiB ids.
    assert_eq!(memory.len().1, 20);
}

#[test]
fn ids_and_references_up_to_the_bound_are_judged_as_before() {
    let id = "i".repeat(KEPT);
    let reference = "r".repeat(KEPT);
    let other = format!("{}j", "i".repeat(KEPT - 1));
    assert_eq!(
        found(
            "confirm.twice",
            &[confirm(&id, &reference), confirm(&id, &reference)]
        )
        .len(),
        1
    );
    assert_eq!(
        found(
            "initiate.duplicate",
            &[
                initiate_of(MERCHANT, &reference, &id),
                initiate_of(MERCHANT, &reference, &other)
            ]
        )
        .len(),
        1
    );
    assert_eq!(
        found(
            "transaction.id-reused",
            &[
                initiate_of(MERCHANT, &reference, &id),
                initiate_of(MERCHANT, "R2", &id)
            ]
        )
        .len(),
        1
    );
    let mut differs = status_data(&id, &reference, "INITIATED", "10.50");
    differs["productCode"] = json!("OTHER");
    let path = format!("/api/payments/reference/{reference}/status");
    assert_eq!(
        found(
            "status.agree",
            &[
                initiate_of(MERCHANT, &reference, &id),
                by_id(&id, differs),
                exchange(
                    "GET",
                    &path,
                    json!(null),
                    200,
                    ok(status_data(&id, &reference, "INITIATED", "10.50"))
                ),
            ]
        )
        .len(),
        1
    );
}

#[test]
fn longer_values_that_begin_alike_are_never_taken_for_one() {
    let (a, b) = (alike("a"), alike("b"));
    // Two transactions.
    assert!(found("confirm.twice", &[confirm(&a, "R"), confirm(&b, "R")]).is_empty());
    // Two references of one merchant.
    assert!(
        found(
            "initiate.duplicate",
            &[
                initiate_of(MERCHANT, &a, "t1"),
                initiate_of(MERCHANT, &b, "t2")
            ]
        )
        .is_empty()
    );
    // Two merchants of one reference, each with its transaction.
    assert!(
        found(
            "initiate.duplicate",
            &[initiate_of(&a, "R", "t1"), initiate_of(&b, "R", "t2")]
        )
        .is_empty()
    );
    // Two transactions, each for its reference.
    assert!(
        found(
            "transaction.id-reused",
            &[
                initiate_of(MERCHANT, "R1", &a),
                initiate_of(MERCHANT, "R2", &b)
            ]
        )
        .is_empty()
    );
    // Two transactions' status reads: a longer id is not remembered, a
    // read of another is never compared with its.
    let read = |id: &str, product: &str| {
        let mut data = status_data(id, "R", "INITIATED", "10.50");
        data["productCode"] = json!(product);
        by_id(id, data)
    };
    assert!(found("status.agree", &[read(&a, "A"), read(&b, "B")]).is_empty());
}

#[test]
fn a_reference_a_longer_merchant_initiated_is_unknown() {
    // MERCHANT initiated R (t1), then a merchant too long to keep (t2):
    // an unscoped read of R may be that merchant's, so it is compared
    // with neither. Forgetting only the long merchant would take the read
    // for t1's and find its fields disagreeing.
    let read_of_t2 = exchange(
        "GET",
        "/api/payments/reference/R/status",
        json!(null),
        200,
        ok(status_data("t2", "R", "INITIATED", "10.50")),
    );
    let exchanges = [
        initiate_of(MERCHANT, "R", "t1"),
        by_id("t1", status_data("t1", "R", "INITIATED", "10.50")),
        initiate_of(&alike("m"), "R", "t2"),
        read_of_t2,
    ];
    assert!(found("status.agree", &exchanges).is_empty());
    // And a later initiate of R by MERCHANT is not compared either.
    let mut memory = Memory::default();
    for e in &exchanges {
        pass(&mut memory, e);
    }
    assert_eq!(memory.initiated(MERCHANT, "R"), None);
    assert_eq!(memory.transaction_for("R", None), None);
    assert_eq!(memory.transaction_of_reference("R"), None);
    let again = pass(&mut memory, &initiate_of(MERCHANT, "R", "t3"));
    assert!(
        !again.iter().any(|f| f.rule == "initiate.duplicate"),
        "{again:?}"
    );
}

#[test]
fn a_longer_value_is_gone_once_its_exchange_is_remembered() {
    let mut memory = Memory::default();
    let reference = alike("r");
    pass(&mut memory, &initiate_of(MERCHANT, &reference, "t1"));
    // Gone at once (and the merchant with it), with no other change of
    // the memory: nothing is ever compared with a cut copy, and the
    // exchange right after finds nothing to compare with.
    assert!(
        memory
            .transaction("t1")
            .is_some_and(|s| s.reference_no.is_none() && s.merchant.is_none()),
        "{:?}",
        memory.transaction("t1")
    );
    assert!(memory.kept_bytes() <= 2 * KEPT, "{}", memory.kept_bytes());
    let reused = pass(&mut memory, &initiate_of(MERCHANT, &alike("s"), "t1"));
    assert!(
        !reused.iter().any(|f| f.rule == "transaction.id-reused"),
        "{reused:?}"
    );
    // Control: a reference of KEPT bytes stays, and is compared.
    let kept = "y".repeat(KEPT);
    pass(&mut memory, &initiate_of(MERCHANT, &kept, "t3"));
    assert!(
        memory
            .transaction("t3")
            .is_some_and(|s| s.reference_no.as_deref() == Some(kept.as_str())
                && s.merchant.as_deref() == Some(MERCHANT))
    );
    let reused = pass(&mut memory, &initiate_of(MERCHANT, &"z".repeat(KEPT), "t3"));
    assert!(
        reused.iter().any(|f| f.rule == "transaction.id-reused"),
        "{reused:?}"
    );
}
