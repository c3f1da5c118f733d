//! End-to-end tests of the `payments` binary: each runs the real executable
//! as a process, most against the mock server started in-process on port 0.
//! One test binary (fast to link) with one module per topic; together they
//! cover issue #5 (the support CLI), issue 34 (reconcile, output that joins
//! back, messages) and COMMANDS.md.

mod common;

/// The advice after a certificate's dates, `tail`'s advice (the payment
/// commands'), and what `-v` says the product list request sends.
mod advice;
/// Answers about another request than the one sent: exit 4, the fields named.
mod answers;
/// Values as typed: whitespace at an end, a leading `-`, bytes that are not
/// UTF-8, ids and references in the order typed.
mod arguments;
/// Text beyond ASCII: emoji sequences and flags never broken apart when
/// wrapped or cut, references of other normalization forms named.
mod clusters;
/// The completion scripts in fish and bash: shells, values after `=`.
mod completions;
/// Config file, profiles, and flag > env > profile precedence.
mod config;
/// The config file as read: size, encoding, who may open it, a missing
/// default file, notes on a named profile's overridden keys.
mod config_file;
/// No home, as a uid without a passwd entry: flags are enough,
/// `XDG_CONFIG_HOME` alone is honoured.
mod config_home;
/// Unreachable services and answers that are not the envelope.
mod failures;
/// `--help`'s exit codes and shells against docs/cli.md, command by command.
mod help_docs;
/// The advice after a failed connection: HTTPS, or a longer --timeout.
mod hints;
/// `initiate` leaves the mock's limits to the service: sent to one that
/// takes them, refused by the mock itself.
mod initiate_limits;
/// Tables fitted to the terminal's width, and currencies beside amounts.
mod layout;
/// Usage errors said with flags (issue 34): each message before and after.
mod messages;
/// The environment's proxy, connect failures told apart, certificates for
/// another host or expired, and the URL and credentials `-v` shows.
mod network;
/// Answers that leave the outcome open: exit 4 or reconciled, never 1;
/// look-ups never ambiguous; notes that say what happened.
mod outcomes;
/// `initiate` and `confirm` against the mock, table and json.
mod payments;
/// Connect failures through the environment's proxy, each blamed on what
/// happened; never a part of the proxy's `user:pass@` shown.
mod proxies;
/// `reconcile`: every class, every output, ledgers as they come.
mod reconcile;
/// Redirect-based payments: the payment URL line, `verify-return`, and
/// `--wait` through CONFIRMED until the payer decides.
mod redirect;
/// One rule for a referenceNo: what initiate sends, status and reconcile
/// look up.
mod references;
/// The API key never shows up in any output.
mod secrets;
/// SIGTERM and SIGHUP end the other commands with 143 and 129, as PID 1 too.
mod signals;
/// `status`: one, many, by reference, `--from-file`, stdin, exit codes,
/// json lines that join back to their input.
mod status;
/// A stderr that cannot be written: the documented exit codes, no panic.
mod stderr;
/// A stdout closed at start: exit 4, said on stderr.
mod stdout;
/// `tail`: the mock's journal, a merchant's part, a sandbox's, filters,
/// `--follow` until Ctrl-C or the server goes away, and `--proxy`.
mod tail;
/// The commands above through the contract proxy: the mock is a verified fake.
mod through_proxy;
/// The seconds of `--timeout` and the config's `timeout`: why refused.
mod timeouts;
/// HTTPS: --ca-cert, --client-cert, --client-key; unknown CA, expiry, mutual TLS.
mod tls;
/// `--help` of every command, completions, and usage errors (exit 2).
mod usage;
/// `-v`: the service's text escaped on every line.
mod verbose;
/// `status --wait` on the mock's virtual clock.
mod wait;
