//! Status look-ups as tables: one read (a row, or its fields one per
//! line when the row would not fit), and many, fitted to the width.

use comfy_table::{ColumnConstraint, ContentArrangement, Table};

use super::{
    LookupRow, StatusView, Style, cell, fields, finish, new_table, optional_time, said,
    said_or_dash, status_cell, time,
};

/// One status read: a row under a header when it fits the width, else the
/// fields one per line, like initiate's.
#[must_use]
pub fn status(view: &StatusView, style: Style) -> String {
    let table = status_table(
        std::slice::from_ref(&LookupRow::Found(view.clone())),
        style,
        false,
    );
    let widths = content_widths(&table);
    if row_width(&widths, &[true; STATUS_COLUMNS.len()], widths[MESSAGE]) <= style.width {
        return finish(table);
    }
    status_fields(view, style)
}

fn status_fields(view: &StatusView, style: Style) -> String {
    fields(
        &[
            ("Transaction ID", view.transaction_id.clone()),
            ("Reference", said(&view.reference_no)),
            ("Status", said(&view.status)),
            ("Amount", view.amount.clone()),
            ("Product", said(&view.product_code)),
            ("Created (UTC)", time(view.created_at)),
            ("Updated (UTC)", optional_time(view.last_modified_at)),
            (
                "Provider ref",
                said_or_dash(view.provider_reference.as_deref()),
            ),
            ("Message", said_or_dash(view.message.as_deref())),
        ],
        style,
    )
}

/// The columns of [`statuses`], and the order the least needed ones are
/// dropped in when the table is wider than the terminal.
const STATUS_COLUMNS: [&str; 9] = [
    "TRANSACTION ID",
    "REFERENCE",
    "STATUS",
    "AMOUNT",
    "PRODUCT",
    "CREATED (UTC)",
    "UPDATED (UTC)",
    "PROVIDER REF",
    "MESSAGE",
];
const DROPPED_FIRST: [usize; 4] = [7, 5, 6, 4];
const REFERENCE: usize = 1;
const MESSAGE: usize = 8;
/// A wrapped reference or message column is never narrower than this.
const MIN_WRAPPED_WIDTH: usize = 12;
/// A shortened id: this many characters from its start, `…`, and
/// [`ID_TAIL`] from its end (`01937e1c…00c1`), enough to tell the rows
/// apart and to find the whole id in `-o json`.
const ID_HEAD: usize = 8;
const ID_TAIL: usize = 4;

/// The width of a row of the shown columns, the message `message` wide.
fn row_width(widths: &[usize], shown: &[bool; STATUS_COLUMNS.len()], message: usize) -> usize {
    (0..MESSAGE)
        .filter(|&i| shown[i])
        .map(|i| widths[i] + 2)
        .sum::<usize>()
        + message
}

/// An id as a narrow table shows it: its first and last characters.
#[must_use]
pub fn short_id(id: &str) -> String {
    let count = id.chars().count();
    if count <= ID_HEAD + ID_TAIL + 1 {
        return id.to_owned();
    }
    let head: String = id.chars().take(ID_HEAD).collect();
    let tail: String = id.chars().skip(count - ID_TAIL).collect();
    format!("{head}…{tail}")
}

/// Renders status look-ups, in the order given, one row per look-up fitted
/// to the width (COMMANDS.md, "Output"): provider reference, creation
/// time, update time and product are left out, in that order, until the
/// rows fit; then the transaction id is shortened to its first and last
/// characters (`-o json` has it whole); then the reference and the message
/// wrap in what is left, each at least [`MIN_WRAPPED_WIDTH`] wide. Only a
/// terminal too narrow for even that (under about 60 columns) gets each
/// look-up as a block of fields, one per line.
#[must_use]
pub fn statuses(rows: &[LookupRow], style: Style) -> String {
    let table = status_table(rows, style, false);
    let widths = content_widths(&table);
    let mut shown = [true; STATUS_COLUMNS.len()];
    for column in DROPPED_FIRST {
        if row_width(&widths, &shown, widths[MESSAGE]) <= style.width {
            return finish(hide(table, shown));
        }
        shown[column] = false;
    }
    if row_width(&widths, &shown, widths[MESSAGE]) <= style.width {
        return finish(hide(table, shown));
    }
    let table = status_table(rows, style, true);
    let widths = content_widths(&table);
    if row_width(&widths, &shown, widths[MESSAGE]) <= style.width {
        return finish(hide(table, shown));
    }
    // What the reference and the message have between them.
    let fixed: usize = (0..MESSAGE)
        .filter(|&i| shown[i] && i != REFERENCE)
        .map(|i| widths[i] + 2)
        .sum();
    let least_message = widths[MESSAGE].min(MIN_WRAPPED_WIDTH);
    // The reference whole when the message keeps its least width beside
    // it (a reference is what support staff read first); else it wraps too.
    let least_reference = if fixed + widths[REFERENCE] + 2 + least_message <= style.width {
        widths[REFERENCE]
    } else {
        widths[REFERENCE].min(MIN_WRAPPED_WIDTH)
    };
    if fixed + least_reference + 2 + least_message > style.width {
        return blocks(rows, style);
    }
    let mut table = hide(table, shown);
    for (column, least) in [(REFERENCE, least_reference), (MESSAGE, least_message)] {
        if let Some(wrapped) = table.column_mut(column) {
            // comfy-table counts a column's padding (two) in its bounds.
            wrapped.set_constraint(ColumnConstraint::LowerBoundary(comfy_table::Width::Fixed(
                u16::try_from(least + 2).unwrap_or(u16::MAX),
            )));
        }
    }
    table
        .set_content_arrangement(ContentArrangement::Dynamic)
        // The last column's right padding is trimmed from every line.
        .set_width(u16::try_from(style.width + 2).unwrap_or(u16::MAX));
    let text = finish(table);
    // As the terminal shows it: a coloured STATUS's escape codes take no
    // room (counted, they made every row 13 columns too wide, and many
    // look-ups fell back to blocks at 100 columns and more).
    let fits = text
        .lines()
        .all(|line| console::measure_text_width(line) <= style.width);
    if fits { text } else { blocks(rows, style) }
}

fn content_widths(table: &Table) -> Vec<usize> {
    table
        .column_max_content_widths()
        .into_iter()
        .map(usize::from)
        .collect()
}

/// Hides the columns not `shown`; the others keep their content's width.
fn hide(mut table: Table, shown: [bool; STATUS_COLUMNS.len()]) -> Table {
    table.set_constraints(shown.map(|on| {
        if on {
            ColumnConstraint::ContentWidth
        } else {
            ColumnConstraint::Hidden
        }
    }));
    table
}

/// Each look-up as its fields, one per line, blocks apart by a blank line.
fn blocks(rows: &[LookupRow], style: Style) -> String {
    let mut out = String::new();
    for row in rows {
        if !out.is_empty() {
            out.push('\n');
        }
        let block = match row {
            LookupRow::Found(view) => status_fields(view, style),
            LookupRow::Failed {
                input,
                by_reference,
                label,
                reason,
            } => {
                // A malformed --from-file line is shown as `(line N)`.
                let name = if *by_reference {
                    "Reference"
                } else if input.starts_with("(line ") {
                    "Input"
                } else {
                    "Transaction ID"
                };
                // Labels as wide as a found block's, so values line up.
                let name = format!("{name:<14}");
                fields(
                    &[
                        (name.as_str(), input.clone()),
                        ("Status", label.clone()),
                        ("Message", reason.clone()),
                    ],
                    style,
                )
            }
        };
        out.push_str(&block);
    }
    out
}

/// The look-ups as a table of every column; with `short_ids`, each
/// transaction id as [`short_id`] shows it.
fn status_table(rows: &[LookupRow], style: Style, short_ids: bool) -> Table {
    let id = |text: &str| {
        if short_ids {
            short_id(text)
        } else {
            text.to_owned()
        }
    };
    let mut table = new_table(style);
    table.set_header(STATUS_COLUMNS.map(cell));
    for row in rows {
        match row {
            LookupRow::Found(view) => table.add_row(vec![
                cell(id(&view.transaction_id)),
                cell(said(&view.reference_no)),
                status_cell(&said(&view.status), style),
                cell(&view.amount),
                cell(said(&view.product_code)),
                cell(time(view.created_at)),
                cell(optional_time(view.last_modified_at)),
                cell(said_or_dash(view.provider_reference.as_deref())),
                cell(said_or_dash(view.message.as_deref())),
            ]),
            LookupRow::Failed {
                input,
                by_reference,
                label,
                reason,
            } => {
                let (id, reference) = if *by_reference {
                    ("-".to_owned(), input.clone())
                } else {
                    (id(input), "-".to_owned())
                };
                table.add_row(
                    [id, reference]
                        .map(cell)
                        .into_iter()
                        .chain([status_cell(label, style)])
                        .chain(["-", "-", "-", "-", "-"].map(cell))
                        // The id the reason repeats, as short as its column.
                        .chain([cell(if short_ids && !*by_reference {
                            reason.replace(input.as_str(), &short_id(input))
                        } else {
                            reason.clone()
                        })]),
                )
            }
        };
    }
    table
}
