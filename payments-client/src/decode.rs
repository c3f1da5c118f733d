//! The response envelope, decoded: one response turned into a [`Reply`] or
//! the matching [`Error`] class (CONTRACT section 11). `transport.rs`
//! decodes every attempt here; [`decode_response`] (in [`wire`](crate::wire))
//! does the same for a body obtained some other way.

use bytes::{Bytes, BytesMut};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::error::{ApiError, Error};
use crate::model::envelope::Reply;
use crate::model::status::ErrorCode;

/// The envelope with `data` left raw, so that a payload problem is reported
/// as a decode error at `data.<field>` rather than as a non-envelope body.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEnvelope<'a> {
    is_success: bool,
    /// Raw, so that an unexpected JSON type (a number, an object) is kept
    /// as text instead of rejecting the whole envelope (CONTRACT 11).
    #[serde(default, borrow)]
    error_code: Option<&'a RawValue>,
    #[serde(default, borrow)]
    message: Option<&'a RawValue>,
    #[serde(default, borrow)]
    data: Option<&'a RawValue>,
}

/// The envelope of a successful answer, decoded in one pass: the common
/// case. Anything else (a failure, `data` null, a `message` that is not a
/// string, a body that is not the envelope) fails this decode and takes the
/// careful path through [`RawEnvelope`], which reports it precisely.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SuccessEnvelope<T> {
    is_success: bool,
    message: Option<String>,
    data: Option<T>,
}

/// A JSON string as its text; `null` as `None`; any other JSON value as its
/// JSON text.
fn lenient_text(raw: Option<&RawValue>) -> Option<String> {
    let raw = raw?;
    match raw.get().trim() {
        "null" => None,
        text => Some(serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_owned())),
    }
}

/// The most of an answer's body the client reads. The interface's answers
/// are under 1 KiB (with 16 KiB of `extraProperties` at most); a larger one
/// is not the service's envelope, and is not read whole into memory (a
/// gateway or a hostile server could send gigabytes).
pub const MAX_ANSWER: usize = 1024 * 1024;

/// Reads an answer's body, up to [`MAX_ANSWER`] bytes: `(body, false)`
/// when it came whole, `(its start, true)` when it is larger (the rest is
/// never read; dropping the response closes the connection).
pub(crate) async fn read_body(
    mut response: reqwest::Response,
) -> Result<(Bytes, bool), reqwest::Error> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER as u64)
    {
        let start = response.chunk().await?.unwrap_or_default();
        return Ok((start.slice(..start.len().min(BODY_PREFIX_LEN)), true));
    }
    // The usual answer is one chunk, kept as it came.
    let Some(first) = response.chunk().await? else {
        return Ok((Bytes::new(), false));
    };
    let mut next = response.chunk().await?;
    if next.is_none() && first.len() <= MAX_ANSWER {
        return Ok((first, false));
    }
    let mut joined = BytesMut::from(&first[..first.len().min(MAX_ANSWER + 1)]);
    while joined.len() <= MAX_ANSWER {
        let Some(chunk) = next else {
            return Ok((joined.freeze(), false));
        };
        joined.extend_from_slice(&chunk[..chunk.len().min(MAX_ANSWER + 1 - joined.len())]);
        next = response.chunk().await?;
    }
    joined.truncate(BODY_PREFIX_LEN);
    Ok((joined.freeze(), true))
}

/// What one HTTP exchange produced, before it becomes a [`Reply`].
pub(crate) struct Exchange<'a> {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: &'a [u8],
    /// `body` is only the start of an answer larger than [`MAX_ANSWER`].
    pub too_large: bool,
    pub request_id: &'a str,
    pub retry_after: Option<std::time::Duration>,
    pub attempt: u32,
}

/// How many body bytes an [`Error::UnexpectedResponse`] keeps.
pub const BODY_PREFIX_LEN: usize = 512;

fn body_prefix(body: &[u8]) -> String {
    let end = body.len().min(BODY_PREFIX_LEN);
    String::from_utf8_lossy(&body[..end]).into_owned()
}

/// Turns one response into a reply or the matching error class.
///
/// The envelope is the truth: `isSuccess` decides success whatever the HTTP
/// status says (CONTRACT section 11).
pub(crate) fn decode<T: DeserializeOwned>(ex: Exchange<'_>) -> Result<Reply<T>, Error> {
    let unexpected = |reason: String| Error::UnexpectedResponse {
        status: ex.status,
        body_prefix: body_prefix(ex.body),
        content_type: ex.content_type.clone(),
        request_id: ex.request_id.to_owned(),
        reason,
        retry_after: ex.retry_after,
    };
    if ex.too_large {
        return Err(unexpected(format!(
            "the answer is larger than {} KiB, the most the client reads (the service's are under 1 KiB)",
            MAX_ANSWER / 1024
        )));
    }
    let Ok(text) = std::str::from_utf8(ex.body) else {
        return Err(unexpected("body is not UTF-8".to_owned()));
    };
    if let Ok(SuccessEnvelope {
        is_success: true,
        message,
        data: Some(data),
    }) = serde_json::from_str::<SuccessEnvelope<T>>(text)
    {
        return Ok(Reply {
            data,
            message,
            request_id: ex.request_id.to_owned(),
            attempts: ex.attempt,
            reconciled: None,
            http_status: ex.status,
            raw_envelope: text.to_owned(),
        });
    }
    let envelope: RawEnvelope<'_> = match serde_json::from_str(text) {
        Ok(e) => e,
        Err(e) if text.trim().is_empty() => {
            drop(e);
            return Err(unexpected("empty body".to_owned()));
        }
        Err(e) => return Err(unexpected(format!("not the response envelope: {e}"))),
    };
    if !envelope.is_success {
        return Err(Error::Api(Box::new(ApiError {
            status: ex.status,
            code: lenient_text(envelope.error_code).map_or_else(
                || ErrorCode::Other(String::new()),
                |c| ErrorCode::from_wire(&c),
            ),
            message: lenient_text(envelope.message).unwrap_or_default(),
            request_id: ex.request_id.to_owned(),
            raw_envelope: text.to_owned(),
            retry_after: ex.retry_after,
        })));
    }
    let data = match envelope.data {
        Some(raw) if raw.get() != "null" => raw,
        _ => {
            return Err(Error::MissingData {
                status: ex.status,
                request_id: ex.request_id.to_owned(),
                raw_envelope: text.to_owned(),
            });
        }
    };
    // Only a body that does not decode is read again, to name where it
    // went wrong (serde_path_to_error doubles the cost of a decode).
    let data: T = match serde_json::from_str(data.get()) {
        Ok(data) => data,
        Err(_) => decode_with_path(data.get(), &ex, text)?,
    };
    Ok(Reply {
        data,
        message: lenient_text(envelope.message),
        request_id: ex.request_id.to_owned(),
        attempts: ex.attempt,
        reconciled: None,
        http_status: ex.status,
        raw_envelope: text.to_owned(),
    })
}

/// The slow path of [`decode`]: `data` decoded again, tracking the path,
/// to report where it does not match `T` (`data.amount`, ...).
fn decode_with_path<T: DeserializeOwned>(
    data: &str,
    ex: &Exchange<'_>,
    text: &str,
) -> Result<T, Error> {
    let mut de = serde_json::Deserializer::from_str(data);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.path().to_string();
        let mut path = if inner == "." {
            "data".to_owned()
        } else {
            format!("data.{inner}")
        };
        let message = e.into_inner().to_string();
        // serde reports a missing field at its parent; name the field itself.
        if let Some(field) = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next())
        {
            path = format!("{path}.{field}");
        }
        Error::Decode {
            path,
            message,
            status: ex.status,
            request_id: ex.request_id.to_owned(),
            raw_envelope: text.to_owned(),
        }
    })
}

/// Decodes a response body obtained some other way (a log, a proxy) exactly
/// as a call would: the same error classes, with an empty request id.
///
/// # Errors
///
/// As for a call: [`Error::Api`], [`Error::UnexpectedResponse`],
/// [`Error::MissingData`] or [`Error::Decode`].
///
/// # Examples
///
/// ```
/// use payments_client::{wire::decode_response, Error, PaymentStatus};
/// let body = br#"{"isSuccess":false,"errorCode":"TRANSACTION_NOT_FOUND","message":"no such transaction","data":null}"#;
/// let err = decode_response::<PaymentStatus>(404, Some("application/json"), body).unwrap_err();
/// assert!(matches!(err, Error::Api(_)));
/// ```
pub fn decode_response<T: DeserializeOwned>(
    http_status: u16,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<Reply<T>, Error> {
    decode(Exchange {
        status: http_status,
        content_type: content_type.map(str::to_owned),
        body,
        too_large: false,
        request_id: "",
        retry_after: None,
        attempt: 1,
    })
}
