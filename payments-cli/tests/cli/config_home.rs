//! No home: a uid without a passwd entry, run with `env -i` in a container,
//! has neither `HOME` nor `XDG_CONFIG_HOME`. Settings from flags and the
//! environment are enough then (no default config file, as a missing one);
//! `XDG_CONFIG_HOME` alone is honoured; a profile asked for by name says
//! there is no file to find it in.

use assert_cmd::Command;

use crate::common::{Sandbox, closed_port_url, stderr};

/// `payments` with nothing in its environment but `extra`: no `HOME`, no
/// `XDG_CONFIG_HOME`.
fn homeless(extra: &[(&str, &std::path::Path)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_payments"));
    cmd.env_clear()
        .env("NO_COLOR", "1")
        .timeout(std::time::Duration::from_secs(60));
    for (name, value) in extra {
        cmd.env(name, value);
    }
    cmd
}

/// `cannot find the config directory: could not locate home directory`
/// (exit 2) where every setting came from flags; the passwd entry was the
/// last resort (`/root` here), a file no flag named.
#[test]
fn without_home_or_xdg_config_home_flags_are_enough() {
    let url = closed_port_url();
    let assert = homeless(&[])
        .args(["--base-url", &url, "--retries", "0", "status", "abc"])
        .assert()
        .code(4);
    let err = stderr(&assert);
    assert!(err.contains(&url), "{err}");
    assert!(!err.contains("config"), "{err}");
}

#[test]
fn without_home_a_missing_setting_says_there_is_no_config_file() {
    let assert = homeless(&[]).args(["status", "abc"]).assert().code(2);
    let err = stderr(&assert);
    assert!(err.contains("no service URL: pass --base-url URL"), "{err}");
    assert!(
        err.contains("no default config file: neither XDG_CONFIG_HOME nor HOME is set"),
        "{err}"
    );
    assert!(!err.contains(".config"), "no file is named: {err}");
}

#[test]
fn without_home_a_profile_asked_for_says_there_is_no_config_file() {
    let url = closed_port_url();
    for named in [&["--profile", "staging"][..], &[]] {
        let mut cmd = homeless(&[]);
        if named.is_empty() {
            cmd.env("PAYMENTS_PROFILE", "staging");
        }
        let assert = cmd
            .args(named)
            .args(["--base-url", &url, "status", "abc"])
            .assert()
            .code(2);
        let err = stderr(&assert);
        assert!(
            err.contains(
                "profile 'staging' not found: no default config file: neither \
                 XDG_CONFIG_HOME nor HOME is set to an absolute path; pass --config PATH"
            ),
            "{err}"
        );
    }
}

#[test]
fn xdg_config_home_is_honoured_without_home() {
    let sandbox = Sandbox::new();
    let url = closed_port_url();
    sandbox.write_config(&format!(
        "[profiles.default]\nbase_url = \"{url}\"\nretries = 0\n"
    ));
    let assert = homeless(&[("XDG_CONFIG_HOME", sandbox.path())])
        .args(["status", "abc"])
        .assert()
        .code(4);
    let err = stderr(&assert);
    assert!(err.contains(&url), "the profile's URL is tried: {err}");
}

/// A relative `HOME` (or `XDG_CONFIG_HOME`) is none, as the XDG base
/// directory specification says: no file is read from the working
/// directory.
#[test]
fn a_relative_home_is_no_home() {
    let sandbox = Sandbox::new();
    let url = closed_port_url();
    let dir = sandbox.path().join(".config").join("payments");
    std::fs::create_dir_all(&dir).expect("a directory");
    std::fs::write(
        dir.join("config.toml"),
        format!("[profiles.default]\nbase_url = \"{url}\"\n"),
    )
    .expect("written");
    let assert = homeless(&[("HOME", std::path::Path::new("."))])
        .current_dir(sandbox.path())
        .args(["status", "abc"])
        .assert()
        .code(2);
    let err = stderr(&assert);
    assert!(err.contains("no default config file"), "{err}");
}
