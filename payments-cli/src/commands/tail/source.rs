//! Where `tail` reads: the mock's journal (`GET /_mock/requests`, a
//! sandbox's under `/sandboxes/ID`) or the contract proxy's exchanges
//! (`GET /_proxy/exchanges`), a page at a time with `after=SEQ`, with the
//! CLI's key, TLS settings, timeout and retries; and what a failed read
//! says, in one line, with its exit code.

use std::time::{Duration, Instant};

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use secrecy::ExposeSecret as _;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::entry::Entry;

mod failure;

use crate::{commands::Context, error::CliError, exit::Exit};
pub use failure::{Failure, NoAnswer};
use failure::{describe, no_answer};

/// Entries asked for at once from the mock (each may carry a body of up to
/// 64 KiB), and from the proxy (a few hundred bytes each).
const MOCK_PAGE: usize = 100;
const PROXY_PAGE: usize = 1000;
/// The most a page's answer may take.
const ANSWER_LIMIT: usize = 32 * 1024 * 1024;

/// Which journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Mock,
    Sandbox(String),
    Proxy,
}

/// A journal, ready to be read.
#[derive(Debug)]
pub struct Source {
    kind: Kind,
    http: reqwest::Client,
    /// The endpoint, without its query.
    url: reqwest::Url,
    /// The base URL as messages show it (no user or password).
    base: String,
    key: Option<HeaderValue>,
    retries: u32,
    retry_delay: Duration,
    timeout: Duration,
    verbose: bool,
    /// Whether the base URL has `user:pass@` (sent as `Basic`).
    url_credentials: bool,
    /// Whether a CA was given to trust (`--ca-cert`).
    trusted_ca: bool,
    /// Where the base URL came from, for a failed connection's advice.
    base_from: String,
}

/// A page of entries, oldest first.
#[derive(Debug)]
pub struct Page {
    pub entries: Vec<Entry>,
    /// A whole page: there may be more after it.
    pub full: bool,
    /// The proxy's: the place of the last entry in the order judged
    /// (`firstJudged` and the entries after it), when it says.
    pub last_judged: Option<u64>,
    /// The proxy's: the place of the oldest exchange it keeps.
    pub oldest_judged: Option<u64>,
}

/// The envelope, read leniently.
#[derive(Debug, Deserialize)]
struct Envelope {
    #[serde(rename = "isSuccess")]
    is_success: Option<bool>,
    #[serde(rename = "errorCode")]
    error_code: Option<String>,
    message: Option<String>,
    data: Option<Box<RawValue>>,
}

#[derive(Debug, Deserialize)]
struct Items {
    items: Vec<Box<RawValue>>,
    /// The proxy's places in the order judged (read leniently: anything
    /// but a whole number is as if not given).
    #[serde(rename = "firstJudged", default)]
    first_judged: Option<serde_json::Value>,
    #[serde(rename = "oldestJudged", default)]
    oldest_judged: Option<serde_json::Value>,
}

impl Source {
    /// The journal `kind` at the CLI's base URL. Nothing is filtered by
    /// the server (the mock could filter by path): `tail` sees every seq,
    /// so that a seq missing after the last one read means an entry lost.
    ///
    /// # Errors
    ///
    /// A certificate or key that cannot be read or used (the client
    /// already refused them by now, so this is a file that changed).
    pub fn new(ctx: &Context, kind: Kind, retry_delay: Duration) -> Result<Self, CliError> {
        let settings = &ctx.settings;
        let endpoint = match &kind {
            Kind::Mock => "/_mock/requests".to_owned(),
            Kind::Sandbox(id) => format!("/sandboxes/{id}/_mock/requests"),
            Kind::Proxy => "/_proxy/exchanges".to_owned(),
        };
        let base = ctx.base_url.trim_end_matches('/');
        let invalid = |e: &dyn std::fmt::Display| {
            CliError::Usage(format!(
                "invalid service URL {} (--base-url): {e}",
                ctx.shown_url
            ))
        };
        let url = reqwest::Url::parse(&format!("{base}{endpoint}")).map_err(|e| invalid(&e))?;
        let mut shown = reqwest::Url::parse(base).map_err(|e| invalid(&e))?;
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        let key = match &settings.api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.0.expose_secret()))
                    .map_err(|_| {
                        CliError::Usage(
                            "the API key cannot be sent in a header; check --api-key, \
                             PAYMENTS_API_KEY or api_key in the profile"
                                .to_owned(),
                        )
                    })?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        Ok(Self {
            kind,
            http: crate::commands::http::client(ctx, settings.timeout)?,
            url,
            base: shown.as_str().trim_end_matches('/').to_owned(),
            key,
            retries: settings.retries,
            retry_delay,
            timeout: settings.timeout,
            verbose: settings.verbose,
            url_credentials: crate::error::has_userinfo(&ctx.base_url),
            trusted_ca: settings.ca_cert.is_some(),
            base_from: settings.base_url_named_by.clone().unwrap_or_default(),
        })
    }

    /// The entries after `after` (in the order the server keeps them),
    /// one page; on the proxy, with `judged`, those judged after that
    /// place instead (`afterJudged`; a proxy that does not know it goes
    /// by `after`); asked again after a failure that may pass (no answer,
    /// 429, 5xx) up to `--retries` times.
    ///
    /// # Errors
    ///
    /// The last attempt's failure.
    pub async fn page(&self, after: u64, judged: Option<u64>) -> Result<Page, Failure> {
        let (limit, judged) = match self.kind {
            Kind::Proxy => (PROXY_PAGE, judged),
            Kind::Mock | Kind::Sandbox(_) => (MOCK_PAGE, None),
        };
        self.retried(Some(after), judged, limit).await
    }

    /// The seq of the newest entry the server keeps (the last one judged,
    /// on the proxy) that this key may see; `None` when it keeps none.
    ///
    /// # Errors
    ///
    /// As [`Source::page`].
    pub async fn newest(&self) -> Result<Option<u64>, Failure> {
        let page = self.retried(None, None, 1).await?;
        Ok(page.entries.last().map(|e| e.seq))
    }

    async fn retried(
        &self,
        after: Option<u64>,
        judged: Option<u64>,
        limit: usize,
    ) -> Result<Page, Failure> {
        let mut attempt = 0;
        loop {
            match self.attempt(after, judged, limit).await {
                Err(failure) if failure.is_transient() && attempt < self.retries => {
                    attempt += 1;
                    tokio::time::sleep(self.retry_delay * attempt).await;
                }
                outcome => return outcome,
            }
        }
    }

    /// One request: `after` SEQ (without it, the newest `limit`), and
    /// `afterJudged` (the proxy's).
    async fn attempt(
        &self,
        after: Option<u64>,
        judged: Option<u64>,
        limit: usize,
    ) -> Result<Page, Failure> {
        let mut url = self.url.clone();
        {
            let mut query = url.query_pairs_mut();
            if let Some(after) = after {
                query.append_pair("after", &after.to_string());
            }
            if let Some(judged) = judged {
                query.append_pair("afterJudged", &judged.to_string());
            }
            query.append_pair("limit", &limit.to_string());
        }
        let started = Instant::now();
        // `-v`: each page is a trace of its own, its id printed, as every
        // other command's call (CONTRACT section 21).
        let trace = self.verbose.then(crate::commands::trace::header).flatten();
        if self.verbose {
            crate::commands::stderr_line(format_args!(
                "> GET {}{}",
                shown_url(&url),
                crate::commands::verbose::auth_said(self.key.is_some(), self.url_credentials)
            ));
        }
        let mut request = self.http.get(url);
        if let Some(key) = &self.key {
            request = request.header(AUTHORIZATION, key.clone());
        }
        if let Some((_, traceparent)) = &trace {
            request = request.header("traceparent", traceparent.as_str());
        }
        let outcome = self.answer(request).await;
        if self.verbose {
            let elapsed = started.elapsed().as_millis();
            let trace = trace
                .map(|(id, _)| format!(", trace {id}"))
                .unwrap_or_default();
            match &outcome {
                Ok(page) => crate::commands::stderr_line(format_args!(
                    "< HTTP 200 in {elapsed} ms, {} entries{trace}",
                    page.entries.len()
                )),
                Err(failure) => crate::commands::stderr_line(format_args!(
                    "< after {elapsed} ms: {}{trace}",
                    describe(failure)
                )),
            }
        }
        let mut page = outcome?;
        page.full = page.entries.len() >= limit;
        Ok(page)
    }

    async fn answer(&self, request: reqwest::RequestBuilder) -> Result<Page, Failure> {
        let mut response = request.send().await.map_err(no_answer)?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            // Kept whatever its bytes (UTF-8, else one character a byte):
            // one that is not readable is said so, never "none".
            .map(|v| match std::str::from_utf8(v.as_bytes()) {
                Ok(text) => text.to_owned(),
                Err(_) => v.as_bytes().iter().map(|&b| char::from(b)).collect(),
            });
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(no_answer)? {
            body.extend_from_slice(&chunk);
            if body.len() > ANSWER_LIMIT {
                return Err(Failure::Unreadable {
                    status,
                    reason: "the answer is larger than 32 MiB".to_owned(),
                });
            }
        }
        let Ok(envelope) = serde_json::from_slice::<Envelope>(&body) else {
            return Err(Failure::NotEnvelope {
                status,
                content_type,
            });
        };
        match envelope.is_success {
            Some(true) if (200..300).contains(&status) => {}
            Some(false) if status >= 400 => {
                return Err(Failure::Refused {
                    status,
                    code: envelope.error_code.unwrap_or_default(),
                    message: envelope.message.unwrap_or_default(),
                });
            }
            _ => {
                return Err(Failure::Unreadable {
                    status,
                    reason: "its isSuccess and HTTP status disagree".to_owned(),
                });
            }
        }
        let items = envelope
            .data
            .ok_or("no data")
            .and_then(|data| {
                serde_json::from_str::<Items>(data.get()).map_err(|_| "no data.items list")
            })
            .map_err(|reason| Failure::Unreadable {
                status,
                reason: reason.to_owned(),
            })?;
        let entries = items
            .items
            .into_iter()
            .map(Entry::read)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|reason| Failure::Unreadable {
                status,
                reason: format!("an entry is not one: {reason}"),
            })?;
        let place = |value: Option<serde_json::Value>| value.and_then(|v| v.as_u64());
        let last_judged = place(items.first_judged)
            .zip(entries.len().checked_sub(1))
            .and_then(|(first, more)| first.checked_add(u64::try_from(more).ok()?));
        Ok(Page {
            entries,
            full: false,
            last_judged,
            oldest_judged: place(items.oldest_judged),
        })
    }

    /// What it is, for messages: `the mock's journal at URL`.
    fn what(&self) -> String {
        match &self.kind {
            Kind::Mock => format!("the mock's journal at {}", self.base),
            Kind::Sandbox(id) => format!("the journal of sandbox {id} at {}", self.base),
            Kind::Proxy => format!("the contract proxy's exchanges at {}", self.base),
        }
    }

    /// The one line a failure says, and its exit code: `following` once
    /// the first read succeeded (with `--follow`), with the seq of the
    /// last entry read, if any.
    pub fn error(&self, failure: &Failure, following: Option<Option<u64>>) -> CliError {
        let exit = match failure {
            Failure::Refused { status, .. } if *status != 429 && *status < 500 => Exit::Rejected,
            _ => Exit::Unavailable,
        };
        let mut message = match following {
            None => format!(
                "tail failed: cannot read {}: {}",
                self.what(),
                describe(failure)
            ),
            Some(last) => format!(
                "tail stopped: {} stopped answering: {} ({})",
                self.what(),
                describe(failure),
                last.map_or_else(
                    || "no entry read yet".to_owned(),
                    |seq| format!("the last entry read: seq {seq}")
                )
            ),
        };
        if let Some(hint) = self.hint(failure) {
            message.push_str("; ");
            message.push_str(&hint);
        }
        CliError::Journal { message, exit }
    }

    fn hint(&self, failure: &Failure) -> Option<String> {
        let server = match self.kind {
            Kind::Proxy => "the contract proxy",
            Kind::Mock | Kind::Sandbox(_) => "the mock",
        };
        Some(match failure {
            // The payment commands' advice, about this server.
            Failure::NoAnswer {
                kind: NoAnswer::Connect | NoAnswer::Tls,
                error,
                ..
            } => crate::error::transport_hint(
                error,
                &self.base,
                &self.base_from,
                self.trusted_ca,
                server,
            )?,
            Failure::NoAnswer {
                kind: NoAnswer::Timeout,
                ..
            } => format!(
                "no answer within {} s; try again, or raise --timeout",
                self.timeout.as_secs_f64()
            ),
            Failure::NoAnswer {
                kind: NoAnswer::InvalidHttp,
                reason,
                ..
            } => match crate::error::https_instead(&self.base) {
                // hyper's words for a TLS record read as an answer.
                Some(https) if reason.contains("invalid HTTP version") => https,
                _ => format!("is {server} at {}? set the URL with --base-url", self.base),
            },
            Failure::NoAnswer { .. } => return None,
            // What was sent came from the URL, not from a key.
            Failure::Refused { status: 401, .. } if self.key.is_none() && self.url_credentials => {
                crate::error::URL_CREDENTIALS_REFUSED.to_owned()
            }
            Failure::Refused { status: 401, .. } | Failure::Refused { status: 403, .. } => {
                match self.kind {
                    Kind::Proxy => "give the proxy's admin key (its --admin-key) with --api-key \
                                    or PAYMENTS_API_KEY"
                        .to_owned(),
                    Kind::Mock | Kind::Sandbox(_) => "give the mock's admin key, or a merchant's \
                                                      API key for that merchant's requests, with \
                                                      --api-key or PAYMENTS_API_KEY"
                        .to_owned(),
                }
            }
            Failure::Refused { code, .. } if code == "SANDBOX_NOT_FOUND" => {
                "is --sandbox right? a sandbox is removed when its owner deletes it or after its \
                 time to live unused"
                    .to_owned()
            }
            Failure::Refused { status: 404, .. } => match self.kind {
                Kind::Proxy => format!(
                    "is {} the contract proxy? (for the mock's journal, leave out --proxy)",
                    self.base
                ),
                Kind::Mock | Kind::Sandbox(_) => format!(
                    "is {} the mock? (for a contract proxy's exchanges, add --proxy)",
                    self.base
                ),
            },
            Failure::Refused { status, .. } if *status == 429 || *status >= 500 => {
                "the server may be having trouble; try again later".to_owned()
            }
            Failure::Refused { .. } => return None,
            Failure::NotEnvelope { .. } | Failure::Unreadable { .. } => match self.kind {
                Kind::Proxy => format!("is {} the contract proxy?", self.base),
                Kind::Mock | Kind::Sandbox(_) => format!(
                    "is {} the mock? (for a contract proxy's exchanges, add --proxy)",
                    self.base
                ),
            },
        })
    }
}

/// A URL without its user and password.
fn shown_url(url: &reqwest::Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}
