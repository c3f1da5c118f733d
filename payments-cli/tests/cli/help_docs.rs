//! `--help` against docs/cli.md: "Every command's `--help` ends with its
//! exit codes: those of this page's section for the command, else the
//! table under "Exit codes"". For every command (and `payments` itself)
//! the same codes, grouped the same way (`130, 143`), and every flag,
//! environment variable and error code the page names for a code named by
//! `--help` too; and the shells the page gives `completions` are those the
//! binary takes.

use std::collections::BTreeMap;

use crate::common::{Sandbox, commands_listed, help_of, stdout};

/// Exit codes (`[130, 143]` for a row of two) and the row's text.
type ExitRows = BTreeMap<Vec<u16>, String>;

fn cli_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/cli.md");
    std::fs::read_to_string(path).expect("docs/cli.md")
}

/// `130, 143` as `[130, 143]`; `None` for what is no list of codes.
fn codes(cell: &str) -> Option<Vec<u16>> {
    let mut codes = cell
        .split(',')
        .map(|code| code.trim().parse().ok())
        .collect::<Option<Vec<u16>>>()?;
    codes.sort_unstable();
    Some(codes)
}

/// The rows of the first table in `section` whose header begins with
/// `header` (`| Exit |`, `| Code |`).
fn doc_table(section: &str, header: &str) -> Option<ExitRows> {
    let mut lines = section.lines().skip_while(|line| !line.starts_with(header));
    lines.next()?;
    let rows = lines
        .take_while(|line| line.starts_with('|'))
        .filter(|line| !line.starts_with("|--"))
        .map(|line| {
            let (code, text) = line[1..].split_once('|').expect("two cells");
            let codes = codes(code).unwrap_or_else(|| panic!("not exit codes: {line}"));
            (
                codes,
                text.trim_end().trim_end_matches('|').trim().to_owned(),
            )
        })
        .collect();
    Some(rows)
}

/// The text of docs/cli.md from `heading` to the next heading.
fn section<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let start = doc.find(&format!("\n{heading}\n"))? + 1;
    let rest = &doc[start + heading.len()..];
    // The next heading: `## ` or `### ` (a `#` in a code block is none).
    let end = ["\n## ", "\n### "]
        .iter()
        .filter_map(|next| rest.find(next))
        .min()
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The exit codes docs/cli.md gives `command` (`""`: `payments` itself).
fn documented(doc: &str, command: &str) -> ExitRows {
    let own = section(doc, &format!("### `payments {command}`"))
        .and_then(|text| doc_table(text, "| Exit |"));
    own.unwrap_or_else(|| {
        let general = section(doc, "## Exit codes").expect("an Exit codes section");
        doc_table(general, "| Code |").expect("the Exit codes table")
    })
}

/// The rows after `--help`'s last `Exit codes` line: `  CODES  text`, and
/// lines indented further go on the row before.
fn helped(help: &str) -> ExitRows {
    let (_, end) = help.rsplit_once("Exit codes").expect("exit codes");
    let mut rows = ExitRows::new();
    let mut last: Option<Vec<u16>> = None;
    for line in end.lines().skip(1) {
        let row = line
            .strip_prefix("  ")
            .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            .and_then(|rest| rest.split_once("  "))
            .and_then(|(cell, text)| Some((codes(cell)?, text)));
        match (row, &last) {
            (Some((codes, text)), _) => {
                assert!(!rows.contains_key(&codes), "{codes:?} twice in:\n{end}");
                rows.insert(codes.clone(), text.trim().to_owned());
                last = Some(codes);
            }
            (None, Some(codes)) if line.starts_with("   ") => {
                let text = rows.get_mut(codes).expect("the row before");
                text.push(' ');
                text.push_str(line.trim());
            }
            _ => last = None,
        }
    }
    rows
}

/// The flags (`--proxy`), environment variables and error codes
/// (`SANDBOX_NOT_FOUND`) a row of the page names in backticks.
fn names(text: &str) -> Vec<&str> {
    let flag = |s: &str| {
        s.strip_prefix("--").is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
        })
    };
    let constant = |s: &str| {
        s.len() > 1
            && s.starts_with(|c: char| c.is_ascii_uppercase())
            && s.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    };
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| flag(span) || constant(span))
        .collect()
}

/// The commands `payments --help` lists, and `""` for `payments` itself.
fn commands() -> Vec<String> {
    let mut commands = commands_listed();
    assert!(commands.len() >= 7, "{commands:?}");
    commands.push(String::new());
    commands
}

#[test]
fn every_commands_help_gives_the_exit_codes_of_its_docs_section() {
    let doc = cli_md();
    let mut wrong = Vec::new();
    for command in commands() {
        let args: Vec<&str> = [command.as_str()]
            .into_iter()
            .filter(|c| !c.is_empty())
            .collect();
        let help = helped(&help_of(&args));
        let docs = documented(&doc, &command);
        let shown = |rows: &ExitRows| rows.keys().map(|c| format!("{c:?}")).collect::<Vec<_>>();
        if shown(&help) != shown(&docs) {
            wrong.push(format!(
                "payments {command} --help: exit codes {:?}, docs/cli.md {:?}",
                shown(&help),
                shown(&docs)
            ));
            continue;
        }
        for (codes, text) in &docs {
            for name in names(text) {
                if !help[codes].contains(name) {
                    wrong.push(format!(
                        "payments {command} --help: {codes:?} does not name {name} \
                         as docs/cli.md does: {:?}",
                        help[codes]
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_docs_give_completions_every_shell_the_binary_takes() {
    let doc = cli_md();
    let text = section(&doc, "### `payments completions`").expect("a completions section");
    let mut documented: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("payments completions "))
        .flat_map(|rest| {
            let shells = rest.split_whitespace().next().unwrap_or_default();
            shells.split('|')
        })
        .collect();
    documented.sort_unstable();
    let help = help_of(&["completions"]);
    let (_, values) = help
        .split_once("[possible values: ")
        .expect("the shells in --help");
    let mut taken: Vec<&str> = values
        .split_once(']')
        .expect("a closing bracket")
        .0
        .split(", ")
        .collect();
    taken.sort_unstable();
    assert_eq!(documented, taken, "docs/cli.md against --help");
    let sandbox = Sandbox::new();
    for shell in taken {
        let assert = sandbox
            .payments()
            .args(["completions", shell])
            .assert()
            .success();
        assert!(stdout(&assert).contains("verify-return"), "{shell}");
    }
}

/// `reconcile --help` against docs/cli.md's class table: every class, in
/// the same order, in its Classes list and in its one-line summary; the
/// `currency` class for more decimal places only; the refusals of exit 2
/// and the "first 10 rows" of exit 4. It listed eight classes (no
/// `unverified`), said "another number of decimal places", and left those
/// exit reasons out.
#[test]
fn reconcile_help_gives_the_classes_and_reasons_of_the_docs() {
    let doc = cli_md();
    let text = section(&doc, "### `payments reconcile`").expect("a reconcile section");
    let documented: Vec<&str> = text
        .lines()
        .skip_while(|line| !line.starts_with("| Class |"))
        .skip(2)
        .take_while(|line| line.starts_with("| `"))
        .filter_map(|line| line.split('`').nth(1))
        .collect();
    assert_eq!(documented.len(), 9, "{documented:?}");
    let help = help_of(&["reconcile"]);
    let (_, classes) = help.split_once("Classes").expect("a Classes list");
    let (classes, _) = classes.split_once("Exit codes").expect("exit codes after");
    let listed: Vec<&str> = classes
        .lines()
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(listed, documented, "--help's Classes against docs/cli.md");
    let summary = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for class in &documented {
        assert!(
            [",", " ", "."]
                .iter()
                .any(|end| summary.contains(&format!(" {class}{end}"))),
            "the summary does not name {class}: {summary}"
        );
    }
    assert!(
        summary.contains("more decimal places than the row's currency allows"),
        "{summary}"
    );
    let exits = helped(&help);
    for said in ["';'", "UTF-16", "never closes"] {
        assert!(
            exits[&vec![2]].contains(said),
            "exit 2 lacks {said}: {}",
            exits[&vec![2]]
        );
    }
    assert!(
        exits[&vec![4]].contains("first 10 rows"),
        "exit 4: {}",
        exits[&vec![4]]
    );
}
