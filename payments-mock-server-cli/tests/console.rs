//! The web console (CONTRACT section 14), in-process: every page, every
//! filter, the controls, hostile text, and bad input. (The browser drives
//! it in `tests/browser/`.)

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::json;

use crate::common::{
    MERCHANT, OTHER_MERCHANT, Reply, advance, confirm, get, initiate, initiate_body, initiated,
    send, service,
};

pub(crate) fn text(reply: &Reply) -> String {
    String::from_utf8_lossy(&reply.raw).into_owned()
}

pub(crate) fn assert_page(reply: &Reply, status: u16) -> String {
    let page = text(reply);
    assert_eq!(reply.status.as_u16(), status, "{page}");
    assert_eq!(reply.headers["content-type"], "text/html; charset=utf-8");
    let csp = reply.headers["content-security-policy"]
        .to_str()
        .expect("visible");
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe"), "{csp}");
    assert!(page.contains("payments mock console"), "{page}");
    page
}

pub(crate) async fn form(router: &Router, path: &str, body: &str, origin: Option<&str>) -> Reply {
    let mut request = Request::post(path)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("host", "127.0.0.1:8080");
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    send(
        router,
        request.body(Body::from(body.to_owned())).expect("request"),
    )
    .await
}

/// How many transaction rows a list page has.
fn rows(page: &str) -> usize {
    page.matches(r#"<td data-label="Transaction">"#).count()
}

#[tokio::test]
async fn the_list_shows_transactions_newest_first_with_links() {
    let (_, router) = service();
    let first = initiated(&router, "INV-1", "TOPUP").await;
    let second = initiated(&router, "INV-2", "BILLPAY").await;
    let page = assert_page(&get(&router, "/_mock/ui/").await, 200);
    let (a, b) = (
        page.find(&second).expect("second"),
        page.find(&first).expect("first"),
    );
    assert!(a < b, "newest first");
    assert!(
        page.contains("href=\"../../_mock/ui/transactions/"),
        "{page}"
    );
    assert!(page.contains("150.00 MYR"));
    // A count of when the page was loaded (new rows come live, the count
    // does not): it says so.
    assert!(page.contains("2 stored in all when this page was loaded"));
    // /_mock/ui redirects to the list.
    let reply = get(&router, "/_mock/ui").await;
    assert_eq!(reply.status, StatusCode::PERMANENT_REDIRECT);
    assert_eq!(reply.headers["location"], "/_mock/ui/");
}

#[tokio::test]
async fn filters_narrow_the_list_and_bad_filters_get_a_clear_page() {
    let (state, router) = service();
    initiated(&router, "INV-1", "TOPUP").await;
    let id = initiated(&router, "INV-2", "TOPUP").await;
    confirm(&router, &id, "INV-2", None).await;
    let mut other = initiate_body("OTHER-9", "TOPUP");
    other["merchantId"] = json!(OTHER_MERCHANT);
    initiate(&router, &other).await;

    let page = assert_page(&get(&router, "/_mock/ui/?status=SUCCESSFUL").await, 200);
    assert_eq!(rows(&page), 1, "{page}");
    assert!(page.contains("INV-2"));
    assert!(
        page.contains(r#"<option value="SUCCESSFUL" selected>"#),
        "{page}"
    );
    let page = assert_page(
        &get(&router, &format!("/_mock/ui/?merchant={OTHER_MERCHANT}")).await,
        200,
    );
    assert_eq!(rows(&page), 1);
    assert!(page.contains("OTHER-9"));
    let page = assert_page(&get(&router, "/_mock/ui/?reference=INV").await, 200);
    assert_eq!(rows(&page), 2);
    let page = assert_page(&get(&router, "/_mock/ui/?reference=nomatch").await, 200);
    assert!(page.contains("No transaction matches these filters"));
    advance(&state, Duration::from_secs(16 * 60)).await;
    let page = assert_page(&get(&router, "/_mock/ui/?status=EXPIRED").await, 200);
    assert_eq!(rows(&page), 2, "{page}");

    for (query, says) in [
        ("status=DONE", "status must be one of"),
        ("merchant=not-a-uuid", "merchant must be a merchantId"),
        ("limit=0", "limit must be a number from 1 to 500"),
        ("limit=x", "limit must be a number"),
        ("before=%3Cscript%3E", "before must be a transactionId"),
    ] {
        let page = assert_page(&get(&router, &format!("/_mock/ui/?{query}")).await, 400);
        assert!(page.contains(says), "{query}: {page}");
        // Rows were not read: the table says the filters were refused,
        // never that nothing is stored.
        assert!(!page.contains("No transactions yet"), "{query}: {page}");
        assert!(page.contains("the filters were refused"), "{query}: {page}");
    }
    let unknown = format!("/_mock/ui/?before={}", uuid::Uuid::new_v4());
    let page = assert_page(&get(&router, &unknown).await, 404);
    assert!(page.contains("the filters were refused"), "{page}");
    let long = "r".repeat(65);
    let page = assert_page(
        &get(&router, &format!("/_mock/ui/?reference={long}")).await,
        400,
    );
    assert!(page.contains("at most 64 characters"));
    // Hostile filter values come back escaped in the form.
    let page = assert_page(
        &get(
            &router,
            "/_mock/ui/?reference=%22%3E%3Cscript%3Ealert(1)%3C/script%3E",
        )
        .await,
        200,
    );
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(page.contains("&#34;&#62;&#60;script&#62;"), "{page}");
}

#[tokio::test]
async fn paging_goes_older_and_a_page_past_the_end_says_so() {
    let (_, router) = service();
    let mut ids = Vec::new();
    for n in 0..5 {
        ids.push(initiated(&router, &format!("P-{n}"), "TOPUP").await);
    }
    let page = assert_page(&get(&router, "/_mock/ui/?limit=2").await, 200);
    assert_eq!(rows(&page), 2);
    assert!(page.contains(&ids[4]) && page.contains(&ids[3]));
    let older = format!("?limit=2&#38;before={}", ids[3]);
    assert!(page.contains(&older), "{page}");
    let page = assert_page(
        &get(&router, &format!("/_mock/ui/?limit=2&before={}", ids[1])).await,
        200,
    );
    assert_eq!(rows(&page), 1);
    assert!(page.contains(&ids[0]));
    assert!(!page.contains("rel=\"next\""));
    let page = assert_page(
        &get(&router, &format!("/_mock/ui/?before={}", ids[0])).await,
        200,
    );
    assert!(page.contains("No older transactions"), "{page}");
    // An id that is not stored (a reset since?) is a clear 400.
    let page = assert_page(
        &get(
            &router,
            "/_mock/ui/?before=01930000-0000-7000-8000-000000000000",
        )
        .await,
        404,
    );
    assert!(page.contains("names no stored transaction"), "{page}");
    // Older pages do not refresh themselves; the first does.
    assert!(!page.contains("data-live-url"));
    let first = assert_page(&get(&router, "/_mock/ui/").await, 200);
    assert!(
        first.contains("data-live-url=\"../../_mock/ui/transactions/rows?\""),
        "{first}"
    );
}

#[tokio::test]
async fn the_live_rows_are_the_first_page_alone() {
    let (_, router) = service();
    let reply = get(&router, "/_mock/ui/transactions/rows").await;
    let empty = text(&reply);
    assert_eq!(reply.status, 200);
    assert!(empty.contains("No transactions yet"));
    assert!(!empty.contains("<html"));
    let id = initiated(&router, "LIVE-1", "TOPUP").await;
    let rows = text(&get(&router, "/_mock/ui/transactions/rows?status=INITIATED").await);
    assert!(rows.contains(&id) && rows.starts_with("<tr>"), "{rows}");
    // The rows go into the list at /_mock/ui/: their links are relative to
    // it, not to the fragment's own path (which would break behind a
    // --public-url path prefix).
    assert!(
        rows.contains(&format!("href=\"../../_mock/ui/transactions/{id}\"")),
        "{rows}"
    );
    let reply = get(&router, "/_mock/ui/transactions/rows?status=NOPE").await;
    assert_page(&reply, 400);
    let reply = get(&router, &format!("/_mock/ui/transactions/rows?before={id}")).await;
    assert_page(&reply, 400);
    assert!(text(&reply).contains("before is not taken here"));
}

#[tokio::test]
async fn the_detail_page_has_every_field_the_timeline_and_the_journal() {
    let (state, router) = service();
    let mut body = initiate_body("BILL-1", "BILLPAY");
    body["description"] = json!("Electricity, November");
    body["countryCode"] = json!("MY");
    let reply = initiate(&router, &body).await;
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    confirm(&router, &id, "BILL-1", None).await;
    get(&router, "/api/payments/reference/BILL-1/status").await;
    initiate(&router, &body).await; // a duplicate: about this transaction too
    initiated(&router, "UNRELATED", "TOPUP").await;
    advance(&state, Duration::from_secs(3)).await;

    let page = assert_page(
        &get(&router, &format!("/_mock/ui/transactions/{id}")).await,
        200,
    );
    for field in [
        "transactionId",
        "merchantId",
        MERCHANT,
        "Electricity, November",
        "150.00 MYR (15000 minor units)",
        "BILLPAY",
        "bill payment",
        "MY",
        "providerReference",
        "PRV-",
        "confirmedAt",
        "lastModifiedAt",
    ] {
        assert!(page.contains(field), "{field} missing: {page}");
    }
    let timeline = &page[page.find("Timeline").expect("timeline")..];
    let created = timeline.find("created").expect("created");
    let confirmed = timeline.find("confirmed").expect("confirmed");
    let settled = timeline.find("settled").expect("settled");
    assert!(created < confirmed && confirmed < settled);
    let journal = &page[page.find("Requests in the journal").expect("journal")..];
    assert_eq!(
        journal.matches("POST <bdi>/api/payments/initiate").count(),
        2,
        "{journal}"
    );
    assert_eq!(
        journal.matches("POST <bdi>/api/payments/confirm").count(),
        1
    );
    assert_eq!(
        journal
            .matches("/api/payments/reference/BILL-1/status")
            .count(),
        1
    );
    assert!(!journal.contains("UNRELATED"));
    assert!(!page.contains("open the payment page"));

    for bad in [
        "nope",
        "01930000-0000-7000-8000-000000000000",
        "%3Cscript%3E",
    ] {
        let page = assert_page(
            &get(&router, &format!("/_mock/ui/transactions/{bad}")).await,
            404,
        );
        assert!(page.contains("No such transaction"));
    }
}

#[tokio::test]
async fn the_detail_page_links_the_payment_page_until_the_payer_decides() {
    let (_, router) = service();
    let mut body = initiate_body("OB-1", "ONLINEBANKING");
    body["returnUrl"] = json!("https://shop.example/back");
    let reply = initiate(&router, &body).await;
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    confirm(&router, &id, "OB-1", None).await;
    let path = format!("/_mock/ui/transactions/{id}");
    let page = assert_page(&get(&router, &path).await, 200);
    assert!(page.contains("open the payment page"), "{page}");
    assert!(page.contains("href=\"http://localhost/pay/"), "{page}");
    let reply = crate::common::post(
        &router,
        &format!("/_mock/transactions/{id}/payer"),
        &json!({"action": "decline"}),
    )
    .await;
    assert_eq!(reply.status, 200);
    let page = assert_page(&get(&router, &path).await, 200);
    assert!(!page.contains("open the payment page"));
    assert!(page.contains("decided by the payer: decline"), "{page}");
    assert!(page.contains("declined by bank"));
}

#[tokio::test]
async fn hostile_text_shows_as_text_and_never_runs() {
    let (_, router) = service();
    let hostile = "<script>alert('x')</script>\"'&\u{202e}gnp.exe\u{1b}[2J";
    let mut body = initiate_body("<img src=x onerror=alert(1)>", "TOPUP");
    body["description"] = json!(hostile);
    body["deviceId"] = json!("\"><svg onload=alert(2)>");
    let reply = initiate(&router, &body).await;
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    // Hostile headers and a hostile body in the journal, too.
    let request = Request::get(format!("/api/payments/{id}/status?q=%3Cscript%3E"))
        .header("x-evil", "<script>alert(3)</script>")
        .header("authorization", "Bearer sk_should_not_show")
        .body(Body::empty())
        .expect("request");
    send(&router, request).await;
    let raw = Request::post("/api/payments/confirm")
        .header("content-type", "application/json")
        .body(Body::from(format!(
            r#"{{"transactionId":"{id}","referenceNo":"<b>bold</b>","note":"</pre><script>alert(4)</script>"}}"#
        )))
        .expect("request");
    send(&router, raw).await;

    let mut pages = vec![
        assert_page(&get(&router, "/_mock/ui/").await, 200),
        assert_page(
            &get(&router, &format!("/_mock/ui/transactions/{id}")).await,
            200,
        ),
        assert_page(&get(&router, "/_mock/ui/requests").await, 200),
    ];
    let feed = get(&router, "/_mock/ui/requests/feed?after=0").await;
    pages.push(text(&feed));
    for seq in 1..=3 {
        pages.push(assert_page(
            &get(&router, &format!("/_mock/ui/requests/{seq}")).await,
            200,
        ));
    }
    // The filter as typed, shown back in its field: escaped, its bidi
    // override a visible symbol.
    let filtered = assert_page(
        &get(
            &router,
            "/_mock/ui/?reference=%E2%80%AEgnp%3Cscript%3Ealert",
        )
        .await,
        200,
    );
    assert!(
        filtered.contains("value=\"&#60;U+202E&#62;gnp&#60;script&#62;alert\""),
        "{filtered}"
    );
    pages.push(filtered);
    for page in &pages {
        for bad in [
            "<script>alert",
            "<img src=x",
            "<svg onload",
            "\u{202e}",
            "\u{1b}",
            "<b>bold",
        ] {
            assert!(!page.contains(bad), "{bad:?} in {page}");
        }
        assert!(!page.contains("sk_should_not_show"), "{page}");
    }
    let detail = &pages[1];
    assert!(
        detail.contains("&#60;img src=x onerror=alert(1)&#62;"),
        "{detail}"
    );
    assert!(
        detail.contains("&#60;U+202E&#62;gnp.exe\u{241b}[2J"),
        "{detail}"
    );
    let status_read = &pages[5];
    assert!(status_read.contains("[redacted]"), "{status_read}");
    assert!(
        status_read.contains("&#60;script&#62;alert(3)"),
        "{status_read}"
    );
}

#[tokio::test]
async fn the_request_journal_lists_feeds_and_opens_requests() {
    let (_, router) = service();
    let page = assert_page(&get(&router, "/_mock/ui/requests").await, 200);
    assert!(page.contains("No /api/ request yet"));
    assert!(page.contains(r#"data-after="0""#), "{page}");
    let request = Request::get("/api/payments/x/status")
        .header("x-mock-fault", "internal-error")
        .header("x-request-id", "rid-42")
        .body(Body::empty())
        .expect("request");
    send(&router, request).await;
    initiated(&router, "J-1", "TOPUP").await;

    let page = assert_page(&get(&router, "/_mock/ui/requests").await, 200);
    assert!(page.contains(r#"data-after="2""#), "{page}");
    let (initiate, read) = (
        page.find("POST <bdi>/api/payments/initiate")
            .expect("the initiate"),
        page.find("GET <bdi>/api/payments/x/status")
            .expect("the read"),
    );
    assert!(initiate < read, "newest first");
    assert!(page.contains("internal-error") && page.contains("INTERNAL_ERROR"));

    let feed = get(&router, "/_mock/ui/requests/feed?after=1").await;
    assert_eq!(feed.headers["x-journal-seq"], "2");
    let rows = text(&feed);
    assert!(rows.contains("/api/payments/initiate") && !rows.contains("x/status"));
    // Relative to the requests page the rows go into.
    assert!(
        rows.contains("href=\"../../_mock/ui/requests/2\""),
        "{rows}"
    );
    let feed = get(&router, "/_mock/ui/requests/feed?after=2").await;
    assert_eq!(text(&feed).trim(), "");
    // An empty position is no position, as in every console form (the
    // document's pattern says so; schemathesis found the two disagreeing).
    let feed = get(&router, "/_mock/ui/requests/feed?after=").await;
    assert_eq!(feed.headers["x-journal-seq"], "2");
    assert!(text(&feed).contains("/api/payments/initiate"));
    for bad in ["-1", "x", "1e3", "%3Cb%3E", "01", "18446744073709551616"] {
        assert_page(
            &get(&router, &format!("/_mock/ui/requests/feed?after={bad}")).await,
            400,
        );
    }
    let page = assert_page(&get(&router, "/_mock/ui/requests/1").await, 200);
    assert!(
        page.contains("rid-42") && page.contains("x-mock-fault"),
        "{page}"
    );
    for bad in ["0", "3", "99999999999999999999", "abc"] {
        assert_page(
            &get(&router, &format!("/_mock/ui/requests/{bad}")).await,
            404,
        );
    }
}

/// A body the journal cut (an older one over 1 KiB once its newest bodies
/// pass 512 KiB) says so on its request page, with its whole length; the
/// newest, whole, says nothing of the kind.
#[tokio::test]
async fn a_cut_body_says_so_with_its_whole_length() {
    let (_, router) = service();
    let body = format!("<b>{}", "x".repeat(65_536 - 3));
    for _ in 0..10 {
        let request = crate::common::request(Method::POST, "/api/payments/initiate", Some(&body));
        send(&router, request).await;
    }
    let page = assert_page(&get(&router, "/_mock/ui/requests/1").await, 200);
    assert!(
        page.contains("only the first 1 KiB of 65,536 bytes is kept"),
        "{page}"
    );
    assert!(
        page.contains("&#60;b&#62;xxx") && !page.contains("<b>x"),
        "escaped"
    );
    let newest = assert_page(&get(&router, "/_mock/ui/requests/10").await, 200);
    assert!(!newest.contains("body-cut"), "{newest}");
    assert!(newest.contains(&"x".repeat(65_536 - 3)), "whole");
}

#[tokio::test]
async fn the_request_page_keeps_the_newest_under_load() {
    let (_, router) = service();
    for n in 0..120 {
        get(&router, &format!("/api/payments/r{n}/status")).await;
    }
    let page = assert_page(&get(&router, "/_mock/ui/requests").await, 200);
    assert_eq!(
        page.matches("<tr>").count(),
        50 + 1,
        "50 rows and the header"
    );
    assert!(page.contains("r119/status") && !page.contains("r69/status"));
    assert!(page.contains(r#"data-max="200""#));
    // The feed pages from the oldest after the position asked: a page
    // that polls catches up (console_feed.rs), none skipped.
    let feed = text(&get(&router, "/_mock/ui/requests/feed?after=0").await);
    assert_eq!(feed.matches("<tr>").count(), 50);
    assert!(feed.contains("r0/status") && feed.contains("r49/status"));
    assert!(!feed.contains("r50/status"));
}

#[tokio::test]
async fn unknown_pages_and_wrong_methods_are_pages_never_json() {
    let (_, router) = service();
    for path in [
        "/_mock/ui/nope",
        "/_mock/ui/transactions",
        "/_mock/ui/static/x.css",
    ] {
        let page = assert_page(&get(&router, path).await, 404);
        assert!(page.contains("No such page"), "{path}: {page}");
    }
    for (method, path) in [
        (Method::POST, "/_mock/ui/"),
        (Method::DELETE, "/_mock/ui/clock"),
        (Method::PUT, "/_mock/ui/reset"),
        (Method::POST, "/_mock/ui/requests"),
    ] {
        let reply = send(&router, crate::common::request(method, path, None)).await;
        assert_page(&reply, 405);
        assert!(reply.headers.contains_key("allow"), "{path}");
    }
    let css = get(&router, "/_mock/ui/static/console.css").await;
    assert_eq!(css.headers["content-type"], "text/css; charset=utf-8");
    let js = get(&router, "/_mock/ui/static/console.js").await;
    assert_eq!(js.headers["content-type"], "text/javascript; charset=utf-8");
    assert!(text(&js).contains("data-live-url") || text(&js).contains("liveUrl"));
}

#[tokio::test]
async fn the_console_and_the_json_admin_endpoints_agree() {
    let (state, router) = service();
    for n in 0..6 {
        let id = initiated(
            &router,
            &format!("A-{n}"),
            ["TOPUP", "BILLPAY", "DECLINED"][n % 3],
        )
        .await;
        if n % 2 == 0 {
            confirm(&router, &id, &format!("A-{n}"), None).await;
        }
    }
    advance(&state, Duration::from_secs(1)).await;
    let json = get(&router, "/_mock/transactions").await;
    let page = assert_page(&get(&router, "/_mock/ui/").await, 200);
    for item in json.data()["items"].as_array().expect("items") {
        let id = item["transactionId"].as_str().expect("id");
        let status = item["status"].as_str().expect("status");
        let at = page.find(id).expect("listed");
        let row_end = page[at..].find("</tr>").expect("a row") + at;
        assert!(page[at..row_end].contains(status), "{id} {status}");
    }
}
