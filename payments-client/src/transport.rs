//! The one send path: URL, headers, auth, request id, timeouts, retries and
//! envelope decoding for every call, and the checked status read every
//! status goes through ([`Transport::read_status`]).
//!
//! `calls/` only describe a call ([`Call`]); this module performs it. It
//! does not know about reconciliation (see `reconcile.rs`), which works on
//! the [`Failed`] it returns.

use std::time::Duration;

use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER, USER_AGENT,
};
use serde::de::DeserializeOwned;
use tokio::time::Instant;
use tracing::{Instrument, field};
use url::Url;

use crate::calls::status::Lookup;
use crate::calls::{Call, Method};
use crate::decode::{self, Exchange};
use crate::error::{Error, Outcome, TransportKind};
use crate::guard::AnswerGuard;
use crate::model::envelope::Reply;
use crate::model::transaction::PaymentStatus;
use crate::retry::{Decision, Failure, RetryPolicy};
use crate::secret::Credential;

mod redact;
pub use redact::redact_url;

/// The header carrying the per-call request id, sent on every attempt of a
/// call; the service answers with the same value.
// CONTRACT section 2.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// What one logical call shares across its attempts (and a reconciliation
/// lookup): the request id and the deadline.
#[derive(Debug, Clone)]
pub(crate) struct CallContext {
    pub request_id: String,
    pub deadline: Option<Instant>,
}

/// A failed call: the last attempt's error, how many attempts were made,
/// and whether an *earlier* attempt was ambiguous (its outcome unknown).
///
/// The last error is kept unwrapped so reconciliation can look at its
/// code; [`Failed::into_error`] is what a caller finally sees.
#[derive(Debug)]
pub(crate) struct Failed {
    pub error: Error,
    pub attempts: u32,
    pub earlier_ambiguous: bool,
    pub request_id: String,
}

impl Failed {
    /// The error to report. When the last error alone would say "not
    /// carried out" but an earlier attempt may have been carried out, it
    /// is wrapped in [`Error::AfterAmbiguousAttempt`] so that
    /// [`Error::outcome`] says `Unknown` (CONTRACT section 12: no carried
    /// out call is reported as failed).
    pub(crate) fn into_error(self) -> Error {
        if self.earlier_ambiguous && self.error.outcome() == Outcome::NotCarriedOut {
            Error::AfterAmbiguousAttempt {
                attempts: self.attempts,
                request_id: self.request_id,
                last: Box::new(self.error),
            }
        } else {
            self.error
        }
    }

    /// The error to report for a status read: the last attempt's, never
    /// wrapped. A read changes nothing (interface document, section 3), so
    /// no earlier attempt of it can have been "carried out": a 503 then a
    /// 400 `AMBIGUOUS_REFERENCE_NO` is that 400, as on a first attempt.
    pub(crate) fn into_read_error(self) -> Error {
        self.error
    }
}

#[derive(Debug)]
pub(crate) struct Transport {
    pub http: reqwest::Client,
    /// Base URL text without a trailing slash; paths are appended to it so a
    /// path prefix (`https://host/payments`) is kept.
    pub base: String,
    /// `base` parsed once; each call only replaces its path.
    pub base_url: Url,
    /// The path prefix of `base` (`/payments`, or empty).
    pub base_path: String,
    /// `Authorization: Basic` from `user:pass@` in the base URL (sensitive).
    pub basic_auth: Option<HeaderValue>,
    pub credential: Option<Credential>,
    pub user_agent: HeaderValue,
    pub timeout: Option<Duration>,
    pub deadline: Option<Duration>,
    pub retry: RetryPolicy,
    /// Checks every answer against its request; `None` when the builder
    /// turned the check off.
    pub guard: Option<AnswerGuard>,
    /// The OpenTelemetry instruments (feature `opentelemetry`).
    #[cfg(feature = "opentelemetry")]
    pub metrics: crate::otel::Metrics,
}

impl Transport {
    pub(crate) fn context(&self) -> CallContext {
        CallContext {
            request_id: uuid::Uuid::new_v4().to_string(),
            deadline: self.fresh_deadline(),
        }
    }

    /// The client's per-call deadline, counted from now.
    pub(crate) fn fresh_deadline(&self) -> Option<Instant> {
        self.deadline.map(|d| later(Instant::now(), d))
    }

    fn url(&self, call: &Call) -> Url {
        // The scheme and host were parsed once when the client was built;
        // the call's path is already percent-encoded.
        let mut url = self.base_url.clone();
        let mut path = String::with_capacity(self.base_path.len() + call.path.len());
        path.push_str(&self.base_path);
        path.push_str(&call.path);
        url.set_path(&path);
        if !call.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in &call.query {
                pairs.append_pair(k, v);
            }
        }
        url
    }

    fn headers(&self, ctx: &CallContext, has_body: bool) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, HeaderValue::from_static("application/json"));
        if has_body {
            h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        h.insert(USER_AGENT, self.user_agent.clone());
        if let Some(basic) = &self.basic_auth {
            h.insert(AUTHORIZATION, basic.clone());
        }
        if let Ok(v) = HeaderValue::from_str(&ctx.request_id) {
            h.insert(REQUEST_ID_HEADER, v);
        }
        if let Some(c) = &self.credential {
            h.insert(c.header().clone(), c.value().clone());
        }
        h
    }

    /// A status read with its answer checked: what [`Client::status`],
    /// [`Client::status_by_reference`], the polls of `wait_for_final` and
    /// the read-backs of reconciliation all go through.
    ///
    /// [`Client::status`]: crate::Client::status
    /// [`Client::status_by_reference`]: crate::Client::status_by_reference
    pub(crate) async fn read_status(
        &self,
        lookup: Lookup<'_>,
        ctx: &CallContext,
    ) -> Result<Reply<PaymentStatus>, Error> {
        let call = lookup.call()?;
        let span = self.call_span(&call, ctx);
        match lookup {
            Lookup::Id(id) => span.record("payments.transaction_id", id),
            Lookup::Reference { reference_no, .. } => {
                span.record("payments.reference_no", reference_no)
            }
        };
        let read = async {
            let reply = self
                .execute::<PaymentStatus>(&call, ctx)
                .await
                .map_err(Failed::into_read_error)?;
            if let Some(guard) = &self.guard {
                guard
                    .status(lookup, &reply)
                    .map_err(Error::AnswerMismatch)?;
            }
            Ok(reply)
        }
        .instrument(span.clone())
        .await;
        // What the lookup did not name, from the answer it accepted: the
        // transaction a reference read found (a reconciliation's read-back
        // included), the reference of a read by id.
        if let Ok(reply) = &read {
            let found = reply.data();
            match lookup {
                Lookup::Id(_) => span.record("payments.reference_no", found.reference_no.as_str()),
                Lookup::Reference { .. } => span.record(
                    "payments.transaction_id",
                    found.transaction_id.as_ref() as &str,
                ),
            };
        }
        finish(self, call.name, &span, &read);
        read
    }

    /// The span of one call (CONTRACT section 21): every attempt, and a
    /// reconciliation's read-back, is its child. Named `payments.call` (as
    /// the log shows it) and, for OpenTelemetry, `payments <call>`; it
    /// carries the call's `url.template`, and later its reference,
    /// transaction, outcome (`ok`, `not_carried_out`, `unknown`,
    /// `mismatch`) and whether it was reconciled. Never a key, an OTP or a
    /// payer id.
    pub(crate) fn call_span(&self, call: &Call, ctx: &CallContext) -> tracing::Span {
        tracing::info_span!(
            "payments.call",
            otel.name = %format_args!("payments {}", call.name),
            call = call.name,
            method = call.method.as_str(),
            path = %call.path,
            request_id = %ctx.request_id,
            attempts = field::Empty,
            "url.template" = call.template,
            "payments.reference_no" = field::Empty,
            "payments.transaction_id" = field::Empty,
            "payments.outcome" = field::Empty,
            "payments.reconciled" = field::Empty,
            "error.type" = field::Empty,
            "otel.status_code" = field::Empty,
        )
    }

    /// Runs a call with retries and decodes its envelope.
    pub(crate) async fn execute<T: DeserializeOwned>(
        &self,
        call: &Call,
        ctx: &CallContext,
    ) -> Result<Reply<T>, Failed> {
        async {
            let url = self.url(call);
            let mut attempt = 0u32;
            let mut earlier_ambiguous = false;
            loop {
                attempt += 1;
                let result = self.attempt::<T>(call, &url, ctx, attempt).await;
                let error = match result {
                    Ok(reply) => {
                        tracing::Span::current().record("attempts", attempt);
                        return Ok(reply);
                    }
                    Err(e) => e,
                };
                let decision = self.retry.decide(attempt, Failure::of(&error), jitter_seed());
                let wait = match decision {
                    Decision::Stop => None,
                    Decision::RetryAfter(wait) => match ctx.deadline {
                        Some(deadline) if later(Instant::now(), wait) >= deadline => None,
                        _ => Some(wait),
                    },
                };
                let Some(wait) = wait else {
                    tracing::Span::current().record("attempts", attempt);
                    return Err(Failed {
                        error,
                        attempts: attempt,
                        earlier_ambiguous,
                        request_id: ctx.request_id.clone(),
                    });
                };
                earlier_ambiguous |= error.outcome() == Outcome::Unknown;
                #[cfg(feature = "opentelemetry")]
                self.metrics.retry(call.template);
                tracing::warn!(attempt, error = %error, wait_ms = wait.as_millis() as u64, "retrying");
                tokio::time::sleep(wait).await;
            }
        }
        .await
    }

    async fn attempt<T: DeserializeOwned>(
        &self,
        call: &Call,
        url: &Url,
        ctx: &CallContext,
        attempt: u32,
    ) -> Result<Reply<T>, Error> {
        // An HTTP client span by OpenTelemetry's conventions: named
        // `METHOD template`, with the server, the template, the retry's
        // number, and the answer's status or the failure's type (then
        // status Error).
        let method = call.method.as_str();
        let span = tracing::info_span!(
            "attempt",
            otel.name = %format_args!("{method} {}", call.template),
            otel.kind = "client",
            attempt,
            status = field::Empty,
            latency_ms = field::Empty,
            "http.request.method" = method,
            "server.address" = self.base_url.host_str().unwrap_or_default(),
            "server.port" = self.base_url.port_or_known_default().unwrap_or_default(),
            "url.template" = call.template,
            "http.request.resend_count" = field::Empty,
            "http.response.status_code" = field::Empty,
            "error.type" = field::Empty,
            "otel.status_code" = field::Empty,
        );
        if attempt > 1 {
            span.record("http.request.resend_count", attempt - 1);
        }
        let mut answered = None;
        #[cfg(feature = "opentelemetry")]
        let started = Instant::now();
        let result = self
            .attempt_inner(call, url, ctx, attempt, &mut answered)
            .instrument(span)
            .await;
        #[cfg(feature = "opentelemetry")]
        {
            let error = match (&result, answered) {
                (_, Some(status)) if status >= 400 => Some(status.to_string()),
                (Err(e), _) => Some(e.type_name().to_owned()),
                (Ok(_), _) => None,
            };
            self.metrics.attempt(
                crate::otel::Attempt {
                    method,
                    server: self.base_url.host_str().unwrap_or_default(),
                    port: self.base_url.port_or_known_default().unwrap_or_default(),
                    template: call.template,
                },
                started.elapsed().as_secs_f64(),
                answered,
                error.as_deref(),
            );
        }
        #[cfg(not(feature = "opentelemetry"))]
        let _ = answered;
        result
    }

    async fn attempt_inner<T: DeserializeOwned>(
        &self,
        call: &Call,
        url: &Url,
        ctx: &CallContext,
        attempt: u32,
        answered: &mut Option<u16>,
    ) -> Result<Reply<T>, Error> {
        let started = Instant::now();
        let limit = match (self.timeout, ctx.deadline) {
            (Some(t), Some(d)) => Some(t.min(d.saturating_duration_since(started))),
            (Some(t), None) => Some(t),
            (None, Some(d)) => Some(d.saturating_duration_since(started)),
            (None, None) => None,
        };
        let method = match call.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
        };
        // The request is assembled in place: one header map, no merge, and
        // the body shared with the other attempts.
        let mut request = reqwest::Request::new(method, url.clone());
        *request.headers_mut() = self.headers(ctx, call.body.is_some());
        // The W3C trace context of this attempt's span (feature
        // `opentelemetry`).
        #[cfg(feature = "opentelemetry")]
        crate::otel::inject(request.headers_mut());
        if let Some(body) = &call.body {
            *request.body_mut() = Some(body.clone().into());
        }
        let exchange = async {
            let response = self.http.execute(request).await?;
            let status = response.status().as_u16();
            let headers = response.headers();
            let content_type = headers.get(CONTENT_TYPE).map(header_text);
            let retry_after = headers.get(RETRY_AFTER).and_then(parse_retry_after);
            let body = decode::read_body(response).await?;
            Ok::<_, reqwest::Error>((status, content_type, retry_after, body))
        };
        let outcome = match limit {
            Some(limit) => tokio::time::timeout(limit, exchange).await,
            None => Ok(exchange.await),
        };
        let span = tracing::Span::current();
        span.record("latency_ms", started.elapsed().as_millis() as u64);
        let transport_error = |kind, source| Error::Transport {
            kind,
            request_id: ctx.request_id.clone(),
            source,
        };
        let (status, content_type, retry_after, (body, too_large)) = match outcome {
            Err(_elapsed) => {
                tracing::debug!("attempt timed out");
                span.record("error.type", "timeout");
                span.record("otel.status_code", "ERROR");
                return Err(transport_error(TransportKind::Timeout, None));
            }
            Ok(Err(e)) => {
                let kind = classify(&e);
                span.record("error.type", kind.as_str());
                span.record("otel.status_code", "ERROR");
                // Without the URL: it may carry `user:pass@` of the base URL.
                let e = e.without_url();
                tracing::debug!(error = %e, "attempt failed");
                return Err(transport_error(kind, Some(e)));
            }
            Ok(Ok(parts)) => parts,
        };
        *answered = Some(status);
        span.record("status", status);
        span.record("http.response.status_code", status);
        if status >= 400 {
            span.record("error.type", status);
            span.record("otel.status_code", "ERROR");
        }
        tracing::debug!(status, "response received");
        decode::decode(Exchange {
            status,
            content_type,
            body: &body,
            too_large,
            request_id: &ctx.request_id,
            retry_after,
            attempt,
        })
    }
}

/// Records how a call ended on its span: `payments.outcome` (`ok`,
/// `not_carried_out`, `unknown`, `mismatch`), `payments.reconciled`, and
/// `error.type` of a failure, whose OpenTelemetry status is then Error
/// (`otel.status_code`, as tracing-opentelemetry reads it).
pub(crate) fn finish<T>(
    transport: &Transport,
    call: &'static str,
    span: &tracing::Span,
    result: &Result<Reply<T>, Error>,
) {
    let outcome = match result {
        Ok(reply) => {
            span.record("payments.reconciled", reply.is_reconciled());
            "ok"
        }
        Err(error) => {
            span.record("payments.reconciled", false);
            span.record("error.type", error.type_name());
            span.record("otel.status_code", "ERROR");
            match (error, error.outcome()) {
                (Error::AnswerMismatch(_), _) => "mismatch",
                (_, Outcome::NotCarriedOut) => "not_carried_out",
                (_, Outcome::Unknown) => "unknown",
            }
        }
    };
    span.record("payments.outcome", outcome);
    #[cfg(feature = "opentelemetry")]
    transport.metrics.finished(call, outcome);
    #[cfg(not(feature = "opentelemetry"))]
    let _ = (transport, call);
}

fn classify(e: &reqwest::Error) -> TransportKind {
    if crate::error::tls_reason(e).is_some() {
        TransportKind::Tls
    } else if e.is_connect() {
        TransportKind::Connect
    } else if e.is_timeout() {
        TransportKind::Timeout
    } else if crate::error::invalid_http(e).is_some() {
        TransportKind::InvalidHttp
    } else {
        TransportKind::Connection
    }
}

/// A header's value as text, whatever its bytes: UTF-8 when they are,
/// else one character per byte (ISO-8859-1, HTTP's historical charset), so
/// a value with bytes outside visible ASCII is kept, not lost as if none
/// had been sent. The caller escapes it before showing it.
fn header_text(value: &HeaderValue) -> String {
    match std::str::from_utf8(value.as_bytes()) {
        Ok(text) => text.to_owned(),
        Err(_) => value.as_bytes().iter().map(|&b| char::from(b)).collect(),
    }
}

/// `at` plus `wait`, or, past what a clock can count (`Duration::MAX`
/// given as a timeout), thirty years on: never a panic on overflow.
pub(crate) fn later(at: Instant, wait: Duration) -> Instant {
    at.checked_add(wait)
        .unwrap_or_else(|| at + Duration::from_secs(30 * 365 * 24 * 3600))
}

/// `Retry-After` as delay-seconds or an HTTP date. Seconds too many for a
/// `u64` are the longest wait there is (the retry policy caps it), not
/// none.
pub(crate) fn parse_retry_after(v: &HeaderValue) -> Option<Duration> {
    let text = v.to_str().ok()?.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::MAX);
    }
    let at = chrono::DateTime::parse_from_rfc2822(text).ok()?;
    let delta = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

/// A random `u64` for the backoff jitter, from the operating system. If
/// that ever fails, the clock's nanoseconds still spread retries apart.
fn jitter_seed() -> u64 {
    getrandom::u64().unwrap_or_else(|_| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::from(d.subsec_nanos()))
    })
}
