//! A redirect-based checkout, end to end: a small merchant web app with a
//! checkout route and a return route, the payer's browser played over
//! HTTP, and the outcome verified with the client.
//!
//! Online banking and 3-D Secure payments are decided on a page the
//! service hands over, not by the confirm call:
//!
//! 1. `POST /checkout` on the merchant's app initiates an `ONLINEBANKING`
//!    payment with a `returnUrl` pointing back at the app, confirms it,
//!    and sends the browser (303) to the payment page from the confirm;
//! 2. the payer presses **Pay** on that page, which sends the browser (303)
//!    to the app's `GET /return?...&transactionId=...&referenceNo=...&status=...`;
//! 3. the return route reads that address with `ReturnAddress` and asks the
//!    service with `verify_return`: the query is a convenience anyone can
//!    forge, the service's status is the truth.
//!
//! Run it from the repository root:
//!
//! ```sh
//! cargo run --example redirect_checkout
//! ```
//!
//! It starts the mock service in-process on a free loopback port; the app
//! listens on another one. (With `PAYMENTS_BASE_URL` it talks to that
//! service instead, whose redirect product must be `ONLINEBANKING`, and
//! with `PAYMENTS_API_KEY`, `PAYMENTS_MERCHANT_ID` if it needs them.)
//!
//! The in-process mock serves payment pages only with its feature `pages`:
//! copied into your own crate, this example needs
//! `payments-mock-server = { ..., features = ["pages"] }` (without it the
//! page address answers 404, and the example says so).

use std::collections::HashSet;
use std::env;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use payments_client::{
    Client, ConfirmRequest, InitiateRequest, MinorAmount, ReturnAddress, TransactionId,
    TransactionStatus, Uuid,
};
use payments_mock_server::MockServer;

/// Any merchant will do for the mock; a real service knows yours.
const DEMO_MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);

/// The merchant's app: its client of the payments service, where it is
/// reachable, and the orders it has settled.
#[derive(Clone)]
struct Shop {
    client: Client,
    merchant: Uuid,
    base_url: String,
    ledger: Arc<Mutex<Ledger>>,
}

/// Settlement, kept idempotent: a reload or the back button visits the
/// return address again, and must not ship the order again. (A real shop
/// keeps this in its database, e.g. a unique key on transactionId.)
#[derive(Default)]
struct Ledger {
    /// The transactions already settled.
    settled: HashSet<TransactionId>,
    /// What was shipped: the side effect to do once per order.
    shipped: Vec<String>,
}

/// `POST /checkout`: start paying order 17 and send the browser to the
/// payment page.
async fn checkout(State(shop): State<Shop>) -> Response {
    match start_payment(&shop).await {
        Ok(page) => (StatusCode::SEE_OTHER, [(header::LOCATION, page)]).into_response(),
        Err(e) => (StatusCode::BAD_GATEWAY, format!("checkout failed: {e}")).into_response(),
    }
}

async fn start_payment(shop: &Shop) -> anyhow::Result<String> {
    // References are unique per merchant, so each run makes its own.
    let reference = format!("ORDER-17-{}", &Uuid::new_v4().simple().to_string()[..8]);
    let request = InitiateRequest::builder(
        shop.merchant,
        &reference,
        MinorAmount::new(12_900)?,
        "ONLINEBANKING",
        "WEB-SHOP",
    )
    .description("2 x coffee beans, 1 kg")
    .return_url(format!("{}/return?order=17", shop.base_url))
    .build()?;
    let initiated = shop.client.initiate(request).await?;
    let tx = initiated.data();
    let confirmed = shop
        .client
        .confirm(ConfirmRequest::builder(&tx.transaction_id, tx.reference_no.clone()).build()?)
        .await?;
    let page = confirmed
        .data()
        .payment_url()
        .ok_or_else(|| anyhow::anyhow!("the confirm handed over no payment page"))?;
    println!(
        "shop: order 17 is {} ({}); the payer goes to {page}",
        tx.transaction_id,
        confirmed.data().status
    );
    Ok(page.into())
}

/// `GET /return?...`: where the payment page sends the browser back.
///
/// It answers plain text (axum's `String` is `text/plain; charset=utf-8`):
/// referenceNo comes from the address, which anyone can write, so a shop
/// rendering HTML must escape it, or the text becomes markup (a script)
/// on the shop's own page.
async fn back(State(shop): State<Shop>, RawQuery(query): RawQuery) -> Response {
    let address = match ReturnAddress::from_query(query.as_deref().unwrap_or_default()) {
        Ok(address) => address,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not a return: {e}")).into_response(),
    };
    match shop.client.verify_return(&address).await {
        Ok(verified) if *verified.status() == TransactionStatus::Successful => {
            let mut ledger = shop.ledger.lock().unwrap_or_else(PoisonError::into_inner);
            // Only the first visit settles; later ones just show the outcome.
            if ledger.settled.insert(address.transaction_id().clone()) {
                ledger.shipped.push(address.reference_no().to_owned());
            }
            format!("Thank you: order {} is paid.", address.reference_no()).into_response()
        }
        Ok(verified) => format!(
            "Order {} is not paid: {} ({}).",
            address.reference_no(),
            verified.status(),
            verified
                .reply()
                .data()
                .message
                .as_deref()
                .unwrap_or("no reason given")
        )
        .into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, format!("could not verify: {e}")).into_response(),
    }
}

/// The payer's browser, played over HTTP: go to checkout, follow the 303 to
/// the payment page, press the page's `action` button, follow the 303 back
/// to the shop, and return the return address and what the shop says.
async fn play_payer(shop_url: &str, button: &str) -> anyhow::Result<(String, String)> {
    // Redirects by hand, like a browser would, to show each step.
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let to_page = browser.post(format!("{shop_url}/checkout")).send().await?;
    let page_url = location(&to_page)?;
    let page = browser.get(&page_url).send().await?;
    // A page, not an error: the status and the content type first.
    let status = page.status();
    let content_type = page
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("no content type")
        .to_owned();
    anyhow::ensure!(
        status == StatusCode::OK && content_type.starts_with("text/html"),
        "the payment page {page_url} answered HTTP {status} ({content_type}), not a page; \
         the in-process mock serves payment pages only with its feature `pages`"
    );
    let page = page.text().await?;
    // The page's form posts back to its own address (no `action`
    // attribute), with one button per choice: name="action" value="...".
    anyhow::ensure!(
        page.contains(r#"<form method="post""#) && page.contains(&format!(r#"value="{button}""#)),
        "the payment page has no {button} button"
    );
    let decided = browser
        .post(&page_url)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("action={button}"))
        .send()
        .await?;
    let return_url = location(&decided)?;
    println!("payer: pressed {button}; the page sends the browser to {return_url}");
    let says = browser.get(&return_url).send().await?.text().await?;
    Ok((return_url, says))
}

fn location(response: &reqwest::Response) -> anyhow::Result<String> {
    anyhow::ensure!(
        response.status() == StatusCode::SEE_OTHER,
        "expected a 303, got {}",
        response.status()
    );
    Ok(response
        .headers()
        .get(header::LOCATION)
        .ok_or_else(|| anyhow::anyhow!("a 303 without Location"))?
        .to_str()?
        .to_owned())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (mock, service_url) = match env::var("PAYMENTS_BASE_URL") {
        Ok(url) => (None, url),
        Err(_) => {
            let mock = MockServer::start().await;
            let url = mock.base_url();
            (Some(mock), url)
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let shop_url = format!("http://{}", listener.local_addr()?);
    println!("Redirect checkout: the service at {service_url}, the shop at {shop_url}\n");
    let mut builder = Client::builder(&service_url);
    if let Ok(key) = env::var("PAYMENTS_API_KEY") {
        builder = builder.api_key(key);
    }
    let merchant = match env::var("PAYMENTS_MERCHANT_ID") {
        Ok(id) => id.parse()?,
        Err(_) => DEMO_MERCHANT,
    };
    let shop = Shop {
        client: builder.build()?,
        merchant,
        base_url: shop_url.clone(),
        ledger: Arc::default(),
    };
    let app = Router::new()
        .route("/checkout", post(checkout))
        .route("/return", get(back))
        .with_state(shop.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let (paid_return, paid) = play_payer(&shop_url, "pay").await?;
    println!("shop says: {paid}\n");
    anyhow::ensure!(
        paid.starts_with("Thank you"),
        "the paid order was not settled"
    );

    // The payer reloads the return page: same answer, no second settlement.
    let reload = reqwest::get(&paid_return).await?;
    anyhow::ensure!(
        reload.headers()[header::CONTENT_TYPE] == "text/plain; charset=utf-8",
        "the return page is not plain text"
    );
    let again = reload.text().await?;
    println!("payer: reloads {paid_return}\nshop says: {again}\n");
    anyhow::ensure!(again == paid, "the reload changed the answer");

    let (_, declined) = play_payer(&shop_url, "decline").await?;
    println!("shop says: {declined}\n");
    anyhow::ensure!(declined.contains("FAILED (declined by bank)"));

    let shipped = shop
        .ledger
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .shipped
        .len();
    println!("{shipped} order settled, once, and only on the service's word.");
    anyhow::ensure!(shipped == 1, "{shipped} settlements, expected exactly 1");
    if let Some(mock) = mock {
        mock.shutdown().await;
    }
    Ok(())
}
