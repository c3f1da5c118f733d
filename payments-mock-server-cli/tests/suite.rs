//! The integration tests of payments-mock-server, one module per topic.

mod common;

// Validation rules of CONTRACT sections 1-2, one snapshot per rule.
mod validation;
// Every error code of CONTRACT section 8, snapshotted.
mod errors;
// Product flows, expiry, duplicates, merchant scope (sections 4-7).
mod flows;
// Authentication on and off (section 9).
mod auth;
// Injected faults, over real TCP for the resets (section 10).
mod faults;
// Scripted faults: /_mock/faults, every kind over a real socket (section 19).
mod fault_rules;
// Exactly-once under concurrency (sections 4 and 6).
mod concurrency;
// Hostile input: never a panic, never a hang.
mod hostile;
// Major-unit amount formatting (section 1).
mod money;
// The /_mock/ controls: health, clock, transactions, the journal, reset.
mod admin;
// /openapi.json: every route, status and code documented.
mod openapi;
// The library API: start, drive, drop, listener and options.
mod library;
// The binary as a process.
mod binary;
// --log-format json: every stderr line JSON, start errors too.
mod json_stderr;
// HTTPS: --tls-* flags, mutual TLS, bad input, the embedded server (section 18).
mod tls;
// As a container runs it: a stop while it starts, a read-only
// --tls-self-signed DIR, PAYMENTS_MOCK_API_KEYS.
mod containers;
// The --tls-self-signed line in the log's format (JSON with --log-format json).
mod tls_said;
// The serving shell: SIGHUP, a stdout that cannot be written, a full disk under --tls-self-signed.
mod serve_shell;
// Property tests: validation and path decoding never panic.
mod props;
// Near-valid bodies and bytes: a 400 naming the field, never a panic (issue #8).
mod mutations;
// Every route and status validated against /openapi.json (issue #8).
mod schema;
// The document's request rules are the validator's, body by body (issue 19).
mod doc_rules;
// Slow and idle clients, oversized heads, the rate limiter (issue #8).
mod abuse;
// Redirect-based payments: the payment page, the payer, the admin control (section 13).
mod redirect;
// The payer without a browser: the admin control, the embedded server's API.
mod payer_control;
// The payment page over real sockets: a form cut short or late (400), too
// large (413), and its token kept out of the log however the path is spelt.
mod payment_page_edges;
// The web console: pages, filters, controls, hostile text (section 14).
mod console;
// The request journal's feed under a burst: every row in turn, holes said.
mod console_feed;
// Errors tied to fields and titled, the pager only with links, a sandbox's titles.
mod console_a11y;
// The console's clock, catalogue and reset pages, and a keyed mock's console.
mod console_controls;
// Keys on every route and merchant isolation (issue #8).
mod security;
// No key in any log, answer, journal, Debug output or error (issue #8).
mod secrets;
// The admin side behind --admin-key: roles, scoping, sessions (issue 33).
mod admin_access;
// The same through the binary: matrix, warning, flags, secrets (issue 33).
mod admin_binary;
// GET /metrics through the binary: counts, promtool, the admin key (issue 33).
mod metrics;
// Scrapes parsed, and promtool check metrics.
mod metrics_text;
// What the application under test met: cells, faults, recovered (issue 43).
mod coverage;
mod sandboxes;
// Under /sandboxes/{id}: queries and odd tails answered as at the root.
mod sandbox_paths;
// An answer before the body says it closes; content codings, two
// Content-Types and two merchantIds refused.
mod request_framing;
// --otlp-endpoint: server spans decoded by a real OTLP receiver, through the
// proxy too, the binary's flush at SIGTERM, a collector that is down (issue 44).
mod otlp;
// The reviewers' edges: early answers' connections, keys with '=', the
// sandbox limit told to a merchant, keys in a query string.
mod edges;
// Times on the clock the binary is given: the catalogue's settle_after and
// payer_timeout as --expiry, --sandbox-ttl whole seconds.
mod clock_settings;
