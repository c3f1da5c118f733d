//! The completion scripts run in the real shells: the candidates each
//! offers where the generator alone offered files or command names.

use std::process::Command as StdCommand;

use crate::common::{Sandbox, stdout};

/// `payments completions SHELL` written to a file in the sandbox.
fn script(sandbox: &Sandbox, shell: &str) -> std::path::PathBuf {
    let assert = sandbox
        .payments()
        .args(["completions", shell])
        .assert()
        .success();
    sandbox.write_file(&format!("payments.{shell}"), &stdout(&assert))
}

/// What `shell -c program` prints, or `None` when the shell is not
/// installed.
fn in_shell(shell: &str, args: &[&str], program: &str) -> Option<Vec<String>> {
    let output = StdCommand::new(shell)
        .args(args)
        .arg("-c")
        .arg(program)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .ok()?;
    assert!(output.status.success(), "{shell}: {output:?}");
    Some(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            // fish prints `candidate<TAB>description`.
            .map(|line| line.split('\t').next().unwrap_or(line).to_owned())
            .collect(),
    )
}

/// Before: `payments completions <TAB>` and `payments --output <TAB>`
/// offered the files of the current directory (clap_complete's fish
/// generator completes no positional argument, and its guard failed while
/// a global option waited for its value).
#[test]
fn fish_offers_the_shells_and_a_global_options_values() {
    let sandbox = Sandbox::new();
    let file = script(&sandbox, "fish");
    sandbox.write_file("a-file-to-offer.txt", "");
    let complete = |line: &str| {
        in_shell(
            "fish",
            &["--no-config"],
            &format!(
                "cd '{}'; source '{}'; complete -C '{line}'",
                sandbox.path().display(),
                file.display()
            ),
        )
    };
    let Some(shells) = complete("payments completions ") else {
        // .ci/run installs fish: there, a missing one is a failure.
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "fish is not installed (CI=true)"
        );
        eprintln!("SKIPPED: fish is not installed: the fish completions were not checked");
        return;
    };
    assert_eq!(shells, ["bash", "elvish", "fish", "powershell", "zsh"]);
    assert_eq!(complete("payments --output ").unwrap(), ["json", "table"]);
    assert_eq!(complete("payments -o j").unwrap(), ["json"]);
    // As before: commands, and a command's options and values.
    let commands = complete("payments ").unwrap();
    assert!(commands.contains(&"status".to_owned()), "{commands:?}");
    let after = complete("payments --output json st").unwrap();
    assert_eq!(after, ["status"]);
    let files = complete("payments status --from-file a-").unwrap();
    assert_eq!(files, ["a-file-to-offer.txt"]);
}

/// Before: `payments --output=t<TAB>` completed `tail` (bash splits the
/// word at `=`, and the script took `=` for the flag), and
/// `--config=c<TAB>` offered no files. The script's function is run in
/// bash with the words bash gives it.
#[test]
fn bash_completes_a_value_after_an_equals_sign() {
    let sandbox = Sandbox::new();
    let file = script(&sandbox, "bash");
    sandbox.write_file("config-here.toml", "");
    let complete = |words: &[&str]| {
        let cword = words.len() - 1;
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        in_shell(
            "bash",
            &["--norc", "--noprofile"],
            &format!(
                "cd '{}'; source '{}'; COMP_WORDS=({}); COMP_CWORD={cword}; \
                 _payments payments '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                sandbox.path().display(),
                file.display(),
                quoted.join(" "),
                words[cword],
                words[cword - 1],
            ),
        )
        .expect("bash is installed")
    };
    assert_eq!(complete(&["payments", "--output", "=", "t"]), ["table"]);
    assert_eq!(complete(&["payments", "--output", "="]), ["table", "json"]);
    assert_eq!(
        complete(&["payments", "--config", "=", "c"]),
        ["config-here.toml"]
    );
    // As before: the space-separated forms.
    assert_eq!(complete(&["payments", "--output", "t"]), ["table"]);
    assert_eq!(complete(&["payments", "t"]), ["tail"]);
}
