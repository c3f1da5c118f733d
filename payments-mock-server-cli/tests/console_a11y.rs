//! The console's pages as assistive technology meets them: a refused
//! form names its error in the title and ties it to its field (which
//! takes the focus), the pager is there only with links, and a sandbox's
//! pages say which sandbox in their title.

use payments_mock_server::MockServer;

use crate::common::{get, initiated, service};
use crate::console::{assert_page, text};

/// The page's `<title>`.
fn title(page: &str) -> &str {
    page.split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_default()
}

/// The start tag of the element with `id`.
fn tag<'a>(page: &'a str, id: &str) -> &'a str {
    let at = page
        .find(&format!(r#"id="{id}""#))
        .unwrap_or_else(|| panic!("#{id} in {page}"));
    let start = page[..at].rfind('<').expect("a tag");
    let end = at + page[at..].find('>').expect("the tag's end");
    &page[start..=end]
}

#[tokio::test]
async fn a_refused_filter_is_tied_to_its_field_and_said_in_the_title() {
    let (_, router) = service();
    let page = assert_page(&get(&router, "/_mock/ui/?merchant=not-a-uuid").await, 400);
    assert!(title(&page).starts_with("Error: Transactions"), "{page}");
    let merchant = tag(&page, "f-merchant");
    assert!(
        merchant.contains(r#"aria-invalid="true""#)
            && merchant.contains(r#"aria-describedby="problems""#)
            && merchant.contains("autofocus"),
        "{merchant}"
    );
    assert!(!tag(&page, "problems").contains("autofocus"), "one focus");
    assert!(!tag(&page, "f-status").contains("aria-invalid"));
    // Two refused fields: both marked, the first one focused.
    let page = text(&get(&router, "/_mock/ui/?status=DONE&merchant=x").await);
    assert!(tag(&page, "f-status").contains("autofocus"), "{page}");
    assert!(!tag(&page, "f-merchant").contains("autofocus"), "{page}");
    assert!(tag(&page, "f-merchant").contains("aria-invalid"), "{page}");
    // A refusal without a field: the summary takes the focus.
    let page = text(&get(&router, "/_mock/ui/?limit=0").await);
    assert!(tag(&page, "problems").contains("autofocus"), "{page}");
    // No refusal: no error anywhere.
    let page = assert_page(&get(&router, "/_mock/ui/").await, 200);
    assert!(title(&page).starts_with("Transactions"), "{page}");
    assert!(
        !page.contains("aria-invalid") && !page.contains("autofocus"),
        "{page}"
    );
}

#[tokio::test]
async fn the_pager_is_there_only_with_links() {
    let (_, router) = service();
    let id = initiated(&router, "PAGER-1", "TOPUP").await;
    let page = assert_page(&get(&router, "/_mock/ui/").await, 200);
    assert!(!page.contains(r#"class="pager""#), "{page}");
    // An older page has its way back to the newest.
    let page = assert_page(&get(&router, &format!("/_mock/ui/?before={id}")).await, 200);
    assert!(
        page.contains(r#"<nav class="pager" aria-label="Pages"><a"#),
        "{page}"
    );
}

#[tokio::test]
async fn a_sandboxs_pages_name_it_in_their_title_and_a_wrong_key_is_an_error() {
    let server = MockServer::builder()
        .admin_key("adm_a11y_title_3c9d")
        .start()
        .await
        .expect("a guarded mock starts");
    let client = reqwest::Client::new();
    let base = server.base_url();
    let wrong = client
        .post(format!("{base}/_mock/ui/sign-in"))
        .header("origin", &base)
        .form(&[("key", "not-the-key"), ("next", "")])
        .send()
        .await
        .expect("answered");
    let page = wrong.text().await.expect("a page");
    assert!(title(&page).starts_with("Error: Sign in"), "{page}");
    let key = tag(&page, "key");
    assert!(
        key.contains(r#"aria-invalid="true""#)
            && key.contains(r#"aria-describedby="key-error key-hint""#)
            && key.contains("autofocus"),
        "{key}"
    );
    assert!(
        tag(&page, "key-error").contains(r#"role="alert""#),
        "{page}"
    );
    let fresh = client
        .get(format!("{base}/_mock/ui/sign-in"))
        .send()
        .await
        .expect("answered")
        .text()
        .await
        .expect("a page");
    assert!(title(&fresh).starts_with("Sign in"), "{fresh}");
    assert!(!fresh.contains("aria-invalid"), "{fresh}");
    server.shutdown().await;

    let server = MockServer::start().await;
    let sandbox = server.sandbox();
    let root = reqwest::get(format!("{}/_mock/ui/clock", server.base_url()))
        .await
        .expect("answered")
        .text()
        .await
        .expect("a page");
    assert_eq!(title(&root), "Clock · payments mock console");
    let mine = reqwest::get(format!("{}/_mock/ui/clock", sandbox.base_url()))
        .await
        .expect("answered")
        .text()
        .await
        .expect("a page");
    assert_eq!(
        title(&mine),
        format!("Clock · sandbox {} · payments mock console", sandbox.id())
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_refused_merchant_filter_on_a_merchants_page_focuses_the_summary() {
    use axum::http::Method;

    let (_, router) = crate::common::service_with(crate::admin_access::guarded_config());
    let as_key = async |key: &str, uri: &str| {
        let mut req = crate::common::request(Method::GET, uri, None);
        req.headers_mut().insert(
            "authorization",
            format!("Bearer {key}").parse().expect("a header"),
        );
        crate::common::send(&router, req).await
    };
    // A merchant's page has no Merchant field: the summary takes the focus.
    let page = assert_page(
        &as_key(crate::security::KEY_A, "/_mock/ui/?merchant=zz").await,
        400,
    );
    assert!(!page.contains(r#"id="f-merchant""#), "{page}");
    assert!(tag(&page, "problems").contains("autofocus"), "{page}");
    assert_eq!(page.matches("autofocus").count(), 1, "one focus: {page}");
    // With another refused field, that field.
    let page = text(&as_key(crate::security::KEY_A, "/_mock/ui/?merchant=zz&status=DONE").await);
    assert!(tag(&page, "f-status").contains("autofocus"), "{page}");
    assert!(!tag(&page, "problems").contains("autofocus"), "{page}");
    // The admin key's page has the field, which takes the focus.
    let page = text(&as_key(crate::admin_access::ADMIN_KEY, "/_mock/ui/?merchant=zz").await);
    assert!(tag(&page, "f-merchant").contains("autofocus"), "{page}");
    assert!(!tag(&page, "problems").contains("autofocus"), "{page}");
}
