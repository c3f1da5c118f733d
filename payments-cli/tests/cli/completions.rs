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

/// `tail --poll-interval` is hidden from help and was offered by every
/// completion script (clap_complete lists hidden options): bash, run with
/// the words of `payments tail --`, offers tail's options without it.
#[test]
fn bash_does_not_offer_the_hidden_poll_interval() {
    let sandbox = Sandbox::new();
    let file = script(&sandbox, "bash");
    let offered = in_shell(
        "bash",
        &["--norc", "--noprofile"],
        &format!(
            "source '{}'; COMP_WORDS=(payments tail --); COMP_CWORD=2; \
             _payments payments -- tail; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display(),
        ),
    )
    .expect("bash is installed");
    assert!(offered.iter().any(|o| o == "--follow"), "{offered:?}");
    assert!(
        !offered.iter().any(|o| o == "--poll-interval"),
        "{offered:?}"
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let assert = sandbox
            .payments()
            .args(["completions", shell])
            .assert()
            .success();
        assert!(!stdout(&assert).contains("poll-interval"), "{shell}");
    }
}

/// The zsh script as generated, driven in a real interactive zsh
/// (`zsh/zpty`): TAB after `payments completions ` lists the shells and
/// after a global option its values, never the files of the directory;
/// a file is offered where one is asked for. zsh is the only shell whose
/// script is not mended, and this is what says it needs none.
#[test]
fn zsh_offers_the_shells_and_a_global_options_values() {
    let sandbox = Sandbox::new();
    let file = script(&sandbox, "zsh");
    sandbox.write_file("a-file-to-offer.txt", "");
    // The line typed, TAB, then a command whose output marks the end of
    // what the completion printed; each read waits for its pattern.
    let probe = sandbox.write_file(
        "probe.zsh",
        r#"zmodload zsh/zpty || exit 3
dir=$1 script=$2 line=$3
mkdir -p $dir/fpath && cp $script $dir/fpath/_payments
zpty z zsh -f -i
zpty -w z "cd ${(q)dir}; PS1='READY> '; fpath=(${(q)dir}/fpath \$fpath); autoload -Uz compinit; compinit -u -D; LISTMAX=10000; print SET''UP-DONE"
zpty -r z junk '*SETUP-DONE*READY> '
zpty -w -n z "$line"$'\t'
zpty -w z $'\C-e\C-u'"print END''-OF-LIST"
zpty -r z out '*END-OF-LIST*READY> '
zpty -d z
print -r -- "$out"
"#,
    );
    let complete = |line: &str| -> Option<Vec<String>> {
        // `timeout`: a read whose pattern never comes fails the test
        // instead of hanging it.
        let output = StdCommand::new("timeout")
            .args(["60", "zsh", "-f"])
            .arg(&probe)
            .arg(sandbox.path())
            .arg(&file)
            .arg(line)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TERM", "xterm")
            .output()
            .ok()?;
        if output.status.code() == Some(127) {
            return None; // timeout found no zsh
        }
        assert!(output.status.success(), "zsh: {output:?}");
        let text = String::from_utf8_lossy(&output.stdout);
        let text = text.split("print END").next().unwrap_or_default();
        Some(
            without_escapes(text)
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
        )
    };
    let Some(shells) = complete("payments completions ") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "zsh is not installed (CI=true)"
        );
        eprintln!("SKIPPED: zsh is not installed: the zsh completions were not checked");
        return;
    };
    let offered = |words: &[String], word: &str| words.iter().any(|w| w == word);
    for shell in ["bash", "elvish", "fish", "powershell", "zsh"] {
        assert!(offered(&shells, shell), "{shell}: {shells:?}");
    }
    assert!(!offered(&shells, "a-file-to-offer.txt"), "{shells:?}");
    for line in ["payments --output ", "payments status --output="] {
        let values = complete(line).unwrap();
        assert!(
            offered(&values, "json") && offered(&values, "table"),
            "{line}: {values:?}"
        );
        assert!(
            !offered(&values, "a-file-to-offer.txt"),
            "{line}: {values:?}"
        );
    }
    // The one file there is completed in place.
    let files = complete("payments status --from-file a-").unwrap();
    assert!(offered(&files, "a-file-to-offer.txt"), "{files:?}");
}

/// The text with each terminal escape (`ESC [ … letter`) and control
/// character made a space.
fn without_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            out.push(' ');
        } else if c.is_control() {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}
