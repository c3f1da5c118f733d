//! The config file: parsing, profiles, precedence, hostile values.

use super::*;
use proptest::prelude::*;
use secrecy::ExposeSecret as _;

fn parse(text: &str) -> Result<ConfigFile, ConfigError> {
    ConfigFile::parse(text, Path::new("/tmp/config.toml"))
}

#[test]
fn a_full_profile_parses() {
    let file = parse(
        r#"
default_profile = "staging"
[profiles.staging]
base_url = "http://localhost:8080"
api_key = "sk_test"
merchant_id = "4F1C6A2E-0B7D-4C1E-9A53-2F8E6D1B7C90"
output = "json"
timeout = 5
retries = 0
"#,
    )
    .unwrap();
    let profile = file.select(None, Path::new("x")).unwrap().unwrap();
    assert_eq!(profile.base_url.as_deref(), Some("http://localhost:8080"));
    assert_eq!(profile.api_key.as_ref().unwrap().expose_secret(), "sk_test");
    assert_eq!(profile.output, Some(OutputFormat::Json));
    assert_eq!(profile.retries, Some(0));
    assert!(!format!("{profile:?}").contains("sk_test"));
}

#[test]
fn an_empty_file_has_no_profile() {
    assert!(
        parse("")
            .unwrap()
            .select(None, Path::new("x"))
            .unwrap()
            .is_none()
    );
}

#[test]
fn malformed_files_name_the_file_and_line() {
    let err = parse("[profiles.a]\nbase_url = \"x\"\nretries = \"many\"\n").unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("config file /tmp/config.toml, line 3:"),
        "{text}"
    );

    let err = parse("[profiles.a]\n\n\nbse_url = 1\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 4") && err.contains("bse_url"), "{err}");

    let err = parse("not toml at all").unwrap_err().to_string();
    assert!(err.contains("line 1"), "{err}");

    let err = parse("[profiles.a]\nmerchant_id = \"nope\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn unknown_profiles_list_the_known_ones() {
    let file = parse("[profiles.prod]\n[profiles.staging]\n").unwrap();
    let err = file.select(Some("dev"), Path::new("/c.toml")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "profile 'dev' not found in /c.toml; known profiles: prod, staging"
    );
    let err = parse("")
        .unwrap()
        .select(Some("dev"), Path::new("/c.toml"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "profile 'dev' not found: /c.toml has no profiles"
    );
}

#[test]
fn a_profiles_output_applies_on_a_terminal_only() {
    use OutputFormat::{Json, Table};
    assert_eq!(output_format(None, Some(Table), false), Json);
    assert_eq!(output_format(None, Some(Table), true), Table);
    assert_eq!(output_format(None, Some(Json), true), Json);
    assert_eq!(output_format(None, None, true), Table);
    assert_eq!(output_format(Some(Table), Some(Json), false), Table);
    assert_eq!(output_format(Some(Json), None, true), Json);
}

#[test]
fn colour_only_on_a_terminal_without_no_color_that_is_not_dumb() {
    use std::ffi::OsStr;
    let some = |s| Some(OsStr::new(s));
    assert!(colour_wanted(true, None, some("xterm-256color")));
    assert!(colour_wanted(true, some(""), None));
    assert!(!colour_wanted(false, None, some("xterm")));
    assert!(!colour_wanted(true, some("1"), some("xterm")));
    // TERM=dumb: escape codes would show as text (the progress bar already
    // drew nothing there).
    assert!(!colour_wanted(true, None, some("dumb")));
}

#[test]
fn a_dangling_default_profile_is_an_error() {
    let file = parse("default_profile = \"gone\"\n[profiles.prod]\n").unwrap();
    assert!(file.select(None, Path::new("x")).is_err());
}

#[test]
fn malformed_secrets_are_not_echoed() {
    // A key given with a wrong type: the message may not repeat it
    // (serde's own says "invalid type: integer `12345678901`").
    for value in [
        "12345678901",
        "1234.5678901",
        "12345678901e3",
        "[12345678901]",
        "{ k = 12345678901 }",
    ] {
        let err = parse(&format!("[profiles.a]\napi_key = {value}\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("api_key must be a quoted string"), "{err}");
        assert!(!err.contains("12345678901"), "{value}: {err}");
    }
}

#[test]
fn line_numbers_clamp_to_the_text() {
    assert_eq!(line_of("a\nb\n", 999), 3);
    assert_eq!(line_of("", 0), 1);
}

#[test]
fn a_profiles_timeout_takes_a_fraction_as_the_flag_does() {
    let read = |value: &str| {
        parse(&format!("[profiles.p]\ntimeout = {value}\n"))
            .map(|file| file.profiles["p"].timeout)
            .map_err(|e| e.to_string())
    };
    assert_eq!(read("10"), Ok(Some(Duration::from_secs(10))));
    assert_eq!(read("1.5"), Ok(Some(Duration::from_millis(1500))));
    assert_eq!(read("0.25"), Ok(Some(Duration::from_millis(250))));
    for bad in ["0", "0.0", "-1", "-0.5", "nan", "inf", "1e300", "40000000"] {
        let err = read(bad).expect_err(bad);
        assert!(
            err.contains("line 2") && err.contains("timeout"),
            "{bad}: {err}"
        );
    }
    // Said in the flag's words, never serde's ("untagged enum").
    let quoted = read("\"30\"").expect_err("a string");
    assert!(
        quoted.contains("line 2")
            && quoted.contains("timeout: a number of seconds without quotes, e.g. timeout = 30"),
        "{quoted}"
    );
    for other in ["true", "[1]", "{ s = 1 }"] {
        let err = read(other).expect_err(other);
        assert!(
            err.contains("timeout: not a number of seconds, e.g. 30 or 0.5")
                && !err.contains("untagged")
                && !err.contains("invalid type"),
            "{other}: {err}"
        );
    }
    let negative = read("-1").expect_err("negative");
    assert!(
        negative.contains("timeout: must be more than 0 seconds"),
        "{negative}"
    );
    // Each said as what it is: -0 is not more than 0; 1e-10 is more than
    // 0 but under the nanosecond; quoted text that is no number needs more
    // than its quotes taken off.
    for (value, said) in [
        ("-0", "timeout: must be more than 0 seconds"),
        ("-0.0", "timeout: must be more than 0 seconds"),
        ("1e-10", "timeout: must be at least 0.000000001 seconds"),
        (
            "\"abc\"",
            "timeout: not a number of seconds, e.g. 30 or 0.5",
        ),
        ("\"-0.5\"", "timeout: a number of seconds without quotes"),
    ] {
        let err = read(value).expect_err(value);
        assert!(err.contains(said), "{value}: {err}");
    }
}

/// A key put where a profile belongs (`[profiles]`, then `api_key`)
/// reads as a profile named `api_key`: the error says so without the
/// key.
#[test]
fn a_string_where_a_profile_belongs_is_not_repeated() {
    let err = parse("[profiles]\napi_key = \"sk_live_CANARY\"\n")
        .expect_err("not a profile")
        .to_string();
    assert!(!err.contains("CANARY"), "{err}");
    assert!(
        err.contains("a string (not shown), expected struct Profile"),
        "{err}"
    );
    assert!(err.contains("line 2"), "{err}");
}

proptest! {
    #[test]
    fn hostile_text_never_panics(text in "\\PC{0,200}") {
        let _ = parse(&text);
    }

    #[test]
    fn huge_values_are_errors_not_panics(n in any::<i64>(), s in "[a-z]{0,5000}") {
        let text = format!("[profiles.p]\nretries = {n}\ntimeout = {n}\nbase_url = \"{s}\"\n");
        match parse(&text) {
            Ok(file) => prop_assert!(file.profiles.contains_key("p")),
            // retries is on line 2, timeout (which refuses 0 and more
            // than a year) on line 3.
            Err(err) => prop_assert!(
                err.to_string().contains("line 2")
                    || ((n == 0 || n > 365 * 86_400) && err.to_string().contains("line 3")),
                "{}", err
            ),
        }
    }
}

#[test]
fn the_config_dir_is_xdg_config_home_else_home_else_none() {
    use std::ffi::OsStr;
    let dir = |xdg: Option<&str>, home: Option<&str>| {
        config_dir(xdg.map(OsStr::new), home.map(OsStr::new))
    };
    assert_eq!(
        dir(Some("/x"), Some("/h")),
        Some(PathBuf::from("/x")),
        "XDG_CONFIG_HOME first"
    );
    assert_eq!(dir(Some("/x"), None), Some(PathBuf::from("/x")), "no home");
    assert_eq!(dir(None, Some("/h")), Some(PathBuf::from("/h/.config")));
    assert_eq!(dir(None, None), None, "no home, no XDG: no file");
    // Empty or relative: ignored, as the XDG base directory spec says.
    assert_eq!(dir(Some(""), Some("/h")), Some(PathBuf::from("/h/.config")));
    assert_eq!(
        dir(Some("rel"), Some("/h")),
        Some(PathBuf::from("/h/.config"))
    );
    assert_eq!(dir(Some(""), Some("")), None);
    assert_eq!(dir(None, Some("home")), None);
}

#[test]
fn shell_words_are_quoted_unless_plain() {
    use super::shell::word;
    assert_eq!(word("staging"), "staging");
    assert_eq!(word("shop_B.2-x"), "shop_B.2-x");
    assert_eq!(word("my shop"), "'my shop'");
    assert_eq!(word("it's"), r"'it'\''s'");
    assert_eq!(word("$(rm)"), "'$(rm)'");
    assert_eq!(word(""), "''");
}

#[test]
fn notes_name_the_variable_and_key_never_a_value_and_only_when_they_differ() {
    use clap::Parser as _;
    let profile = parse(
        "[profiles.p]\nbase_url = \"http://b\"\napi_key = \"sk_profile\"\n\
         merchant_id = \"11111111-1111-4111-8111-111111111111\"\nca_cert = \"ca.pem\"\n",
    )
    .unwrap()
    .profiles
    .remove("p")
    .unwrap();
    let global = |args: &[&str]| {
        crate::cli::Cli::try_parse_from(["payments"].iter().chain(args).chain(&["status", "x"]))
            .unwrap()
            .global
    };
    let read: Vec<String> = [
        "PAYMENTS_BASE_URL",
        "PAYMENTS_API_KEY",
        "PAYMENTS_MERCHANT_ID",
        "PAYMENTS_CA_CERT",
    ]
    .map(str::to_owned)
    .to_vec();
    let config = Path::new("/etc/payments/config.toml");
    let notes = super::notes::overridden(
        &global(&[
            "--base-url=http://other",
            "--api-key=sk_other",
            "--merchant-id=22222222-2222-4222-8222-222222222222",
            "--ca-cert=ca.pem",
        ]),
        &profile,
        "p",
        config,
        &read,
    );
    let keys: Vec<_> = notes
        .iter()
        .map(|note| note.split_whitespace().nth(3).unwrap())
        .collect();
    assert_eq!(keys, ["base_url", "api_key", "merchant_id", "ca_cert"]);
    assert!(
        notes
            .iter()
            .all(|n| !n.contains("sk_") && !n.contains("2222"))
    );
    // The same values (the CA beside the file): nothing to say.
    let same = global(&[
        "--base-url=http://b",
        "--api-key=sk_profile",
        "--merchant-id=11111111-1111-4111-8111-111111111111",
        "--ca-cert=/etc/payments/ca.pem",
    ]);
    assert!(super::notes::overridden(&same, &profile, "p", config, &read).is_empty());
    // Given by flags, not variables: nothing either.
    let by_flags = global(&["--base-url=http://other"]);
    assert!(super::notes::overridden(&by_flags, &profile, "p", config, &[]).is_empty());
}

#[test]
fn line_numbers_count_bytes_that_are_not_utf8() {
    assert_eq!(line_of(b"a\n\xffb\n", 2), 2);
}
