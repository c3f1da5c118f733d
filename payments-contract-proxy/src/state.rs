//! [`ProxyState`]: one proxy's state, cheap to clone: its configuration,
//! the upstream it forwards to, and the [`Judge`] that judges each
//! exchange against the rules, remembers what passed through, counts it
//! (the summary, interface coverage, the trail of JUnit and SARIF) and
//! writes the report, the recording and the console's recent list.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use payments_interface::coverage::Coverage;

use crate::config::files;
use crate::exchange::{self, Parsed};
use crate::listing::{self, Listing};
use crate::memory::Memory;
use crate::redact::Earlier;
use crate::trail::Trail;
use crate::upstream_tls::{Upstream, upstream_client};
use crate::{
    Error, Exchange, Finding, ProxyConfig, Redactor, ReportLine, Summary, Verdict, coverage,
    metrics, rules,
};

// The report and the recording: a line per exchange, or one counted lost.
mod appended;
// Each exchange's log line: violations and upstream failures at WARN.
mod log;
// The stop's cut-off of the exchanges still under way.
mod stop;
pub(crate) use stop::Stop;

/// Exchanges the console keeps to show.
const CONSOLE_KEEPS: usize = 500;
/// The most of each body the console keeps (so 500 exchanges stay small
/// whatever their bodies: the rest is freed, not kept as spare room).
const CONSOLE_BODY: usize = 64 * 1024;

/// Why the proxy answered an exchange itself.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Own {
    /// The request was refused before it was forwarded.
    Refused,
    /// The upstream gave no whole answer, as the failure says.
    Failed(crate::metrics::Failure),
    /// The stop's grace period ended before the exchange did.
    CutOff,
}

/// One judged exchange, as the console shows it (secrets replaced).
#[derive(Debug, Clone)]
pub(crate) struct Judged {
    /// The console's own count (exchanges are judged in the order they
    /// end, not the order of their `seq`): what the live feed pages by.
    pub row: u64,
    pub exchange: Exchange,
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
}

/// What the judging of exchanges shares, one at a time.
#[derive(Debug)]
pub(crate) struct Judge {
    pub(crate) memory: Memory,
    pub(crate) summary: Summary,
    /// What the service was seen to do of the interface's answers and
    /// transitions.
    pub(crate) coverage: Coverage,
    /// Each exchange, compactly: what JUnit and SARIF are written from.
    pub(crate) trail: Trail,
    pub(crate) report: Option<appended::Appended>,
    pub(crate) record: Option<appended::Appended>,
    pub(crate) recent: VecDeque<Judged>,
    /// The `row` of the last exchange the console kept.
    pub(crate) rows: u64,
    /// The last exchanges, short (`GET /_proxy/exchanges`).
    pub(crate) listing: Listing,
}

/// The proxy's state: cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct ProxyState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) config: ProxyConfig,
    /// `scheme://host:port/prefix` of `--upstream`, without its user and
    /// password: what a request target is appended to.
    pub(crate) upstream: String,
    /// The scheme and authority of `upstream` when it has no path prefix:
    /// a request's target then goes upstream as it came (its path and
    /// query shared, not copied and parsed again).
    pub(crate) origin: Option<(axum::http::uri::Scheme, axum::http::uri::Authority)>,
    /// `Authorization: Basic …` from the user and password of `--upstream`,
    /// sent when a request has none of its own.
    pub(crate) basic_auth: Option<axum::http::HeaderValue>,
    pub(crate) client: Upstream,
    pub(crate) seq: AtomicU64,
    pub(crate) redactor: Redactor,
    /// The secrets initiates carried (a payer id), for their transactions'
    /// later exchanges.
    pub(crate) earlier: Earlier,
    pub(crate) judge: Mutex<Judge>,
    /// What `GET /metrics` reports.
    pub(crate) metrics: metrics::Metrics,
    /// The console's sign-in sessions (with `--admin-key`).
    pub(crate) sessions: payments_serve::admin::Sessions<()>,
    /// The exchanges under way, and the stop's cut-off of them.
    pub(crate) stop: Stop,
}

impl std::ops::Deref for ProxyState {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.inner
    }
}

/// How one evidence file is written.
type WriteWith<'a> = &'a dyn Fn(&mut dyn Write) -> std::io::Result<()>;

impl ProxyState {
    pub(crate) fn new(config: ProxyConfig) -> Result<Self, Error> {
        config.validate()?;
        let client = upstream_client(&config)?;
        let url = &config.upstream;
        // `user:pass` decoded, as basic authentication pairs them.
        let pair = (!url.username().is_empty() || url.password().is_some()).then(|| {
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            format!(
                "{}:{}",
                decode(url.username()),
                url.password().map(decode).unwrap_or_default()
            )
        });
        let basic_auth = pair.as_ref().map(|pair| {
            use base64::Engine as _;
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            let mut value = axum::http::HeaderValue::from_str(&format!("Basic {encoded}"))
                .unwrap_or_else(|_| axum::http::HeaderValue::from_static(""));
            value.set_sensitive(true);
            value
        });
        let mut redactor = Redactor::new();
        if let Some(basic) = basic_auth.as_ref().and_then(|v| v.to_str().ok()) {
            redactor = redactor
                .also(basic)
                .also(basic.trim_start_matches("Basic "));
        }
        // The password is the secret, not the user name (`payments`,
        // `api`: replaced wherever it appears, it would rewrite paths and
        // member names), but for a user name given alone: an API key sent
        // as the user name, as some services take one.
        let password = url.password().unwrap_or_default();
        let credential = if password.is_empty() {
            url.username()
        } else {
            password
        };
        redactor = redactor
            .also(credential)
            .also(&percent_encoding::percent_decode_str(credential).decode_utf8_lossy());
        if let Some(pair) = &pair {
            // Long enough together when each alone is not.
            redactor = redactor.also(pair);
        }
        let upstream = format!(
            "{}://{}{}",
            url.scheme(),
            url.host_str()
                .map_or_else(String::new, |h| match url.port() {
                    Some(port) => format!("{h}:{port}"),
                    None => h.to_owned(),
                }),
            url.path().trim_end_matches('/')
        );
        let no_prefix = url.path().trim_end_matches('/').is_empty();
        let origin = no_prefix
            .then(|| upstream.parse::<axum::http::Uri>().ok())
            .flatten()
            .and_then(|uri| {
                let parts = uri.into_parts();
                parts.scheme.zip(parts.authority)
            });
        // The JUnit and SARIF files are written whole at the stop: one that
        // is the same file as another flag's (the recording a run appends
        // to) or that could not be written is refused now, not after the
        // run, and before anything is opened; the check creates and
        // empties nothing (an earlier run's file stays whole until then).
        fn named<'a>(flag: &'a str, path: &'a Option<PathBuf>) -> Option<files::Named<'a>> {
            path.as_deref().map(|p| (flag, p))
        }
        let outputs: Vec<_> = [
            named("--junit", &config.junit),
            named("--sarif", &config.sarif),
        ]
        .into_iter()
        .flatten()
        .collect();
        let others: Vec<_> = [
            named("--record", &config.record),
            named("--report", &config.report),
        ]
        .into_iter()
        .flatten()
        .collect();
        files::refuse_shared(&outputs, &others).map_err(Error::File)?;
        // Both append: one file would hold exchanges and verdicts mixed,
        // which `check` cannot read as a recording.
        if let (Some(record), Some(report)) = (&config.record, &config.report)
            && files::same_stored_file(record, report)
        {
            return Err(Error::File(format!(
                "--record {} and --report {} are the same file: their lines would be mixed in it, and `check` could not read it as a recording; give each a file of its own",
                record.display(),
                report.display()
            )));
        }
        for (flag, path) in outputs {
            let what = if flag == "--junit" { "JUnit" } else { "SARIF" };
            files::check_writable(path).map_err(|e| {
                Error::File(format!(
                    "cannot open the {what} file {}: {e}",
                    path.display()
                ))
            })?;
        }
        let report = config
            .report
            .as_ref()
            .map(|p| appended::Appended::open(p, "report"))
            .transpose()?;
        let record = config
            .record
            .as_ref()
            .map(|p| appended::Appended::open(p, "recording"))
            .transpose()?;
        let session_lifetime = config.session_lifetime;
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                upstream,
                origin,
                basic_auth,
                client,
                seq: AtomicU64::new(0),
                redactor,
                earlier: Earlier::default(),
                metrics: metrics::Metrics::new(),
                sessions: payments_serve::admin::Sessions::new(session_lifetime),
                stop: Stop::default(),
                judge: Mutex::new(Judge {
                    memory: Memory::default(),
                    summary: Summary::default(),
                    coverage: Coverage::new(),
                    trail: Trail::default(),
                    report,
                    record,
                    recent: VecDeque::with_capacity(CONSOLE_KEEPS),
                    rows: 0,
                    listing: Listing::default(),
                }),
            }),
        })
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Judge> {
        self.judge.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The upstream URI of a request target: the upstream's own path
    /// prefix, then the path and query exactly as the application sent them.
    pub(crate) fn upstream_uri(&self, asked: &axum::http::Uri) -> Option<axum::http::Uri> {
        if let (Some((scheme, authority)), Some(target)) = (&self.origin, asked.path_and_query())
            && target.as_str().starts_with('/')
        {
            let mut parts = axum::http::uri::Parts::default();
            parts.scheme = Some(scheme.clone());
            parts.authority = Some(authority.clone());
            parts.path_and_query = Some(target.clone());
            return axum::http::Uri::from_parts(parts).ok();
        }
        let (path, query) = (asked.path(), asked.query());
        let target = match query {
            Some(q) => format!("{}{path}?{q}", self.upstream),
            None => format!("{}{path}", self.upstream),
        };
        target.parse().ok()
    }

    /// Judges an exchange (`judged`: its bodies were read whole), counts
    /// it, and writes the report and the recording.
    pub(crate) fn judge(&self, exchange: Exchange, judged: bool) -> (Verdict, Vec<Finding>) {
        self.judge_as(exchange, judged, None)
    }

    /// [`Self::judge`] of the proxy's own answer, not judged: `own` says
    /// why the proxy answered (its log line names an upstream's failure;
    /// an exchange the stop cut off is named as such in SARIF).
    pub(crate) fn judge_own(&self, exchange: Exchange, own: Own) -> (Verdict, Vec<Finding>) {
        self.judge_as(exchange, false, Some(own))
    }

    fn judge_as(
        &self,
        mut exchange: Exchange,
        judged: bool,
        own: Option<Own>,
    ) -> (Verdict, Vec<Finding>) {
        let failure = match own {
            Some(Own::Failed(failure)) => Some(failure),
            _ => None,
        };
        exchange.judged = judged && !exchange.proxy_answer;
        // Outside the lock: the bodies read, and what redaction replaces
        // (the exchange itself is never copied: the plan is applied to it
        // once the rules have read it).
        let parsed = Parsed::of(&exchange);
        // The secrets of its transaction's initiate too (a payer id echoed
        // in a reference), replaced as they were there.
        let earlier = self.earlier.of(&parsed);
        let redaction = self
            .redactor
            .plan(&exchange, parsed.request.as_ref(), earlier);
        let mut judge = self.lock();
        let (verdict, mut findings) = if exchange.judged {
            let findings = rules::judge(&parsed, &judge.memory);
            let Judge {
                memory, coverage, ..
            } = &mut *judge;
            coverage::observe(&parsed, &findings, memory, coverage, |code| {
                redaction.scrub(code)
            });
            rules::remember(&parsed, memory);
            (Verdict::of(&findings), findings)
        } else {
            (Verdict::Unchecked, Vec::new())
        };
        // An initiate's secrets, for its transaction's later exchanges:
        // their bodies' redaction, and the reference the listing shows.
        if exchange.judged {
            self.earlier.keep(&parsed, redaction.carried.clone());
            show_reference(&parsed, &mut judge.memory, |reference| {
                redaction.scrub(reference)
            });
        }
        // Its transaction as the exchange names it or the memory (which
        // now holds it) remembers it, for the listing.
        let facts = listing::Facts::of(&parsed, &judge.memory);
        let exchange::Parsed { endpoint, .. } = parsed;
        self.metrics.exchange(&endpoint, verdict, &findings);
        // A message quotes values of the exchange: never a secret one.
        if redaction.has_secrets() {
            for finding in &mut findings {
                finding.message = redaction.scrub_cut(&finding.message);
            }
        }
        let facts = facts.scrubbed(|value| redaction.scrub(value));
        let redacted = redaction.apply(exchange);
        judge.summary.add(&redacted, &endpoint, verdict, &findings);
        judge
            .trail
            .push(&redacted, &endpoint, verdict, &findings, None);
        if matches!(own, Some(Own::CutOff)) {
            judge.trail.mark_cut_off();
        }
        if let Some(report) = judge.report.as_mut() {
            report.write(&ReportLine::of(&redacted, verdict, &findings));
        }
        if let Some(record) = judge.record.as_mut() {
            record.write(&redacted);
        }
        log::exchange(&redacted, verdict, &findings, failure);
        judge
            .listing
            .push(listing::Item::of(&redacted, verdict, &findings, facts));
        if judge.recent.len() == CONSOLE_KEEPS {
            judge.recent.pop_front();
        }
        judge.rows += 1;
        let row = judge.rows;
        let mut kept = redacted;
        for message in [&mut kept.request, &mut kept.response] {
            message.cut_body(CONSOLE_BODY, "… (the console keeps the first 64 KiB)");
        }
        judge.recent.push_back(Judged {
            row,
            exchange: kept,
            verdict,
            findings: findings.clone(),
        });
        (verdict, findings)
    }

    /// The running summary.
    pub(crate) fn summary(&self) -> Summary {
        self.lock().summary.clone()
    }

    /// The interface coverage seen so far.
    pub(crate) fn coverage(&self) -> Coverage {
        self.lock().coverage.clone()
    }

    /// Writes the JUnit and SARIF files (`--junit`, `--sarif`), if asked
    /// for: at the stop, each whole (a temporary file renamed over it). A file that cannot be written is logged, and
    /// returned (the binary then exits 2: a CI job must not pass without
    /// its evidence).
    pub(crate) fn write_evidence(&self) -> Vec<std::path::PathBuf> {
        let judge = self.lock();
        let strict = self.config.strict;
        let mut unwritten = Vec::new();
        let outputs: [(&str, Option<&std::path::PathBuf>, WriteWith<'_>); 2] = [
            ("JUnit", self.config.junit.as_ref(), &|file| {
                judge.trail.write_junit(file, strict)
            }),
            ("SARIF", self.config.sarif.as_ref(), &|file| {
                judge.trail.write_sarif(file, None)
            }),
        ];
        for (what, path, write) in outputs {
            let Some(path) = path else { continue };
            match files::write_whole(path, write) {
                Ok(()) => {
                    tracing::info!(path = %path.display(), "{what} written to {}", path.display());
                }
                Err(e) => {
                    tracing::error!(path = %path.display(), error = %e, "the {what} file {} could not be written: {e}", path.display());
                    unwritten.push(path.clone());
                }
            }
        }
        unwritten
    }

    /// The report and recording files that lack lines (each could not be
    /// written), and how many each lacks.
    pub(crate) fn lacking(&self) -> Vec<(std::path::PathBuf, u64)> {
        let judge = self.lock();
        [judge.report.as_ref(), judge.record.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(appended::Appended::lacking)
            .collect()
    }
}

/// For an initiate answered 200 that the memory now files its
/// transaction's reference under: that reference as `scrub` shows it,
/// when that differs, kept beside it for the listing of later exchanges.
fn show_reference(parsed: &Parsed<'_>, memory: &mut Memory, scrub: impl Fn(&str) -> String) {
    if parsed.endpoint != exchange::Endpoint::Initiate {
        return;
    }
    let (Some(id), Some(asked)) = (
        parsed.success_data().and_then(|d| d.text("transactionId")),
        parsed.request_text("referenceNo"),
    ) else {
        return;
    };
    let Some(seen) = memory.transaction_mut(&id) else {
        return;
    };
    if seen.shown_reference.is_none() && seen.reference_no.as_deref() == Some(asked.as_ref()) {
        let shown = scrub(&asked);
        if shown != asked {
            seen.shown_reference = Some(shown.into());
        }
    }
}

#[cfg(test)]
mod console_tests;
#[cfg(test)]
mod tests;
