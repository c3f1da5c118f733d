//! The config file as read: its size, its encoding, who else may open it,
//! a default file that does not exist, the notes a named profile's
//! overridden keys get, and the key an empty `PAYMENTS_API_KEY` leaves.

use std::{os::unix::fs::PermissionsExt as _, path::Path};

use payments_mock_server::MockServer;

use crate::common::{MERCHANT, Sandbox, closed_port_url, run, stderr};

/// An id the mock does not know: a look-up that reaches it exits 3.
const ID: &str = "01a20813-0000-7000-8000-000000000000";

/// Whether the mock's last request carried an `Authorization` header (its
/// journal shows the value redacted).
async fn sent_a_key(server: &MockServer) -> bool {
    let requests = server.requests().await;
    let last = requests.last().expect("a request reached the mock");
    last.headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
}

/// docs/cli.md: an empty variable counts as unset, so
/// `PAYMENTS_API_KEY=` falls back to the profile's key; `--config
/// /dev/null` (no profile) runs without one.
#[tokio::test(flavor = "multi_thread")]
async fn an_empty_api_key_variable_falls_back_to_the_profile_and_dev_null_runs_without() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{}\"\napi_key = \"sk_profile\"\n",
        server.base_url()
    ));
    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_API_KEY", "").args(["status", ID]);
    run(cmd).await.code(3);
    assert!(sent_a_key(&server).await, "the profile's key is sent");

    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_API_KEY", "")
        .args(["--config", "/dev/null", "--base-url", &server.base_url()])
        .args(["status", ID]);
    run(cmd).await.code(3);
    assert!(!sent_a_key(&server).await, "no profile, no key");
}

/// A config file that is not UTF-8: malformed, at the line of its first
/// bad byte, the bytes (a key may be there) never shown.
#[test]
fn a_config_file_that_is_not_utf8_names_its_line_not_its_bytes() {
    let sandbox = Sandbox::new();
    let path = sandbox.path().join("bad.toml");
    let mut text = b"[profiles.default]\nbase_url = \"http://x\"\napi_key = \"sk_".to_vec();
    text.extend_from_slice(b"\xff\xfeSECRET\"\n");
    std::fs::write(&path, text).expect("written");
    let assert = sandbox
        .payments()
        .arg("--config")
        .arg(&path)
        .args(["status", ID])
        .assert()
        .code(2);
    let err = stderr(&assert);
    assert!(
        err.contains(&format!(
            "config file {}, line 3: not UTF-8 text (the bytes are not shown): save the file as UTF-8",
            path.display()
        )),
        "{err}"
    );
    assert!(!err.contains("SECRET") && !err.contains("sk_"), "{err}");
}

/// A file over 1 MiB is refused before it is parsed: a regular file by its
/// length, a device by reading one byte past the limit (`/dev/zero` ends
/// at once). A file of exactly 1 MiB is read.
#[test]
fn a_config_file_over_one_mib_is_refused_before_it_is_parsed() {
    let sandbox = Sandbox::new();
    let url = closed_port_url();
    let head = format!("[profiles.default]\nbase_url = \"{url}\"\nretries = 0\n");
    let limit = 1024 * 1024;
    let mut text = head.clone();
    text.push('#');
    text.push_str(&"x".repeat(limit - head.len() - 2));
    text.push('\n');
    assert_eq!(text.len(), limit);
    let fits = sandbox.write_file("fits.toml", &text);
    sandbox
        .payments()
        .arg("--config")
        .arg(&fits)
        .args(["status", ID])
        .assert()
        .code(4);

    text.insert(text.len() - 1, 'x');
    let over = sandbox.write_file("over.toml", &text);
    let err = stderr(
        &sandbox
            .payments()
            .arg("--config")
            .arg(&over)
            .args(["status", ID])
            .assert()
            .code(2),
    );
    assert!(
        err.contains(&format!(
            "config file {} is larger than 1 MiB (1048577 bytes), the limit for a config file: \
             is it the right file? check --config and PAYMENTS_CONFIG",
            over.display()
        )),
        "{err}"
    );

    let started = std::time::Instant::now();
    let err = stderr(
        &sandbox
            .payments()
            .env("PAYMENTS_CONFIG", "/dev/zero")
            .args(["--base-url", &url, "status", ID])
            .assert()
            .code(2),
    );
    assert!(
        err.contains("config file /dev/zero is larger than 1 MiB (more than 1048576 bytes read)"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

/// A profile asked for while the default file does not exist (another
/// `HOME`, as under `sudo`): the file is said to be missing, not to have
/// no profiles.
#[test]
fn a_profile_asked_for_without_a_default_file_says_the_file_does_not_exist() {
    let sandbox = Sandbox::new();
    let path = sandbox.path().join("payments").join("config.toml");
    for by_env in [false, true] {
        let mut cmd = sandbox.payments();
        if by_env {
            cmd.env("PAYMENTS_PROFILE", "staging");
        } else {
            cmd.args(["--profile", "staging"]);
        }
        let err = stderr(
            &cmd.args(["--base-url", &closed_port_url(), "status", ID])
                .assert()
                .code(2),
        );
        assert_eq!(
            err.trim_end(),
            format!(
                "error: profile 'staging' not found: {} does not exist; create it with the \
                 profile (docs/cli.md, \"Config file\") or pass --config PATH",
                path.display()
            ),
            "by_env {by_env}"
        );
    }
}

const SHOP_A: &str = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa";
const SHOP_B: &str = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb";

/// A profile named with `--profile` or `PAYMENTS_PROFILE` whose key a
/// variable overrides: one note per key, naming the variable and the key,
/// never a value. None for the default profile, a variable that agrees,
/// or a flag.
#[test]
fn a_named_profiles_keys_overridden_by_variables_are_noted() {
    let sandbox = Sandbox::new();
    let (url_a, url_b, url_env) = (closed_port_url(), closed_port_url(), closed_port_url());
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{url_a}\"\nmerchant_id = \"{SHOP_A}\"\nretries = 0\n\
         [profiles.shopB]\nbase_url = \"{url_b}\"\nmerchant_id = \"{SHOP_B}\"\n\
         api_key = \"sk_shop_b\"\nretries = 0\n"
    ));
    let status = |profile: Option<&str>, vars: &[(&str, &str)], args: &[&str]| {
        let mut cmd = sandbox.payments();
        if let Some(profile) = profile {
            cmd.args(["--profile", profile]);
        }
        for (name, value) in vars {
            cmd.env(name, value);
        }
        stderr(&cmd.args(args).args(["status", ID]).assert().code(4))
    };
    let notes = |err: &str| {
        err.lines()
            .filter(|line| line.starts_with("note: "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let note = |variable: &str, key: &str| {
        format!(
            "note: {variable} overrides {key} of profile 'shopB' (the environment beats the \
             profile; unset {variable} to use the profile's)"
        )
    };

    let err = status(
        Some("shopB"),
        &[
            ("PAYMENTS_MERCHANT_ID", SHOP_A),
            ("PAYMENTS_API_KEY", "sk_stale"),
        ],
        &[],
    );
    assert_eq!(
        notes(&err),
        [
            note("PAYMENTS_API_KEY", "api_key"),
            note("PAYMENTS_MERCHANT_ID", "merchant_id")
        ],
        "{err}"
    );
    assert!(!err.contains("sk_") && !err.contains(SHOP_A), "{err}");

    // PAYMENTS_PROFILE names it as well; the URL from the environment is
    // the one tried.
    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_PROFILE", "shopB")
        .env("PAYMENTS_BASE_URL", &url_env)
        .args(["status", ID]);
    let err = stderr(&cmd.assert().code(4));
    assert_eq!(
        notes(&err),
        [note("PAYMENTS_BASE_URL", "base_url")],
        "{err}"
    );

    // The default profile, a variable that agrees, a flag: no note.
    let err = status(None, &[("PAYMENTS_MERCHANT_ID", SHOP_B)], &[]);
    assert!(notes(&err).is_empty(), "{err}");
    let err = status(Some("shopB"), &[("PAYMENTS_MERCHANT_ID", SHOP_B)], &[]);
    assert!(notes(&err).is_empty(), "{err}");
    let err = status(Some("shopB"), &[], &["--merchant-id", MERCHANT]);
    assert!(notes(&err).is_empty(), "{err}");
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A config file that holds an API key and that group or others may read
/// or write: a warning naming the file and `chmod 600 FILE`. None when it
/// is 0600, or holds no key.
#[test]
fn a_config_file_with_a_key_open_to_others_is_warned_about() {
    let sandbox = Sandbox::new();
    let url = closed_port_url();
    let with_key = |mode: u32, key: bool| {
        let path = sandbox.write_config(&format!(
            "[profiles.default]\nbase_url = \"{url}\"\nretries = 0\n[profiles.other]\n{}",
            if key {
                "api_key = \"sk_live_WORLD\"\n"
            } else {
                ""
            }
        ));
        chmod(&path, mode);
        let err = stderr(&sandbox.payments().args(["status", ID]).assert().code(4));
        (path, err)
    };
    for mode in [0o644, 0o620, 0o606] {
        let (path, err) = with_key(mode, true);
        assert!(
            err.starts_with(&format!(
                "warning: config file {0} holds an API key and other users can read or change it \
                 (mode 0{mode:o}): chmod 600 {0}\n",
                path.display()
            )),
            "{mode:o}: {err}"
        );
        assert!(!err.contains("WORLD"), "{err}");
    }
    let (_, err) = with_key(0o600, true);
    assert!(!err.contains("warning"), "{err}");
    let (_, err) = with_key(0o644, false);
    assert!(!err.contains("warning"), "{err}");
}

/// The suggestion to pick a profile is pasted into a shell: a name with a
/// space is quoted there, and escaped for TOML in the file's form.
#[test]
fn a_profile_name_with_a_space_is_quoted_in_the_suggestion() {
    let sandbox = Sandbox::new();
    sandbox.write_config("[profiles.\"my shop\"]\nretries = 0\n");
    let err = stderr(&sandbox.payments().args(["status", ID]).assert().code(2));
    assert!(
        err.contains(
            "has the profile 'my shop' but none is selected; pick it with --profile 'my shop', \
             PAYMENTS_PROFILE='my shop' or default_profile = \"my shop\" in the file"
        ),
        "{err}"
    );
}

/// An unknown `default_profile` says the name came from the file.
#[test]
fn an_unknown_default_profile_says_it_came_from_the_file() {
    let sandbox = Sandbox::new();
    let path = sandbox.write_config("default_profile = \"zzz\"\n[profiles.prod]\n");
    let err = stderr(&sandbox.payments().args(["status", ID]).assert().code(2));
    assert_eq!(
        err.trim_end(),
        format!(
            "error: profile 'zzz' not found in {} (named by default_profile in the file: \
             correct it or remove it); known profiles: prod",
            path.display()
        )
    );
}
