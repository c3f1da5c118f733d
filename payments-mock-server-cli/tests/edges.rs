//! Edges the reviewers found (round "edges"): an early answer's connection,
//! the sandbox limit told to a merchant, keys in a query string, keys that
//! contain '='.

// `--api-key` splits at the last '=': base64 keys, `abc==UUID`.
mod keys;
// Every answer that leaves a request's body unread says it closes.
mod early_close;
// A merchant at --max-sandboxes is not told others' count.
mod sandbox_limit;
// A key in a query string is redacted in the journal.
mod journal_query;
// A sandbox's OpenAPI document lists only what a sandbox serves.
mod sandbox_openapi;
