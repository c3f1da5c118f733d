//! Helpers for the crate's unit tests: a valid new transaction and a
//! stored record.

use uuid::Uuid;

use super::{MemoryStore, NewTransaction, Record};
use crate::domain::catalog::InitialState;
use crate::domain::clock::Clock;

/// A valid MYR 1.00 TOPUP for this reference (tests elsewhere adjust it).
pub(crate) fn fields(reference: &str) -> NewTransaction {
    NewTransaction {
        merchant_id: Uuid::nil(),
        reference_no: reference.to_owned(),
        description: None,
        amount_minor: 100,
        currency_code: "MYR".to_owned(),
        currency_exponent: 2,
        product_code: "TOPUP".to_owned(),
        quantity: None,
        country_code: None,
        store_id: "S1".to_owned(),
        device_id: None,
        payer_id: Some("p".to_owned()),
        return_url: None,
        extra_properties: None,
    }
}

/// A stored record, for tests of the containers.
pub(crate) fn sample() -> Record {
    let now = Clock::new().now();
    MemoryStore::new("test")
        .initiate(fields("SAMPLE"), InitialState::Initiated, now, now)
        .expect("stored")
}
