//! The contract proxy (issue 24, CONTRACT section 16): a deliberately
//! deviant upstream scripted by each test, pass-through fidelity, the
//! verified fake (this project's mock behind the proxy while the client's
//! and the CLI's scenarios run), the binary's subcommands, and secrets.

// A scripted upstream: an axum app whose answers each test sets.
mod upstream;
// The proxy in front of it, the client, the bodies.
mod rig;
// At least one scripted deviation for every rule id, each reported.
mod deviant;
// The script of those deviations, rule by rule.
mod deviations;
// Bytes and headers passed through unchanged, both ways.
mod passthrough;
// The upstream's failures and timeouts, large bodies, --enforce, retries.
mod failures;
// Stalled bodies, clients that never read, refused requests.
mod limits;
// Framing: lengths beside transfer codings, HEAD, many headers, large
// bodies that keep coming.
mod framing;
// The mock behind the proxy: hundreds of correct exchanges, no violation.
mod verified_fake;
// `proxy` and `check` as processes, `--seed-from`, bad input.
mod binary;
// Canary secrets never reach the recording, report, console, log or errors.
mod secrets;
