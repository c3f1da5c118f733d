//! What a merchant brings to a browser test: a return handler on a free
//! loopback port that records every arrival, and the API calls (initiate,
//! confirm, status) made over HTTP.

use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::response::Html;
use axum::routing::get;
use payments_mock_server::Controls;
use serde_json::{Value, json};

pub const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

/// The merchant's return handler: `/back` answers a small page naming the
/// query it got, and remembers it.
pub struct Shop {
    pub base: String,
    arrivals: Arc<Mutex<Vec<String>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

async fn back(
    State(arrivals): State<Arc<Mutex<Vec<String>>>>,
    RawQuery(q): RawQuery,
) -> Html<String> {
    let query = q.unwrap_or_default();
    arrivals
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(query.clone());
    let shown: String = query
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "=&%-._".contains(c) {
                c
            } else {
                '?'
            }
        })
        .collect();
    Html(format!(
        "<!doctype html><html lang=\"en\"><title>Back at the shop</title>\
         <h1>Back at the shop</h1><p id=\"query\">{shown}</p></html>"
    ))
}

impl Shop {
    pub async fn start() -> Self {
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new()
            .route("/back", get(back))
            .with_state(arrivals.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let base = format!("http://{}", listener.local_addr().expect("an address"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Self {
            base,
            arrivals,
            stop: Some(stop),
        }
    }

    /// The queries the handler got, in order.
    pub fn arrivals(&self) -> Vec<String> {
        self.arrivals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Shop {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Calls `/api/` of `server` with a JSON body (or none) and returns the
/// envelope.
pub async fn call(server: &Controls, method: &str, path: &str, body: Option<Value>) -> Value {
    let http = reqwest::Client::new();
    let url = format!("{}{path}", server.base_url());
    let request = match method {
        "POST" => http.post(url).json(&body.unwrap_or_else(|| json!({}))),
        _ => http.get(url),
    };
    request
        .send()
        .await
        .expect("the mock answers")
        .json()
        .await
        .expect("an envelope")
}

/// Initiates `body`, confirms it, and returns (transactionId, paymentUrl).
pub async fn confirmed_redirect(server: &Controls, body: Value) -> (String, String) {
    let reference = body["referenceNo"].clone();
    let initiated = call(server, "POST", "/api/payments/initiate", Some(body)).await;
    let id = initiated["data"]["transactionId"]
        .as_str()
        .unwrap_or_else(|| panic!("initiated: {initiated}"))
        .to_owned();
    let confirmed = call(
        server,
        "POST",
        "/api/payments/confirm",
        Some(json!({ "transactionId": id, "referenceNo": reference })),
    )
    .await;
    assert_eq!(confirmed["data"]["status"], "CONFIRMED", "{confirmed}");
    let extra: Value = serde_json::from_str(
        confirmed["data"]["extraProperties"]
            .as_str()
            .expect("extraProperties"),
    )
    .expect("JSON");
    (
        id,
        extra["paymentUrl"].as_str().expect("paymentUrl").to_owned(),
    )
}

/// An ONLINEBANKING initiate body returning to `shop`.
pub fn online_banking(shop: &Shop, reference: &str) -> Value {
    json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": 15000,
        "productCode": "ONLINEBANKING",
        "storeId": "KL-01",
        "description": "Two coffees and a croissant",
        "returnUrl": format!("{}/back?order=17", shop.base),
    })
}

/// The status `data` of `id`.
pub async fn status(server: &Controls, id: &str) -> Value {
    call(server, "GET", &format!("/api/payments/{id}/status"), None).await["data"].clone()
}
