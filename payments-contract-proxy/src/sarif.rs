//! SARIF 2.1.0 of the findings (CONTRACT section 20: `--sarif FILE`,
//! `/_proxy/report?format=sarif`), for code-scanning views: one rule per
//! rule id with its help text (the registry's `text`, the paragraph
//! docs/contract-proxy.md shows) and its default level; one result per
//! finding (`error` for a violation, `warning` for undocumented, `note`
//! for client) with its message and where it was found: the recording's
//! file and line for `check`, and always the exchange's number and
//! endpoint as a logical location.
//!
//! Written straight to the file with serde (the results are serialized
//! one by one from the trail, never gathered into one JSON tree).

use std::io::{self, Write};
use std::path::{Component, Path};

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde::Serialize;
use serde::ser::{SerializeSeq as _, Serializer};

use crate::rules::{Finding, Level, RULES, Rule};
use crate::trail::{CaseView, Cases, Trail};

/// The SARIF 2.1.0 schema's URI (OASIS, errata 01), as `$schema`.
pub const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// SARIF's level of a finding's level.
fn level_of(level: Level) -> &'static str {
    match level {
        Level::Violation => "error",
        Level::Undocumented => "warning",
        Level::Client => "note",
    }
}

#[derive(Serialize)]
#[serde(bound = "C: Cases")]
struct Log<'a, C> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a, C>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase", bound = "C: Cases")]
struct Run<'a, C> {
    tool: Tool,
    invocations: [Invocation<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    artifacts: Option<[Artifact<'a>; 1]>,
    results: Results<'a, C>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    information_uri: &'static str,
    rules: Vec<Descriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation<'a> {
    execution_successful: bool,
    /// An exchange the stop cut off, each: it has no finding (the proxy
    /// answered it itself), so no result names it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_execution_notifications: Vec<Notification<'a>>,
}

/// An exchange the stop cut off (`notification`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Notification<'a> {
    level: &'static str,
    message: Text<'a>,
    locations: [Location<'a>; 1],
}

/// The words of an exchange the stop cut off.
const CUT_OFF: &str = "cut off at the stop: the exchange was still open when the stop's grace \
                       period ended, and the proxy answered it itself (502 \
                       UPSTREAM_UNAVAILABLE), unchecked";

impl<'a> Notification<'a> {
    fn of(case: &CaseView<'a>) -> Self {
        Self {
            level: "warning",
            message: Text { text: CUT_OFF },
            locations: [Location {
                physical_location: None,
                logical_locations: [logical(case)],
            }],
        }
    }
}

/// An exchange as a logical location: `statusById/exchange 12`.
fn logical(case: &CaseView<'_>) -> LogicalLocation {
    LogicalLocation {
        name: format!("exchange {}", case.seq),
        fully_qualified_name: format!("{}/exchange {}", case.endpoint(), case.seq),
        kind: "resource",
    }
}

#[derive(Serialize)]
struct Artifact<'a> {
    location: ArtifactLocation<'a>,
}

#[derive(Serialize)]
struct Text<'a> {
    text: &'a str,
}

#[derive(Serialize)]
struct Help {
    text: &'static str,
    markdown: &'static str,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    /// The finding level the registry gives it.
    level: &'static str,
}

/// A rule (`reportingDescriptor`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    id: &'static str,
    short_description: Text<'static>,
    full_description: Text<'static>,
    help: Help,
    default_configuration: Configuration,
    properties: RuleProperties,
}

impl Descriptor {
    fn of(rule: &'static Rule) -> Self {
        // The first sentence of the rule's text.
        let short = rule
            .text
            .find(". ")
            .map_or(rule.text, |end| &rule.text[..=end]);
        Self {
            id: rule.id,
            short_description: Text { text: short },
            full_description: Text { text: rule.text },
            help: Help {
                text: rule.text,
                markdown: rule.text,
            },
            default_configuration: Configuration {
                level: level_of(rule.level),
            },
            properties: RuleProperties {
                level: rule.level.as_str(),
            },
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation<'a> {
    uri: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation<'a> {
    artifact_location: ArtifactLocation<'a>,
    region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation {
    name: String,
    fully_qualified_name: String,
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    physical_location: Option<PhysicalLocation<'a>>,
    logical_locations: [LogicalLocation; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties<'a> {
    seq: u64,
    endpoint: &'static str,
    request: &'a str,
    level: &'static str,
}

/// One finding (`result`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text<'a>,
    locations: [Location<'a>; 1],
    partial_fingerprints: Fingerprints,
    properties: ResultProperties<'a>,
}

/// What makes two results, of this run and of the next, the same finding
/// for a code-scanning view (SARIF 3.27.17): the rule and the endpoint,
/// never the exchange's number, its line or its message, which change
/// from run to run (each run otherwise opened new alerts and closed the
/// last run's as fixed).
#[derive(Serialize)]
struct Fingerprints {
    #[serde(rename = "paymentsContractFinding/v1")]
    finding: String,
}

impl Fingerprints {
    fn of(rule: &str, endpoint: &str) -> Self {
        Self {
            finding: format!("{rule}:{endpoint}"),
        }
    }
}

impl<'a> SarifResult<'a> {
    fn of(case: &CaseView<'a>, finding: &'a Finding, recording: Option<&'a str>) -> Self {
        let physical_location = recording
            .zip(case.line)
            .map(|(uri, line)| PhysicalLocation {
                artifact_location: ArtifactLocation {
                    uri,
                    index: Some(0),
                },
                region: Region { start_line: line },
            });
        Self {
            rule_id: finding.rule,
            rule_index: RULES.iter().position(|r| r.id == finding.rule).unwrap_or(0),
            level: level_of(finding.level),
            message: Text {
                text: &finding.message,
            },
            locations: [Location {
                physical_location,
                logical_locations: [logical(case)],
            }],
            partial_fingerprints: Fingerprints::of(finding.rule, case.endpoint()),
            properties: ResultProperties {
                seq: case.seq,
                endpoint: case.endpoint(),
                request: case.request(),
                level: finding.level.as_str(),
            },
        }
    }
}

/// The results, serialized one by one from the trail.
struct Results<'a, C> {
    cases: &'a C,
    recording: Option<&'a str>,
}

impl<C: Cases> Serialize for Results<'_, C> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        self.cases.each(
            |case| !case.findings.is_empty(),
            |case| {
                case.findings.iter().try_for_each(|finding| {
                    seq.serialize_element(&SarifResult::of(case, finding, self.recording))
                })
            },
        )?;
        seq.end()
    }
}

/// What a path segment of a URI reference may not hold as it is.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'^')
    .add(b'|')
    .add(b'[')
    .add(b']')
    .add(b':');

/// A recording's path as a URI reference: `file:///…` when absolute, else
/// relative, each segment percent-encoded.
fn uri_of(path: &Path) -> String {
    if path.is_absolute()
        && let Ok(url) = url::Url::from_file_path(path)
    {
        return url.to_string();
    }
    path.components()
        .filter_map(|component| match component {
            Component::Normal(segment) => {
                Some(utf8_percent_encode(&segment.to_string_lossy(), SEGMENT).to_string())
            }
            Component::CurDir => Some(".".to_owned()),
            Component::ParentDir => Some("..".to_owned()),
            Component::RootDir | Component::Prefix(_) => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

impl Trail {
    /// Writes the findings as SARIF 2.1.0: every rule of the registry, a
    /// result per finding. `recording`: the file the exchanges were read
    /// from (`check`), each result then also located at its line.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_sarif(&self, out: impl Write, recording: Option<&Path>) -> io::Result<()> {
        write_sarif(self, out, recording)
    }
}

/// [`Trail::write_sarif`] of the exchanges `cases` gives (read once).
pub(crate) fn write_sarif(
    cases: &impl Cases,
    out: impl Write,
    recording: Option<&Path>,
) -> io::Result<()> {
    let uri = recording.map(uri_of);
    let cut_off = cases.cut_off();
    let log = Log {
        schema: SARIF_SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "payments-contract-proxy",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: env!("CARGO_PKG_REPOSITORY"),
                    rules: RULES.iter().map(Descriptor::of).collect(),
                },
            },
            invocations: [Invocation {
                execution_successful: true,
                tool_execution_notifications: cut_off.iter().map(Notification::of).collect(),
            }],
            artifacts: uri.as_deref().map(|uri| {
                [Artifact {
                    location: ArtifactLocation { uri, index: None },
                }]
            }),
            results: Results {
                cases,
                recording: uri.as_deref(),
            },
        }],
    };
    let mut out = io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut out, &log)?;
    out.write_all(b"\n")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::exchange::Endpoint;
    use crate::rules::Verdict;
    use crate::rules::test_support::exchange;

    #[test]
    fn rules_results_levels_and_locations() {
        let mut trail = Trail::default();
        let path = "/api/payments/t1/status";
        let mut e = exchange("GET", path, json!(null), 429, json!({}));
        e.seq = 4;
        let findings = [
            Finding {
                rule: "http.undocumented",
                level: Level::Undocumented,
                message: "HTTP 429".to_owned(),
            },
            Finding {
                rule: "initiate.duplicate",
                level: Level::Undocumented,
                message: "replayed".to_owned(),
            },
        ];
        let route = Endpoint::of("GET", path);
        trail.push(&e, &route, Verdict::Undocumented, &findings, Some(12));
        trail.push(&e, &route, Verdict::Pass, &[], Some(13));

        let mut out = Vec::new();
        trail
            .write_sarif(&mut out, Some(Path::new("runs/stag ing.jsonl")))
            .expect("written");
        let log: Value = serde_json::from_slice(&out).expect("JSON");
        assert_eq!(log["version"], "2.1.0");
        let run = &log["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
        assert_eq!(rules.len(), RULES.len());
        assert_eq!(rules[0]["id"], RULES[0].id);
        assert_eq!(rules[0]["help"]["text"], RULES[0].text);
        assert_eq!(rules[0]["defaultConfiguration"]["level"], "error");
        let results = run["results"].as_array().expect("results");
        assert_eq!(results.len(), 2, "one per finding");
        assert_eq!(results[0]["ruleId"], "http.undocumented");
        assert_eq!(results[0]["level"], "warning");
        // The same finding in every run: no exchange number, line or
        // message in it.
        assert_eq!(
            results[0]["partialFingerprints"],
            json!({"paymentsContractFinding/v1": "http.undocumented:statusById"})
        );
        assert_eq!(
            rules[results[1]["ruleIndex"].as_u64().expect("index") as usize]["id"],
            "initiate.duplicate"
        );
        let location = &results[0]["locations"][0];
        assert_eq!(
            location["physicalLocation"]["artifactLocation"]["uri"],
            "runs/stag%20ing.jsonl"
        );
        assert_eq!(location["physicalLocation"]["region"]["startLine"], 12);
        assert_eq!(
            location["logicalLocations"][0]["fullyQualifiedName"],
            "statusById/exchange 4"
        );

        let mut live = Vec::new();
        trail.write_sarif(&mut live, None).expect("written");
        let live: Value = serde_json::from_slice(&live).expect("JSON");
        let location = &live["runs"][0]["results"][0]["locations"][0];
        assert!(location.get("physicalLocation").is_none(), "{location}");
        assert!(live["runs"][0].get("artifacts").is_none());
        assert_eq!(
            uri_of(Path::new("/tmp/a b/r.jsonl")),
            "file:///tmp/a%20b/r.jsonl"
        );
    }
}
