//! A proxy in front of the scripted upstream (`Rig`), a client that
//! neither follows redirects nor decodes bodies, what it gets back
//! (`Reply`), and the bodies the tests send and script.

use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, Method};
use bytes::Bytes;
use payments_contract_proxy::{Proxy, ProxyConfig, VERDICT_HEADER};
use serde_json::{Value, json};

use crate::upstream::{Canned, Upstream};

/// A merchant id the document accepts (a UUID).
pub const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

/// What shapes a proxy in front of the upstream.
#[derive(Debug, Clone)]
pub struct Setup {
    /// A path prefix on the upstream URL (`/stage`), or empty.
    pub prefix: &'static str,
    /// `--enforce`.
    pub enforce: bool,
    /// `--upstream-timeout` (short, so a failing test does not hang).
    pub upstream_timeout: Duration,
    /// `--admin-key`s.
    pub admin_keys: Vec<&'static str>,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            prefix: "",
            enforce: false,
            upstream_timeout: Duration::from_secs(10),
            admin_keys: Vec::new(),
        }
    }
}

/// A proxy in front of `upstream` (a URL, maybe with a path prefix).
pub async fn proxy_in_front_of(upstream: &str, setup: &Setup) -> Proxy {
    let mut config = ProxyConfig::new(upstream.parse().expect("an upstream URL"));
    config.enforce = setup.enforce;
    config.upstream_timeout = setup.upstream_timeout;
    config.admin_keys = setup
        .admin_keys
        .iter()
        .map(|k| k.parse().expect("an admin key"))
        .collect();
    Proxy::start(config).await.expect("the proxy starts")
}

/// A client that neither follows redirects nor decodes compressed bodies.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .no_zstd()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("a reqwest client")
}

/// An answer as the application got it.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Every header.
    pub headers: HeaderMap,
    /// Body bytes, undecoded.
    pub body: Bytes,
}

impl Reply {
    /// Reads a response whole.
    pub async fn of(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.expect("the answer's body");
        Self {
            status,
            headers,
            body,
        }
    }

    /// `X-Contract-Verdict` (asserted to be there once).
    pub fn verdict(&self) -> &str {
        let values: Vec<&HeaderValue> = self.headers.get_all(VERDICT_HEADER).iter().collect();
        assert_eq!(values.len(), 1, "one {VERDICT_HEADER}: {:?}", self.headers);
        values[0].to_str().expect("a text verdict")
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "the body is JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The envelope's `errorCode`.
    pub fn code(&self) -> String {
        self.json()["errorCode"].as_str().unwrap_or("").to_owned()
    }
}

/// An upstream, a proxy in front of it, and a client.
#[derive(Debug)]
pub struct Rig {
    /// The scripted upstream.
    pub upstream: Upstream,
    /// The proxy.
    pub proxy: Proxy,
    /// The application's client.
    pub client: reqwest::Client,
}

impl Rig {
    /// With the defaults: no prefix, not enforcing, a 10 s timeout.
    pub async fn start() -> Self {
        Self::with(Setup::default()).await
    }

    /// With `setup`.
    pub async fn with(setup: Setup) -> Self {
        let upstream = Upstream::start().await;
        let proxy = proxy_in_front_of(&format!("{}{}", upstream.url(), setup.prefix), &setup).await;
        Self {
            upstream,
            proxy,
            client: client(),
        }
    }

    /// In front of a scripted upstream, with the defaults' configuration
    /// changed by `configure` (evidence files, the name given to `--host`).
    pub async fn configured(configure: impl FnOnce(&mut ProxyConfig)) -> Self {
        let upstream = Upstream::start().await;
        let mut config = ProxyConfig::new(upstream.url().parse().expect("a URL"));
        configure(&mut config);
        let proxy = Proxy::start(config).await.expect("the proxy starts");
        Self {
            upstream,
            proxy,
            client: client(),
        }
    }

    /// The proxy's URL of `path_and_query`.
    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.proxy.base_url())
    }

    /// Sends `method path` with `body` as JSON (or no body) through the
    /// proxy.
    pub async fn send(&self, method: &Method, path: &str, body: Option<&Value>) -> Reply {
        let mut request = self.client.request(method.clone(), self.url(path));
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        Reply::of(request.send().await.expect("the proxy answers")).await
    }

    /// Scripts `canned`, then sends `method path` with `body` through the
    /// proxy.
    pub async fn exchange(
        &self,
        method: &Method,
        path: &str,
        body: Option<&Value>,
        canned: Canned,
    ) -> Reply {
        self.upstream.push(canned);
        self.send(method, path, body).await
    }
}

/// A success envelope around `data`.
pub fn ok(data: Value) -> Value {
    json!({ "isSuccess": true, "errorCode": null, "message": null, "data": data })
}

/// A failure envelope.
pub fn failure(code: &str) -> Value {
    json!({ "isSuccess": false, "errorCode": code, "message": "refused", "data": null })
}

/// A valid initiate body (MYR left out).
pub fn initiate_body(reference: &str, amount: u64) -> Value {
    json!({
        "merchantId": MERCHANT, "referenceNo": reference, "amount": amount,
        "productCode": "TOPUP", "storeId": "S1",
    })
}

/// The initiate `data` the document shows for it.
pub fn initiate_data(id: &str, reference: &str, amount: u64) -> Value {
    json!({
        "transactionId": id, "referenceNo": reference, "status": "INITIATED",
        "amount": amount, "currencyCode": "MYR", "productCode": "TOPUP",
        "createdAt": "2026-11-22T08:15:30.123Z", "extraProperties": null,
    })
}

/// A status `data` (`amount` as JSON text, e.g. `"10.50"`).
pub fn status_data(id: &str, reference: &str, status: &str, amount: &str) -> Value {
    json!({
        "transactionId": id, "referenceNo": reference, "status": status,
        "amount": serde_json::from_str::<Value>(amount).expect("an amount as JSON text"),
        "productCode": "TOPUP", "createdAt": "2026-11-22T08:15:30.123Z",
        "lastModifiedAt": null, "providerReference": null, "message": null,
        "extraProperties": null,
    })
}

/// A confirm `data`.
pub fn confirm_data(id: &str, reference: &str, status: &str, amount: &str) -> Value {
    json!({
        "transactionId": id, "referenceNo": reference, "status": status,
        "amount": serde_json::from_str::<Value>(amount).expect("an amount as JSON text"),
        "providerReference": "PRV-1", "confirmedAt": "2026-11-22T08:15:31.000Z",
        "errorMessage": null, "extraProperties": null,
    })
}

/// A confirm body.
pub fn confirm_body(id: &str, reference: &str) -> Value {
    json!({ "transactionId": id, "referenceNo": reference })
}

/// `/metrics`' count of upstream failures for `reason`.
pub async fn failures(proxy: &Proxy, reason: &str) -> String {
    let text = client()
        .get(format!("{}/metrics", proxy.base_url()))
        .send()
        .await
        .expect("the metrics")
        .text()
        .await
        .expect("their text");
    let label = format!("payments_proxy_upstream_failures_total{{reason=\"{reason}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&label))
        .unwrap_or_default()
        .to_owned()
}
