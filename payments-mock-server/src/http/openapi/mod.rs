//! The OpenAPI 3.1 document served at `/openapi.json`, generated when the
//! server starts.
//!
//! - **Routes and operations** come from the handlers: each is annotated
//!   with `#[utoipa::path]` and registered through utoipa-axum's
//!   `OpenApiRouter` (`app.rs`), so a route exists in the document exactly
//!   when the router serves it, with the handler's doc comment as its
//!   summary and description. The four `/api/` operations are matched by
//!   hand (`http/route.rs`, the hot path) and listed by `Served` below; a
//!   test there holds the two to each other.
//! - **Response data** schemas derive from the types the handlers serialize
//!   (`StatusData`, `ConfirmData`, `InitiateData`, the admin types).
//! - **Request rules** come from `rules.rs` and the catalogue the server was
//!   started with (`schemas.rs`), the constants and patterns the validator
//!   checks.
//! - **What each operation answers**, its parameters, the `errorCode`s each
//!   status carries, security and links are the table in `table.rs` (what
//!   an operation is, and who may call it, in `operation.rs`), held to the
//!   handlers by `tests/schema` (every answer the mock gives is checked
//!   against it) and by the schemathesis run of `scripts/`.
//!
//! Generated once per server (it depends on the catalogue, the API keys,
//! the admin keys and the public URL) and served as bytes. Its `security`
//! says truthfully what each operation wants: an API key on `/api/` when
//! there are keys; with `--admin-key`, the admin key (`adminKey`) for what
//! changes the mock, the admin key or a merchant's key (`merchantKey`)
//! for what reads it, and on the console a sign-in session
//! (`consoleSession`) for either; nothing for the open routes.

#[cfg(test)]
mod generators;
mod operation;
pub(crate) mod sandbox;
mod schemas;
mod table;

use serde_json::{Map, Value, json};
use utoipa::OpenApi as _;

use crate::domain::catalog::Catalog;
use crate::domain::rules;
use crate::state::AppState;
use operation::{Guard, Kind, Spec, guard};
use payments_serve::ErrorCode::{self, *};
use table::{component, spec};

/// The schemas of the types handlers serialize.
#[derive(utoipa::OpenApi)]
#[openapi(
    components(schemas(
        crate::http::handlers::StatusData<'_>,
        crate::http::handlers::confirm::ConfirmData<'_>,
        crate::http::handlers::initiate::InitiateData<'_>,
        crate::http::handlers::health::Health,
        crate::http::handlers::admin::AdminTransaction,
        crate::http::handlers::admin::TransactionPage,
        crate::http::handlers::admin::PayerData<'_>,
        crate::http::handlers::admin::ClockData,
        crate::http::handlers::admin::JournalItem,
        crate::http::handlers::admin::JournalPage,
        crate::http::handlers::coverage::CoverageData,
        crate::http::handlers::coverage::AnswerCell,
        crate::http::handlers::coverage::TransitionCell,
        crate::http::handlers::coverage::FaultRow,
        crate::http::handlers::coverage::OutsideCell,
        crate::http::handlers::coverage::Source,
    )),
    paths(
        crate::http::handlers::initiate::handle,
        crate::http::handlers::confirm::handle,
        crate::http::handlers::status::by_id,
        crate::http::handlers::status::by_reference,
        crate::http::handlers::health::health,
        crate::http::handlers::admin::transactions,
        crate::http::handlers::admin::payer,
        crate::http::handlers::admin::reset,
        crate::http::handlers::admin::clock,
        crate::http::handlers::admin::advance,
        crate::http::handlers::admin::requests,
        crate::http::handlers::coverage::coverage,
        crate::http::handlers::faults::list,
        crate::http::handlers::faults::add,
        crate::http::handlers::faults::clear,
        crate::http::handlers::faults::remove,
        crate::http::handlers::sandboxes::list,
        crate::http::handlers::sandboxes::add,
        crate::http::handlers::sandboxes::one,
        crate::http::handlers::sandboxes::remove,
        crate::http::handlers::admin::openapi,
    )
)]
pub(crate) struct Served;

/// `GET /metrics` (feature `metrics`).
#[cfg(feature = "metrics")]
#[derive(utoipa::OpenApi)]
#[openapi(paths(crate::http::handlers::admin::metrics))]
struct ServedMetrics;

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
        400 => {
            "Bad request (on a form: a field it does not have, a field given twice or a value over its length)"
        }
        401 => {
            "No key, or a wrong one: an API key on /api/; with --admin-key, on the admin side an admin key (or, for reading, a merchant's key or a console session)"
        }
        403 => {
            "Forbidden: a key bound to another merchant; on the admin side an API key bound to no merchant, or a merchant's key asking for a change; or (controls and console forms) a browser request from another site's page"
        }
        404 => "Not found",
        405 => "The route exists, the method does not",
        413 => {
            "Body over the limit (64 KiB for JSON; a form's in its schema's description, which no form valid by its schema reaches)"
        }
        415 => "Body not of the content type the operation takes",
        429 => {
            "Rate limited (--rate-limit or the rate-limit fault; Retry-After says when), or on /_mock/sandboxes: --max-sandboxes live already"
        }
        500 => "Unexpected error, or an injected fault",
        503 => {
            "The database behind --store cannot be reached (sqlite: or postgres:// stores); retry later"
        }
        _ => "",
    }
}

/// The document for `state`'s server: the operations of the handlers
/// (`Served`, and the pages' with the feature `pages`) filled in from the
/// table.
///
/// # Panics
///
/// When a route has no entry in the table: a route added without its
/// documentation fails every test that starts a server.
pub(crate) fn generate(state: &AppState) -> Value {
    #[cfg_attr(not(any(feature = "pages", feature = "metrics")), allow(unused_mut))]
    let mut doc = Served::openapi();
    #[cfg(feature = "pages")]
    doc.merge(crate::web::operations());
    #[cfg(feature = "metrics")]
    doc.merge(<ServedMetrics as utoipa::OpenApi>::openapi());
    let mut doc = serde_json::to_value(&doc).expect("an OpenAPI document serializes");
    let keys = Keys {
        api: state.auth.is_enabled(),
        bound: state.auth.has_bound_keys(),
        unbound: state.auth.has_unbound_keys(),
        admin: state.admin.is_enabled(),
    };
    doc["info"] = json!({
        "title": "payments-mock-server",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "The merchant payment-transaction service in memory: every rule, state, error and fault of its contract, the payer's payment page and a web console. Generated by the server it describes: the product codes are this server's catalogue, and the security section says whether it wants an API key.",
    });
    doc["servers"] = crate::state::openapi_servers(&state.public_url);
    doc["tags"] = json!([
        { "name": "payments", "description": "The service (interface document and CONTRACT.md)" },
        { "name": "mock", "description": "Test controls of the mock: never behind the /api/ keys, never faulted; behind --admin-key when the server has one" },
        { "name": "payment page", "description": "The payer's side of redirect-based payments (HTML)" },
        { "name": "console", "description": "The web console (HTML)" },
    ]);
    let schemas = doc["components"]["schemas"]
        .as_object_mut()
        .expect("the components have schemas");
    for (name, mut schema) in schemas::components(&state.catalog) {
        // Without an admin key the console is open: a sign-in form leads
        // into it whatever it carries, so nothing in it is required.
        if name == "ConsoleSignInForm"
            && !keys.admin
            && let Some(form) = schema.as_object_mut()
        {
            form.remove("required");
        }
        schemas.insert(name.to_owned(), schema);
    }
    doc["components"]["headers"] = json!({
        "X-Request-Id": {
            "description": "The caller's X-Request-Id when it sent 1-128 visible ASCII characters, else a new one",
            "schema": { "type": "string", "pattern": rules::REQUEST_ID },
        },
    });
    let mut schemes = Map::new();
    if keys.api {
        schemes.insert("bearer".to_owned(), json!({ "type": "http", "scheme": "bearer", "description": "An API key given with --api-key" }));
    }
    if keys.admin {
        schemes.insert("adminKey".to_owned(), json!({ "type": "http", "scheme": "bearer", "description": "An admin key given with --admin-key: every control and the whole console" }));
        if keys.bound {
            schemes.insert("merchantKey".to_owned(), json!({ "type": "http", "scheme": "bearer", "description": "An --api-key bound to a merchant: on the admin side it reads that merchant's transactions and requests only, and changes nothing" }));
        }
        if cfg!(feature = "pages") {
            schemes.insert("consoleSession".to_owned(), json!({ "type": "apiKey", "in": "cookie", "name": crate::admin::SESSION_COOKIE, "description": "The console's session after POST /_mock/ui/sign-in with an admin key or a merchant's key; it does what that key does" }));
        }
    }
    if !schemes.is_empty() {
        doc["components"]["securitySchemes"] = Value::Object(schemes);
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
            fill(operation, &id, &spec, keys, &state.catalog);
        }
    }
    doc
}

/// Which keys a server has, as its document must say.
#[derive(Debug, Clone, Copy)]
struct Keys {
    /// Some `--api-key`.
    api: bool,
    /// Some `--api-key` bound to a merchant.
    bound: bool,
    /// Some `--api-key` bound to no merchant.
    unbound: bool,
    /// Some `--admin-key`.
    admin: bool,
}

/// Fills operation `id` from its spec.
fn fill(operation: &mut Value, id: &str, spec: &Spec, keys: Keys, catalog: &Catalog) {
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
            // An optional query parameter an importer (Postman's) fills
            // in and sends: without an example it makes one up from the
            // schema, which names nothing the mock holds.
            if *location == "query"
                && let Some(example) = schemas::query_example(id, name)
            {
                p["example"] = example;
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
                "description": "Injected faults (ext): internal-error (500 before any change), commit-then-error (the change is made, then 500), reset (the connection closes, no answer), commit-then-reset, rate-limit (429), answer-other (the change is made, then the answer is about another transaction), delay=<ms>. Comma-separated, lower case. The example, delay=0, injects nothing (a tool that sends every parameter, as Postman's importer does, sends that; leave the header out when the fault rules of /_mock/faults should apply: any X-Mock-Fault, delay=0 too, wins over them).",
                "schema": { "type": "string", "pattern": *rules::FAULT_HEADER },
                "example": "delay=0",
            }));
            add_code(&mut errors, 400, ValidationError);
            if keys.api {
                add_code(&mut errors, 401, Unauthorized);
                operation["security"] = json!([{ "bearer": [] }]);
            } else {
                operation["security"] = json!([]);
            }
            if !keys.bound {
                errors.retain(|(s, _)| *s != 403);
            }
            add_code(&mut errors, 413, PayloadTooLarge);
            add_code(&mut errors, 429, RateLimited);
            add_code(&mut errors, 500, InternalError);
        }
        Kind::Admin | Kind::Page | Kind::Asset(_) => match guard(id) {
            _ if !keys.admin => {
                // Open to everyone: nothing answers 401 (the sign-in form
                // of a mock without an admin key leads to the console).
                operation["security"] = json!([]);
                errors.retain(|(s, _)| *s != 401);
            }
            Guard::Open => operation["security"] = json!([]),
            who => {
                let mut schemes = vec![json!({ "adminKey": [] })];
                if who == Guard::Reads && keys.bound {
                    schemes.push(json!({ "merchantKey": [] }));
                }
                if spec.kind == Kind::Page {
                    schemes.push(json!({ "consoleSession": [] }));
                }
                operation["security"] = Value::Array(schemes);
                add_code(&mut errors, 401, Unauthorized);
                // An API key bound to no merchant is known and refused;
                // a merchant's key is refused a change.
                let forbidden = match who {
                    Guard::Changes => keys.api,
                    _ => keys.unbound,
                };
                if forbidden {
                    add_code(&mut errors, 403, Forbidden);
                }
            }
        },
    }
    // Every route answers 405 (with Allow) to other methods: the envelope,
    // or a page on page paths.
    add_code(&mut errors, 405, MethodNotAllowed);
    // Every route that reads or changes state answers 503 while the
    // database behind `--store` is gone (CONTRACT section 15): the
    // envelope, or a page saying so.
    let stateless = matches!(spec.kind, Kind::Asset(_))
        || matches!(
            id,
            "openapi" | "consoleRoot" | "metrics" | "mockCoverage" | "consoleCoverage"
        );
    if !stateless {
        add_code(&mut errors, 503, StoreUnavailable);
    }
    parameters.push(json!({
        "name": "X-Request-Id",
        "in": "header",
        "required": false,
        "description": "Echoed in the answer when it is 1-128 visible ASCII characters; otherwise the mock makes one up (never a rejection)",
        "schema": { "type": "string" },
    }));
    operation["parameters"] = Value::Array(parameters);
    if let Some((content_type, name)) = spec.body {
        // The reset and sign-out forms have no fields: a POST without a
        // body resets (signs out) too. A sign-in without a body is an
        // empty key: 401 with an admin key, into the console without.
        let required = !matches!(
            name,
            "ConsoleResetForm" | "ConsoleSignOutForm" | "ConsoleSignInForm" | "SandboxRequest"
        );
        let mut media = json!({ "schema": component(name) });
        if let Some(examples) = schemas::body_examples(id, catalog) {
            media["examples"] = examples;
        }
        operation["requestBody"] = json!({
            "required": required,
            "content": { content_type: media },
        });
    }
    let (ok, data) = &spec.ok;
    let mut success = match spec.kind {
        Kind::Admin if id == "metrics" => json!({
            "description": "The counts in the Prometheus text format (text/plain; version=0.0.4); OpenMetrics text (version 1.0.0) when `Accept` asks for application/openmetrics-text",
            "headers": request_id_header(),
            "content": {
                "text/plain": { "schema": { "type": "string" } },
                "application/openmetrics-text": { "schema": { "type": "string" } },
            },
        }),
        Kind::Api | Kind::Admin if id == "openapi" => json!({
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
            if id == "paymentPageSubmit" {
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
            Kind::Page | Kind::Asset(_) => {
                let mut a = html(reason(*status));
                if *status == 401 {
                    a["headers"]["WWW-Authenticate"] = json!({ "schema": { "type": "string" } });
                }
                a
            }
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use payments_interface::Endpoint;

    use super::*;

    /// The operations of the document, as (method, path template).
    fn operations(doc: &Value) -> BTreeSet<(String, String)> {
        let mut operations = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            for method in item.as_object().into_iter().flat_map(|ops| ops.keys()) {
                operations.insert((method.clone(), path.clone()));
            }
        }
        operations
    }

    /// The document lists exactly what is served: the interface's four
    /// operations (named as the interface names them), and every route of
    /// the table, nothing else.
    #[test]
    fn the_document_lists_exactly_what_is_routed() {
        let doc = generate(&AppState::default());
        let mut served: BTreeSet<(String, String)> = crate::http::app::table()
            .routed()
            .iter()
            .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
            .collect();
        for endpoint in Endpoint::ALL {
            served.insert((
                endpoint.method().to_lowercase(),
                endpoint.template().to_owned(),
            ));
            let operation = &doc["paths"][endpoint.template()][endpoint.method().to_lowercase()];
            assert_eq!(operation["operationId"], endpoint.name(), "{endpoint}");
        }
        assert_eq!(operations(&doc), served);
    }

    /// The proxy's own codes are not the mock's: its document leaves them out.
    #[test]
    fn the_proxys_codes_are_not_in_the_mocks_document() {
        let text = generate(&AppState::default()).to_string();
        assert!(text.contains("STORE_UNAVAILABLE"));
        assert!(!text.contains("UPSTREAM_UNAVAILABLE"));
        assert!(!text.contains("CONTRACT_VIOLATION"));
    }

    /// Every link names an operation of the document and only parameters
    /// that operation takes (schemathesis follows them: a link to nowhere
    /// leaves an operation tested with made-up ids alone).
    #[test]
    fn every_link_leads_to_an_operation_and_its_parameters() {
        let doc = generate(&AppState::default());
        let mut parameters = std::collections::BTreeMap::new();
        for item in doc["paths"].as_object().into_iter().flatten() {
            for operation in item.1.as_object().into_iter().flat_map(|ops| ops.values()) {
                let names: BTreeSet<String> = operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["name"].as_str().map(str::to_owned))
                    .collect();
                let id = operation["operationId"].as_str().expect("an id").to_owned();
                parameters.insert(id, names);
            }
        }
        let mut links = 0;
        for item in doc["paths"].as_object().into_iter().flatten() {
            for operation in item.1.as_object().into_iter().flat_map(|ops| ops.values()) {
                for answer in operation["responses"].as_object().into_iter().flatten() {
                    for (name, link) in answer.1["links"].as_object().into_iter().flatten() {
                        links += 1;
                        let target = link["operationId"].as_str().expect("an operationId");
                        let takes = parameters.get(target).unwrap_or_else(|| {
                            panic!("link {name} leads to no operation {target}")
                        });
                        for parameter in link["parameters"].as_object().into_iter().flatten() {
                            assert!(
                                takes.contains(parameter.0),
                                "link {name}: {target} takes no {}",
                                parameter.0
                            );
                        }
                    }
                }
            }
        }
        assert!(links >= 5, "{links} links");
        let made = &doc["paths"]["/_mock/sandboxes"]["post"]["responses"]["201"]["links"];
        assert_eq!(made["read"]["operationId"], "mockSandbox");
    }
}
