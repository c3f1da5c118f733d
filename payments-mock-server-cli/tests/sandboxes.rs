//! Sandboxes (CONTRACT section 19) over a real socket: isolation of
//! references, clocks, journals, rules and resets; racing confirms per
//! sandbox; time to live in real time against the virtual clock; access
//! by role; bad and removed ids; the library's `server.sandbox()`.

use std::time::Duration;

use payments_mock_server::{Endpoint, Fault, FaultRule, MockServer};
use serde_json::{Value, json};

use crate::common::{MERCHANT, initiate_body};

/// A sandbox's time to live: real time, renewed by use and by a long request.
mod lifetime;
/// A sandbox's id cannot be probed, nor the sandbox kept alive, by anyone
/// but the admin and its merchant.
mod probing;
mod removal;

const OTHER_MERCHANT: &str = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

async fn call(
    method: reqwest::Method,
    url: &str,
    body: Option<Value>,
    key: Option<&str>,
) -> (u16, Value) {
    let mut req = reqwest::Client::new().request(method, url);
    if let Some(body) = body {
        req = req.json(&body);
    }
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    let response = req.send().await.expect("an answer");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("a body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes))),
    )
}

async fn get(url: &str, key: Option<&str>) -> (u16, Value) {
    call(reqwest::Method::GET, url, None, key).await
}

async fn post(url: &str, body: Value, key: Option<&str>) -> (u16, Value) {
    call(reqwest::Method::POST, url, Some(body), key).await
}

/// A new sandbox over HTTP: its id and base URL.
async fn make(server: &MockServer, key: Option<&str>) -> (String, String) {
    let (status, envelope) = post(
        &format!("{}/_mock/sandboxes", server.base_url()),
        json!({"label": "a test"}),
        key,
    )
    .await;
    assert_eq!(status, 201, "{envelope}");
    let data = &envelope["data"];
    (
        data["id"].as_str().expect("an id").to_owned(),
        data["baseUrl"].as_str().expect("a base URL").to_owned(),
    )
}

async fn initiate_in(base: &str, reference: &str) -> (u16, Value) {
    post(
        &format!("{base}/api/payments/initiate"),
        initiate_body(reference, "TOPUP"),
        None,
    )
    .await
}

async fn confirm_in(base: &str, id: &str, reference: &str, key: Option<&str>) -> (u16, Value) {
    post(
        &format!("{base}/api/payments/confirm"),
        json!({"transactionId": id, "referenceNo": reference}),
        key,
    )
    .await
}

/// A redirect product's transaction initiated and confirmed under `base`
/// with `key`: its id and its payment page's URL, which is under `base`.
async fn payment_page(base: &str, reference: &str, key: Option<&str>) -> (String, String) {
    let mut body = initiate_body(reference, "ONLINEBANKING");
    body["returnUrl"] = json!("https://shop.example/back");
    let (status, envelope) = post(&format!("{base}/api/payments/initiate"), body, key).await;
    assert_eq!(status, 200, "{envelope}");
    let id = envelope["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let (status, envelope) = confirm_in(base, &id, reference, key).await;
    assert_eq!(status, 200, "{envelope}");
    let extra: Value = serde_json::from_str(
        envelope["data"]["extraProperties"]
            .as_str()
            .expect("extraProperties is a JSON string"),
    )
    .expect("JSON");
    let page = extra["paymentUrl"]
        .as_str()
        .expect("a payment URL")
        .to_owned();
    assert!(page.starts_with(&format!("{base}/pay/")), "{page}");
    (id, page)
}

#[tokio::test]
async fn references_clocks_journals_rules_and_resets_are_each_sandboxs_own() {
    let server = MockServer::start().await;
    let root = server.base_url();
    let (_, a) = make(&server, None).await;
    let (_, b) = make(&server, None).await;
    assert_eq!(
        a.strip_prefix(&format!("{root}/sandboxes/")).map(str::len),
        Some(36)
    );

    // One reference in each sandbox and at the root: three transactions.
    for base in [&a, &b, &root] {
        let (status, envelope) = initiate_in(base, "ORDER-1").await;
        assert_eq!(status, 200, "{base}: {envelope}");
    }
    for base in [&a, &b, &root] {
        let (_, listed) = get(&format!("{base}/_mock/transactions"), None).await;
        assert_eq!(
            listed["data"]["items"].as_array().map(Vec::len),
            Some(1),
            "{base}"
        );
    }
    // A second initiate in A is A's duplicate only.
    let (status, envelope) = initiate_in(&a, "ORDER-1").await;
    assert_eq!(
        (status, envelope["errorCode"].as_str()),
        (400, Some("DUPLICATE_REFERENCE_NO"))
    );
    let (_, status_b) = get(&format!("{b}/api/payments/reference/ORDER-1/status"), None).await;
    assert_eq!(status_b["data"]["status"], "INITIATED");

    // A's clock moves; B's and the root's do not: A's payment expires.
    let (status, _) = post(
        &format!("{a}/_mock/clock/advance"),
        json!({"seconds": 901}),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let offset = |v: &Value| v["data"]["offsetSeconds"].as_f64().unwrap_or(-1.0);
    let (_, clock_a) = get(&format!("{a}/_mock/clock"), None).await;
    let (_, clock_b) = get(&format!("{b}/_mock/clock"), None).await;
    let (_, clock_root) = get(&format!("{root}/_mock/clock"), None).await;
    assert!(offset(&clock_a) >= 901.0, "{clock_a}");
    assert_eq!(offset(&clock_b), 0.0, "{clock_b}");
    assert_eq!(offset(&clock_root), 0.0, "{clock_root}");
    for (base, expected) in [(&a, "EXPIRED"), (&b, "INITIATED")] {
        let (_, read) = get(
            &format!("{base}/api/payments/reference/ORDER-1/status"),
            None,
        )
        .await;
        assert_eq!(read["data"]["status"], expected, "{base}: {read}");
    }

    // Journals: each sandbox's lists its own requests only.
    let (_, journal_b) = get(&format!("{b}/_mock/requests"), None).await;
    let paths: Vec<&str> = journal_b["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert_eq!(
        paths,
        [
            "/api/payments/initiate",
            "/api/payments/reference/ORDER-1/status",
            "/api/payments/reference/ORDER-1/status"
        ],
        "{journal_b}"
    );

    // A rule in B faults B only.
    let (status, _) = post(
        &format!("{b}/_mock/faults"),
        json!({"match": {"endpoint": "initiate"}, "fault": "internal-error", "times": 0}),
        None,
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(initiate_in(&b, "ORDER-2").await.0, 500);
    assert_eq!(initiate_in(&a, "ORDER-2").await.0, 200);
    assert_eq!(initiate_in(&root, "ORDER-2").await.0, 200);

    // A reset of A empties A alone.
    let (status, _) = post(&format!("{a}/_mock/reset"), json!({}), None).await;
    assert_eq!(status, 200);
    let count = |v: &Value| v["data"]["items"].as_array().map(Vec::len);
    assert_eq!(
        count(&get(&format!("{a}/_mock/transactions"), None).await.1),
        Some(0)
    );
    assert_eq!(
        count(&get(&format!("{b}/_mock/transactions"), None).await.1),
        Some(1)
    );
    assert_eq!(
        count(&get(&format!("{root}/_mock/transactions"), None).await.1),
        Some(2)
    );
    // The root's journal never saw the sandboxes' requests.
    assert!(
        server
            .requests()
            .await
            .iter()
            .all(|e| !e.path.starts_with("/sandboxes/")),
        "the root's journal"
    );
}

#[tokio::test]
async fn two_sandboxes_racing_confirms_on_one_reference_each_get_exactly_one_winner() {
    let server = MockServer::start().await;
    let mut sandboxes = Vec::new();
    for _ in 0..2 {
        let (_, base) = make(&server, None).await;
        let (_, envelope) = initiate_in(&base, "RACE-1").await;
        let id = envelope["data"]["transactionId"]
            .as_str()
            .expect("an id")
            .to_owned();
        sandboxes.push((base, id));
    }
    let mut racers = Vec::new();
    for (base, id) in &sandboxes {
        for _ in 0..16 {
            let url = format!("{base}/api/payments/confirm");
            let body = json!({"transactionId": id, "referenceNo": "RACE-1"});
            racers.push(tokio::spawn(async move {
                {
                    let answer = post(&url, body, None).await;
                    (url, answer)
                }
            }));
        }
    }
    let mut wins = std::collections::HashMap::new();
    for racer in racers {
        let (url, (status, envelope)) = racer.await.expect("a racer");
        match status {
            200 => *wins.entry(url).or_insert(0) += 1,
            400 => assert_eq!(envelope["errorCode"], "TRANSACTION_ALREADY_CONFIRMED"),
            other => panic!("{other}: {envelope}"),
        }
    }
    assert_eq!(wins.len(), 2, "{wins:?}");
    assert!(wins.values().all(|&n| n == 1), "{wins:?}");
}

#[tokio::test]
async fn unknown_malformed_and_removed_ids_are_sandbox_not_found_on_every_route() {
    let server = MockServer::start().await;
    let root = server.base_url();
    let (id, base) = make(&server, None).await;
    let (status, _) = call(
        reqwest::Method::DELETE,
        &format!("{root}/_mock/sandboxes/{id}"),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let unknown = format!("{root}/sandboxes/{}", uuid::Uuid::new_v4());
    let hostile = format!("{root}/sandboxes/%3Cscript%3E");
    let huge = format!("{root}/sandboxes/{}", "9".repeat(4000));
    // One spelling per sandbox: its id in capitals is another path.
    let upper = format!("{root}/sandboxes/{}", id.to_uppercase());
    for prefix in [
        base.as_str(),
        &unknown,
        &hostile,
        &huge,
        &format!("{root}/sandboxes"),
        &upper,
    ] {
        for (method, path) in [
            (reqwest::Method::GET, "/_mock/clock"),
            (reqwest::Method::POST, "/api/payments/initiate"),
            (reqwest::Method::DELETE, "/_mock/faults"),
            (reqwest::Method::GET, ""),
        ] {
            let body = (method == reqwest::Method::POST).then(|| initiate_body("R", "TOPUP"));
            let (status, envelope) =
                call(method.clone(), &format!("{prefix}{path}"), body, None).await;
            assert_eq!(status, 404, "{method} {prefix}{path}");
            assert_eq!(
                envelope["errorCode"], "SANDBOX_NOT_FOUND",
                "{method} {prefix}{path}"
            );
            // The refusal never echoes what the path held.
            assert!(!envelope.to_string().contains("script"), "{envelope}");
        }
    }
    // Removing it again, or removing nonsense: not found.
    for id in [id.as_str(), "x", ""] {
        let (status, envelope) = call(
            reqwest::Method::DELETE,
            &format!("{root}/_mock/sandboxes/{id}"),
            None,
            None,
        )
        .await;
        assert_eq!(status, 404, "{id:?}: {envelope}");
    }
    // `/sandboxes/` with nothing after it finds no sandbox either.
    let (status, envelope) = get(&format!("{root}/sandboxes/"), None).await;
    assert_eq!(
        (status, envelope["errorCode"].as_str()),
        (404, Some("SANDBOX_NOT_FOUND"))
    );
    // Sandboxes do not nest.
    let (_, inner) = make(&server, None).await;
    let (status, _) = post(&format!("{inner}/_mock/sandboxes"), json!({}), None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn each_role_makes_sees_and_controls_only_what_it_may() {
    let bound = "sk_bound_7f1e";
    let other = "sk_other_2c9a";
    let admin = "adm_sandbox_0d4b";
    let server = MockServer::builder()
        .admin_key(admin)
        .api_key(bound, Some(MERCHANT.parse().expect("a UUID")))
        .api_key(other, Some(OTHER_MERCHANT.parse().expect("a UUID")))
        .start()
        .await
        .expect("a server");
    let root = server.base_url();
    let sandboxes = format!("{root}/_mock/sandboxes");
    // Anonymous: nothing.
    assert_eq!(post(&sandboxes, json!({}), None).await.0, 401);
    assert_eq!(get(&sandboxes, None).await.0, 401);
    // A merchant's key makes its own; the admin's belongs to nobody.
    let (mine, mine_base) = make(&server, Some(bound)).await;
    let (_, admins_base) = make(&server, Some(admin)).await;
    let (_, listed) = get(&sandboxes, Some(bound)).await;
    let ids: Vec<&str> = listed["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(ids, [mine.as_str()], "a merchant lists its own only");
    assert_eq!(listed["data"]["items"][0]["owner"], MERCHANT);
    assert_eq!(
        get(&sandboxes, Some(admin)).await.1["data"]["items"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    assert_eq!(
        get(&sandboxes, Some(other)).await.1["data"]["items"],
        json!([])
    );

    // Its merchant controls it (a change the root refuses a merchant)...
    let advance = json!({"seconds": 60});
    assert_eq!(
        post(
            &format!("{mine_base}/_mock/clock/advance"),
            advance.clone(),
            Some(bound)
        )
        .await
        .0,
        200
    );
    assert_eq!(
        post(
            &format!("{root}/_mock/clock/advance"),
            advance.clone(),
            Some(bound)
        )
        .await
        .0,
        403
    );
    let rule = json!({"fault": "internal-error", "match": {"referenceNo": "NEVER"}});
    assert_eq!(
        post(
            &format!("{mine_base}/_mock/faults"),
            rule.clone(),
            Some(bound)
        )
        .await
        .0,
        201
    );
    assert_eq!(
        get(&format!("{mine_base}/_mock/coverage"), Some(bound))
            .await
            .0,
        200
    );
    // ...and uses its API; another merchant finds no sandbox there.
    let initiate_url = format!("{mine_base}/api/payments/initiate");
    let initiate = |key| post(&initiate_url, initiate_body("OWN-1", "TOPUP"), key);
    assert_eq!(initiate(Some(bound)).await.0, 200);
    for (url, key) in [
        (format!("{mine_base}/_mock/clock"), Some(other)),
        (
            format!("{mine_base}/api/payments/reference/OWN-1/status"),
            Some(other),
        ),
        (format!("{mine_base}/_mock/transactions"), Some(other)),
    ] {
        let (status, envelope) = get(&url, key).await;
        assert_eq!(
            (status, envelope["errorCode"].as_str()),
            (404, Some("SANDBOX_NOT_FOUND")),
            "{url}"
        );
    }
    // Its console too, exactly as an unknown sandbox's: the same 404 page,
    // not a page drawn with its label, clock and store.
    let unknown_base = format!("{root}/sandboxes/{}", uuid::Uuid::new_v4());
    for tail in ["/_mock/ui/", "/_mock/ui/requests"] {
        let (status, page) = get(&format!("{mine_base}{tail}"), Some(other)).await;
        let unknown = get(&format!("{unknown_base}{tail}"), Some(other)).await;
        assert_eq!((status, &page), (unknown.0, &unknown.1), "{tail}");
        assert_eq!(status, 404, "{tail}");
        let shown = page.as_str().unwrap_or_default();
        assert!(shown.contains("<h1>No such page</h1>"), "{tail}: {shown}");
    }
    // Its merchant sees its console, but not the store (a file path, a
    // database's host and user) or the replica's name: the admin's.
    for (base, key, shown) in [
        (&mine_base, Some(bound), false),
        (&mine_base, Some(admin), true),
        (&root, Some(bound), false),
        (&root, Some(admin), true),
    ] {
        let (status, page) = get(&format!("{base}/_mock/ui/"), key).await;
        let page = page.as_str().expect("a page");
        assert_eq!(status, 200, "{base} {key:?}");
        assert_eq!(page.contains("replica"), shown, "{base} {key:?}: {page}");
    }
    // Its health too: else its id (and its clock) could be probed; and
    // the whole server's metrics are the admin's under any sandbox.
    let health = format!("{mine_base}/_mock/health");
    for (key, expected) in [
        (None, 404),
        (Some(other), 404),
        (Some(bound), 200),
        (Some(admin), 200),
    ] {
        assert_eq!(get(&health, key).await.0, expected, "{key:?}");
    }
    assert_eq!(
        get(&format!("{admins_base}/_mock/health"), Some(bound))
            .await
            .0,
        404
    );
    assert_eq!(
        get(&format!("{admins_base}/_mock/health"), None).await.0,
        404
    );
    for (key, expected) in [(Some(bound), 403), (Some(other), 404), (Some(admin), 200)] {
        assert_eq!(
            get(&format!("{mine_base}/metrics"), key).await.0,
            expected,
            "{key:?}"
        );
    }
    // Anonymous under it: no sandbox there either (`probing`).
    assert_eq!(get(&format!("{mine_base}/_mock/clock"), None).await.0, 404);
    assert_eq!(initiate(None).await.0, 404);
    // The admin does everything, in anyone's sandbox.
    assert_eq!(
        post(&format!("{mine_base}/_mock/reset"), json!({}), Some(admin))
            .await
            .0,
        200
    );
    // A merchant's key is a reader in the admin's sandbox? No: not its own.
    assert_eq!(
        get(&format!("{admins_base}/_mock/clock"), Some(bound))
            .await
            .0,
        404
    );
    // Removing: another merchant cannot, its own merchant can.
    let mine_url = format!("{sandboxes}/{mine}");
    let gone = |key| call(reqwest::Method::DELETE, &mine_url, None, key);
    assert_eq!(gone(Some(other)).await.0, 404);
    assert_eq!(gone(Some(bound)).await.0, 200);
}

#[tokio::test]
async fn the_library_hands_each_test_its_own_sandbox_on_a_shared_server() {
    let server = MockServer::start().await;
    let first = server.sandbox();
    let second = server.sandbox();
    assert_ne!(first.id(), second.id());
    assert_eq!(
        first.base_url(),
        format!("{}/sandboxes/{}", server.base_url(), first.id())
    );
    let (status, _) = initiate_in(&first.base_url(), "LIB-1").await;
    assert_eq!(status, 200);
    assert_eq!(first.transactions().await.len(), 1);
    assert!(second.transactions().await.is_empty());
    assert!(server.transactions().await.is_empty());
    // Faults and rules: the sandbox's own.
    first.inject_faults([Fault::InternalError]);
    first
        .add_fault_rule(
            FaultRule::new(Fault::RateLimit)
                .on(Endpoint::Initiate)
                .times(0),
        )
        .expect("a rule");
    assert_eq!(initiate_in(&second.base_url(), "LIB-2").await.0, 200);
    assert_eq!(
        initiate_in(&first.base_url(), "LIB-3").await.0,
        500,
        "the queued fault"
    );
    assert_eq!(
        initiate_in(&first.base_url(), "LIB-4").await.0,
        429,
        "the rule"
    );
    assert_eq!(first.requests().await.len(), 3);
    assert_eq!(second.requests().await.len(), 1);
    // The clock.
    first.advance_clock(Duration::from_secs(3600)).await;
    assert!(first.now().await - second.now().await > chrono::Duration::minutes(59));
    // A dropped sandbox is removed.
    let base = first.base_url();
    drop(first);
    let (status, envelope) = get(&format!("{base}/_mock/clock"), None).await;
    assert_eq!(
        (status, envelope["errorCode"].as_str()),
        (404, Some("SANDBOX_NOT_FOUND"))
    );
    second.reset().await;
    assert!(second.requests().await.is_empty());
}

#[tokio::test]
async fn a_redirect_products_payment_url_carries_the_sandbox_prefix() {
    let server = MockServer::start().await;
    let sandbox = server.sandbox();
    let base = sandbox.base_url();
    let (_, envelope) = initiate_in(&base, "PAGE-1").await;
    let id = envelope["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let (status, envelope) = confirm_in(&base, &id, "PAGE-1", None).await;
    assert_eq!(status, 200, "{envelope}");
    // TOPUP is direct; a redirect product's page is under the prefix.
    let (id, url) = payment_page(&base, "PAGE-2", None).await;
    let page = reqwest::get(&url).await.expect("the page");
    assert_eq!(page.status(), 200);
    assert_eq!(
        sandbox.payment_url(&id).await.as_deref(),
        Some(url.as_str())
    );
    // The root knows nothing of it.
    let token = url.rsplit('/').next().expect("a token");
    let root_page = reqwest::get(format!("{}/pay/{token}", server.base_url()))
        .await
        .expect("an answer");
    assert_eq!(root_page.status(), 404);
}
