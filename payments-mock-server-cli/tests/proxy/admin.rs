//! `proxy --admin-key` through the binary (CONTRACT section 18): the
//! proxy's console, summary and metrics behind the key (by flag or from
//! `PAYMENTS_MOCK_ADMIN_KEY`), `/api/` untouched, bad keys refused at the
//! start without being shown, the warning on a network address without a
//! key, `Secure` session cookies over TLS, sessions that expire; no key
//! and no session id in stdout, stderr or the recording.

use std::time::Duration;

use payments_contract_proxy::{AdminKey, Proxy, ProxyConfig};
use payments_mock_server::MockServer;

use crate::binary::{post, proxy_args, run, spawn_proxy, spawn_with, stop, topup};

const KEY: &str = "adm_proxy_bin_4c7d21e9";

/// Status and body of a GET with an optional `Authorization` and `Cookie`.
async fn get(base: &str, path: &str, bearer: Option<&str>, cookie: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().get(format!("{base}{path}"));
    if let Some(token) = bearer {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    let reply = request.send().await.expect("answered");
    let status = reply.status().as_u16();
    (status, reply.text().await.expect("a body"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_key_by_flag_or_environment_guards_the_proxys_own_pages() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("record.jsonl");
    let record_arg = record.to_str().expect("UTF-8");
    let (child, base) = spawn_proxy(
        &mock.base_url(),
        &["--record", record_arg, "--admin-key", KEY],
    );
    // The application's exchange needs no admin key.
    let answer = post(&base, "/api/payments/initiate", &topup("ADM-P1")).await;
    assert_eq!(answer["isSuccess"], true, "{answer}");
    for path in [
        "/metrics",
        "/_proxy/report",
        "/_proxy/ui/",
        "/_proxy/ui/exchanges/1",
    ] {
        let (status, body) = get(&base, path, None, None).await;
        assert_eq!(status, 401, "{path}");
        let (status, body_wrong) = get(&base, path, Some("adm_proxy_bin_WRONG"), None).await;
        assert_eq!(status, 401, "{path}");
        for body in [body, body_wrong] {
            assert!(!body.contains("adm_proxy_bin"), "{path}: {body}");
        }
        let (status, _) = get(&base, path, Some(KEY), None).await;
        assert_eq!(status, 200, "{path} with the key");
    }
    // A session of the sign-in page, then sign-out.
    let signed_in = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
        .post(format!("{base}/_proxy/ui/sign-in"))
        .form(&[("key", KEY), ("next", "_proxy/ui/")])
        .send()
        .await
        .expect("answered");
    assert_eq!(signed_in.status(), 303);
    let set = signed_in.headers()["set-cookie"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    assert!(!set.contains("Secure"), "plain HTTP: {set}");
    let cookie = set.split(';').next().expect("a pair").to_owned();
    let (status, page) = get(&base, "/_proxy/ui/", None, Some(&cookie)).await;
    assert_eq!(status, 200);
    assert!(page.contains("Sign out"), "{page}");
    let (code, stderr) = stop(child);
    assert_eq!(code, Some(0), "{stderr}");
    let recording = std::fs::read_to_string(&record).expect("a recording");
    let session_id = &cookie["payments_proxy_session=".len()..];
    for (what, text) in [("stderr", &stderr), ("the recording", &recording)] {
        assert!(!text.contains(KEY), "{what} shows the key");
        assert!(!text.contains("adm_proxy_bin_WRONG"), "{what} shows a key");
        assert!(!text.contains(session_id), "{what} shows the session id");
    }
    assert!(
        stderr.contains("need an admin key: 1 given"),
        "the start says the pages are guarded: {stderr}"
    );

    // The same key from the environment.
    let (child, base) = spawn_with(
        &proxy_args(&mock.base_url(), &[]),
        &[("PAYMENTS_MOCK_ADMIN_KEY", KEY)],
    );
    assert_eq!(get(&base, "/metrics", None, None).await.0, 401);
    assert_eq!(get(&base, "/metrics", Some(KEY), None).await.0, 200);
    let (code, stderr) = stop(child);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains(KEY));

    // Help names the flag and the variable, never the value.
    let (code, help, _) = run(&["proxy", "--help"]);
    assert_eq!(code, Some(0));
    assert!(help.contains("--admin-key") && help.contains("PAYMENTS_MOCK_ADMIN_KEY"));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_payments-mock-server"))
        .args(["proxy", "--help"])
        .env("PAYMENTS_MOCK_ADMIN_KEY", KEY)
        .output()
        .expect("runs");
    assert!(!String::from_utf8_lossy(&output.stdout).contains(KEY));
}

#[test]
fn bad_admin_keys_stop_the_proxy_without_showing_them() {
    let huge = "h".repeat(100 * 1024);
    let cases: [(Vec<&str>, &str); 4] = [
        (vec!["--admin-key", ""], "1 to 1024 characters"),
        (
            vec!["--admin-key", "adm secret with spaces"],
            "visible ASCII",
        ),
        (vec!["--admin-key", &huge], "1 to 1024 characters"),
        (
            vec![
                "--admin-key",
                "adm_twice_SECRET",
                "--admin-key",
                "adm_twice_SECRET",
            ],
            "the same admin key is given twice (admin keys #1 and #2)",
        ),
    ];
    for (args, message) in cases {
        let (code, stdout, stderr) = run(&proxy_args("http://127.0.0.1:9", &args));
        assert_eq!(code, Some(2), "{stderr:.300}");
        assert!(stderr.contains(message), "{stderr:.300}");
        for shown in ["secret", "SECRET", "hhhhhhhh"] {
            assert!(!stderr.contains(shown), "{stderr:.300}");
        }
        assert!(stdout.is_empty(), "{stdout}");
    }
}

#[test]
fn an_open_proxy_on_a_network_address_is_warned_about_and_loopback_is_not() {
    let warning = "anyone who reaches this address can read the exchanges";
    let stderr_of = |args: &[&str]| {
        let (child, _) = spawn_proxy("http://127.0.0.1:9", args);
        let (code, stderr) = stop(child);
        assert_eq!(code, Some(0), "{stderr}");
        stderr
    };
    let open = stderr_of(&["--host", "0.0.0.0"]);
    assert!(
        open.contains(warning) && open.contains("--admin-key"),
        "{open}"
    );
    let loopback = stderr_of(&["--host", "127.0.0.1"]);
    assert!(!loopback.contains(warning), "{loopback}");
    let guarded = stderr_of(&["--host", "0.0.0.0", "--admin-key", KEY]);
    assert!(!guarded.contains(warning), "{guarded}");
    assert!(!guarded.contains(KEY), "{guarded}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_the_session_cookie_is_secure() {
    let dir = tempfile::tempdir().expect("a directory");
    let tls_dir = dir.path().join("proxy-tls");
    let (child, base) = spawn_proxy(
        "http://127.0.0.1:9",
        &[
            "--tls-self-signed",
            tls_dir.to_str().expect("UTF-8"),
            "--admin-key",
            KEY,
        ],
    );
    assert!(base.starts_with("https://"), "{base}");
    let ca = std::fs::read(tls_dir.join("ca.pem")).expect("the proxy's CA");
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("a CA"))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let refused = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("answered");
    assert_eq!(refused.status(), 401);
    let signed_in = client
        .post(format!("{base}/_proxy/ui/sign-in"))
        .form(&[("key", KEY)])
        .send()
        .await
        .expect("answered");
    assert_eq!(signed_in.status(), 303);
    let set = signed_in.headers()["set-cookie"].to_str().expect("ASCII");
    assert!(set.ends_with("; Secure"), "{set}");
    let (code, stderr) = stop(child);
    assert_eq!(code, Some(0), "{stderr}");
}

#[tokio::test]
async fn a_session_expires_after_its_lifetime() {
    let mut config = ProxyConfig::new("http://127.0.0.1:9".parse().expect("a URL"));
    config.admin_keys = vec![KEY.parse::<AdminKey>().expect("a key")];
    config.session_lifetime = Duration::from_secs(3600);
    let proxy = Proxy::start(config).await.expect("starts");
    let base = proxy.base_url();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let signed_in = client
        .post(format!("{base}/_proxy/ui/sign-in"))
        .form(&[("key", KEY)])
        .send()
        .await
        .expect("answered");
    let set = signed_in.headers()["set-cookie"].to_str().expect("ASCII");
    assert!(set.contains("Max-Age=3600"), "{set}");
    let cookie = set.split(';').next().expect("a pair").to_owned();
    proxy.pass_session_time(Duration::from_secs(3599));
    assert_eq!(get(&base, "/_proxy/ui/", None, Some(&cookie)).await.0, 200);
    proxy.pass_session_time(Duration::from_secs(1));
    let (status, page) = get(&base, "/_proxy/ui/", None, Some(&cookie)).await;
    assert_eq!(status, 401);
    assert!(page.contains("Your sign-in has ended"), "{page}");
}
