//! A merchant's key on the admin side: its own transactions and requests,
//! scoped like `/api/`, and no change.

use super::*;

/// `MERCHANT`'s and `OTHER_MERCHANT`'s transactions, and requests of every
/// kind about them, on a guarded server.
async fn two_merchants(target: &Target) -> (String, String) {
    let json = ("content-type", "application/json");
    let a = format!("Bearer {KEY_A}");
    let b = format!("Bearer {KEY_B}");
    let initiate = |merchant: &str, reference: &str| {
        json!({
            "merchantId": merchant, "referenceNo": reference, "amount": 100,
            "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
        })
        .to_string()
    };
    let mine = target
        .call(
            "POST",
            "/api/payments/initiate",
            &[json, ("authorization", &a)],
            Some(&initiate(MERCHANT, "A-1")),
        )
        .await
        .json()["data"]["transactionId"]
        .as_str()
        .expect("A's id")
        .to_owned();
    let theirs = target
        .call(
            "POST",
            "/api/payments/initiate",
            &[json, ("authorization", &b)],
            Some(&initiate(OTHER_MERCHANT, "B-SECRET-REF")),
        )
        .await
        .json()["data"]["transactionId"]
        .as_str()
        .expect("B's id")
        .to_owned();
    // B probes A's transaction and names A in an initiate: both refused,
    // and none of it is A's to see.
    let probe = target
        .call(
            "GET",
            &format!("/api/payments/{mine}/status"),
            &[("authorization", &b), ("x-probe", "B-PROBE")],
            None,
        )
        .await;
    assert_eq!(probe.status, 404);
    let posing = target
        .call(
            "POST",
            "/api/payments/initiate",
            &[json, ("authorization", &b), ("x-probe", "B-POSING")],
            Some(&initiate(MERCHANT, "B-AS-A")),
        )
        .await;
    assert_eq!(posing.status, 403);
    // A reads its own, by id and by reference.
    for path in [
        format!("/api/payments/{mine}/status"),
        "/api/payments/reference/A-1/status".to_owned(),
    ] {
        let answer = target
            .call("GET", &path, &[("authorization", &a)], None)
            .await;
        assert_eq!(answer.status, 200, "{path}");
    }
    let answer = target
        .call(
            "GET",
            &format!("/api/payments/{theirs}/status"),
            &[("authorization", &b)],
            None,
        )
        .await;
    assert_eq!(answer.status, 200);
    (mine, theirs)
}

#[tokio::test]
async fn a_merchants_key_sees_its_own_transactions_and_requests_only() {
    let (_state, router) = guarded();
    let target = Target::Router(router);
    let (mine, theirs) = two_merchants(&target).await;
    let a = format!("Bearer {KEY_A}");
    let admin = format!("Bearer {ADMIN_KEY}");
    let get = |path: String, auth: &str| {
        let target = target.clone();
        let auth = auth.to_owned();
        async move {
            target
                .call("GET", &path, &[("authorization", &auth)], None)
                .await
        }
    };

    let listed = get("/_mock/transactions".into(), &a).await.json();
    let ids: Vec<&str> = listed["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|t| t["transactionId"].as_str())
        .collect();
    assert_eq!(ids, vec![mine.as_str()], "{listed}");
    let all = get("/_mock/transactions".into(), &admin).await.json();
    assert_eq!(all["data"]["items"].as_array().map(Vec::len), Some(2));
    // Another merchant's filter is empty, its id no place to page from.
    let other = get(
        format!("/_mock/transactions?merchantId={OTHER_MERCHANT}"),
        &a,
    )
    .await
    .json();
    assert_eq!(other["data"]["items"], json!([]), "{other}");
    let after = get(format!("/_mock/transactions?after={theirs}"), &a).await;
    assert_eq!(after.status, 404, "{}", after.body);

    let journal = get("/_mock/requests".into(), &a).await;
    assert_eq!(journal.status, 200);
    for absent in [
        theirs.as_str(),
        OTHER_MERCHANT,
        "B-SECRET-REF",
        "B-PROBE",
        "B-POSING",
        "B-AS-A",
    ] {
        assert!(
            !journal.body.contains(absent),
            "{absent} is in A's journal: {}",
            journal.body
        );
    }
    let items = journal.json()["data"]["items"]
        .as_array()
        .expect("items")
        .len();
    assert_eq!(items, 3, "A's initiate and two reads: {}", journal.body);
    let everything = get("/_mock/requests".into(), &admin).await;
    assert!(everything.body.contains("B-PROBE") && everything.body.contains("B-SECRET-REF"));

    // The console, the same: the list, the live rows, the detail, the
    // journal, its feed and one request.
    for page in [
        "/_mock/ui/",
        "/_mock/ui/transactions/rows",
        "/_mock/ui/requests",
        "/_mock/ui/requests/feed?after=0",
    ] {
        let answer = get(page.into(), &a).await;
        assert_eq!(answer.status, 200, "{page}");
        for absent in [theirs.as_str(), "B-SECRET-REF", "B-PROBE"] {
            assert!(!answer.body.contains(absent), "{absent} on {page}");
        }
        if page.starts_with("/_mock/ui/requests") {
            assert!(answer.body.contains("/api/payments/initiate"), "{page}");
        } else {
            assert!(answer.body.contains(&mine), "{page}");
        }
    }
    let list = get("/_mock/ui/".into(), &a).await;
    assert!(!list.body.contains("stored in all"), "no totals of others");
    assert!(!list.body.contains("f-merchant"), "no merchant filter");
    let detail = get(format!("/_mock/ui/transactions/{theirs}"), &a).await;
    assert_eq!(detail.status, 404);
    let detail = get(format!("/_mock/ui/transactions/{mine}"), &a).await;
    assert_eq!(detail.status, 200);
    assert!(!detail.body.contains("B-PROBE"));
    // Every request seq: A opens its own and none of B's.
    let admin_rows = get("/_mock/ui/requests".into(), &admin).await.body;
    let mut opened = 0;
    for part in admin_rows.split("_mock/ui/requests/").skip(1) {
        let seq: String = part.chars().take_while(char::is_ascii_digit).collect();
        if seq.is_empty() {
            continue;
        }
        let as_admin = get(format!("/_mock/ui/requests/{seq}"), &admin).await;
        let as_a = get(format!("/_mock/ui/requests/{seq}"), &a).await;
        let bs = as_admin.body.contains(OTHER_MERCHANT)
            || as_admin.body.contains("B-P")
            || as_admin.body.contains(&theirs);
        assert_eq!(as_a.status, if bs { 404 } else { 200 }, "request {seq}");
        opened += usize::from(as_a.status == 200);
    }
    assert_eq!(opened, 3);
}

#[tokio::test]
async fn a_merchants_key_changes_nothing() {
    let (state, router) = guarded();
    let target = Target::Router(router);
    let (id, page) = target.redirect_payment("NO-CHANGE").await;
    let before = (count(&state).await, clock_offset(&state).await);
    let a = format!("Bearer {KEY_A}");
    let auth = ("authorization", a.as_str());
    let json = ("content-type", JSON);
    let form = ("content-type", FORM);
    let payer = format!("/_mock/transactions/{id}/payer");
    let mut tried = 0;
    for (method, path, headers, body) in [
        ("POST", "/_mock/reset", vec![auth], None),
        (
            "POST",
            "/_mock/clock/advance",
            vec![auth, json],
            Some(r#"{"seconds":3600}"#),
        ),
        (
            "POST",
            &payer,
            vec![auth, json],
            Some(r#"{"action":"pay"}"#),
        ),
        (
            "POST",
            &payer,
            vec![auth, json],
            Some(r#"{"action":"decline"}"#),
        ),
        (
            "POST",
            &payer,
            vec![auth, json],
            Some(r#"{"action":"cancel"}"#),
        ),
        (
            "POST",
            "/_mock/ui/clock",
            vec![auth, form],
            Some("seconds=3600"),
        ),
        ("POST", "/_mock/ui/reset", vec![auth, form], Some("")),
        ("GET", "/_mock/ui/reset", vec![auth], None),
        // Whatever a later version adds that changes the catalogue or
        // anything else, it will not be a GET: refused before routing.
        ("PUT", "/_mock/catalog", vec![auth, json], Some("{}")),
        ("POST", "/_mock/catalog", vec![auth, json], Some("{}")),
        ("DELETE", "/_mock/transactions", vec![auth], None),
        ("PATCH", "/_mock/clock", vec![auth, json], Some("{}")),
        ("PUT", "/_mock/ui/catalog", vec![auth, form], Some("")),
    ] {
        tried += 1;
        let answer = target.call(method, path, &headers, body).await;
        assert_eq!(answer.status, 403, "{method} {path}: {}", answer.body);
        if !path.starts_with("/_mock/ui") {
            assert_eq!(answer.json()["errorCode"], "FORBIDDEN", "{method} {path}");
        }
    }
    assert_eq!(tried, 13);
    assert_eq!((count(&state).await, clock_offset(&state).await), before);
    let status = target
        .call("GET", &format!("/api/payments/{id}/status"), &[auth], None)
        .await
        .json();
    assert_eq!(
        status["data"]["status"], "CONFIRMED",
        "the payer has not decided"
    );
    // The payer's own page stays open: the token is the capability.
    let paid = target
        .call("POST", &page, &[form], Some("action=pay"))
        .await;
    assert_eq!(paid.status, 303);
}
