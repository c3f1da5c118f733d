//! The seconds of `--timeout` and the config's `timeout`, each refusal said
//! as what it is (exit 2, before anything is sent).

use crate::common::{Sandbox, stderr};

/// `payments ARGS`, refused (exit 2): its stderr.
fn refused(sandbox: &Sandbox, args: &[&str]) -> String {
    let assert = sandbox.payments().args(args).assert().code(2);
    stderr(&assert)
}

#[test]
fn flag_seconds_say_why_they_are_refused() {
    let sandbox = Sandbox::new();
    for (value, said) in [
        ("--timeout=-0", "must be more than 0 seconds"),
        ("--timeout=-0.0", "must be more than 0 seconds"),
        ("--timeout=0", "must be more than 0 seconds"),
        (
            "--timeout=0.0000000001",
            "must be at least 0.000000001 seconds",
        ),
        ("--timeout=abc", "not a number of seconds, e.g. 30 or 0.5"),
    ] {
        let err = refused(&sandbox, &[value, "status", "abc"]);
        assert!(err.contains(said), "{value}: {err}");
        assert!(
            !err.contains("not a number") || said.contains("not a number"),
            "{value}: {err}"
        );
    }
}

#[test]
fn config_seconds_say_why_they_are_refused() {
    let sandbox = Sandbox::new();
    for (value, said) in [
        ("1e-10", "timeout: must be at least 0.000000001 seconds"),
        ("-0", "timeout: must be more than 0 seconds"),
        ("-0.0", "timeout: must be more than 0 seconds"),
        (
            "\"abc\"",
            "timeout: not a number of seconds, e.g. 30 or 0.5",
        ),
        (
            "\"30\"",
            "timeout: a number of seconds without quotes, e.g. timeout = 30",
        ),
    ] {
        sandbox.write_config(&format!("[profiles.default]\ntimeout = {value}\n"));
        let err = refused(&sandbox, &["status", "abc"]);
        assert!(
            err.contains(said) && err.contains("line 2"),
            "{value}: {err}"
        );
        assert!(
            !err.contains("without quotes") || value == "\"30\"",
            "{value}: {err}"
        );
    }
}
