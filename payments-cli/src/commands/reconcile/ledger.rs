//! The ledger: its header, and each row checked before anything is sent.
//!
//! Columns are found by name in the header row, in any order, names
//! compared without regard to letter case or surrounding spaces:
//! `referenceNo` and `amount` are required; `currency`, `status` and
//! `transactionId` optional; others are ignored. A known name twice is an
//! error (which one would count?).
//!
//! A row is `invalid` when it is malformed (every problem is named, joined
//! by `; `, like the service's VALIDATION_ERROR), else `duplicate` when its
//! referenceNo is on an earlier row, else it is looked up. Cells are
//! trimmed of whitespace, Unicode's included (`INV-7` and a no-break
//! space is `INV-7`); amounts go through the client's exact money with the row's
//! currency's exponent, never a float.

use std::{collections::HashMap, hash::BuildHasher as _, io::Read};

use payments_client::{Currency, MinorAmount, TransactionStatus, money};

use super::records::{Next, OpenQuote, Records, TooLong, trim};
use crate::{output::printable, usage};

/// The longest transactionId a row may hold (as `status --from-file`).
const MAX_ID_CHARS: usize = 128;
/// The most characters of a cell the output repeats when the row's check
/// did not accept it (an accepted one is whole, a referenceNo up to
/// [`MAX_REFERENCE_CHARS`](crate::commands::reference::MAX_REFERENCE_CHARS)
/// characters included): more than any valid transactionId, currency or
/// status has.
/// (An accepted amount is whole, however many leading zeros it has.)
pub const MAX_CELL_CHARS: usize = 200;

/// Where each known column is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    reference: usize,
    amount: usize,
    currency: Option<usize>,
    status: Option<usize>,
    transaction_id: Option<usize>,
    /// How many fields the header has (every row must have as many).
    count: usize,
    /// The header's names, printable and cut (to name a column).
    names: Vec<String>,
}

/// Why the ledger cannot be reconciled at all (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderError(pub String);

/// The known columns, as the header names them (lower case for matching).
const NAMES: [(&str, &str); 5] = [
    ("referenceno", "referenceNo"),
    ("amount", "amount"),
    ("currency", "currency"),
    ("status", "status"),
    ("transactionid", "transactionId"),
];

impl Columns {
    /// Finds the columns in the header record.
    ///
    /// # Errors
    ///
    /// A known column named twice, or `referenceNo` or `amount` missing.
    pub fn find<R: Read>(records: &Records<R>) -> Result<Self, HeaderError> {
        let mut found: [Option<usize>; 5] = [None; 5];
        let mut names = Vec::new();
        let mut raw_names = Vec::new();
        for index in 0..records.field_count() {
            let raw = records.field(index).unwrap_or_default();
            let name = String::from_utf8_lossy(raw);
            let name = name.trim();
            names.push(printable(name));
            raw_names.push(name.to_owned());
            let lower = name.to_ascii_lowercase();
            let Some(known) = NAMES.iter().position(|(key, _)| *key == lower) else {
                continue;
            };
            if let Some(first) = found[known] {
                return Err(HeaderError(format!(
                    "the header names the column {} twice (columns {} and {}); \
                     rename or remove one",
                    NAMES[known].1,
                    first + 1,
                    index + 1
                )));
            }
            found[known] = Some(index);
        }
        let missing: Vec<&str> = [0, 1]
            .into_iter()
            .filter(|&known| found[known].is_none())
            .map(|known| NAMES[known].1)
            .collect();
        match (found[0], found[1]) {
            (Some(reference), Some(amount)) => Ok(Self {
                reference,
                amount,
                currency: found[2],
                status: found[3],
                transaction_id: found[4],
                count: records.field_count(),
                names: names.iter().map(|name| echo(name)).collect(),
            }),
            _ => Err(HeaderError(match other_separator(&raw_names) {
                // The names are there, between other separators.
                Some(separator) => format!(
                    "the header is separated by {separator}: only commas are read; save the \
                     ledger as CSV with commas (found: {})",
                    usage::quote(&names.join(","))
                ),
                None => format!(
                    "the header has no {} column; the first line must name the columns, \
                 at least referenceNo and amount (found: {})",
                    missing.join(" and no "),
                    usage::quote(&names.join(","))
                ),
            })),
        }
    }

    /// Column `field` (from 0) as a message names it: its header name, or
    /// its number when it has none.
    fn name(&self, field: usize) -> String {
        match self.names.get(field).filter(|name| !name.is_empty()) {
            Some(name) => name.clone(),
            None => (field + 1).to_string(),
        }
    }
}

/// The separator a header's names are between when it is not a comma: a
/// `;` (a spreadsheet set to a European locale) or a tab, splitting a name
/// into known column names.
fn other_separator(names: &[String]) -> Option<&'static str> {
    [(';', "';'"), ('\t', "tabs")]
        .into_iter()
        .find(|(separator, _)| {
            names.iter().any(|name| {
                name.contains(*separator)
                    && name.split(*separator).any(|part| {
                        let part = part.trim().to_ascii_lowercase();
                        NAMES.iter().any(|(key, _)| *key == part)
                    })
            })
        })
        .map(|(_, said)| said)
}

/// Where a quote opened that never closes, as the run's error says it:
/// `column` names the column (the header's name, or a number).
pub fn open_quote_said(open: OpenQuote, column: &str) -> String {
    let why = if open.end_of_file {
        "is never closed (the file ends inside it)".to_owned()
    } else {
        format!(
            "is not closed within {} KiB",
            super::records::MAX_RECORD_BYTES / 1024
        )
    };
    format!(
        "line {}, column {column}: a quote opens here and {why}, so the rest of the ledger \
         cannot be read as rows; close it, or write a quote inside a value as two (\"\") in a \
         quoted value",
        open.line
    )
}

/// What the ledger says on one row, as written (trimmed, lossy UTF-8):
/// for the output, whatever the row's fate. A value the row's check
/// accepted is whole; any other longer than [`MAX_CELL_CHARS`] is its
/// first [`MAX_CELL_CHARS`] characters and `…`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cells {
    pub reference: Option<String>,
    pub amount: Option<String>,
    pub currency: Option<String>,
    pub status: Option<String>,
    pub transaction_id: Option<String>,
}

/// A row that may be looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Valid {
    pub reference: String,
    pub amount: MinorAmount,
    pub currency: Currency,
    pub status: Option<TransactionStatus>,
    pub transaction_id: Option<String>,
}

/// What is known of a row before the service is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every problem of the row, joined by `; `.
    Invalid(String),
    /// The referenceNo is on an earlier row, this line.
    Duplicate { first_line: u64 },
    /// Ask the service.
    LookUp(Box<Valid>),
}

/// One ledger row, ready for the service (or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub line: u64,
    pub cells: Cells,
    pub verdict: Verdict,
    /// The row spans lines (a quoted value): which, and where the quote
    /// opened and closed, for a note on stderr whatever the verdict.
    pub spanned: Option<String>,
}

/// Turns records into rows, remembering the references seen.
#[derive(Debug)]
pub struct Checker {
    columns: Columns,
    default_currency: Currency,
    /// A keyed 64-bit hash of each referenceNo seen (as two `u32`, so an
    /// entry is 12 bytes, not 16), to the line it was first on (saturated
    /// at `u32::MAX`): 13 bytes a table slot instead of the reference
    /// itself, so a million-row ledger's duplicates cost ~27 MB; the key is
    /// random per run, so no ledger can be made to collide on purpose, and
    /// a chance collision (a row wrongly called a duplicate) has a
    /// probability under 1 in 30 million at a million rows.
    seen: HashMap<[u32; 2], u32>,
    hasher: std::collections::hash_map::RandomState,
}

impl Checker {
    pub fn new(columns: Columns, default_currency: Currency) -> Self {
        Self {
            columns,
            default_currency,
            seen: HashMap::new(),
            hasher: std::collections::hash_map::RandomState::new(),
        }
    }

    /// What the run's error says of a quote that never closes.
    pub fn open_quote(&self, open: OpenQuote) -> String {
        open_quote_said(open, &self.columns.name(open.field))
    }

    /// A record past [`super::records`]' limits.
    pub fn too_long(&self, line: u64, why: TooLong) -> Row {
        let reason = match why {
            TooLong::Bytes => format!(
                "the row is longer than {} KiB",
                super::records::MAX_RECORD_BYTES / 1024
            ),
            TooLong::Fields => format!(
                "the row has more than {} fields",
                super::records::MAX_FIELDS
            ),
        };
        Row {
            line,
            cells: Cells::default(),
            verdict: Verdict::Invalid(reason),
            spanned: None,
        }
    }

    /// Checks the record [`Records::next`] just returned, starting on `line`.
    pub fn check<R: Read>(&mut self, records: &Records<R>, line: u64) -> Row {
        let columns = &self.columns;
        let cell = |index: Option<usize>| index.and_then(|i| records.field(i)).map(trim);
        let raw_reference = cell(Some(columns.reference));
        let raw_amount = cell(Some(columns.amount));
        let raw_currency = cell(columns.currency);
        let raw_status = cell(columns.status);
        let raw_id = cell(columns.transaction_id);
        let shown = |raw: Option<&[u8]>| {
            raw.filter(|bytes| !bytes.is_empty())
                .map(|bytes| echo(&String::from_utf8_lossy(bytes)))
        };
        let cells = Cells {
            reference: shown(raw_reference),
            amount: shown(raw_amount),
            currency: shown(raw_currency),
            status: shown(raw_status),
            transaction_id: shown(raw_id),
        };

        // A quoted value over several lines: most often a quote that is no
        // quote (`"12 inch`) swallowing the rows up to the next.
        let spanned = records.spanned().map(|span| {
            format!(
                "lines {line}\u{2013}{} were read as one row: the quote opened in column {} on \
                 line {} closes on line {}",
                records.last_line(),
                columns.name(span.field),
                span.opened,
                span.closed,
            )
        });
        // A row with another number of fields than the header (an
        // unquoted comma, a cell left out) has its values in the wrong
        // columns: judging them would only cascade ("currency '000.00' is
        // not an ISO 4217 code; status 'MYR' ..."). One message says why.
        // So does a row of the header's count whose quote holds lines that
        // read as rows: they were never looked up.
        let swallowed = spanned.as_ref().zip(records.rows_inside());
        if records.field_count() != columns.count || swallowed.is_some() {
            let reason = match (&spanned, swallowed) {
                (Some(spanned), _) if records.field_count() != columns.count => format!(
                    "{spanned}; the row has {} fields, the header {}",
                    records.field_count(),
                    columns.count
                ),
                (_, Some((spanned, (first, last)))) => format!(
                    "{spanned}, and it holds what look like rows of the ledger ({})",
                    lines(first, last)
                ),
                _ => format!(
                    "the row has {} fields, the header {} (a comma in a value must be quoted)",
                    records.field_count(),
                    columns.count
                ),
            };
            return Row {
                line,
                cells,
                verdict: Verdict::Invalid(reason),
                spanned,
            };
        }
        let mut cells = cells;
        let mut problems = Vec::new();
        let reference = text("referenceNo", raw_reference, &mut problems)
            .and_then(|reference| check_reference(reference, &mut problems));
        let currency = match raw_currency {
            None | Some([]) => Some(self.default_currency.clone()),
            Some(_) => text("currency", raw_currency, &mut problems)
                .and_then(|code| check_currency(code, &mut problems)),
        };
        // A row too short to reach the amount has no amount: "empty".
        let amount = text(
            "amount",
            Some(raw_amount.unwrap_or_default()),
            &mut problems,
        );
        let amount = match (amount, &currency) {
            (Some(amount), Some(currency)) => check_amount(amount, currency, &mut problems),
            // The currency's problem is said; the decimals cannot be judged.
            _ => None,
        };
        let status = text("status", raw_status, &mut problems)
            .filter(|s| !s.is_empty())
            .and_then(|s| check_status(s, &mut problems));
        let transaction_id = text("transactionId", raw_id, &mut problems)
            .filter(|id| !id.is_empty())
            .and_then(|id| check_transaction_id(id, &mut problems));

        let short_line = u32::try_from(line).unwrap_or(u32::MAX);
        let first_line = reference.map(|reference| {
            let hash = self.hasher.hash_one(reference);
            // The hash in halves: the truncations are the point.
            let key = [(hash >> 32) as u32, hash as u32];
            u64::from(*self.seen.entry(key).or_insert(short_line))
        });
        let line_seen = u64::from(short_line);
        if amount.is_some() {
            // Accepted: whole (leading zeros may make it any length).
            cells.amount = raw_amount.map(|bytes| String::from_utf8_lossy(bytes).into_owned());
        }
        if let Some(reference) = reference {
            // Accepted: whole (up to the references' rule, past the cut).
            cells.reference = Some(reference.to_owned());
        }
        let verdict = match (reference, amount, currency) {
            _ if !problems.is_empty() => Verdict::Invalid(problems.join("; ")),
            _ if first_line.is_some_and(|first| first != line_seen) => Verdict::Duplicate {
                first_line: first_line.unwrap_or(line),
            },
            (Some(reference), Some(amount), Some(currency)) => Verdict::LookUp(Box::new(Valid {
                reference: reference.to_owned(),
                amount,
                currency,
                status,
                transaction_id: transaction_id.map(str::to_owned),
            })),
            // Every missing part has pushed a problem; kept for the types.
            _ => Verdict::Invalid("the row is incomplete".to_owned()),
        };
        Row {
            line,
            cells,
            verdict,
            spanned,
        }
    }
}

/// `line 3`, or `lines 3–7`.
fn lines(first: u64, last: u64) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}\u{2013}{last}")
    }
}

/// A cell as UTF-8 text, or the problem that it is not.
fn text<'a>(column: &str, raw: Option<&'a [u8]>, problems: &mut Vec<String>) -> Option<&'a str> {
    let raw = raw?;
    match std::str::from_utf8(raw) {
        Ok(text) => Some(text),
        Err(_) => {
            problems.push(format!("{column} is not valid UTF-8"));
            None
        }
    }
}

fn check_reference<'a>(reference: &'a str, problems: &mut Vec<String>) -> Option<&'a str> {
    let problem = if reference.is_empty() {
        "referenceNo is empty".to_owned()
    } else if let Some(problem) = crate::commands::reference::problem(reference) {
        // As initiate and status hold it: what one sends, the others find.
        format!("referenceNo {problem}")
    } else if reference == "." || reference == ".." {
        "referenceNo cannot be '.' or '..' (it cannot be sent in a URL path)".to_owned()
    } else {
        return Some(reference);
    };
    problems.push(problem);
    None
}

/// An active ISO 4217 code ([`crate::amount::currency`]): a withdrawn one
/// (`HRK`) is refused as the service refuses it, said to be withdrawn, and
/// never judged against a transaction in another currency.
fn check_currency(code: &str, problems: &mut Vec<String>) -> Option<Currency> {
    let upper = code.to_ascii_uppercase();
    match crate::amount::currency(&upper) {
        Ok((currency, _)) => Some(currency),
        Err(crate::amount::AmountError::NoMinorUnit(_)) => {
            problems.push(format!("currency {upper} has no minor unit"));
            None
        }
        Err(err @ crate::amount::AmountError::WithdrawnCurrency { .. }) => {
            problems.push(format!("currency {err}"));
            None
        }
        Err(_) => {
            problems.push(format!(
                "currency {} is not an ISO 4217 code such as MYR",
                usage::quote(code)
            ));
            None
        }
    }
}

/// Major units, strictly `DIGITS[.DIGITS]`, with no more decimal places
/// than the currency has (`10.500` MYR is refused, not read as 10.50: a
/// slipped decimal point must not pass), through the client's exact money.
fn check_amount(
    text: &str,
    currency: &Currency,
    problems: &mut Vec<String>,
) -> Option<MinorAmount> {
    let exponent = currency.exponent().unwrap_or_default();
    // A point needs digits on both sides: `10.` and `.5` are no amount a
    // ledger means (a cut-off cell, a lost digit), and are not guessed at.
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (text, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let fraction_ok = fraction.is_none_or(digits);
    let fraction = fraction.unwrap_or_default();
    let quoted = usage::quote(text);
    let problem = if text.is_empty() {
        "amount is empty".to_owned()
    } else if !digits(whole) || !fraction_ok {
        if text.starts_with('-') && text.len() > 1 && digits(&text[1..].replacen('.', "", 1)) {
            format!("amount {quoted} must be greater than zero")
        } else {
            format!(
                "amount {quoted} is not an amount: digits with an optional decimal point, e.g. 10.50"
            )
        }
    } else if fraction.len() > exponent as usize {
        format!(
            "amount {quoted} has more than {exponent} decimal places, the most {} allows",
            currency.code()
        )
    } else {
        match money::parse_decimal(text).map(|major| money::to_minor(major, currency)) {
            Ok(Ok(minor)) if minor.get() <= money::MAX_AMOUNT => return Some(minor),
            Ok(Err(money::MoneyError::NotPositive)) => {
                format!("amount {quoted} must be greater than zero")
            }
            _ => format!(
                "amount {quoted} is too large: at most {} in minor units",
                money::MAX_AMOUNT
            ),
        }
    };
    problems.push(problem);
    None
}

fn check_status(text: &str, problems: &mut Vec<String>) -> Option<TransactionStatus> {
    let upper = text.to_ascii_uppercase();
    let known = TransactionStatus::KNOWN
        .iter()
        .find(|status| status.as_str() == upper)
        .cloned();
    if known.is_none() {
        let names: Vec<&str> = TransactionStatus::KNOWN
            .iter()
            .map(TransactionStatus::as_str)
            .collect();
        problems.push(format!(
            "status {} is not one of {}",
            usage::quote(text),
            names.join(", ")
        ));
    }
    known
}

fn check_transaction_id<'a>(id: &'a str, problems: &mut Vec<String>) -> Option<&'a str> {
    if id.chars().count() > MAX_ID_CHARS {
        problems.push(format!(
            "transactionId is longer than {MAX_ID_CHARS} characters"
        ));
    } else if id.chars().any(|c| c.is_control() || c.is_whitespace()) {
        problems.push(format!(
            "transactionId {} has a space or a control character",
            usage::quote(id)
        ));
    } else {
        return Some(id);
    }
    None
}

/// A cell as the output repeats it: at most [`MAX_CELL_CHARS`] characters
/// and `…`.
fn echo(text: &str) -> String {
    crate::text::clip_chars(text, MAX_CELL_CHARS)
}

/// Reads the header: the columns, or why the ledger cannot be used.
///
/// # Errors
///
/// An empty ledger, a UTF-16 one, a header past the limits or with a quote
/// that never closes, or [`Columns::find`]'s.
pub fn header<R: Read>(
    records: &mut Records<R>,
) -> Result<Result<Columns, HeaderError>, std::io::Error> {
    let next = records.next()?;
    let nul = (0..records.field_count()).any(|i| records.field(i).is_some_and(|f| f.contains(&0)));
    if records.utf16() || nul {
        // Excel's "Unicode text": every other byte of the names is a NUL.
        return Ok(Err(HeaderError(
            "the file is UTF-16 (a spreadsheet's \"Unicode text\"): save it as CSV UTF-8"
                .to_owned(),
        )));
    }
    Ok(match next {
        Next::End => Err(HeaderError(
            "the ledger is empty; its first line must be a header naming the columns, \
             at least referenceNo and amount"
                .to_owned(),
        )),
        Next::TooLong { .. } => Err(HeaderError(
            "the header line is too long to be a header (over 64 KiB or 256 columns)".to_owned(),
        )),
        Next::OpenQuote(open) => Err(HeaderError(open_quote_said(
            open,
            &(open.field + 1).to_string(),
        ))),
        Next::Record { .. } => Columns::find(records).inspect(|columns| {
            records.expect_fields(columns.count);
        }),
    })
}

#[cfg(test)]
mod tests;
