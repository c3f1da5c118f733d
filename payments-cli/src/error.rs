//! The CLI's error: usage, config, I/O and failed service calls, with
//! [`CliError::exit_code`] as the only mapping to the documented exit codes;
//! and [`ConfigError`], what the config file can get wrong (`config.rs`
//! reports with both, so they live here, below it).
//!
//! `Display` is the one line `main` prints: what failed and what to do. The
//! API key never appears in it (the client keeps it in a `SecretString`, and
//! nothing here formats settings).

use std::path::{Path, PathBuf};

use payments_client::{Error as ClientError, ErrorCode, Outcome};

use crate::exit::Exit;

mod config;
mod hint;

pub use config::{ConfigError, MAX_CONFIG_BYTES, NO_CONFIG_DIR};

use hint::hint;
pub(crate) use hint::{URL_CREDENTIALS_REFUSED, has_userinfo, https_instead, transport_hint};

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// Bad flags or values that clap could not check alone.
    #[error("{0}")]
    Usage(String),

    /// The config file.
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// Reading an input file or stdin.
    #[error("cannot read {}: {source}", display_path(.path))]
    Input {
        path: PathBuf,
        source: std::io::Error,
    },

    /// Reading a file a setting names (a certificate, a key).
    #[error("cannot read {} ({named_by}): {source}", shown(.path))]
    SettingFile {
        path: PathBuf,
        /// The flag, or the profile key and the config file.
        named_by: String,
        source: std::io::Error,
    },

    /// Writing the results.
    #[error("cannot write the output: {0}")]
    Output(#[source] std::io::Error),

    /// The async runtime could not start (out of threads or file descriptors).
    #[error("cannot start: {0}")]
    Runtime(#[source] std::io::Error),

    /// A server's journal (`tail`) could not be read: the whole line, and
    /// the exit code it maps to.
    #[error("{message}")]
    Journal { message: String, exit: Exit },

    /// An answer the service gave, refused by the CLI on seeing another
    /// answer of the same run contradict it (one transactionId answered
    /// for two references): which is true cannot be known, so neither is
    /// used. Like an answer the client refused: exit 4, and never printed
    /// as the service's envelope.
    #[error("{call}: {reason}")]
    Refused {
        /// What was asked, e.g. `status of reference RC1`.
        call: String,
        /// Why, printable.
        reason: String,
        /// The answer, exactly as it came.
        received: String,
    },

    /// A call to the service failed.
    #[error(
        "{}",
        describe_call_failure(
            .call,
            (.base_url, .base_url_from),
            .source,
            .advice.as_deref(),
            *.trusted_ca
        )
    )]
    Call {
        /// What was attempted, e.g. `initiate` or `status of 0193...`.
        call: String,
        base_url: String,
        /// Where the base URL came from (`--base-url`, `PAYMENTS_BASE_URL`,
        /// `base_url of profile 'staging' in FILE`), said with a failed
        /// connection's advice; empty when not known.
        base_url_from: String,
        source: Box<ClientError>,
        /// What to do, in the command's words, instead of the generic hint
        /// (e.g. the products a service offers after an unknown `--product`).
        advice: Option<String>,
        /// Whether a CA was given to trust (`--ca-cert`): a refused
        /// certificate's advice then leaves its issuer out.
        trusted_ca: bool,
    },
}

/// A path as a message shows it: printable, at most 200 bytes of it.
fn shown(path: &Path) -> String {
    crate::text::cut(&path.display().to_string())
}

fn display_path(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "standard input".to_owned()
    } else {
        shown(path)
    }
}

impl CliError {
    /// The documented exit code for this error.
    #[must_use]
    pub fn exit_code(&self) -> Exit {
        match self {
            Self::Usage(_) | Self::Config(_) | Self::Input { .. } | Self::SettingFile { .. } => {
                Exit::Usage
            }
            Self::Output(_) | Self::Runtime(_) | Self::Refused { .. } => Exit::Unavailable,
            Self::Call { source, .. } => exit_for_client_error(source),
            Self::Journal { exit, .. } => *exit,
        }
    }

    /// Whether this is the reader of our stdout going away (`payments status | head`).
    #[must_use]
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Self::Output(err) if err.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// The envelope a script may be shown on stdout: the service's own
    /// answer to the call (its failure envelope, `isSuccess` false), never
    /// one the client refused (CONTRACT section 17: an answer about another
    /// request, or a success it could not read), which would hand a
    /// `jq .data.transactionId` another order's id.
    #[must_use]
    pub fn service_envelope(&self) -> Option<&str> {
        match self {
            Self::Call { source, .. } if refused_envelope(source).is_none() => {
                source.raw_envelope()
            }
            _ => None,
        }
    }

    /// The answer the client refused, exactly as it came, for stderr (`-v`)
    /// and the `received` of a many-look-up line.
    #[must_use]
    pub fn refused_envelope(&self) -> Option<&str> {
        match self {
            Self::Call { source, .. } => refused_envelope(source),
            Self::Refused { received, .. } => Some(received),
            _ => None,
        }
    }
}

/// The envelope of an answer the client did not accept as the service's
/// answer to its request: one about another request
/// ([`ClientError::AnswerMismatch`]), or a success whose `data` is missing
/// or unreadable. `None` for every other error, the service's own failure
/// envelopes included.
#[must_use]
pub fn refused_envelope(error: &ClientError) -> Option<&str> {
    match error {
        ClientError::AnswerMismatch(mismatch) => Some(&mismatch.raw_envelope),
        ClientError::MissingData { raw_envelope, .. }
        | ClientError::Decode { raw_envelope, .. } => Some(raw_envelope),
        ClientError::AfterAmbiguousAttempt { last, .. } => refused_envelope(last),
        _ => None,
    }
}

/// The exit code of one failed client call.
#[must_use]
pub fn exit_for_client_error(error: &ClientError) -> Exit {
    let not_found = matches!(error.error_code(), Some(ErrorCode::TransactionNotFound));
    match error {
        // An answer that leaves the outcome open (a 5xx, INTERNAL_ERROR on
        // any HTTP status, a gateway's 408 or 499 with an envelope) is the
        // service failing, never the service rejecting the call: exit 1
        // would tell a script a payment the service made was refused.
        ClientError::Api(_) if !not_found && error.outcome() == Outcome::Unknown => {
            Exit::Unavailable
        }
        ClientError::Api(api) => Exit::for_service_answer(api.status, not_found),
        ClientError::InvalidInput(..) | ClientError::Money(..) | ClientError::Config { .. } => {
            Exit::Usage
        }
        ClientError::WaitTimeout { .. } => Exit::WaitGaveUp,
        // The address disagrees with the service: a rejection, like a 4xx.
        ClientError::ReturnMismatch { .. } => Exit::Rejected,
        // An answer about another request is not the service's contract:
        // like an answer that is not its envelope, whatever its status.
        ClientError::AnswerMismatch(..) => Exit::Unavailable,
        _ if not_found => Exit::NotFound,
        _ => Exit::Unavailable,
    }
}

/// A short label for a failed look-up, for the STATUS column.
#[must_use]
pub fn label_for(error: &ClientError) -> &'static str {
    match exit_for_client_error(error) {
        Exit::NotFound => "NOT FOUND",
        Exit::Rejected => "REJECTED",
        Exit::Usage => "INVALID",
        Exit::WaitGaveUp => "GAVE UP",
        Exit::Ok | Exit::Unavailable | Exit::Mismatch => "ERROR",
    }
}

/// One line: what failed, why, what to do, and the request id to quote.
///
/// The service's own text is escaped for the terminal: a message must not be
/// able to move the cursor or recolour the screen.
fn describe_call_failure(
    call: &str,
    (base_url, base_url_from): (&str, &str),
    error: &ClientError,
    advice: Option<&str>,
    trusted_ca: bool,
) -> String {
    let mut line = match error {
        // The client's own line names the call and what it asked about
        // (`initiate of ORDER-77: the service answered for another
        // request: referenceNo sent ORDER-77, answered INV-2026-0001`).
        ClientError::AnswerMismatch(mismatch) => crate::output::printable(&mismatch.to_string()),
        _ => {
            let reason = reason(error);
            let reason = hint::through_proxy(error, &reason, base_url).unwrap_or(reason);
            format!("{call} failed: {}", crate::output::printable(&reason))
        }
    };
    if let Some(hint) = advice
        .map(str::to_owned)
        .or_else(|| hint(call, error, base_url, base_url_from, trusted_ca))
    {
        line.push_str("; ");
        line.push_str(&hint);
    }
    if let Some(id) = error.request_id() {
        line.push_str(&format!(" (request id {id})"));
    }
    line
}

/// The reason part of a failure, without the request id.
#[must_use]
pub fn reason(error: &ClientError) -> String {
    crate::secrets::hide(&reason_as_said(error))
}

/// [`reason`] before the secrets this run sent are hidden.
fn reason_as_said(error: &ClientError) -> String {
    match error {
        ClientError::Api(api) if api.message.is_empty() => {
            format!("{} (HTTP {})", api.code, api.status)
        }
        ClientError::Api(api) => format!("{} (HTTP {}): {}", api.code, api.status, api.message),
        ClientError::UnexpectedResponse {
            status,
            content_type,
            ..
        } => format!(
            "the service answered HTTP {status} with {} instead of its JSON envelope",
            content_type_said(content_type.as_deref())
        ),
        ClientError::WaitTimeout { waited, .. } => format!(
            "no final state (SUCCESSFUL, FAILED, EXPIRED) within {:.1} s",
            waited.as_secs_f64()
        ),
        // The read-back's own failure is the reason a reader needs: the
        // error's source, which its one line leaves out.
        ClientError::Reconciliation {
            source: Some(read_back),
            ..
        } => format!("{error}: {}", reason_as_said(read_back)),
        // Without the call's name, which the look-up's row already shows.
        ClientError::AnswerMismatch(mismatch) => {
            let line = mismatch.to_string();
            let asked = format!("{}: ", mismatch.asked);
            line.strip_prefix(&asked).unwrap_or(&line).to_owned()
        }
        other => client_line(other),
    }
}

/// The client's line for `error`, except that an answer that does not
/// decode is said without serde's ` at line L column C` (which moves with
/// the rest of the answer: the same fault in two answers read alike); the
/// field's path stays (`could not decode the response at data.createdAt:
/// invalid type: integer `1767225600000`, expected a string`).
#[must_use]
pub fn client_line(error: &ClientError) -> String {
    // The client's note on an unknown outcome is left out: the CLI gives
    // its own advice (what to check, and how), and says nothing of the
    // kind after a status read, which changes nothing.
    let line = error.to_string_without_outcome();
    match error {
        ClientError::Decode { .. } => without_json_position(&line).to_owned(),
        _ => line,
    }
}

/// `text` without a trailing ` at line L column C` (serde_json's position).
fn without_json_position(text: &str) -> &str {
    let Some((before, position)) = text.rsplit_once(" at line ") else {
        return text;
    };
    let numbers = position
        .split_once(" column ")
        .is_some_and(|(line, column)| {
            [line, column]
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
    if numbers { before } else { text }
}

/// The content type of an answer that is not the envelope, as a reason
/// names it: as sent when it is readable (visible ASCII, what an HTTP
/// header is meant to hold), else said to be unreadable and shown quoted,
/// escaped; `an empty content type` for an empty one, `no content type` only
/// when none was sent.
pub(crate) fn content_type_said(content_type: Option<&str>) -> String {
    match content_type {
        None => "no content type".to_owned(),
        Some(sent) if sent.trim().is_empty() => "an empty content type".to_owned(),
        Some(sent)
            if sent
                .chars()
                .all(|c| c == '\t' || c == ' ' || c.is_ascii_graphic()) =>
        {
            sent.to_owned()
        }
        Some(sent) => format!(
            "a content type that is not readable text ({})",
            crate::text::quote(sent)
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use payments_client::error::TransportKind;

    use super::*;

    fn call(source: ClientError) -> CliError {
        CliError::Call {
            call: "status of abc".to_owned(),
            base_url: "http://127.0.0.1:1".to_owned(),
            base_url_from: String::new(),
            source: Box::new(source),
            advice: None,
            trusted_ca: false,
        }
    }

    /// serde's position is not said: it moves with the rest of the answer.
    #[test]
    fn an_answer_that_does_not_decode_is_said_without_its_position() {
        let err = call(ClientError::Decode {
            path: "data.createdAt".to_owned(),
            message: "invalid type: integer `1767225600000`, expected a string at line 1 column \
                      173"
            .to_owned(),
            status: 200,
            request_id: "req-1".to_owned(),
            raw_envelope: "{}".to_owned(),
        });
        assert_eq!(
            err.to_string(),
            "status of abc failed: could not decode the response at data.createdAt: invalid \
             type: integer `1767225600000`, expected a string (request id req-1)"
        );
        for kept in [
            "a at line 1",
            "a at line x column 2",
            "a at line 1 column ",
            "plain",
        ] {
            assert_eq!(without_json_position(kept), kept);
        }
        assert_eq!(without_json_position("a at line 2 column 7"), "a");
    }

    #[test]
    fn unreachable_names_the_url_the_flag_and_the_request_id() {
        let err = call(ClientError::Transport {
            kind: TransportKind::Connect,
            request_id: "req-1".to_owned(),
            source: None,
        });
        assert_eq!(err.exit_code(), Exit::Unavailable);
        assert_eq!(
            err.to_string(),
            "status of abc failed: could not connect to the service; is the service running at \
             http://127.0.0.1:1? set the URL with --base-url or PAYMENTS_BASE_URL (request id req-1)"
        );
    }

    #[test]
    fn a_body_that_is_not_the_envelope_is_a_service_error() {
        let err = call(ClientError::UnexpectedResponse {
            status: 502,
            body_prefix: "<html>".to_owned(),
            content_type: Some("text/html".to_owned()),
            request_id: "req-2".to_owned(),
            reason: "not JSON".to_owned(),
            retry_after: None,
        });
        assert_eq!(err.exit_code(), Exit::Unavailable);
        let text = err.to_string();
        assert!(text.contains("HTTP 502 with text/html"), "{text}");
        assert!(!text.contains("<html>"), "{text}");
    }

    #[test]
    fn an_initiate_with_an_unknown_outcome_says_to_check_before_retrying() {
        let err = CliError::Call {
            call: "initiate".to_owned(),
            base_url: "http://127.0.0.1:1".to_owned(),
            base_url_from: String::new(),
            source: Box::new(ClientError::Transport {
                kind: TransportKind::Timeout,
                request_id: "req-3".to_owned(),
                source: None,
            }),
            advice: None,
            trusted_ca: false,
        };
        assert_eq!(err.exit_code(), Exit::Unavailable);
        let text = err.to_string();
        assert!(text.contains("may have carried this out"), "{text}");
        assert!(text.contains("payments status"), "{text}");
        assert!(!text.contains("is the service running"), "{text}");
    }

    #[test]
    fn a_timed_out_look_up_suggests_a_longer_timeout() {
        let err = call(ClientError::Transport {
            kind: TransportKind::Timeout,
            request_id: "req-4".to_owned(),
            source: None,
        });
        let text = err.to_string();
        assert!(text.contains("--timeout"), "{text}");
        assert!(!text.contains("may have carried"), "{text}");
    }

    #[test]
    fn service_text_cannot_drive_the_terminal() {
        let err = call(ClientError::Config {
            message: "bad \u{1b}[2J input".to_owned(),
        });
        assert!(!err.to_string().contains('\u{1b}'), "{err}");
    }

    #[test]
    fn a_wait_that_gives_up_exits_5() {
        let err = call(ClientError::WaitTimeout {
            waited: Duration::from_millis(1500),
            last: None,
        });
        assert_eq!(err.exit_code(), Exit::WaitGaveUp);
        assert!(err.to_string().contains("within 1.5 s"), "{err}");
        assert!(err.to_string().contains("--wait-timeout"), "{err}");
    }

    #[test]
    fn local_problems_are_usage_errors() {
        let config = call(ClientError::Config {
            message: "bad url".to_owned(),
        });
        assert_eq!(config.exit_code(), Exit::Usage);
        assert_eq!(CliError::Usage("x".to_owned()).exit_code(), Exit::Usage);
    }

    /// An `ApiError` as the client builds it from a failure envelope.
    fn answered(status: u16, code: &str, message: &str) -> ClientError {
        let envelope = serde_json::json!({
            "isSuccess": false, "errorCode": code, "message": message, "data": null
        })
        .to_string();
        match payments_client::wire::decode_response::<serde_json::Value>(
            status,
            Some("application/json"),
            envelope.as_bytes(),
        ) {
            Err(err) => err,
            Ok(_) => panic!("a failure envelope decodes to an error"),
        }
    }

    fn unavailable(message: &str) -> ClientError {
        answered(503, "STORE_UNAVAILABLE", message)
    }

    #[test]
    fn a_services_retry_advice_is_said_once() {
        let text = call(unavailable(
            "the store cannot reach its database; retry later",
        ))
        .to_string();
        assert_eq!(text.matches("later").count(), 1, "{text}");
        let text = call(unavailable("boom")).to_string();
        assert!(text.contains("try again later"), "{text}");
    }

    #[test]
    fn an_answer_that_leaves_the_outcome_open_is_never_a_rejection() {
        for (status, code) in [
            (200, "INTERNAL_ERROR"),
            (400, "INTERNAL_ERROR"),
            (408, "REQUEST_TIMEOUT"),
            (499, "CLIENT_CLOSED_REQUEST"),
        ] {
            let err = call(answered(status, code, "m"));
            assert_eq!(err.exit_code(), Exit::Unavailable, "{status} {code}");
        }
        assert_eq!(
            call(answered(400, "VALIDATION_ERROR", "m")).exit_code(),
            Exit::Rejected
        );
        assert_eq!(
            call(answered(500, "TRANSACTION_NOT_FOUND", "m")).exit_code(),
            Exit::NotFound
        );
    }

    #[test]
    fn a_closed_pipe_is_recognised() {
        let err = CliError::Output(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(err.is_broken_pipe());
        assert!(!CliError::Usage("x".to_owned()).is_broken_pipe());
    }
}
