//! The counter's own tests.

use std::time::Duration;

use super::*;
use crate::domain::catalog::InitialState;
use crate::domain::transaction::{ConfirmResult, Confirmation};
use crate::faults::Fault;
use crate::store::test_support::fields;

#[test]
fn the_faults_that_commit_are_the_ones_with_a_recovered_cell() {
    for fault in [
        Fault::InternalError,
        Fault::CommitThenError,
        Fault::Reset,
        Fault::CommitThenReset,
        Fault::Delay(Duration::from_millis(1)),
        Fault::RateLimit,
        Fault::AnswerOther,
        Fault::Hang,
        Fault::CommitThenHang,
        Fault::Truncate,
        Fault::SlowBody(10),
        Fault::Gateway(502),
    ] {
        assert_eq!(COMMITS[fault.kind()], fault.commits(), "{fault:?}");
    }
}

#[test]
fn counts_reach_the_interfaces_cells_exactly_and_the_rest_is_outside() {
    let counter = Counter::new();
    for _ in 0..1000 {
        counter.answer(Endpoint::Initiate, 200, None);
    }
    counter.answer(Endpoint::Confirm, 400, Some(ErrorCode::TransactionNotFound));
    counter.answer(Endpoint::Initiate, 405, Some(ErrorCode::MethodNotAllowed));
    counter.answer(Endpoint::StatusById, 418, None);
    for _ in 0..3 {
        counter.transition(None, Status::Initiated);
    }
    counter.fault(Endpoint::Initiate, 1);
    let report = counter.report("r1");
    assert_eq!(report.count("initiate 200"), Some(1000));
    assert_eq!(report.count("confirm 400 TRANSACTION_NOT_FOUND"), Some(1));
    assert_eq!(report.count("transition created -> INITIATED"), Some(3));
    assert_eq!(report.count("initiate commit-then-error"), Some(1));
    assert_eq!(
        report.count("initiate commit-then-error recovered"),
        Some(0)
    );
    assert_eq!(report.count("initiate reset recovered"), None);
    let outside: Vec<_> = report.matrix().outside().to_vec();
    assert_eq!(
        outside,
        [
            ("initiate 405 METHOD_NOT_ALLOWED".to_owned(), 1),
            ("statusById 418".to_owned(), 1)
        ]
    );
    let cells: Vec<_> = report.matrix().cells().iter().map(|(c, _)| *c).collect();
    assert_eq!(cells, payments_interface::coverage::cells());
    counter.reset();
    let report = counter.report("r1");
    assert!(report.matrix().cells().iter().all(|(_, n)| *n == 0));
    assert!(report.matrix().outside().is_empty());
    assert!(report.faults().iter().all(|f| f.met == 0));
}

#[test]
fn a_committed_fault_is_recovered_by_a_look_at_its_transaction_only() {
    let counter = Counter::new();
    let (merchant, other) = (Uuid::now_v7(), Uuid::now_v7());
    let id = Uuid::now_v7();
    let subject = |id, merchant, reference: &str| Subject {
        id,
        merchant,
        reference: Some(reference.into()),
    };
    assert!(!counter.awaits());
    counter.committed(
        Endpoint::Initiate,
        1,
        subject(Some(id), Some(merchant), "R1"),
    );
    counter.committed(
        Endpoint::Confirm,
        6,
        subject(Some(id), Some(merchant), "R1"),
    );
    counter.committed(Endpoint::Initiate, 3, subject(None, Some(merchant), "R2"));
    assert!(counter.awaits());
    // Another merchant's R1 and another id: not it.
    counter.came_back(&subject(Some(Uuid::now_v7()), Some(other), "R1"));
    assert_eq!(
        counter
            .report("r")
            .count("initiate commit-then-error recovered"),
        Some(0)
    );
    // By id: both faults about it.
    counter.came_back(&subject(Some(id), Some(merchant), "R1"));
    let report = counter.report("r");
    assert_eq!(
        report.count("initiate commit-then-error recovered"),
        Some(1)
    );
    assert_eq!(report.count("confirm answer-other recovered"), Some(1));
    assert_eq!(
        report.count("initiate commit-then-reset recovered"),
        Some(0)
    );
    // By merchant and reference (a duplicate answer).
    counter.came_back(&subject(None, Some(merchant), "R2"));
    assert_eq!(
        counter
            .report("r")
            .count("initiate commit-then-reset recovered"),
        Some(1)
    );
    assert!(!counter.awaits());
    // Once recovered, a second look counts nothing more.
    counter.came_back(&subject(Some(id), Some(merchant), "R1"));
    assert_eq!(
        counter
            .report("r")
            .count("initiate commit-then-error recovered"),
        Some(1)
    );
}

#[test]
fn the_clocks_moves_count_once_each_when_first_seen() {
    let counter = Counter::new();
    let store = crate::store::MemoryStore::new("test");
    let created = chrono::DateTime::from_timestamp_millis(1_795_000_000_000).expect("a time");
    let expires = created + Duration::from_secs(900);
    let mut record = store
        .initiate(fields("C1"), InitialState::Pending, created, expires)
        .expect("stored");
    counter.observe(&record, created);
    assert_eq!(
        counter.report("r").count("transition PENDING -> EXPIRED"),
        Some(0)
    );
    for _ in 0..3 {
        counter.observe(&record, expires);
    }
    assert_eq!(
        counter.report("r").count("transition PENDING -> EXPIRED"),
        Some(1)
    );
    // A settlement of no delay: CONFIRMED, then SUCCESSFUL at once.
    record.id = Uuid::now_v7();
    record.confirmation = Some(Box::new(Confirmation {
        confirmed_at: created,
        result: ConfirmResult::Settling {
            settles_at: created,
        },
        provider_reference: None,
        extra_properties: None,
    }));
    counter.confirmed(&record, created);
    counter.observe(&record, created);
    let report = counter.report("r");
    assert_eq!(report.count("transition PENDING -> CONFIRMED"), Some(1));
    assert_eq!(report.count("transition CONFIRMED -> SUCCESSFUL"), Some(1));
}
