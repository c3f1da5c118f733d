//! Rendering results to strings; printing is the caller's job.
//!
//! `table` is for people: aligned columns (comfy-table), money with its
//! currency where the CLI knows it (status and confirm responses carry none:
//! their decimal is shown exactly as received, with the currency `--currency`
//! names), times in UTC, colour only when asked for (a terminal without
//! `NO_COLOR`), and no wider than [`Style::width`]: a single status that
//! would not fit is shown vertically; a table of many stays one row per
//! look-up at 80 columns and up: it drops its least needed columns,
//! shortens the ids, then wraps references and messages.
//! `json` is not rendered here at all: commands print each envelope exactly as
//! it was received. In a table, the service's text (messages, references,
//! provider references, extra properties) never shows the secrets this run
//! sent: they are `[REDACTED]`, as in error lines.

use chrono::{DateTime, SecondsFormat, Utc};
use comfy_table::{Cell, Color, ContentArrangement, Table, presets};
use payments_client::{Currency, Decimal, Reconciled};

pub use crate::text::{printable, quote, wrap};

/// A status read, as shown in a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusView {
    pub transaction_id: String,
    pub reference_no: String,
    pub status: String,
    /// The decimal exactly as the service wrote it.
    pub amount: String,
    pub product_code: String,
    pub created_at: DateTime<Utc>,
    pub last_modified_at: Option<DateTime<Utc>>,
    pub provider_reference: Option<String>,
    pub message: Option<String>,
}

/// One line of a many-look-up table, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupRow {
    Found(StatusView),
    Failed {
        /// What the user asked for: an id or a reference.
        input: String,
        by_reference: bool,
        /// A short label for the STATUS column, e.g. `NOT FOUND`.
        label: String,
        /// The one-line reason.
        reason: String,
    },
}

/// How tables are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub colour: bool,
    /// Columns of text a line may take (the terminal's, `COLUMNS`, or 80).
    pub width: usize,
}

/// The width tables are fitted to: `COLUMNS` when set (so a script or a
/// test can pin it), else the terminal's when stdout is one, else 80.
#[must_use]
pub fn table_width(columns: Option<&str>, terminal: Option<usize>) -> usize {
    columns
        .and_then(|text| text.trim().parse::<usize>().ok())
        .filter(|&width| width > 0)
        .or(terminal)
        .unwrap_or(80)
}

/// A decimal amount with the currency the CLI was told (`--currency`, the
/// ledger), e.g. `49.90 MYR`; `None` unless the amount is written with
/// exactly that currency's decimal places. A service may write fewer
/// (`150.5` for `150.50`): callers go through `commands::amount_in`, which
/// decides whether the amount fits the currency and rescales it first.
#[must_use]
pub fn amount_in(amount: &Decimal, currency: &Currency) -> Option<String> {
    let exponent = currency.exponent()?;
    (amount.scale() == exponent).then(|| format!("{amount} {}", currency.code()))
}

/// Time in UTC, to the second, e.g. `2026-11-22 08:15:30Z`.
#[must_use]
pub fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
        .replacen('T', " ", 1)
}

fn optional_time(at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(|| "-".to_owned(), time)
}

/// Text the service wrote, as a table shows it: without the secrets this
/// run sent (the API key, `--code`), which a service or a proxy may echo
/// (`crate::secrets`), as error lines and `-v` hide them. Ids, amounts and
/// times are typed, and shown as they are; `-o json` prints the envelope
/// exactly as received.
fn said(text: &str) -> String {
    crate::secrets::hide(text)
}

/// [`said`], or `-` for nothing.
fn said_or_dash(value: Option<&str>) -> String {
    or_dash(value.map(said).as_deref())
}

fn or_dash(value: Option<&str>) -> String {
    match value {
        Some(text) if !text.is_empty() => text.to_owned(),
        _ => "-".to_owned(),
    }
}

/// Why a reconciled reply was read back, as its messages say it: what
/// happened, never a retry that did not.
#[must_use]
pub fn read_back_because(why: Reconciled) -> &'static str {
    match why {
        Reconciled::RetryFoundItDone => {
            "a retry found this call already carried out (an earlier attempt's answer was lost)"
        }
        Reconciled::AnswerUnreadable => "the service's answer to this call could not be read",
        Reconciled::AnswerAboutAnotherRequest => {
            "the service's answer to this call was about another request"
        }
        _ => "the service's answer to this call could not be used",
    }
}

/// The envelope `-o json` prints for a reconciled initiate or confirm.
///
/// A reconciled reply's data was read back from the status endpoint after a
/// retry was rejected as a repeat, or after the call's answer could not be
/// read or (for an initiate) was about another request (`why`), so no
/// single response of the call holds it, and the status body has another
/// shape (amounts in major units, no
/// currency). Printing that body would hand scripts an initiate answer whose
/// `amount` is off by the currency's exponent. Instead this writes the call's
/// own envelope shape from the typed data, with `message` saying what
/// happened and `"reconciled": true` (a field no service envelope has), so
/// a script can tell it from an answer as received; README's decisions say
/// so. Decimal amounts are written as JSON numbers, as the service does.
///
/// # Errors
///
/// Only if `data` cannot be serialised, which the client's types never do.
pub fn reconciled_envelope<T: serde::Serialize>(
    data: &T,
    request_id: &str,
    why: Reconciled,
) -> Result<String, serde_json::Error> {
    let mut data = serde_json::to_value(data)?;
    if let Some(amount) = data.get_mut("amount")
        && let Some(text) = amount.as_str()
        && let Ok(number) = text.parse::<serde_json::Number>()
    {
        *amount = serde_json::Value::Number(number);
    }
    let envelope = serde_json::json!({
        "isSuccess": true,
        "reconciled": true,
        "errorCode": null,
        "message": format!(
            "reconciled: data read back from the status endpoint, because {} \
             (request id {request_id})",
            read_back_because(why)
        ),
        "data": data,
    });
    serde_json::to_string(&envelope)
}

/// A table cell holding outside text, with control characters escaped.
fn cell(text: impl ToString) -> Cell {
    Cell::new(printable(&text.to_string()))
}

fn new_table(style: Style) -> Table {
    let mut table = Table::new();
    table
        .load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled);
    if style.colour {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    table
}

/// The status cell, coloured by how the payment stands.
fn status_cell(status: &str, style: Style) -> Cell {
    let cell = cell(status);
    if !style.colour {
        return cell;
    }
    match status {
        "SUCCESSFUL" => cell.fg(Color::Green),
        "FAILED" | "EXPIRED" | "NOT FOUND" | "ERROR" => cell.fg(Color::Red),
        _ => cell.fg(Color::Yellow),
    }
}

/// A two-column table of named fields (initiate and confirm results, a
/// status too wide for its row), no wider than the style's width: a
/// value wider than what the labels leave is wrapped (at spaces, and
/// between characters within a word longer than a line), except what is
/// there to be copied: the payment page's address and the extra
/// properties (JSON), each whole on its line.
#[must_use]
pub fn fields(rows: &[(&str, String)], style: Style) -> String {
    use unicode_width::UnicodeWidthStr as _;
    let labels = rows.iter().map(|(name, _)| name.width()).max().unwrap_or(0);
    let room = style.width.saturating_sub(labels + 2);
    let mut table = new_table(style);
    for (name, value) in rows {
        let text = printable(value);
        let text = if WHOLE.contains(name) || room < MIN_FIELD_WIDTH || text.width() <= room {
            text
        } else {
            wrap(&text, room).join("\n")
        };
        let value_cell = if *name == "Status" {
            status_cell(&text, style)
        } else {
            Cell::new(text)
        };
        table.add_row(vec![cell(name), value_cell]);
    }
    finish(table)
}

/// The fields never wrapped: copied whole into a browser or a tool.
const WHOLE: [&str; 2] = ["Payment URL", "Extra"];

/// A field's value wraps only when at least this wide (a terminal under
/// about 36 columns gets its values whole).
const MIN_FIELD_WIDTH: usize = 20;

/// The result of `initiate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitiatedView {
    pub transaction_id: String,
    pub reference_no: String,
    pub status: String,
    /// Already formatted with the currency's digits, e.g. `10.50 MYR`.
    pub amount: String,
    pub product_code: String,
    pub created_at: DateTime<Utc>,
    pub extra_properties: Option<String>,
}

/// Renders an initiate result.
#[must_use]
pub fn initiated(view: &InitiatedView, style: Style) -> String {
    fields(
        &[
            ("Transaction ID", view.transaction_id.clone()),
            ("Reference", said(&view.reference_no)),
            ("Status", said(&view.status)),
            ("Amount", view.amount.clone()),
            ("Product", said(&view.product_code)),
            ("Created (UTC)", time(view.created_at)),
            ("Extra", said_or_dash(view.extra_properties.as_deref())),
        ],
        style,
    )
}

/// The result of `confirm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmedView {
    pub transaction_id: String,
    pub reference_no: String,
    pub status: String,
    pub amount: String,
    pub provider_reference: Option<String>,
    pub confirmed_at: Option<DateTime<Utc>>,
    pub error_message: Option<String>,
    pub extra_properties: Option<String>,
    /// The payment page of a redirect-based product, where the payer goes.
    pub payment_url: Option<String>,
}

/// Renders a confirm result; a redirect-based product's payment page gets
/// its own line, whole, ready to copy.
#[must_use]
pub fn confirmed(view: &ConfirmedView, style: Style) -> String {
    let mut rows = vec![
        ("Transaction ID", view.transaction_id.clone()),
        ("Reference", said(&view.reference_no)),
        ("Status", said(&view.status)),
    ];
    if let Some(url) = &view.payment_url {
        rows.push(("Payment URL", url.clone()));
    }
    rows.extend([
        ("Amount", view.amount.clone()),
        (
            "Provider ref",
            said_or_dash(view.provider_reference.as_deref()),
        ),
        ("Confirmed (UTC)", optional_time(view.confirmed_at)),
        ("Error", said_or_dash(view.error_message.as_deref())),
        ("Extra", said_or_dash(view.extra_properties.as_deref())),
    ]);
    fields(&rows, style)
}

/// Two spaces between columns, none before the first.
fn finish(mut table: Table) -> String {
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    trim_lines(&table.to_string())
}

/// comfy-table pads the last column; trailing blanks only make diffs
/// noisy, and in colour (a STATUS value) they sit inside the colour's
/// codes, where they took the line two columns past the width: the
/// blanks go, the codes stay.
fn trim_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for line in text.lines() {
        let mut rest = line;
        let mut codes = Vec::new();
        loop {
            rest = rest.trim_end();
            match colour_code_at_end(rest) {
                Some(start) => {
                    codes.push(&rest[start..]);
                    rest = &rest[..start];
                }
                None => break,
            }
        }
        out.push_str(rest);
        out.extend(codes.into_iter().rev());
        out.push('\n');
    }
    out
}

/// Where an SGR code (`ESC [ 0-9; m`) that ends `text` starts. The text
/// of cells never holds an ESC ([`printable`] escapes it): only the
/// table's own colour does.
fn colour_code_at_end(text: &str) -> Option<usize> {
    let body = text.strip_suffix('m')?;
    let start = body.rfind("\u{1b}[")?;
    body[start + 2..]
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b';')
        .then_some(start)
}

/// Status look-ups as tables.
mod statuses;

#[cfg(test)]
use statuses::short_id;
pub use statuses::{status, statuses};

#[cfg(test)]
mod tests;
