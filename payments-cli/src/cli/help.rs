//! The ends of `--help`: each command's exit codes (docs/cli.md gives
//! the same), and `tail`'s columns.

/// The exit codes, shown at the end of `--help`; `exit.rs` is the one place
/// that produces them.
pub const EXIT_CODES_HELP: &str = "\
Exit codes (the call, not the payment):
  0  every call succeeded
  1  the service rejected a call (4xx other than not found)
  2  usage error (bad flags, bad amount, bad JSON in --extra, bad config,
     unknown profile, a malformed --from-file line)
  3  transaction not found (TRANSACTION_NOT_FOUND, whatever the HTTP status)
  4  service error or unreachable after retries (5xx, 429, INTERNAL_ERROR
     whatever the HTTP status, a gateway's 408 or 499, connection, timeout,
     an answer that is not the service's JSON or is about another request)
  5  --wait gave up before a final state
  6  reconcile found rows that do not match
  141  stdout was closed before everything was written (| head): the run
     stopped there, quietly
  129, 130, 143  a signal ended the run: SIGHUP (129), Ctrl-C (SIGINT: 130)
     or SIGTERM (143, docker stop), also as a container's PID 1; reconcile
     first writes the rows judged whole (tail --follow exits 0)
With many look-ups the code is the highest of the single calls.";

/// The end of `payments verify-return --help`: its own exit codes.
pub const VERIFY_RETURN_HELP: &str = "\
Exit codes:
  0  the address's referenceNo and status agree with the service
  1  they disagree: the service's status is printed, and stderr says which
     field and both values; or the service rejected the call (401, 403)
  2  not a return address (not an absolute URL, or transactionId,
     referenceNo or status missing or empty; over 32 KiB) or a bad flag
  3  the service does not know the transaction
  4  the service failed or could not be reached
  141  stdout was closed before everything was written (| head)";

/// The end of `payments tail --help`.
pub const TAIL_HELP: &str = "\
Columns: SEQ (the entry's number; --since takes it), TIME (UTC), METHOD,
HTTP (the answer's status), CODE (the answer's errorCode; with --proxy,
VERDICT, and the findings' rules on the line below), REQUEST (the request
id's first 8 characters) and PATH. -o json prints each entry whole, as the
server gave it.

Exit codes:
  0  done (with --follow: stopped with Ctrl-C, SIGTERM or SIGHUP, the
     entries read written whole)
  1  the server refused the key (401, 403), no such sandbox
     (SANDBOX_NOT_FOUND), or no such endpoint (--proxy against the mock,
     the mock's journal asked of a proxy)
  2  a bad flag
  4  the server cannot be reached, fails (5xx, 429, an answer that is not
     its envelope) after --retries, or, with --follow, stops answering
  141  stdout was closed before everything was written (| head)
  129, 130, 143  without --follow: a signal ended the run (SIGHUP: 129,
     Ctrl-C: 130, SIGTERM: 143)";

/// The end of `payments completions --help`: its exit codes.
pub const COMPLETIONS_HELP: &str = "\
Exit codes:
  0  the script was printed
  2  no shell or an unknown one, or a bad flag
  4  stdout cannot be written
  141  stdout was closed before everything was written (| head)";
