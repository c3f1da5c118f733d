//! The table of operations: what each route of the document (by its
//! operationId) takes and answers, the statuses and `errorCode`s of each,
//! and the links between them. `mod.rs` fills the generated document from
//! it; `tests/schema` holds it to what the handlers answer.

use serde_json::{Value, json};

use super::operation::{Kind, Param, Spec};
use crate::domain::rules;
use payments_serve::ErrorCode::{self, *};

pub(super) fn component(name: &str) -> Value {
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
        .chain(crate::http::handlers::admin::STATUSES.map(|s| s.as_str()))
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
pub(super) fn spec(id: &str) -> Option<Spec> {
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
                        "The merchant's reference, percent-encoded as a path segment: any character may be in it (INV/2026/0001 is INV%2F2026%2F0001); an empty or blank one is 400 INVALID_REFERENCE_NO",
                    ),
                    "",
                ),
                (
                    "merchantId",
                    "query",
                    false,
                    pattern(
                        rules::UUID,
                        "Whose reference (ext); an API key bound to a merchant scopes the look-up itself, and with such a key another merchant's id is 403 FORBIDDEN",
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
                (403, vec![Forbidden]),
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
                    json!({ "type": "integer", "minimum": 1, "maximum": crate::http::handlers::admin::PAGE_MAX, "default": crate::http::handlers::admin::PAGE_DEFAULT }),
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
                    json!({ "type": "integer", "minimum": 1, "maximum": crate::domain::journal::CAPACITY, "default": crate::domain::journal::CAPACITY }),
                    "At most this many: the newest, or with after the oldest above it",
                ),
                (
                    "path",
                    "query",
                    false,
                    json!({ "type": "string" }),
                    "Only requests to exactly this path",
                ),
                (
                    "after",
                    "query",
                    false,
                    json!({ "type": "integer", "minimum": 0, "maximum": crate::http::handlers::admin::SEQ_MAX }),
                    "Only entries numbered above this seq (the last one seen), the oldest first: a page; without it, the newest",
                ),
            ],
            None,
            data("JournalPage"),
            vec![(400, vec![ValidationError])],
        ),
        "mockCoverage" => admin(vec![], None, data("CoverageData"), vec![]),
        "mockFaults" => admin(
            vec![],
            None,
            data("FaultRuleList"),
            vec![(403, vec![Forbidden])],
        ),
        "mockFaultAdd" => Spec {
            ok: (201, data("FaultRule")),
            links: json!({
                "remove": {
                    "operationId": "mockFaultRemove",
                    "parameters": { "ruleId": "$response.body#/data/id" },
                    "description": "The rule just added, removed",
                },
            }),
            ..admin(
                vec![],
                Some(("application/json", "FaultRuleRequest")),
                Value::Null,
                vec![
                    (400, vec![ValidationError]),
                    (403, vec![Forbidden]),
                    (413, vec![PayloadTooLarge]),
                    (415, vec![UnsupportedMediaType]),
                ],
            )
        },
        "mockFaultsClear" => admin(vec![], None, data("Removed"), vec![(403, vec![Forbidden])]),
        "mockSandboxes" => admin(vec![], None, data("SandboxList"), vec![]),
        "mockSandboxAdd" => Spec {
            ok: (201, data("Sandbox")),
            links: json!({
                "read": {
                    "operationId": "mockSandbox",
                    "parameters": { "sandboxId": "$response.body#/data/id" },
                    "description": "The sandbox just made",
                },
                "remove": {
                    "operationId": "mockSandboxRemove",
                    "parameters": { "sandboxId": "$response.body#/data/id" },
                    "description": "The sandbox just made, removed",
                },
            }),
            ..admin(
                vec![],
                Some(("application/json", "SandboxRequest")),
                Value::Null,
                vec![
                    (400, vec![ValidationError]),
                    (403, vec![Forbidden]),
                    (413, vec![PayloadTooLarge]),
                    (415, vec![UnsupportedMediaType]),
                    (429, vec![TooManySandboxes]),
                ],
            )
        },
        "mockSandbox" => admin(
            vec![(
                "sandboxId",
                "path",
                true,
                json!({ "type": "string" }),
                "A sandbox's id (any other text finds no sandbox: 404)",
            )],
            None,
            data("Sandbox"),
            vec![(404, vec![SandboxNotFound])],
        ),
        "mockSandboxRemove" => admin(
            vec![(
                "sandboxId",
                "path",
                true,
                json!({ "type": "string" }),
                "A sandbox's id (any other text finds no sandbox: 404)",
            )],
            None,
            data("Removed"),
            vec![(404, vec![SandboxNotFound])],
        ),
        "mockFaultRemove" => admin(
            vec![(
                "ruleId",
                "path",
                true,
                json!({ "type": "string", "format": "uuid", "pattern": crate::fault_rules::UUID_PATTERN }),
                "A fault rule's id",
            )],
            None,
            data("Removed"),
            vec![
                (400, vec![ValidationError]),
                (403, vec![Forbidden]),
                (404, vec![NotFound]),
            ],
        ),
        "metrics" => Spec {
            kind: Kind::Admin,
            params: vec![],
            body: None,
            ok: (200, Value::Null),
            errors: vec![],
            links: no_links.clone(),
        },
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
            vec![
                console_query(
                    "after",
                    json!({ "type": "string", "pattern": "^(?:|0|[1-9][0-9]{0,18})$" }),
                    "The seq of the newest row shown (empty or absent: 0); the answer's X-Journal-Seq says the newest now",
                ),
                console_query(
                    "id",
                    json!({ "type": "string" }),
                    "The request id of the row numbered after (the answer's X-Journal-Request-Id; empty or absent: not checked): when the journal's entry numbered after is another request, it started again",
                ),
            ],
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
        "consoleCoverage" => page(vec![], None, 200, vec![]),
        "consoleFaults" => page(vec![], None, 200, vec![]),
        "consoleSandboxes" => page(vec![], None, 200, vec![]),
        "consoleResetPage" => page(vec![], None, 200, vec![]),
        "consoleReset" => page(
            vec![],
            Some(("application/x-www-form-urlencoded", "ConsoleResetForm")),
            303,
            vec![400, 403, 413, 415],
        ),
        "consoleSignIn" => page(
            vec![
                console_query(
                    "next",
                    json!({ "type": "string" }),
                    "The console page to go to after signing in, relative to the server's root (`_mock/ui/…`); anything else goes to the console's home",
                ),
                console_query(
                    "signed-out",
                    json!({ "type": "string" }),
                    "After a sign-out: says so",
                ),
            ],
            None,
            200,
            vec![],
        ),
        "consoleSignInSubmit" => page(
            vec![],
            Some(("application/x-www-form-urlencoded", "ConsoleSignInForm")),
            303,
            vec![400, 401, 403, 413, 415],
        ),
        "consoleSignOut" => page(
            vec![],
            Some(("application/x-www-form-urlencoded", "ConsoleSignOutForm")),
            303,
            vec![400, 403, 413, 415],
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
