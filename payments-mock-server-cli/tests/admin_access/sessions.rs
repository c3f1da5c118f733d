//! Keys and cookies that are wrong, empty or huge; the console's sign-in
//! sessions, forged and expired ones, and another site's page.

use super::*;

#[tokio::test]
async fn wrong_empty_and_huge_keys_and_cookies_are_refused_without_an_echo() {
    let (_, router) = guarded();
    let target = Target::Router(router);
    let huge = format!("Bearer {}", "k".repeat(100 * 1024));
    let near = format!("Bearer {}x", ADMIN_KEY);
    let short = format!("Bearer {}", &ADMIN_KEY[..ADMIN_KEY.len() - 1]);
    let upper = format!("Bearer {}", ADMIN_KEY.to_uppercase());
    let basic = format!("Basic {ADMIN_KEY}");
    let twice = format!("Bearer {ADMIN_KEY} {ADMIN_KEY}");
    for auth in [
        "",
        "Bearer",
        "Bearer ",
        "Bearer  ",
        &huge,
        &near,
        &short,
        &upper,
        &basic,
        &twice,
        "Bearer \u{7f}",
    ] {
        for path in ["/_mock/transactions", "/_mock/ui/", "/_mock/reset"] {
            let method = if path == "/_mock/reset" {
                "POST"
            } else {
                "GET"
            };
            let Ok(value) = axum::http::HeaderValue::from_str(auth) else {
                continue;
            };
            let value = value.to_str().unwrap_or_default().to_owned();
            let answer = target
                .call(method, path, &[("authorization", &value)], None)
                .await;
            assert_eq!(answer.status, 401, "{path} with {:.20}", auth);
            assert!(!answer.body.contains("kkkkkkkk") && !answer.body.contains(ADMIN_KEY));
        }
    }
    // The scheme in any letter case, as on /api/.
    let lower = format!("bearer {ADMIN_KEY}");
    let answer = target
        .call(
            "GET",
            "/_mock/transactions",
            &[("authorization", &lower)],
            None,
        )
        .await;
    assert_eq!(answer.status, 200);

    let huge_cookie = format!("payments_mock_session={}", "a".repeat(100 * 1024));
    let many = (0..50)
        .map(|i| format!("payments_mock_session={i:064x}"))
        .collect::<Vec<_>>()
        .join("; ");
    for cookie in [
        "",
        "payments_mock_session=",
        "payments_mock_session=nope",
        &huge_cookie,
        &many,
        "payments_mock_session=zz; other=1",
        &format!("payments_mock_session={ADMIN_KEY}"),
    ] {
        let answer = target
            .call("GET", "/_mock/ui/", &[("cookie", cookie)], None)
            .await;
        assert_eq!(answer.status, 401, "cookie {:.40}", cookie);
        assert!(answer.body.contains("Sign in"));
        assert!(!answer.body.contains("aaaaaaaa") && !answer.body.contains(ADMIN_KEY));
        // A JSON control takes no cookie at all.
        let answer = target
            .call("GET", "/_mock/transactions", &[("cookie", cookie)], None)
            .await;
        assert_eq!(answer.status, 401);
    }
    // A wrong, empty or huge key typed on the sign-in page.
    for key in [
        "",
        "nope-key-7731",
        &"k".repeat(3000),
        &format!("{ADMIN_KEY} "),
    ] {
        let body: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("key", key)
            .finish();
        let answer = post_sign_in_form(&target, &body).await;
        // A key longer than any key (1,024 characters, the sign-in
        // form's bound in the OpenAPI document) is a form it rules out.
        let status = if key.len() > 1024 { 400 } else { 401 };
        assert_eq!(answer.status, status, "{:.20}", key);
        assert!(answer.headers.get("set-cookie").is_none());
        assert!(
            key.is_empty() || !answer.body.contains(key.trim()),
            "{:.20}",
            key
        );
    }
    let body = format!("key={}", "k".repeat(100 * 1024));
    let answer = post_sign_in_form(&target, &body).await;
    assert_eq!(answer.status, 413);
    assert!(!answer.body.contains("kkkkkkkk"));
}

/// The sign-in form posted with `key` and `next`: the answer as it is.
async fn post_sign_in(target: &Target, key: &str, next: &str) -> Answer {
    let body: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("key", key)
        .append_pair("next", next)
        .finish();
    post_sign_in_form(target, &body).await
}

/// The sign-in form posted with the encoded `body`: the answer as it is.
async fn post_sign_in_form(target: &Target, body: &str) -> Answer {
    target
        .call(
            "POST",
            "/_mock/ui/sign-in",
            &[("content-type", FORM)],
            Some(body),
        )
        .await
}

/// Signs in with `key` on the sign-in page: the session cookie's
/// `name=value`, and the whole `Set-Cookie`.
pub(crate) async fn sign_in(target: &Target, key: &str) -> (String, String) {
    let answer = post_sign_in(target, key, "_mock/ui/requests").await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    assert_eq!(answer.headers["location"], "../../_mock/ui/requests");
    let set = answer.headers["set-cookie"]
        .to_str()
        .expect("ascii")
        .to_owned();
    let pair = set.split(';').next().expect("name=value").to_owned();
    (pair, set)
}

#[tokio::test]
async fn a_sign_in_keeps_a_session_until_sign_out_and_never_the_key() {
    let (state, router) = guarded();
    let target = Target::Router(router);
    let (cookie, set) = sign_in(&target, ADMIN_KEY).await;
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(set.contains(flag), "{set}");
    }
    assert!(!set.contains("Secure"), "plain HTTP: {set}");
    assert!(!set.contains(ADMIN_KEY));
    let id = cookie.trim_start_matches("payments_mock_session=");
    assert_eq!(id.len(), 64, "256 bits in hex");
    let page = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Signed in with the admin key") && page.body.contains("sign-out"));
    assert!(
        !page.body.contains(id),
        "the page never shows the session id"
    );
    // A second sign-in is a second session; signing out ends only its own.
    let (other, _) = sign_in(&target, ADMIN_KEY).await;
    assert_ne!(other, cookie);
    assert_eq!(state.admin.sessions.len(), 2);
    let out = target
        .call(
            "POST",
            "/_mock/ui/sign-out",
            &[("cookie", &cookie), ("content-type", FORM)],
            Some(""),
        )
        .await;
    assert_eq!(out.status, 303);
    assert!(
        out.headers["set-cookie"]
            .to_str()
            .expect("ascii")
            .contains("Max-Age=0")
    );
    let after = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(after.status, 401, "a signed-out session is refused");
    assert!(after.body.contains("Your sign-in has ended"));
    assert!(
        after.headers["set-cookie"]
            .to_str()
            .expect("ascii")
            .contains("Max-Age=0")
    );
    let still = target
        .call("GET", "/_mock/ui/", &[("cookie", &other)], None)
        .await;
    assert_eq!(still.status, 200);
    // Nothing of it in the state's Debug either.
    let debug = format!("{state:?}");
    let other_id = other.trim_start_matches("payments_mock_session=");
    assert!(
        !debug.contains(ADMIN_KEY) && !debug.contains(other_id),
        "{debug:.2000}"
    );

    // A merchant's session sees what its key sees.
    let (merchant, _) = sign_in(&target, KEY_A).await;
    let page = target
        .call("GET", "/_mock/ui/clock", &[("cookie", &merchant)], None)
        .await;
    assert!(
        page.body
            .contains(&format!("Signed in as merchant {MERCHANT}"))
    );
    assert!(
        !page.body.contains("id=\"advance\""),
        "no clock form for a merchant"
    );
    let refused = target
        .call(
            "POST",
            "/_mock/ui/reset",
            &[("cookie", &merchant), ("content-type", FORM)],
            Some(""),
        )
        .await;
    assert_eq!(refused.status, 403);
    // An unbound API key has nothing to sign in to.
    let body = format!("key={KEY_OPEN}");
    let answer = post_sign_in_form(&target, &body).await;
    assert_eq!(answer.status, 403);
    assert!(answer.headers.get("set-cookie").is_none());
}

#[tokio::test]
async fn a_forged_or_expired_session_is_refused() {
    let (state, router) = guarded();
    let target = Target::Router(router);
    let (cookie, _) = sign_in(&target, ADMIN_KEY).await;
    let ok = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(ok.status, 200);
    // Forged: one digit off at the start (finds no session) and at the
    // end (the right session, the wrong verifier); a made-up one.
    let flip = |at: usize| {
        let mut bytes = cookie.clone().into_bytes();
        let i = "payments_mock_session=".len() + at;
        bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
        String::from_utf8(bytes).expect("ascii")
    };
    for forged in [
        flip(0),
        flip(63),
        format!("payments_mock_session={}", "0".repeat(64)),
    ] {
        let answer = target
            .call("GET", "/_mock/ui/", &[("cookie", &forged)], None)
            .await;
        assert_eq!(answer.status, 401, "{forged}");
    }
    // Expired: the sessions' clock moves past 12 hours (no sleep); the
    // mock's virtual clock has nothing to do with it.
    state
        .admin
        .sessions
        .pass_time(Duration::from_secs(12 * 3600 - 60));
    let ok = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(ok.status, 200, "still valid a minute before its end");
    state.admin.sessions.pass_time(Duration::from_secs(61));
    let expired = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(expired.status, 401);
    assert!(expired.body.contains("Your sign-in has ended"));
    let answer = target
        .call(
            "GET",
            "/_mock/ui/",
            &[("authorization", &format!("Bearer {ADMIN_KEY}"))],
            None,
        )
        .await;
    assert_eq!(answer.status, 200, "the key itself still works");
}

#[tokio::test]
async fn another_sites_page_is_refused_even_with_a_session() {
    let (state, router) = guarded();
    let target = Target::Router(router);
    let (cookie, _) = sign_in(&target, ADMIN_KEY).await;
    let before = clock_offset(&state).await;
    let evil = [
        ("cookie", cookie.as_str()),
        ("content-type", FORM),
        ("host", "127.0.0.1:8080"),
        ("origin", "https://evil.example"),
    ];
    for (path, body) in [
        ("/_mock/ui/clock", "seconds=60"),
        ("/_mock/ui/reset", ""),
        ("/_mock/ui/sign-out", ""),
        ("/_mock/ui/sign-in", "key=x"),
    ] {
        let answer = target.call("POST", path, &evil, Some(body)).await;
        assert_eq!(answer.status, 403, "{path}");
    }
    let json_evil = [
        ("authorization", &*format!("Bearer {ADMIN_KEY}")),
        ("content-type", JSON),
        ("host", "127.0.0.1:8080"),
        ("origin", "https://evil.example"),
    ];
    let answer = target
        .call(
            "POST",
            "/_mock/clock/advance",
            &json_evil,
            Some(r#"{"seconds":60}"#),
        )
        .await;
    assert_eq!(answer.status, 403);
    assert_eq!(clock_offset(&state).await, before);
    let still = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(still.status, 200, "the refused sign-out ended nothing");
    // The same form from the console's own origin goes through.
    let own = [
        ("cookie", cookie.as_str()),
        ("content-type", FORM),
        ("host", "127.0.0.1:8080"),
        ("origin", "http://127.0.0.1:8080"),
    ];
    let answer = target
        .call("POST", "/_mock/ui/clock", &own, Some("seconds=60"))
        .await;
    assert_eq!(answer.status, 303);
}

/// The sign-in page keeps where the browser was going as `next`, up to
/// 512 characters (a filter of non-ASCII text, percent-encoded, makes a
/// long one); its form takes that `next` back. It refused anything over
/// 400, so a sign-in from such a page was a 400 page.
#[tokio::test]
async fn a_long_next_the_sign_in_page_offers_is_taken_by_its_form() {
    let (_, router) = guarded();
    let target = Target::Router(router);
    let filter: String = form_urlencoded::byte_serialize("書".repeat(48).as_bytes()).collect();
    let next = format!("_mock/ui/?reference={filter}");
    assert!(next.len() > 400 && next.len() <= 512, "{}", next.len());
    let answer = post_sign_in(&target, ADMIN_KEY, &next).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    assert_eq!(answer.headers["location"], format!("../../{next}"));
}

/// Behind a reverse proxy that rewrites `Host` to the upstream's (nginx's
/// default `proxy_pass`), the browser's `Origin` is the public URL's: the
/// console's forms take it (sign-in was a 403 "Not from the console"),
/// and still refuse any other site.
#[tokio::test]
async fn behind_a_proxy_that_rewrites_host_the_public_urls_origin_posts_forms() {
    let mut config = guarded_config();
    config.public_url = Some("http://shop.example/mock/".parse().expect("a URL"));
    let (_, router) = service_with(config);
    let target = Target::Router(router);
    let body = format!("key={ADMIN_KEY}&next=_mock/ui/");
    let post = |origin: &'static str| {
        let target = target.clone();
        let body = body.clone();
        async move {
            let headers = [
                ("content-type", FORM),
                ("host", "127.0.0.1:8080"),
                ("origin", origin),
            ];
            target
                .call("POST", "/_mock/ui/sign-in", &headers, Some(&body))
                .await
        }
    };
    let signed_in = post("http://shop.example").await;
    assert_eq!(signed_in.status, 303, "{}", signed_in.body);
    for other in ["https://shop.example", "http://evil.example"] {
        let refused = post(other).await;
        assert_eq!(refused.status, 403, "{other}");
        assert!(refused.body.contains("Not from the console"), "{other}");
    }
}
