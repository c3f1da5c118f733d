//! The OpenAPI 3.1 document served at `/openapi.json`, generated when the
//! server starts.
//!
//! - **Routes and operations** come from the handlers: each is annotated
//!   with `#[utoipa::path]` and registered through utoipa-axum's
//!   `OpenApiRouter` (`app.rs`), so a route exists in the document exactly
//!   when the router serves it, with the handler's doc comment as its
//!   summary and description.
//! - **Response data** schemas derive from the types the handlers serialize
//!   (`StatusData`, `ConfirmData`, `InitiateData`, the admin types).
//! - **Request rules** come from `rules.rs` and the catalogue the server was
//!   started with (`schemas.rs`), the constants and patterns the validator
//!   checks.
//! - **What each operation answers**, its parameters, the `errorCode`s each
//!   status carries, security and links are the table below ([`spec`]),
//!   held to the handlers by `tests/schema` (every answer the mock gives is
//!   checked against it) and by the schemathesis run of `scripts/`.
//!
//! Generated once per server (it depends on the catalogue, the API keys and
//! the public URL) and served as bytes.

mod schemas;

use serde_json::{Map, Value, json};
use utoipa::OpenApi as _;

pub(crate) use schemas::{
    major_amount, optional_error_code, optional_timestamp, timestamp, transaction_status,
};

use crate::catalog::Catalog;
use crate::error::ErrorCode::{self, *};
use crate::rules;
use crate::state::AppState;

/// The schemas of the types handlers serialize.
#[derive(utoipa::OpenApi)]
#[openapi(
    components(schemas(
        crate::handlers::StatusData<'_>,
        crate::handlers::confirm::ConfirmData<'_>,
        crate::handlers::initiate::InitiateData<'_>,
        crate::handlers::admin::Health,
        crate::handlers::admin::AdminTransaction,
        crate::handlers::admin::TransactionPage,
        crate::handlers::admin::PayerData<'_>,
        crate::handlers::admin::ClockData,
        crate::handlers::admin::JournalItem,
        crate::handlers::admin::JournalPage,
    )),
    paths(
        crate::handlers::status::by_id,
        crate::handlers::status::by_reference,
    )
)]
struct Served;

/// Which part of the service an operation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `/api/`: the service (API key, faults, rate limit, journal).
    Api,
    /// `/_mock/` JSON controls and `/openapi.json`.
    Admin,
    /// HTML pages: the payment page and the console.
    Page,
    /// A stylesheet or script.
    Asset(&'static str),
}

/// A parameter: name, location, required, schema, description.
type Param = (&'static str, &'static str, bool, Value, &'static str);

/// What one operation takes and answers.
struct Spec {
    kind: Kind,
    params: Vec<Param>,
    /// (content type, component) of a required body.
    body: Option<(&'static str, &'static str)>,
    /// Success: (status, the `data` schema for JSON operations).
    ok: (u16, Value),
    /// Error statuses and the codes they carry (JSON), or page statuses.
    errors: Vec<(u16, Vec<ErrorCode>)>,
    /// Links of the success answer (stateful testing).
    links: Value,
}

fn component(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn pattern(p: &str, description: &'static str) -> Value {
    json!({ "type": "string", "pattern": p, "description": description })
}

fn console_query(name: &'static str, schema: Value, description: &'static str) -> Param {
    (name, "query", false, schema, description)
}

/// The console's filters: a form's empty field is no filter.
fn console_filters() -> Vec<Param> {
    let statuses: Vec<&str> = std::iter::once("")
        .chain(crate::handlers::admin::STATUSES.map(|s| s.as_str()))
        .collect();
    vec![
        console_query(
            "status",
            json!({ "type": "string", "enum": statuses }),
            "Only this status; empty for any",
        ),
        console_query(
            "merchant",
            json!({ "type": "string", "pattern": format!("^$|{}", rules::UUID) }),
            "Only this merchant's; empty for any",
        ),
        console_query(
            "reference",
            json!({ "type": "string", "maxLength": rules::REFERENCE_MAX }),
            "Only references containing this text; empty for any",
        ),
        console_query(
            "limit",
            json!({ "type": "string", "pattern": "^$|^(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$" }),
            "Rows per page, 1-500 (default 100)",
        ),
    ]
}

/// The table: what each operation (by operationId) takes and answers.
fn spec(id: &str) -> Option<Spec> {
    let data = |name: &str| component(name);
    let no_links = Value::Null;
    let transaction_id = (
        "transactionId",
        "path",
        true,
        pattern(
            &rules::NOT_BLANK,
            "As initiate returned it (an opaque string); an empty or blank id is 400 INVALID_TRANSACTION_ID",
        ),
        "",
    );
    let spec = match id {
        "initiate" => Spec {
            kind: Kind::Api,
            params: vec![],
            body: Some(("application/json", "InitiateRequest")),
            ok: (200, data("InitiateData")),
            errors: vec![
                (400, vec![ValidationError, DuplicateReferenceNo]),
                (403, vec![Forbidden]),
                (415, vec![UnsupportedMediaType]),
            ],
            links: json!({
                "confirm": {
                    "operationId": "confirm",
                    "requestBody": {
                        "transactionId": "$response.body#/data/transactionId",
                        "referenceNo": "$response.body#/data/referenceNo",
                    },
                    "description": "Confirm the new transaction",
                },
                "statusById": {
                    "operationId": "statusById",
                    "parameters": { "transactionId": "$response.body#/data/transactionId" },
                },
                "statusByReference": {
                    "operationId": "statusByReference",
                    "parameters": { "referenceNo": "$response.body#/data/referenceNo" },
                },
            }),
        },
        "confirm" => Spec {
            kind: Kind::Api,
            params: vec![],
            body: Some(("application/json", "ConfirmRequest")),
            ok: (200, data("ConfirmData")),
            errors: vec![
                (
                    400,
                    vec![
                        ValidationError,
                        TransactionNotFound,
                        TransactionExpired,
                        TransactionAlreadyConfirmed,
                    ],
                ),
                (415, vec![UnsupportedMediaType]),
            ],
            links: json!({
                "statusById": {
                    "operationId": "statusById",
                    "parameters": { "transactionId": "$response.body#/data/transactionId" },
                },
                "payer": {
                    "operationId": "mockPayer",
                    "parameters": { "transactionId": "$response.body#/data/transactionId" },
                    "description": "A redirect product's payer decides",
                },
            }),
        },
        "statusById" => Spec {
            kind: Kind::Api,
            params: vec![transaction_id.clone()],
            body: None,
            ok: (200, data("StatusData")),
            errors: vec![
                (400, vec![InvalidTransactionId, ValidationError]),
                (404, vec![TransactionNotFound, NotFound]),
            ],
            links: no_links.clone(),
        },
        "statusByReference" => Spec {
            kind: Kind::Api,
            params: vec![
                (
                    "referenceNo",
                    "path",
                    true,
                    pattern(
                        &rules::NOT_BLANK,
                        "The merchant's reference, percent-encoded as a path segment; an empty or blank one is 400 INVALID_REFERENCE_NO",
                    ),
                    "",
                ),
                (
                    "merchantId",
                    "query",
                    false,
                    pattern(
                        rules::UUID,
                        "Whose reference (ext); an API key bound to a merchant scopes the look-up itself",
                    ),
                    "",
                ),
            ],
            body: None,
            ok: (200, data("StatusData")),
            errors: vec![
                (
                    400,
                    vec![InvalidReferenceNo, AmbiguousReferenceNo, ValidationError],
                ),
                (404, vec![TransactionNotFound, NotFound]),
            ],
            links: no_links.clone(),
        },
        "mockHealth" => admin(vec![], None, data("Health"), vec![]),
        "mockTransactions" => admin(
            vec![
                (
                    "merchantId",
                    "query",
                    false,
                    pattern(rules::UUID, "Only this merchant's"),
                    "",
                ),
                (
                    "status",
                    "query",
                    false,
                    json!({ "$ref": "#/components/schemas/TransactionStatus" }),
                    "Only this status, as a read would show it now",
                ),
                (
                    "limit",
                    "query",
                    false,
                    json!({ "type": "integer", "minimum": 1, "maximum": crate::handlers::admin::PAGE_MAX, "default": crate::handlers::admin::PAGE_DEFAULT }),
                    "",
                ),
                (
                    "after",
                    "query",
                    false,
                    pattern(
                        rules::ISSUED_ID,
                        "The `next` of the previous page (a stored transactionId)",
                    ),
                    "",
                ),
            ],
            None,
            data("TransactionPage"),
            vec![
                (400, vec![ValidationError]),
                (404, vec![TransactionNotFound]),
            ],
        ),
        "mockPayer" => admin(
            vec![(
                "transactionId",
                "path",
                true,
                json!({ "type": "string" }),
                "A confirmed redirect-based transaction",
            )],
            Some(("application/json", "PayerRequest")),
            data("PayerData"),
            vec![
                (400, vec![ValidationError]),
                (403, vec![Forbidden]),
                (404, vec![TransactionNotFound, NotFound]),
                (413, vec![PayloadTooLarge]),
                (415, vec![UnsupportedMediaType]),
            ],
        ),
        "mockReset" => admin(vec![], None, Value::Null, vec![(403, vec![Forbidden])]),
        "mockClock" => admin(vec![], None, data("ClockData"), vec![]),
        "mockClockAdvance" => admin(
            vec![],
            Some(("application/json", "ClockAdvance")),
            data("ClockData"),
            vec![
                (400, vec![ValidationError]),
                (403, vec![Forbidden]),
                (413, vec![PayloadTooLarge]),
                (415, vec![UnsupportedMediaType]),
            ],
        ),
        "mockRequests" => admin(
            vec![
                (
                    "limit",
                    "query",
                    false,
                    json!({ "type": "integer", "minimum": 1, "maximum": crate::journal::CAPACITY, "default": crate::journal::CAPACITY }),
                    "The newest this many",
                ),
                (
                    "path",
                    "query",
                    false,
                    json!({ "type": "string" }),
                    "Only requests to exactly this path",
                ),
            ],
            None,
            data("JournalPage"),
            vec![(400, vec![ValidationError])],
        ),
        "openapi" => Spec {
            kind: Kind::Admin,
            params: vec![],
            body: None,
            ok: (200, json!({ "type": "object" })),
            errors: vec![],
            links: no_links.clone(),
        },
        "paymentPage" => page(vec![token()], None, 200, vec![404]),
        "paymentPageSubmit" => page(
            vec![token()],
            Some(("application/x-www-form-urlencoded", "PaymentPageForm")),
            303,
            vec![400, 404, 413, 415],
        ),
        "pageStylesheet" => asset("text/css"),
        "consoleRoot" => page(vec![], None, 308, vec![]),
        "consoleTransactions" => {
            let mut params = console_filters();
            params.push(console_query(
                "before",
                json!({ "type": "string", "pattern": format!("^$|{}", rules::ISSUED_ID) }),
                "Rows older than this transactionId (the Older link)",
            ));
            params.push(console_query(
                "reset",
                json!({ "type": "string" }),
                "`done` after a reset: says so",
            ));
            page(params, None, 200, vec![400, 404])
        }
        "consoleTransactionRows" => page(console_filters(), None, 200, vec![400]),
        "consoleTransaction" => page(
            vec![(
                "transactionId",
                "path",
                true,
                json!({ "type": "string" }),
                "A stored transaction",
            )],
            None,
            200,
            vec![404],
        ),
        "consoleRequests" => page(vec![], None, 200, vec![]),
        "consoleRequestFeed" => page(
            vec![console_query(
                "after",
                json!({ "type": "string", "pattern": "^(?:|0|[1-9][0-9]{0,18})$" }),
                "The seq of the newest row shown (empty or absent: 0); the answer's X-Journal-Seq says the newest now",
            )],
            None,
            200,
            vec![400],
        ),
        "consoleRequest" => page(
            vec![(
                "seq",
                "path",
                true,
                json!({ "type": "string", "pattern": "^[1-9][0-9]{0,18}$" }),
                "A journal entry's seq",
            )],
            None,
            200,
            vec![404],
        ),
        "consoleClock" => page(
            vec![console_query(
                "advanced",
                json!({ "type": "string" }),
                "After an advance: by how much",
            )],
            None,
            200,
            vec![],
        ),
        "consoleClockAdvance" => page(
            vec![],
            Some(("application/x-www-form-urlencoded", "ConsoleClockForm")),
            303,
            vec![400, 403, 413, 415],
        ),
        "consoleCatalog" => page(vec![], None, 200, vec![]),
        "consoleResetPage" => page(vec![], None, 200, vec![]),
        "consoleReset" => page(
            vec![],
            Some(("application/x-www-form-urlencoded", "ConsoleResetForm")),
            303,
            vec![403, 413, 415],
        ),
        "consoleStylesheet" => asset("text/css"),
        "consoleScript" => asset("text/javascript"),
        _ => return None,
    };
    Some(spec)
}

fn token() -> Param {
    (
        "token",
        "path",
        true,
        pattern(rules::PAGE_TOKEN, "From the confirm's paymentUrl"),
        "",
    )
}

fn admin(
    params: Vec<Param>,
    body: Option<(&'static str, &'static str)>,
    data: Value,
    errors: Vec<(u16, Vec<ErrorCode>)>,
) -> Spec {
    Spec {
        kind: Kind::Admin,
        params,
        body,
        ok: (200, data),
        errors,
        links: Value::Null,
    }
}

fn page(
    params: Vec<Param>,
    body: Option<(&'static str, &'static str)>,
    ok: u16,
    errors: Vec<u16>,
) -> Spec {
    Spec {
        kind: Kind::Page,
        params,
        body,
        ok: (ok, Value::Null),
        errors: errors.into_iter().map(|s| (s, vec![])).collect(),
        links: Value::Null,
    }
}

fn asset(content_type: &'static str) -> Spec {
    Spec {
        kind: Kind::Asset(content_type),
        params: vec![],
        body: None,
        ok: (200, Value::Null),
        errors: vec![],
        links: Value::Null,
    }
}

fn request_id_header() -> Value {
    json!({ "X-Request-Id": { "$ref": "#/components/headers/X-Request-Id" } })
}

/// An HTML answer (the payment page and the console).
fn html(description: &str) -> Value {
    json!({
        "description": description,
        "headers": request_id_header(),
        "content": { "text/html": { "schema": { "type": "string" } } },
    })
}

fn json_error(description: &str, codes: &[ErrorCode]) -> Value {
    let (schema, examples) = schemas::error_envelope(codes);
    json!({
        "description": description,
        "headers": request_id_header(),
        "content": { "application/json": { "schema": schema, "examples": examples } },
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other: to the return address (the payment page) or the page after a form",
        308 => "To /_mock/ui/",
        400 => "Bad request",
        401 => "No or a wrong API key",
        403 => {
            "Forbidden: a key bound to another merchant, or (controls and console forms) a browser request from another site's page"
        }
        404 => "Not found",
        405 => "The route exists, the method does not",
        413 => "Body over the limit",
        415 => "Body not of the content type the operation takes",
        429 => "Rate limited (--rate-limit or the rate-limit fault); Retry-After says when",
        500 => "Unexpected error, or an injected fault",
        _ => "",
    }
}

/// The document for `state`'s server: `routes` (from the router) filled
/// in from the table.
///
/// # Panics
///
/// When a route has no entry in the table: a route added without its
/// documentation fails every test that starts a server.
pub(crate) fn generate(routes: utoipa::openapi::OpenApi, state: &AppState) -> Value {
    let mut doc = routes;
    doc.merge(Served::openapi());
    let mut doc = serde_json::to_value(&doc).expect("an OpenAPI document serializes");
    let keyed = state.auth.is_enabled();
    let bound = state.auth.has_bound_keys();
    doc["info"] = json!({
        "title": "payments-mock-server",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "The merchant payment-transaction service in memory: every rule, state, error and fault of its contract, the payer's payment page and a web console. Generated by the server it describes: the product codes are this server's catalogue, and the security section says whether it wants an API key.",
    });
    doc["servers"] = json!([{ "url": state.public_url.as_str().trim_end_matches('/') }]);
    doc["tags"] = json!([
        { "name": "payments", "description": "The service (interface document and CONTRACT.md)" },
        { "name": "mock", "description": "Test controls of the mock: never behind the key, never faulted" },
        { "name": "payment page", "description": "The payer's side of redirect-based payments (HTML)" },
        { "name": "console", "description": "The web console (HTML)" },
    ]);
    let schemas = doc["components"]["schemas"]
        .as_object_mut()
        .expect("the components have schemas");
    for (name, schema) in schemas::components(&state.catalog) {
        schemas.insert(name.to_owned(), schema);
    }
    doc["components"]["headers"] = json!({
        "X-Request-Id": {
            "description": "The caller's X-Request-Id when it sent 1-128 visible ASCII characters, else a new one",
            "schema": { "type": "string", "pattern": rules::REQUEST_ID },
        },
    });
    if keyed {
        doc["components"]["securitySchemes"] = json!({ "bearer": { "type": "http", "scheme": "bearer", "description": "An API key given with --api-key" } });
    }
    let paths = doc["paths"].as_object_mut().expect("paths");
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, operation) in item.iter_mut() {
            let id = operation["operationId"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let spec = spec(&id).unwrap_or_else(|| {
                panic!(
                    "{method} {path} ({id:?}) has no entry in the OpenAPI table (openapi/mod.rs)"
                )
            });
            fill(operation, &spec, keyed, bound, &state.catalog);
        }
    }
    doc
}

/// Fills one operation from its spec.
fn fill(operation: &mut Value, spec: &Spec, keyed: bool, bound: bool, catalog: &Catalog) {
    let id = operation["operationId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut parameters: Vec<Value> = spec
        .params
        .iter()
        .map(|(name, location, required, schema, description)| {
            let description = if description.is_empty() {
                schema.get("description").cloned().unwrap_or(Value::Null)
            } else {
                json!(description)
            };
            let mut p =
                json!({ "name": name, "in": location, "required": required, "schema": schema });
            if !description.is_null() {
                p["description"] = description;
            }
            if *location == "path"
                && let Some(example) = schemas::path_example(name)
            {
                p["example"] = json!(example);
            }
            p
        })
        .collect();
    let mut responses = Map::new();
    let mut errors: Vec<(u16, Vec<ErrorCode>)> = spec.errors.clone();
    let add_code =
        |errors: &mut Vec<(u16, Vec<ErrorCode>)>, status: u16, code: ErrorCode| match errors
            .iter_mut()
            .find(|(s, _)| *s == status)
        {
            Some((_, codes)) if !codes.contains(&code) => codes.push(code),
            Some(_) => {}
            None => errors.push((status, vec![code])),
        };
    match spec.kind {
        Kind::Api => {
            parameters.push(json!({
                "name": "X-Mock-Fault",
                "in": "header",
                "required": false,
                "description": "Injected faults (ext): internal-error (500 before any change), commit-then-error (the change is made, then 500), reset (the connection closes, no answer), commit-then-reset, rate-limit (429), delay=<ms>. Comma-separated, lower case.",
                "schema": { "type": "string", "pattern": *rules::FAULT_HEADER },
            }));
            add_code(&mut errors, 400, ValidationError);
            if keyed {
                add_code(&mut errors, 401, Unauthorized);
                operation["security"] = json!([{ "bearer": [] }]);
            } else {
                operation["security"] = json!([]);
            }
            if !bound {
                errors.retain(|(s, _)| *s != 403);
            }
            add_code(&mut errors, 413, PayloadTooLarge);
            add_code(&mut errors, 429, RateLimited);
            add_code(&mut errors, 500, InternalError);
        }
        Kind::Admin | Kind::Page | Kind::Asset(_) => {
            operation["security"] = json!([]);
        }
    }
    // Every route answers 405 (with Allow) to other methods: the envelope,
    // or a page on page paths.
    add_code(&mut errors, 405, MethodNotAllowed);
    parameters.push(json!({
        "name": "X-Request-Id",
        "in": "header",
        "required": false,
        "description": "Echoed in the answer when it is 1-128 visible ASCII characters; otherwise the mock makes one up (never a rejection)",
        "schema": { "type": "string" },
    }));
    operation["parameters"] = Value::Array(parameters);
    if let Some((content_type, name)) = spec.body {
        // The reset form has no fields: a POST without a body resets too.
        let required = name != "ConsoleResetForm";
        let mut media = json!({ "schema": component(name) });
        if let Some(examples) = schemas::body_examples(&id, catalog) {
            media["examples"] = examples;
        }
        operation["requestBody"] = json!({
            "required": required,
            "content": { content_type: media },
        });
    }
    let (ok, data) = &spec.ok;
    let mut success = match spec.kind {
        Kind::Api | Kind::Admin if operation["operationId"] == "openapi" => json!({
            "description": "This document",
            "headers": request_id_header(),
            "content": { "application/json": { "schema": data } },
        }),
        Kind::Api | Kind::Admin => {
            let data = if data.is_null() {
                json!({ "type": "null" })
            } else {
                data.clone()
            };
            json!({
                "description": reason(*ok),
                "headers": request_id_header(),
                "content": { "application/json": { "schema": schemas::success_envelope(data) } },
            })
        }
        Kind::Page if *ok == 303 || *ok == 308 => {
            let mut answer = json!({
                "description": reason(*ok),
                "headers": {
                    "Location": { "schema": { "type": "string" }, "description": "Where the browser goes" },
                    "X-Request-Id": { "$ref": "#/components/headers/X-Request-Id" },
                },
            });
            if operation["operationId"] == "paymentPageSubmit" {
                // A page with the same link, for clients that do not follow.
                answer["content"] = json!({ "text/html": { "schema": { "type": "string" } } });
            }
            answer
        }
        Kind::Page => html("The page"),
        Kind::Asset(content_type) => json!({
            "description": "The file, from the binary",
            "headers": request_id_header(),
            "content": { content_type: { "schema": { "type": "string" } } },
        }),
    };
    if !spec.links.is_null() {
        success["links"] = spec.links.clone();
    }
    responses.insert(ok.to_string(), success);
    errors.sort_by_key(|(s, _)| *s);
    for (status, codes) in &errors {
        let answer = match spec.kind {
            Kind::Page | Kind::Asset(_) => html(reason(*status)),
            Kind::Api | Kind::Admin => {
                let codes: Vec<String> = codes.iter().map(|c| c.as_str().to_owned()).collect();
                let mut a = json_error(
                    &format!("{}. errorCode: {}.", reason(*status), codes.join(", ")),
                    &errors
                        .iter()
                        .find(|(s, _)| s == status)
                        .map(|(_, c)| c.clone())
                        .unwrap_or_default(),
                );
                if *status == 429 {
                    a["headers"]["Retry-After"] = json!({ "schema": { "type": "integer", "minimum": 1 }, "description": "Seconds" });
                }
                if *status == 401 {
                    a["headers"]["WWW-Authenticate"] = json!({ "schema": { "type": "string" } });
                }
                if *status == 405 {
                    a["headers"]["Allow"] = json!({ "schema": { "type": "string" } });
                }
                a
            }
        };
        responses.insert(status.to_string(), answer);
    }
    operation["responses"] = Value::Object(responses);
}
