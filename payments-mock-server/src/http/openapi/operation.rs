//! What an operation of the document is: which part of the service it
//! belongs to, who may call each one with an admin key configured, and
//! what it takes and answers (`table.rs` says that for each).

use serde_json::Value;

use payments_serve::ErrorCode;

/// Which part of the service an operation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `/api/`: the service (API key, faults, rate limit, journal).
    Api,
    /// `/_mock/` JSON controls and `/openapi.json`.
    Admin,
    /// HTML pages: the payment page and the console.
    Page,
    /// A stylesheet or script.
    Asset(&'static str),
}

/// Who may call an operation outside `/api/` when the mock has an admin
/// key (CONTRACT section 18); without one, everyone may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Guard {
    /// Everyone: health, the document, the payment page, the console's
    /// sign-in and sign-out, stylesheets and scripts.
    Open,
    /// An admin key, or a key bound to a merchant (that merchant's part).
    Reads,
    /// An admin key only: what changes the mock, and the whole process's
    /// counts (`/metrics`, the coverage), which no merchant's part is.
    Changes,
}

/// Who may call operation `id` with an admin key configured.
pub(super) fn guard(id: &str) -> Guard {
    match id {
        "mockHealth"
        | "openapi"
        | "paymentPage"
        | "paymentPageSubmit"
        | "pageStylesheet"
        | "consoleStylesheet"
        | "consoleScript"
        | "consoleSignIn"
        | "consoleSignInSubmit"
        | "consoleSignOut" => Guard::Open,
        "mockPayer"
        | "mockReset"
        | "mockClockAdvance"
        | "consoleClockAdvance"
        | "consoleResetPage"
        | "consoleReset"
        | "metrics"
        | "mockCoverage"
        | "consoleCoverage"
        | "mockFaults"
        | "mockFaultAdd"
        | "mockFaultsClear"
        | "mockFaultRemove"
        | "consoleFaults" => Guard::Changes,
        _ => Guard::Reads,
    }
}

/// A parameter: name, location, required, schema, description.
pub(super) type Param = (&'static str, &'static str, bool, Value, &'static str);

/// What one operation takes and answers.
pub(super) struct Spec {
    pub(super) kind: Kind,
    pub(super) params: Vec<Param>,
    /// (content type, component) of a required body.
    pub(super) body: Option<(&'static str, &'static str)>,
    /// Success: (status, the `data` schema for JSON operations).
    pub(super) ok: (u16, Value),
    /// Error statuses and the codes they carry (JSON), or page statuses.
    pub(super) errors: Vec<(u16, Vec<ErrorCode>)>,
    /// Links of the success answer (stateful testing).
    pub(super) links: Value,
}
