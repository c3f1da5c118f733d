//! A merchant's count (`GET /_mock/health` with a merchant's key): one
//! count by the store, exact for each merchant, and none after a reset.

use payments_mock_server::domain::port::Store;
use uuid::Uuid;

use crate::behaviour::{MERCHANT, OTHER, create};

/// A merchant that holds nothing.
const NOBODY: Uuid = Uuid::from_u128(0x1d2e_3f40_5a6b_4c7d_8e9f_a0b1_c2d3_e4f5);

/// Each merchant's count is its own transactions', whoever else holds
/// some (the same references too); a merchant with none counts 0; a reset
/// brings every count back to 0.
pub async fn counts_by_merchant_are_each_merchants_own<S: Store>(store: &S) {
    let counts = async |store: &S| {
        let mut counts = Vec::new();
        for merchant in [MERCHANT, OTHER, NOBODY] {
            counts.push(store.count_of_merchant(merchant).await.expect("answers"));
        }
        counts
    };
    assert_eq!(counts(store).await, [0, 0, 0]);
    for n in 0..7 {
        create(store, MERCHANT, &format!("COUNT-{n}")).await;
    }
    for n in 0..3 {
        create(store, OTHER, &format!("COUNT-{n}")).await;
    }
    assert_eq!(counts(store).await, [7, 3, 0]);
    assert_eq!(store.count().await.expect("answers"), 10);
    store.reset().await.expect("resets");
    assert_eq!(counts(store).await, [0, 0, 0]);
    create(store, OTHER, "COUNT-AFTER").await;
    assert_eq!(counts(store).await, [0, 1, 0]);
}
