//! Look-ups with text no stored transaction can hold answer as every
//! store does: a reference with a NUL (the interface refuses control
//! characters; PostgreSQL's text cannot take one) is not found, and a
//! filter on one finds nothing, never a store error.

use payments_mock_server::domain::port::{LookupError, Order, PageQuery, Store};

use crate::behaviour::{MERCHANT, create};

pub async fn a_reference_with_a_nul_is_not_found<S: Store>(store: &S) {
    create(store, MERCHANT, "a").await;
    for scope in [None, Some(MERCHANT)] {
        let found = store
            .with_reference("a\0b", scope, |r| r.id)
            .await
            .expect("answers, not a store error");
        assert!(matches!(found, Err(LookupError::NotFound)), "{found:?}");
    }
    let query = PageQuery {
        order: Order::OldestFirst,
        from: None,
        limit: 10,
        merchant: None,
        reference_contains: Some("a\0".to_owned()),
    };
    let page = store
        .page(&query, |_| true, |r| r.id)
        .await
        .expect("answers, not a store error")
        .expect("a page");
    assert!(page.items.is_empty() && !page.more);
}
