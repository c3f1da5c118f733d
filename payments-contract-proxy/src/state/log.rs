//! The log line of each judged exchange (target
//! `payments_contract_proxy::exchange`): a violation at WARN with its rule
//! ids (`rules`), the proxy's own 502 for an upstream that gave no whole
//! answer at WARN with the reason `payments_proxy_upstream_failures_total`
//! counts it under (`reason`: `connect`, `unreachable`, `timeout`,
//! `broke_off`, `tls`); every other exchange (a pass, undocumented or
//! client findings, not judged) at INFO. What each says is in fields, so
//! the JSON log carries it as the text log does. The path is shown as
//! the mock's request line shows it (`payments_serve::RequestLine::
//! shown_path`): cut at the same bound, a payment page's token hidden.

use payments_serve::RequestLine;

use crate::metrics::Failure;
use crate::{Exchange, Finding, Level, Verdict};

/// The rule ids a violation's line names; past them, "and N more".
const NAMED: usize = 3;

/// Logs one judged exchange (secrets already replaced); `failure`: how the
/// upstream gave no whole answer, when it gave none.
pub(super) fn exchange(
    exchange: &Exchange,
    verdict: Verdict,
    findings: &[Finding],
    failure: Option<Failure>,
) {
    let method = &exchange.request.method;
    let (shown, after) = RequestLine::shown_path(&exchange.request.path);
    let path = format_args!("{shown}{after}");
    let status = exchange.response.status;
    if verdict == Verdict::Violation {
        tracing::warn!(
            target: "payments_contract_proxy::exchange",
            seq = exchange.seq,
            method = %method,
            path = %path,
            status,
            verdict = verdict.as_str(),
            findings = findings.len(),
            rules = %violated(findings),
            "{method} {path} → {status} {}",
            verdict.as_str()
        );
    } else if let Some((reason, detail)) = failure.map(|f| (f.as_str(), detail(exchange))) {
        tracing::warn!(
            target: "payments_contract_proxy::exchange",
            seq = exchange.seq,
            method = %method,
            path = %path,
            status,
            verdict = verdict.as_str(),
            reason,
            detail = %detail,
            "{method} {path} → {status} {}: the upstream {detail}",
            verdict.as_str()
        );
    } else {
        tracing::info!(
            target: "payments_contract_proxy::exchange",
            seq = exchange.seq,
            method = %method,
            path = %path,
            status,
            verdict = verdict.as_str(),
            findings = findings.len(),
            "{method} {path} → {status} {}",
            verdict.as_str()
        );
    }
}

/// The rule ids of the violations, each once, in the order found: at most
/// [`NAMED`], then "and N more".
fn violated(findings: &[Finding]) -> String {
    let mut rules: Vec<&str> = Vec::new();
    for finding in findings.iter().filter(|f| f.level == Level::Violation) {
        if !rules.contains(&finding.rule) {
            rules.push(finding.rule);
        }
    }
    let mut named = rules
        .iter()
        .take(NAMED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if rules.len() > NAMED {
        named.push_str(&format!(" and {} more", rules.len() - NAMED));
    }
    named
}

/// What the proxy's own 502 says of the upstream: its message's words
/// after "the upstream service".
fn detail(exchange: &Exchange) -> String {
    let message = exchange
        .response
        .body
        .as_deref()
        .and_then(|body| serde_json::from_str::<serde_json::Value>(body).ok())
        .and_then(|body| Some(body.get("message")?.as_str()?.to_owned()))
        .unwrap_or_default();
    message
        .strip_prefix("the upstream service ")
        .map_or_else(|| message.clone(), str::to_owned)
}

#[cfg(test)]
mod tests;
