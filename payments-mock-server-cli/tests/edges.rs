//! Edges the reviewers found (round "edges"): an early answer's connection,
//! the sandbox limit told to a merchant, keys in a query string, keys that
//! contain '='.

// `--api-key` splits at the last '=': base64 keys, `abc==UUID`.
mod keys;
