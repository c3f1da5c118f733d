//! The rules that span requests, over what passed through before
//! (`memory.rs`): the amount's units, the two status reads agreeing, a
//! status going backwards, a second confirm, a reference answered twice,
//! an id answered for two references.

use std::borrow::Cow;

use rust_decimal::Decimal;

use super::data::{same, same_instant, status_of};
use super::{Hits, Level, Rule, quoted};
use crate::exchange::{Endpoint, Parsed};
use crate::json::{Json, Object, Shape};
use crate::memory::{Memory, Snapshot};

/// The transaction a success `data` is about.
fn transaction_of<'a>(data: &Object<'a>) -> Option<Cow<'a, str>> {
    data.text("transactionId")
}

/// A merchantId as a key: a UUID in its canonical spelling, else as sent.
fn merchant_key(text: &str) -> Cow<'_, str> {
    // Already canonical (lower-case hex, hyphenated): as it is, no copy.
    let canonical = text.len() == 36
        && text.bytes().enumerate().all(|(n, b)| match n {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        });
    if canonical {
        return Cow::Borrowed(text);
    }
    uuid::Uuid::parse_str(text).map_or_else(
        |_| Cow::Owned(text.to_owned()),
        |u| Cow::Owned(u.hyphenated().to_string()),
    )
}

/// The minor-unit exponent of an active ISO 4217 code.
fn exponent(currency: &str) -> Option<u32> {
    payments_interface::money::exponent(currency).map(u32::from)
}

pub(super) const AMOUNT_UNITS: Rule = Rule {
    id: "amount.units",
    level: Level::Violation,
    text: "A confirm or status `amount` (decimal, major units) is not the initiated integer amount divided by 10^e of its currency (ISO 4217's minor-unit exponent), for a transaction initiated through this proxy.",
    check: amount_units,
};

/// `amount.units`: major units are the initiated minor units over 10^e.
fn amount_units(p: &Parsed<'_>, memory: &Memory) -> Hits {
    if !(p.endpoint == Endpoint::Confirm || p.endpoint.is_status()) {
        return Vec::new();
    }
    let Some(data) = p.success_data() else {
        return Vec::new();
    };
    let Some(seen) = transaction_of(data).and_then(|id| memory.transaction(&id)) else {
        return Vec::new();
    };
    let (Some(minor), Some(currency)) = (seen.amount_minor, seen.currency.as_deref()) else {
        return Vec::new();
    };
    let (Some(e), Some(answered)) = (exponent(currency), data.get("amount")) else {
        return Vec::new();
    };
    let Some(text) = answered.number_text() else {
        return Vec::new();
    };
    let expected = Decimal::from_i128_with_scale(i128::from(minor), e);
    if answered.decimal() == Some(expected) {
        return Vec::new();
    }
    vec![(
        Level::Violation,
        format!(
            "{} amount {}: initiated as {minor} minor units of {}, which is {expected} in major units",
            p.endpoint.name(),
            quoted(text),
            quoted(currency)
        ),
    )]
}

pub(super) const STATUS_AGREE: Rule = Rule {
    id: "status.agree",
    level: Level::Violation,
    text: "Status by id and status by reference of one transaction disagree on `transactionId`, `referenceNo`, `amount` (compared as numbers), `productCode` or `createdAt` (compared as the instant it names when both are ISO 8601 timestamps as `data.fields` reads them: `2026-11-29T23:00:00Z`, `2026-11-29T23:00:00.000+00:00` and `2026-11-30T10:00:00+11:00` are one; two without an offset as one local time; else as text). The transaction of a status read is the one its path names: the id, or the transaction the reference was initiated with through this proxy by the merchant the read is scoped to (its `merchantId`, or the one merchant that initiated it; else the one the answer names).",
    check: status_agree,
};

/// The merchant a status read by reference was scoped to by its
/// `merchantId` query parameter (canonical when a UUID).
fn scope_of(p: &Parsed<'_>) -> Option<String> {
    let query = p.exchange.request.query.as_deref()?;
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(name, _)| name == "merchantId")
        .map(|(_, value)| merchant_key(&value).into_owned())
}

/// The transaction a status read is about: the id in its path, or the
/// transaction its reference was initiated with by the merchant it was
/// scoped to (else the answer's).
fn read_of<'a>(p: &'a Parsed<'_>, data: &Object<'a>, memory: &'a Memory) -> Option<Cow<'a, str>> {
    match &p.endpoint {
        Endpoint::StatusById(id) => Some(Cow::Borrowed(id.as_str())),
        Endpoint::StatusByReference(reference) => memory
            .transaction_for(reference, scope_of(p).as_deref())
            .map(Cow::Borrowed)
            .or_else(|| transaction_of(data)),
        _ => None,
    }
}

/// Whether a success answer is about another request than it answers
/// (`answer.other`, or `data.echo` of the `referenceNo`): an initiate
/// answered with another `referenceNo`, a confirm with another
/// `transactionId` or `referenceNo` than it sent, a status read with
/// another `transactionId` (by id) or `referenceNo` (by reference) than
/// its path names. What such an answer shows is never filed under what
/// was asked.
fn about_other(p: &Parsed<'_>, data: &Object<'_>) -> bool {
    let differs = |field: &str, asked: &str| data.text(field).is_some_and(|a| a != asked);
    match &p.endpoint {
        Endpoint::Initiate => match (
            p.request.as_ref().and_then(|r| r.get("referenceNo")),
            data.get("referenceNo"),
        ) {
            (Some(asked), Some(answered)) => !same(asked, answered),
            _ => false,
        },
        Endpoint::Confirm => ["transactionId", "referenceNo"].into_iter().any(|field| {
            p.request_text(field)
                .is_some_and(|sent| differs(field, &sent))
        }),
        Endpoint::StatusById(id) => differs("transactionId", id),
        Endpoint::StatusByReference(reference) => differs("referenceNo", reference),
        Endpoint::Other => false,
    }
}

/// `status.agree`: both status reads describe one transaction alike. A
/// read answered about another transaction than it asked for is
/// `answer.other`'s, not compared.
fn status_agree(p: &Parsed<'_>, memory: &Memory) -> Hits {
    let Some(data) = p.success_data() else {
        return Vec::new();
    };
    if about_other(p, data) {
        return Vec::new();
    }
    let Some(seen) = read_of(p, data, memory).and_then(|id| memory.transaction(&id)) else {
        return Vec::new();
    };
    let other = match p.endpoint {
        Endpoint::StatusById(_) => seen.by_reference.as_ref(),
        _ => seen.by_id.as_ref(),
    };
    let Some(other) = other else {
        return Vec::new();
    };
    Snapshot::fields_of(data)
        .into_iter()
        .zip(other.fields())
        .filter(|((name, a), (_, b))| match *name {
            // Two spellings of one instant are one `createdAt`.
            "createdAt" => !same_instant(*a, *b),
            _ => !same(*a, *b),
        })
        .map(|((name, a), (_, b))| {
            (
                Level::Violation,
                format!(
                    "{name}: {} on this status read, {} on the other status endpoint",
                    quoted(a),
                    quoted(b)
                ),
            )
        })
        .collect()
}

pub(super) const STATUS_REGRESSED: Rule = Rule {
    id: "status.regressed",
    level: Level::Violation,
    text: "A transaction seen `SUCCESSFUL` or `FAILED` is later seen in any other status, or one seen `CONFIRMED` later seen `PENDING` or `INITIATED`. Later means asked after the earlier answer was complete: two exchanges that overlap may see the transaction in either order.",
    check: status_regressed,
};

/// When an exchange's answer was complete: at the last instant chrono
/// holds at the latest (a recording's line may say any time, and
/// `check` judges it, never overflows on it).
fn completed(p: &Parsed<'_>) -> chrono::DateTime<chrono::Utc> {
    let micros = (p.exchange.duration_ms.max(0.0) * 1000.0).min(1e15) as i64;
    p.exchange
        .time
        .checked_add_signed(chrono::Duration::microseconds(micros))
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC)
}

/// `status.regressed`: statuses only move forward. Judged against the
/// furthest status seen before this request was sent, so one exchange
/// overtaking another is never taken for a regression, and a regression
/// seen once does not become the new baseline.
fn status_regressed(p: &Parsed<'_>, memory: &Memory) -> Hits {
    let Some(data) = p.success_data() else {
        return Vec::new();
    };
    let (Some(id), Some(now)) = (transaction_of(data), status_of(Some(data))) else {
        return Vec::new();
    };
    let Some(seen) = memory.transaction(&id) else {
        return Vec::new();
    };
    let asked = p.exchange.time;
    let now = now.as_ref();
    let before = match (&seen.final_status, seen.confirmed_seen) {
        (Some((status, at)), _) if *at <= asked && now != status => Some(status.as_str()),
        (_, Some(at)) if at <= asked && matches!(now, "PENDING" | "INITIATED") => Some("CONFIRMED"),
        _ => None,
    };
    match before {
        Some(before) => vec![(
            Level::Violation,
            format!(
                "transaction {} was {}, now {}",
                quoted(&id),
                quoted(before),
                quoted(now)
            ),
        )],
        None => Vec::new(),
    }
}

pub(super) const CONFIRM_TWICE: Rule = Rule {
    id: "confirm.twice",
    level: Level::Violation,
    text: "A confirm of a transaction already confirmed through this proxy is answered 200 (the document's section 3, rule 1: confirming a confirmed transaction is rejected with HTTP 400).",
    check: confirm_twice,
};

/// `confirm.twice`: a second confirm is refused.
fn confirm_twice(p: &Parsed<'_>, memory: &Memory) -> Hits {
    if p.endpoint != Endpoint::Confirm || p.success_data().is_none() {
        return Vec::new();
    }
    let Some(id) = p.request_text("transactionId") else {
        return Vec::new();
    };
    if memory.transaction(&id).is_some_and(|s| s.confirmed) {
        vec![(
            Level::Violation,
            format!(
                "transaction {} was confirmed before through this proxy, and confirmed again with 200",
                quoted(&id)
            ),
        )]
    } else {
        Vec::new()
    }
}

pub(super) const INITIATE_DUPLICATE: Rule = Rule {
    id: "initiate.duplicate",
    level: Level::Violation,
    text: "An initiate of a `merchantId` + `referenceNo` already answered 200 through this proxy is answered 200 again with another `transactionId` (the document's section 8: referenceNo is unique within a merchant). Answered 200 with the same `transactionId` it is `undocumented`: an idempotent replay the document does not show.",
    check: initiate_duplicate,
};

/// `initiate.duplicate`: a reference makes one transaction.
fn initiate_duplicate(p: &Parsed<'_>, memory: &Memory) -> Hits {
    if p.endpoint != Endpoint::Initiate {
        return Vec::new();
    }
    let Some(id) = p.success_data().and_then(transaction_of) else {
        return Vec::new();
    };
    let (Some(merchant), Some(reference)) =
        (p.request_text("merchantId"), p.request_text("referenceNo"))
    else {
        return Vec::new();
    };
    match memory.initiated(&merchant_key(&merchant), &reference) {
        Some(earlier) if earlier != id => vec![(
            Level::Violation,
            format!(
                "referenceNo {} was answered with transaction {} before; now with {}",
                quoted(&reference),
                quoted(earlier),
                quoted(&id)
            ),
        )],
        Some(_) => vec![(
            Level::Undocumented,
            format!(
                "referenceNo {} initiated again: answered 200 with the same transaction {}",
                quoted(&reference),
                quoted(&id)
            ),
        )],
        None => Vec::new(),
    }
}

pub(super) const ID_REUSED: Rule = Rule {
    id: "transaction.id-reused",
    level: Level::Violation,
    text: "An initiate answered 200 with a `transactionId` that this proxy already saw answered for another `merchantId` + `referenceNo` (the document's section 2.3: a system-generated unique transaction id). The same `merchantId` + `referenceNo` answered with the same id again is `initiate.duplicate`'s, not this rule's.",
    check: id_reused,
};

/// `transaction.id-reused`: one transaction id, one merchant's reference.
fn id_reused(p: &Parsed<'_>, memory: &Memory) -> Hits {
    if p.endpoint != Endpoint::Initiate {
        return Vec::new();
    }
    let Some(id) = p.success_data().and_then(transaction_of) else {
        return Vec::new();
    };
    let (Some(merchant), Some(reference)) =
        (p.request_text("merchantId"), p.request_text("referenceNo"))
    else {
        return Vec::new();
    };
    let Some(seen) = memory.transaction(&id) else {
        return Vec::new();
    };
    let (Some(earlier_merchant), Some(earlier_reference)) =
        (seen.merchant.as_deref(), seen.reference_no.as_deref())
    else {
        return Vec::new();
    };
    if earlier_reference == reference && *earlier_merchant == merchant_key(&merchant) {
        return Vec::new();
    }
    vec![(
        Level::Violation,
        format!(
            "transaction {} was answered for merchantId {} referenceNo {} before; now for merchantId {} referenceNo {}",
            quoted(&id),
            quoted(earlier_merchant),
            quoted(earlier_reference),
            quoted(&merchant),
            quoted(&reference)
        ),
    )]
}

/// Remembers what an exchange's answer showed.
pub(super) fn remember(p: &Parsed<'_>, memory: &mut Memory) {
    let Some(data) = p.success_data() else {
        return;
    };
    let Some(id) = transaction_of(data).or_else(|| {
        (p.endpoint == Endpoint::Confirm)
            .then(|| p.request_text("transactionId"))
            .flatten()
    }) else {
        return;
    };
    let status = status_of(Some(data));
    let done = completed(p);
    let seen_final = |seen: &mut crate::memory::Seen| match status.as_deref() {
        Some(s @ ("SUCCESSFUL" | "FAILED")) => {
            if seen.final_status.is_none() {
                seen.final_status = Some((s.to_owned(), done));
            }
            if seen.confirmed_seen.is_none_or(|at| done < at) {
                seen.confirmed_seen = Some(done);
            }
        }
        Some("CONFIRMED") if seen.confirmed_seen.is_none_or(|at| done < at) => {
            seen.confirmed_seen = Some(done);
        }
        _ => {}
    };
    // The latest status an answer showed (one the interface names), for
    // interface coverage's transitions.
    let named = status
        .as_deref()
        .and_then(payments_interface::Status::parse);
    let seen_status = |seen: &mut crate::memory::Seen| {
        if named.is_some() {
            seen.status = named;
        }
        seen_final(seen);
    };
    // An answer about another request than it answers: only the status
    // of the transaction it names is kept; no reference, snapshot,
    // amount or confirm is filed under what was asked (a correct answer
    // later would be compared with it).
    if about_other(p, data) {
        seen_status(memory.seen(&id));
        return;
    }
    match &p.endpoint {
        Endpoint::Initiate => {
            let request = p.request.as_ref();
            let merchant = p
                .request_text("merchantId")
                .map(|m| merchant_key(&m).into_owned());
            let reference = p.request_text("referenceNo");
            let amount = request.and_then(|r| r.get("amount")).and_then(Json::as_u64);
            let currency = match request.and_then(|r| r.get("currencyCode")) {
                Some(c) if c.is_string() => c.as_str().map(Cow::into_owned),
                Some(c) if c.shape() != Shape::Null => None,
                _ => Some("MYR".to_owned()),
            };
            if let (Some(m), Some(r)) = (&merchant, &reference)
                && memory.initiated(m, r).is_none()
            {
                memory.remember_reference(m, r, &id);
            }
            let seen = memory.seen(&id);
            if seen.amount_minor.is_none() {
                seen.amount_minor = amount;
                seen.currency = currency;
            }
            // The first merchant and reference an id was answered for
            // stay: `transaction.id-reused` compares later ones with them.
            if seen.merchant.is_none() && seen.reference_no.is_none() {
                seen.merchant = merchant;
                seen.reference_no = reference.map(Cow::into_owned);
            }
            seen_status(seen);
        }
        Endpoint::Confirm => {
            let seen = memory.seen(&id);
            seen.confirmed = true;
            seen_status(seen);
        }
        Endpoint::StatusById(_) => {
            // About the id its path names (else `about_other` above).
            let seen = memory.seen(&id);
            seen_status(seen);
            seen.by_id = Some(Snapshot::of(data));
        }
        Endpoint::StatusByReference(reference) => {
            let snapshot = Snapshot::of(data);
            seen_status(memory.seen(&id));
            let of = memory
                .transaction_for(reference, scope_of(p).as_deref())
                .unwrap_or(&id)
                .to_owned();
            memory.seen(&of).by_reference = Some(snapshot);
        }
        Endpoint::Other => {}
    }
}

#[cfg(test)]
mod tests;
