//! Embedding the server in a test suite: what a drop leaves behind (a port
//! that refuses at once, a SQLite file the next start can take), a server
//! whose runtime has ended, and the builder's options.

// After a drop the port refuses at once; requests under way finish.
#[cfg(target_os = "linux")]
#[path = "embedding/drop.rs"]
mod drop;
// A server whose runtime has ended says so instead of handing out a dead
// address.
#[path = "embedding/runtime_ended.rs"]
mod runtime_ended;
// Every flag of the binary has a builder method; `config` keeps what the
// setters before it set.
#[path = "embedding/builder.rs"]
mod builder;
// A start on the SQLite file of a server just dropped waits for it.
#[cfg(feature = "sqlite")]
#[path = "embedding/sqlite_restart.rs"]
mod sqlite_restart;

/// An initiate for the mock's default merchant and product.
pub fn initiate_body(reference: &str) -> String {
    serde_json::json!({
        "merchantId": "4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61",
        "referenceNo": reference,
        "amount": 1050,
        "productCode": "TOPUP",
        "storeId": "S",
        "currencyCode": "MYR",
        "payerId": "60123456789"
    })
    .to_string()
}

/// The status of an initiate sent to `base`.
pub async fn initiate(base: &str, reference: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{base}/api/payments/initiate"))
        .header("content-type", "application/json")
        .body(initiate_body(reference))
        .send()
        .await
        .expect("answered")
        .status()
        .as_u16()
}
