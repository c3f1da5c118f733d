//! `/_mock/sandboxes` (CONTRACT section 19): make, list and remove the
//! server's sandboxes. With `--admin-key` the admin key does everything;
//! a key bound to a merchant makes sandboxes that belong to that merchant
//! and lists and removes only those (the middleware lets both through);
//! anonymous callers none. Making and removing change the mock: like
//! reset, they refuse a browser's request from another site's page
//! ([`SameSite`]).

use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;

use crate::domain::access::Viewer;
use crate::domain::port::Store as _;
use crate::http::extract::{JsonBytes, SameSite, parse_object};
use crate::sandboxes::{MAX_LABEL_CHARS, MAX_SANDBOX_TTL, SandboxInfo, parse_id};
use crate::state::{AppState, Here, SandboxRefusal};
use payments_serve::{ApiError, ErrorCode, success};

/// One sandbox, as `POST` answers it and `GET` lists it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct SandboxView {
    /// Its id.
    #[cfg_attr(feature = "openapi", schema(format = Uuid))]
    id: String,
    /// What its creator called it.
    label: Option<String>,
    /// The server's base URL followed by `/sandboxes/{id}`: the service URL
    /// to give the application under test.
    base_url: String,
    /// The merchant whose key made it; `null`: the admin's.
    #[cfg_attr(feature = "openapi", schema(format = Uuid))]
    owner: Option<String>,
    /// When it was made (RFC 3339, UTC).
    created_at: String,
    /// When it expires unless used before (each request renews it).
    expires_at: String,
    /// Its time to live, in seconds.
    ttl_seconds: u64,
    /// How many transactions it holds (in a list).
    #[serde(skip_serializing_if = "Option::is_none")]
    transactions: Option<usize>,
}

fn view(root: &AppState, info: &SandboxInfo, transactions: Option<usize>) -> SandboxView {
    let time =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    SandboxView {
        id: info.id.to_string(),
        label: info.label.clone(),
        base_url: root
            .public_url
            .joined(&format!("sandboxes/{}", info.id.hyphenated()))
            .as_str()
            .to_owned(),
        owner: info.owner.map(|m| m.to_string()),
        created_at: time(info.created_at),
        expires_at: time(info.expires_at),
        ttl_seconds: info.ttl.as_secs(),
        transactions,
    }
}

/// `data` of `GET /_mock/sandboxes`.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct SandboxList {
    /// The live sandboxes the caller may see, oldest first.
    items: Vec<SandboxView>,
}

/// Sandboxes are the root's: under a sandbox these routes are no route.
fn root_only(state: &AppState) -> Result<(), ApiError> {
    if state.is_root() {
        Ok(())
    } else {
        Err(ApiError::not_found())
    }
}

/// The body's `ttlSeconds` and `label`, each optional; an empty body is
/// `{}`.
fn parse_request(body: &[u8]) -> Result<(Option<std::time::Duration>, Option<String>), ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok((None, None));
    }
    let object = parse_object(body)?;
    let mut ttl = None;
    let mut label = None;
    for (name, value) in &object {
        match (name.as_str(), value) {
            ("ttlSeconds", Value::Null) | ("label", Value::Null) => {}
            ("ttlSeconds", Value::Number(n)) => {
                let seconds = n
                    .as_u64()
                    .or_else(|| {
                        // 60.0 is 60, as JSON Schema's integer has it.
                        n.as_f64()
                            .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= 1e9)
                            .map(|f| f as u64)
                    })
                    .filter(|s| (1..=MAX_SANDBOX_TTL.as_secs()).contains(s))
                    .ok_or_else(|| {
                        ApiError::validation(format!(
                            "ttlSeconds: must be a whole number of seconds from 1 to {}",
                            MAX_SANDBOX_TTL.as_secs()
                        ))
                    })?;
                ttl = Some(std::time::Duration::from_secs(seconds));
            }
            ("ttlSeconds", _) => {
                return Err(ApiError::validation(
                    "ttlSeconds: must be a whole number of seconds",
                ));
            }
            ("label", Value::String(text)) => {
                if text.chars().count() > MAX_LABEL_CHARS || text.chars().any(char::is_control) {
                    return Err(ApiError::validation(format!(
                        "label: must be at most {MAX_LABEL_CHARS} characters, none a control character"
                    )));
                }
                label = Some(text.clone()).filter(|t| !t.is_empty());
            }
            ("label", _) => return Err(ApiError::validation("label: must be a string")),
            (other, _) => {
                let shown: String = other.chars().take(40).collect();
                return Err(ApiError::validation(format!(
                    "{shown:?}: unknown field (a sandbox takes ttlSeconds and label)"
                )));
            }
        }
    }
    Ok((ttl, label))
}

/// Makes a sandbox: 201 with its id and base URL.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/_mock/sandboxes",
        operation_id = "mockSandboxAdd",
        tag = "mock"
    )
)]
pub async fn add(
    _: SameSite,
    Here(state): Here,
    viewer: Viewer,
    JsonBytes(body): JsonBytes,
) -> Result<Response, ApiError> {
    root_only(&state)?;
    let (ttl, label) = parse_request(&body)?;
    let owner = viewer.role.scope();
    let (info, _) =
        state
            .create_sandbox(owner, label, ttl)
            .await
            .map_err(|refusal| match refusal {
                SandboxRefusal::Nested => ApiError::not_found(),
                // Only an in-process test's sandbox is refused by the store.
                SandboxRefusal::Store => ApiError::not_found(),
                SandboxRefusal::Unavailable(e) => ApiError::from(e),
                SandboxRefusal::TooMany { max, live } => ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    ErrorCode::TooManySandboxes,
                    too_many(max, live, owner.is_some()),
                ),
            })?;
    let mut response = success(view(&state, &info, None), Some("sandbox created"));
    *response.status_mut() = StatusCode::CREATED;
    Ok(response)
}

/// The 429's message: the limit, and how many live when this process
/// knows (more than the limit after a restart with a lower one). To a
/// merchant's key (`merchant`), only that the server's limit is reached:
/// the limit is shared by every merchant, and neither it nor the count
/// tells of sandboxes the merchant cannot see.
fn too_many(max: usize, live: Option<usize>, merchant: bool) -> String {
    if merchant {
        return "the server's limit of live sandboxes (--max-sandboxes, shared by every \
                merchant) is reached: remove one of yours, or wait for one to expire"
            .to_owned();
    }
    let live = match live {
        Some(live) => format!("{live} sandboxes live already, the limit is {max}"),
        None => format!("the limit of {max} live sandboxes is reached"),
    };
    format!("{live} (--max-sandboxes): remove one, or wait for one to expire")
}

/// The live sandboxes the caller may see (a merchant's key: its own).
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/sandboxes",
        operation_id = "mockSandboxes",
        tag = "mock"
    )
)]
pub async fn list(Here(state): Here, viewer: Viewer) -> Result<Response, ApiError> {
    root_only(&state)?;
    if state.sandboxes.is_none() {
        return Err(ApiError::not_found());
    }
    let mut items = Vec::new();
    for (info, sandbox) in state.live_sandboxes(viewer.role.scope()).await {
        let held = sandbox.store.count().await.ok();
        items.push(view(&state, &info, held));
    }
    Ok(success(SandboxList { items }, None))
}

/// One live sandbox the caller may see. Reading it does not renew it.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/sandboxes/{sandboxId}",
        operation_id = "mockSandbox",
        tag = "mock",
        params(("sandboxId" = String, Path, format = Uuid, description = "The sandbox's id"))
    )
)]
pub async fn one(
    Here(state): Here,
    viewer: Viewer,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    root_only(&state)?;
    let Some(id) = parse_id(&id) else {
        return Err(not_found());
    };
    let Some((info, sandbox)) = state
        .live_sandboxes(viewer.role.scope())
        .await
        .into_iter()
        .find(|(info, _)| info.id == id)
    else {
        return Err(not_found());
    };
    let held = sandbox.store.count().await.ok();
    Ok(success(view(&state, &info, held), None))
}

/// Removes a sandbox with everything it holds. An id that is no live
/// sandbox the caller may see is 404 `SANDBOX_NOT_FOUND`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        delete,
        path = "/_mock/sandboxes/{sandboxId}",
        operation_id = "mockSandboxRemove",
        tag = "mock",
        params(("sandboxId" = String, Path, format = Uuid, description = "The sandbox's id"))
    )
)]
pub async fn remove(
    _: SameSite,
    Here(state): Here,
    viewer: Viewer,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    root_only(&state)?;
    let removed = match parse_id(&id) {
        Some(id) => state
            .remove_sandbox(id, viewer.role.scope())
            .await
            .map_err(ApiError::from)?,
        None => false,
    };
    if removed {
        Ok(success(
            serde_json::json!({ "removed": 1 }),
            Some("sandbox removed"),
        ))
    } else {
        Err(not_found())
    }
}

/// 404 `SANDBOX_NOT_FOUND`: what every route under an unknown, malformed,
/// removed or expired sandbox id answers (and under another merchant's).
pub(crate) fn not_found() -> ApiError {
    crate::http::answers::sandbox_not_found()
}

/// Every route under `/sandboxes/` that reaches the router: its sandbox is
/// not live (a live one is served before routing).
pub async fn unknown() -> ApiError {
    not_found()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_takes_ttl_seconds_and_a_label_only() {
        assert_eq!(parse_request(b"").expect("empty"), (None, None));
        assert_eq!(parse_request(b"  \n").expect("blank"), (None, None));
        assert_eq!(parse_request(b"{}").expect("{}"), (None, None));
        let (ttl, label) = parse_request(br#"{"ttlSeconds": 60, "label": "job 7"}"#).expect("both");
        assert_eq!(ttl, Some(std::time::Duration::from_secs(60)));
        assert_eq!(label.as_deref(), Some("job 7"));
        assert_eq!(
            parse_request(br#"{"ttlSeconds": 60.0}"#).expect("60.0").0,
            Some(std::time::Duration::from_secs(60))
        );
        let long = format!(r#"{{"label": "{}"}}"#, "x".repeat(MAX_LABEL_CHARS + 1));
        for bad in [
            &br#"{"ttlSeconds": 0}"#[..],
            br#"{"ttlSeconds": -5}"#,
            br#"{"ttlSeconds": 1.5}"#,
            br#"{"ttlSeconds": 604801}"#,
            br#"{"ttlSeconds": "60"}"#,
            br#"{"ttlSeconds": 1e300}"#,
            br#"{"label": 7}"#,
            br#"{"label": "a\u0000b"}"#,
            long.as_bytes(),
            br#"{"ttl": 60}"#,
            br#"[]"#,
            br#"{"#,
        ] {
            let error = parse_request(bad).expect_err(&String::from_utf8_lossy(bad));
            assert_eq!(error.code, ErrorCode::ValidationError, "{bad:?}");
        }
    }
}
