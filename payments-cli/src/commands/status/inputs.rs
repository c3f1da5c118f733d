//! The look-ups' inputs: the command line's ids and references, and the
//! lines of `--from-file` (or stdin), each checked alike.

use std::{io::Read as _, path::Path};

use super::{Input, Lookup, Origin, StatusArgs};
use crate::error::CliError;

/// The most characters of a transaction id (a line, or an argument); a
/// reference's are [`MAX_REFERENCE_CHARS`](super::super::reference::MAX_REFERENCE_CHARS).
const MAX_ID_CHARS: usize = 128;

/// The inputs from arguments or `--from-file`, in order. An argument is
/// held to a file line's rules (no control character, at most 128
/// characters for an id, the references' rule for a reference: what
/// initiate sends), as a usage error naming it; and, as it is not trimmed like
/// a line, one with whitespace at either end is refused as initiate refuses
/// such a `--reference-no` (CONTRACT section 1: a referenceNo has none, a
/// transactionId is a UUID): it was sent as it was and answered not found.
pub(super) fn collect_inputs(args: &StatusArgs) -> Result<Vec<Input>, CliError> {
    for (text, what, by_reference) in args
        .transaction_ids
        .iter()
        .map(|id| (id, "transaction id", false))
        .chain(
            args.reference_no
                .iter()
                .map(|r| (r, "--reference-no", true)),
        )
    {
        if let Some(problem) = unusable(text, by_reference).or_else(|| edge_whitespace(text)) {
            return Err(CliError::Usage(format!(
                "{what} {} {problem}",
                crate::text::quote(text)
            )));
        }
    }
    for id in &args.transaction_ids {
        if let Some(problem) = not_an_id(id) {
            return Err(CliError::Usage(format!(
                "transaction id {} {problem}",
                crate::text::quote(id)
            )));
        }
    }
    let mut lookups: Vec<Lookup> = args
        .transaction_ids
        .iter()
        .map(|id| Lookup::Id(id.clone()))
        .chain(
            args.reference_no
                .iter()
                .map(|reference| Lookup::Reference(reference.clone())),
        )
        .collect();
    // In the order typed (`--reference-no R3 -- ID`: R3 is arg 1), as the
    // output keeps input order; ids first when the places are not known.
    let (ids_at, references_at) = &args.typed_at;
    if ids_at.len() == args.transaction_ids.len() && references_at.len() == args.reference_no.len()
    {
        let mut at = ids_at.iter().chain(references_at);
        let mut placed: Vec<(usize, Lookup)> = lookups
            .into_iter()
            .map(|lookup| (at.next().copied().unwrap_or(usize::MAX), lookup))
            .collect();
        placed.sort_by_key(|(index, _)| *index);
        lookups = placed.into_iter().map(|(_, lookup)| lookup).collect();
    }
    let mut inputs: Vec<Input> = lookups
        .into_iter()
        .enumerate()
        .map(|(index, lookup)| Input::arg(index, lookup))
        .collect();
    if let Some(path) = &args.from_file {
        let bytes = read_source(path)?;
        inputs.extend(parse_lines(&bytes, args.by_reference));
    }
    Ok(inputs)
}

/// The note on stderr when the input held no id or reference (only blank
/// lines and `#` comments, or nothing): the run exits 0 with nothing on
/// stdout.
pub(super) fn nothing_to_look_up(path: Option<&Path>) -> String {
    let source = match path {
        Some(path) if path.as_os_str() == "-" => "standard input (--from-file -)".to_owned(),
        Some(path) => format!(
            "--from-file {}",
            crate::text::quote(&path.display().to_string())
        ),
        None => "the input".to_owned(),
    };
    format!(
        "note: nothing to look up: {source} has no ids or references (blank lines and # \
         comments are skipped); nothing was sent"
    )
}

fn read_source(path: &Path) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    let result = if path.as_os_str() == "-" && crate::commands::stdin_was_closed() {
        Err(std::io::Error::other(crate::commands::STDIN_GONE))
    } else if path.as_os_str() == "-" {
        std::io::stdin().lock().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::read(path).map(|read| bytes = read)
    };
    result.map_err(|source| CliError::Input {
        path: path.to_owned(),
        source,
    })?;
    Ok(bytes)
}

/// One id (or reference) per line; blank lines and `#` comments skipped;
/// anything that cannot be one is reported with its line number. A UTF-8
/// byte order mark at the start of a line (Notepad and Excel write one
/// before the first; files joined with `cat` have one at each file's
/// first line) is not part of it.
pub fn parse_lines(bytes: &[u8], by_reference: bool) -> Vec<Input> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let mut inputs = Vec::new();
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = index + 1;
        let malformed = |reason: String| Input {
            origin: Origin::Line(line),
            value: echo(&String::from_utf8_lossy(raw)),
            lookup: Err(reason),
        };
        let Ok(text) = std::str::from_utf8(raw) else {
            inputs.push(malformed("not valid UTF-8".to_owned()));
            continue;
        };
        let text = text.trim().trim_start_matches('\u{feff}').trim_start();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let found = |lookup: Lookup| Input {
            origin: Origin::Line(line),
            value: text.to_owned(),
            lookup: Ok(lookup),
        };
        let what = if by_reference {
            "reference"
        } else {
            "transaction id"
        };
        if let Some(problem) = unusable(text, by_reference) {
            inputs.push(malformed(format!("the {what} {problem}")));
        } else if let Some(problem) = not_an_id(text).filter(|_| !by_reference) {
            inputs.push(malformed(format!("the {what} {problem}")));
        } else if !by_reference && text.chars().any(char::is_whitespace) {
            inputs.push(malformed(format!(
                "'{text}' is not a transaction id (it has spaces; use --by-reference for references)"
            )));
        } else if by_reference {
            inputs.push(found(Lookup::Reference(text.to_owned())));
        } else {
            inputs.push(found(Lookup::Id(text.to_owned())));
        }
    }
    inputs
}

/// Why an id or reference (a line or an argument) cannot be looked up:
/// a control character, or more than [`MAX_ID_CHARS`] characters for an
/// id; a reference is held to the rule initiate and reconcile keep
/// ([`super::super::reference`]).
fn unusable(text: &str, by_reference: bool) -> Option<String> {
    if by_reference {
        super::super::reference::problem(text)
    } else if text.chars().any(char::is_control) {
        Some("contains a control character".to_owned())
    } else if text.chars().count() > MAX_ID_CHARS {
        Some(format!("is longer than {MAX_ID_CHARS} characters"))
    } else {
        None
    }
}

/// Why `text` cannot be a transaction id, as `status` refuses one given
/// as an argument (a control or invisible format character, over 128
/// characters); `confirm` refuses its TRANSACTION_ID the same way.
pub(crate) fn id_problem(text: &str) -> Option<String> {
    unusable(text, false).or_else(|| not_an_id(text))
}

/// Whitespace at either end of an argument (a line is trimmed instead).
fn edge_whitespace(text: &str) -> Option<String> {
    (text.trim() != text).then(|| "must not start or end with whitespace".to_owned())
}

/// Why a transaction id cannot be one: an invisible format character
/// (U+200B, U+FEFF, U+202E) in it. Ids are UUIDs; such an id, sent, was
/// answered TRANSACTION_NOT_FOUND, though the transaction it looks like
/// exists. A reference may hold what the service accepts: it is sent, and
/// shown escaped.
fn not_an_id(text: &str) -> Option<String> {
    let c = text.chars().find(|&c| crate::text::is_format(c))?;
    Some(format!(
        "contains an invisible format character (U+{:04X})",
        u32::from(c)
    ))
}

/// A line as the json output repeats it: trimmed, at most 200 bytes.
fn echo(text: &str) -> String {
    crate::text::clipped(text.trim())
}
