use serde_json::json;

use crate::rules::test_support::{
    confirm_data, exchange, found, initiate_body, initiate_data, initiate_of, ok, status_data,
};

const INITIATE: &str = "/api/payments/initiate";
const CONFIRM: &str = "/api/payments/confirm";
const BY_ID: &str = "/api/payments/t1/status";
const BY_REF: &str = "/api/payments/reference/R/status";

fn initiated(amount: u64) -> crate::exchange::Exchange {
    exchange(
        "POST",
        INITIATE,
        initiate_body("R", amount),
        200,
        ok(initiate_data("t1", "R", amount)),
    )
}

fn status(path: &str, status: &str, amount: &str) -> crate::exchange::Exchange {
    exchange(
        "GET",
        path,
        json!(null),
        200,
        ok(status_data("t1", "R", status, amount)),
    )
}

#[test]
fn amount_units() {
    assert!(
        found(
            "amount.units",
            &[initiated(1050), status(BY_ID, "INITIATED", "10.50")]
        )
        .is_empty()
    );
    assert!(
        found(
            "amount.units",
            &[initiated(1050), status(BY_ID, "INITIATED", "10.5")]
        )
        .is_empty(),
        "numerically equal"
    );
    let minor = found(
        "amount.units",
        &[initiated(1050), status(BY_ID, "INITIATED", "1050")],
    );
    assert_eq!(minor.len(), 1);
    assert!(minor[0].message.contains("10.50"), "{minor:?}");
    let confirm = exchange(
        "POST",
        CONFIRM,
        json!({"transactionId": "t1", "referenceNo": "R"}),
        200,
        ok(confirm_data("t1", "R", "SUCCESSFUL", "105.0")),
    );
    assert_eq!(found("amount.units", &[initiated(1050), confirm]).len(), 1);
    assert!(
        found("amount.units", &[status(BY_ID, "INITIATED", "1050")]).is_empty(),
        "never initiated here: nothing to compare"
    );
}

#[test]
fn status_agree() {
    assert!(
        found(
            "status.agree",
            &[
                status(BY_ID, "INITIATED", "10.50"),
                status(BY_REF, "INITIATED", "10.50")
            ]
        )
        .is_empty()
    );
    let hits = found(
        "status.agree",
        &[
            status(BY_ID, "INITIATED", "10.50"),
            status(BY_REF, "INITIATED", "11.50"),
        ],
    );
    assert_eq!(hits.len(), 1);
    assert!(hits[0].message.starts_with("amount"), "{hits:?}");
    assert!(
        found(
            "status.agree",
            &[
                status(BY_ID, "INITIATED", "10.50"),
                status(BY_REF, "INITIATED", "10.5")
            ]
        )
        .is_empty(),
        "amounts are compared as numbers"
    );
    // The reference's read answers another transaction: compared with
    // the read of the transaction the reference was initiated with.
    let wrong = exchange(
        "GET",
        BY_REF,
        json!(null),
        200,
        ok(status_data("t9", "R", "INITIATED", "10.50")),
    );
    let hits = found(
        "status.agree",
        &[
            initiated(1050),
            status(BY_ID, "INITIATED", "10.50"),
            wrong.clone(),
        ],
    );
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].message.starts_with("transactionId"), "{hits:?}");
    // And the other way round: the by-id read after the wrong one.
    let hits = found(
        "status.agree",
        &[initiated(1050), wrong, status(BY_ID, "INITIATED", "10.50")],
    );
    assert_eq!(hits.len(), 1, "{hits:?}");
}

/// A status read of t1 whose `createdAt` is `created`.
fn created(path: &str, created: &str) -> crate::exchange::Exchange {
    let mut data = status_data("t1", "R", "INITIATED", "10.50");
    data["createdAt"] = json!(created);
    exchange("GET", path, json!(null), 200, ok(data))
}

#[test]
fn status_agree_compares_created_at_as_the_instant_it_names() {
    for (by_id, by_reference) in [
        ("2026-11-29T23:00:00Z", "2026-11-29T23:00:00.000Z"),
        ("2026-11-29T23:00:00.000Z", "2026-11-29T23:00:00+00:00"),
        ("2026-11-30T10:00:00.000+11:00", "2026-11-29T23:00:00.000Z"),
    ] {
        let reads = [created(BY_ID, by_id), created(BY_REF, by_reference)];
        assert_eq!(found("status.agree", &reads), Vec::new(), "{by_id}");
        let reads = [created(BY_REF, by_reference), created(BY_ID, by_id)];
        assert_eq!(found("status.agree", &reads), Vec::new(), "{by_id}");
    }
    // Control: two instants a millisecond apart disagree.
    let reads = [
        created(BY_ID, "2026-11-29T23:00:00.000Z"),
        created(BY_REF, "2026-11-29T23:00:00.001Z"),
    ];
    let hits = found("status.agree", &reads);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].message.starts_with("createdAt"), "{hits:?}");
}

#[test]
fn status_regressed() {
    assert_eq!(
        found(
            "status.regressed",
            &[
                status(BY_ID, "SUCCESSFUL", "1"),
                status(BY_ID, "CONFIRMED", "1")
            ]
        )
        .len(),
        1
    );
    assert_eq!(
        found(
            "status.regressed",
            &[
                status(BY_ID, "CONFIRMED", "1"),
                status(BY_REF, "INITIATED", "1")
            ]
        )
        .len(),
        1
    );
    assert!(
        found(
            "status.regressed",
            &[
                status(BY_ID, "CONFIRMED", "1"),
                status(BY_ID, "SUCCESSFUL", "1")
            ]
        )
        .is_empty()
    );
    assert!(
        found(
            "status.regressed",
            &[
                status(BY_ID, "PENDING", "1"),
                status(BY_ID, "INITIATED", "1")
            ]
        )
        .is_empty()
    );
    // Every read after the final one that shows another status trips
    // it: a regression does not become the new baseline.
    assert_eq!(
        found(
            "status.regressed",
            &[
                status(BY_ID, "SUCCESSFUL", "1"),
                status(BY_ID, "CONFIRMED", "1"),
                status(BY_ID, "CONFIRMED", "1")
            ]
        )
        .len(),
        1
    );
    assert_eq!(
        found(
            "status.regressed",
            &[
                status(BY_ID, "SUCCESSFUL", "1"),
                status(BY_ID, "FAILED", "1"),
                status(BY_ID, "SUCCESSFUL", "1")
            ]
        )
        .len(),
        0,
        "the first final status stands"
    );
    // A read sent before the final answer was complete overtook it:
    // not a regression.
    let mut slow_confirm = exchange(
        "POST",
        CONFIRM,
        json!({"transactionId": "t1", "referenceNo": "R"}),
        200,
        ok(confirm_data("t1", "R", "SUCCESSFUL", "1")),
    );
    slow_confirm.time = chrono::DateTime::UNIX_EPOCH + chrono::Duration::seconds(10);
    slow_confirm.duration_ms = 5_000.0;
    let mut overtaken = status(BY_ID, "PENDING", "1");
    overtaken.time = chrono::DateTime::UNIX_EPOCH + chrono::Duration::seconds(12);
    assert!(
        found("status.regressed", &[slow_confirm.clone(), overtaken]).is_empty(),
        "overlapping exchanges"
    );
    let mut after = status(BY_ID, "PENDING", "1");
    after.time = chrono::DateTime::UNIX_EPOCH + chrono::Duration::seconds(16);
    assert_eq!(found("status.regressed", &[slow_confirm, after]).len(), 1);
}

#[test]
fn confirm_twice() {
    let confirm = || {
        exchange(
            "POST",
            CONFIRM,
            json!({"transactionId": "t1", "referenceNo": "R"}),
            200,
            ok(confirm_data("t1", "R", "SUCCESSFUL", "10.50")),
        )
    };
    assert!(found("confirm.twice", &[initiated(1050), confirm()]).is_empty());
    assert_eq!(
        found("confirm.twice", &[initiated(1050), confirm(), confirm()]).len(),
        1
    );
    let refused = exchange(
        "POST",
        CONFIRM,
        json!({"transactionId": "t1", "referenceNo": "R"}),
        400,
        json!({"isSuccess": false, "errorCode": "X", "message": "m", "data": null}),
    );
    assert!(found("confirm.twice", &[initiated(1050), confirm(), refused]).is_empty());
}

#[test]
fn initiate_duplicate() {
    let other = exchange(
        "POST",
        INITIATE,
        initiate_body("R", 1050),
        200,
        ok(initiate_data("t2", "R", 1050)),
    );
    let hits = found("initiate.duplicate", &[initiated(1050), other]);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].level, crate::rules::Level::Violation);
    let replay = found("initiate.duplicate", &[initiated(1050), initiated(1050)]);
    assert_eq!(replay.len(), 1);
    assert_eq!(replay[0].level, crate::rules::Level::Undocumented);
    assert!(found("initiate.duplicate", &[initiated(1050)]).is_empty());
}

#[test]
fn a_merchant_is_keyed_by_its_canonical_uuid() {
    let canonical = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
    assert!(matches!(
        super::merchant_key(canonical),
        std::borrow::Cow::Borrowed(_)
    ));
    assert_eq!(
        super::merchant_key("6F1C0D3E-1B7A-4C1E-9A55-1C2B3D4E5F60"),
        canonical
    );
    assert_eq!(
        super::merchant_key("6f1c0d3e1b7a4c1e9a551c2b3d4e5f60"),
        canonical
    );
    assert_eq!(super::merchant_key("merchant-1"), "merchant-1");
}

const OTHER_MERCHANT: &str = "0b7e2d51-93c4-4f0a-8d6e-2f1a3b4c5d6e";

#[test]
fn transaction_id_reused() {
    let merchant = crate::rules::test_support::MERCHANT;
    // One id answered for two references of one merchant.
    let hits = found(
        "transaction.id-reused",
        &[
            initiate_of(merchant, "R1", "t1"),
            initiate_of(merchant, "R2", "t1"),
        ],
    );
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].level, crate::rules::Level::Violation);
    assert!(
        hits[0].message.contains("t1")
            && hits[0].message.contains("R1")
            && hits[0].message.contains("R2"),
        "{hits:?}"
    );
    // And for the same reference of another merchant.
    assert_eq!(
        found(
            "transaction.id-reused",
            &[
                initiate_of(merchant, "R1", "t1"),
                initiate_of(OTHER_MERCHANT, "R1", "t1"),
            ],
        )
        .len(),
        1
    );
    // The earliest pair stays the one compared with.
    assert_eq!(
        found(
            "transaction.id-reused",
            &[
                initiate_of(merchant, "R1", "t1"),
                initiate_of(merchant, "R2", "t1"),
                initiate_of(merchant, "R1", "t1"),
            ],
        )
        .len(),
        0,
        "R1 again is the first pair's replay"
    );
}

#[test]
fn transaction_id_reused_spares_a_replay_and_another_merchants_own_transaction() {
    let merchant = crate::rules::test_support::MERCHANT;
    // The same merchant and reference replayed with the same id:
    // initiate.duplicate's undocumented, not this rule's.
    assert!(
        found(
            "transaction.id-reused",
            &[
                initiate_of(merchant, "R1", "t1"),
                initiate_of(merchant, "R1", "t1")
            ]
        )
        .is_empty()
    );
    // The merchant spelled in upper case is the same merchant.
    assert!(
        found(
            "transaction.id-reused",
            &[
                initiate_of(merchant, "R1", "t1"),
                initiate_of(&merchant.to_uppercase(), "R1", "t1")
            ]
        )
        .is_empty()
    );
    // The same reference under another merchant, with its own id.
    assert!(
        found(
            "transaction.id-reused",
            &[
                initiate_of(merchant, "R1", "t1"),
                initiate_of(OTHER_MERCHANT, "R1", "t2")
            ]
        )
        .is_empty()
    );
    // An id seen only through a status read names no merchant.
    assert!(
        found(
            "transaction.id-reused",
            &[
                status(BY_ID, "INITIATED", "10.50"),
                initiate_of(merchant, "R2", "t1")
            ]
        )
        .is_empty()
    );
}

/// One reference initiated by two merchants is two transactions (CONTRACT
/// 4): a status read scoped to one of them (`merchantId`) is about that
/// merchant's, whichever initiated last; an unscoped one (a merchant's key
/// scopes it, which the proxy cannot see) is about the one its answer names.
#[test]
fn status_agree_follows_the_merchant_a_read_by_reference_is_scoped_to() {
    let merchant = crate::rules::test_support::MERCHANT;
    let read = |path: &str, id: &str, amount: &str| {
        exchange(
            "GET",
            path,
            json!(null),
            200,
            ok(status_data(id, "R", "INITIATED", amount)),
        )
    };
    let scoped = |m: &str, id: &str, amount: &str| {
        let mut e = read(BY_REF, id, amount);
        e.request.query = Some(format!("merchantId={m}"));
        e
    };
    let first = [
        initiate_of(merchant, "R", "tA"),
        initiate_of(OTHER_MERCHANT, "R", "tB"),
        read("/api/payments/tB/status", "tB", "11.00"),
    ];
    // The mock answers merchant A's read with A's transaction: no finding,
    // and the next read of B's by id agrees with B's own.
    let clean = [
        first.to_vec(),
        vec![
            scoped(merchant, "tA", "10.50"),
            scoped(&merchant.to_uppercase(), "tA", "10.50"),
            read(BY_REF, "tA", "10.50"),
            read("/api/payments/tB/status", "tB", "11.00"),
            read("/api/payments/tA/status", "tA", "10.50"),
        ],
    ]
    .concat();
    assert_eq!(found("status.agree", &clean), Vec::new());
    // A read scoped to A answered with B's transaction disagrees with A's
    // read by id.
    let crossed = [
        first.to_vec(),
        vec![
            read("/api/payments/tA/status", "tA", "10.50"),
            scoped(merchant, "tB", "11.00"),
        ],
    ]
    .concat();
    let hits = found("status.agree", &crossed);
    assert!(
        hits.iter().any(|h| h.message.starts_with("transactionId")),
        "{hits:?}"
    );
}

/// An answer about another request than it answers files nothing under
/// what was asked: a correct read later is not compared with it.
#[test]
fn status_agree_never_compares_with_an_answer_about_another_request() {
    let read = |path: &str, id: &str, reference: &str| {
        exchange(
            "GET",
            path,
            json!(null),
            200,
            ok(status_data(id, reference, "INITIATED", "10.50")),
        )
    };
    // Initiate B; initiate C answered with B's transaction (data.echo);
    // C read by reference (C's own transaction); B read by id: correct.
    let initiate_c_answered_b = exchange(
        "POST",
        INITIATE,
        initiate_body("C", 1050),
        200,
        ok(initiate_data("tB", "B", 1050)),
    );
    let sequence = [
        exchange(
            "POST",
            INITIATE,
            initiate_body("B", 1050),
            200,
            ok(initiate_data("tB", "B", 1050)),
        ),
        initiate_c_answered_b.clone(),
        read("/api/payments/reference/C/status", "tC", "C"),
        read("/api/payments/tB/status", "tB", "B"),
    ];
    assert_eq!(found("data.echo", &sequence[..2]).len(), 1);
    assert_eq!(found("status.agree", &sequence), Vec::new());
    // And B read by reference after: agrees with B's read by id.
    let more = [
        sequence.to_vec(),
        vec![read("/api/payments/reference/B/status", "tB", "B")],
    ]
    .concat();
    assert_eq!(found("status.agree", &more), Vec::new());
    // A status by id of tB answered about tC (answer.other) is not filed
    // as tB's: B's read by reference then agrees with nothing wrong.
    let crossed = [
        read("/api/payments/tB/status", "tC", "C"),
        read("/api/payments/reference/B/status", "tB", "B"),
    ];
    assert_eq!(found("answer.other", &crossed[..1]).len(), 1);
    assert_eq!(found("status.agree", &crossed), Vec::new());
    // Nor a status by reference B answered about C.
    let crossed = [
        exchange(
            "POST",
            INITIATE,
            initiate_body("B", 1050),
            200,
            ok(initiate_data("tB", "B", 1050)),
        ),
        read("/api/payments/reference/B/status", "tC", "C"),
        read("/api/payments/tB/status", "tB", "B"),
    ];
    assert_eq!(found("status.agree", &crossed), Vec::new());
    // Nor a confirm of tC answered about tB: tB is not confirmed by it.
    let confirm = |id: &str, reference: &str, answered: (&str, &str)| {
        exchange(
            "POST",
            CONFIRM,
            json!({"transactionId": id, "referenceNo": reference}),
            200,
            ok(confirm_data(answered.0, answered.1, "SUCCESSFUL", "10.50")),
        )
    };
    let twice = [
        confirm("tC", "C", ("tB", "B")),
        confirm("tB", "B", ("tB", "B")),
    ];
    assert_eq!(found("confirm.twice", &twice), Vec::new());
}
