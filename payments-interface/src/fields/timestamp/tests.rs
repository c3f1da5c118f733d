use super::*;

/// Every example, read both ways: the verdicts and the instant.
#[test]
fn the_examples_are_read_as_the_table_says() {
    for example in EXAMPLES {
        let text = example.text;
        let strict = parse_iso8601(text);
        assert_eq!(strict.is_ok(), example.iso8601, "{text:?}: {strict:?}");
        assert_eq!(is_iso8601(text), example.iso8601, "{text:?}");
        let read = parse(text).map(|t| t.to_string()).ok();
        assert_eq!(read.as_deref(), example.utc, "{text:?}");
        if let Ok(strict) = strict {
            assert_eq!(parse(text), Ok(strict), "{text:?}");
        }
    }
}

#[test]
fn why_a_text_is_refused() {
    for (text, why) in [
        ("yesterday", Error::Syntax),
        ("2026-11-22T08:15:30+8", Error::Syntax),
        ("2026-02-30T08:15:30Z", Error::Date),
        ("2025-W53-1T08:15:30Z", Error::Date),
        ("2026-11-22T24:00:01Z", Error::Time),
        ("2026-11-22T08:15:30+24:00", Error::Offset),
        ("9999-12-31T23:59:59-01:00", Error::Year),
        ("0000-01-01T00:00:00+01:00", Error::Year),
    ] {
        assert_eq!(parse(text), Err(why), "{text}");
        assert_eq!(parse_iso8601(text), Err(why), "{text}");
    }
    assert_eq!(
        Error::Year.to_string(),
        "its year in UTC is outside 0000–9999"
    );
}

#[test]
fn the_offset_as_written_and_unix_seconds() {
    let t = parse("2026-11-22T08:15:30.5-05").expect("a timestamp");
    assert_eq!(t.offset_minutes(), Some(-300));
    assert_eq!(
        (
            t.year(),
            t.month(),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        ),
        (2026, 11, 22, 13, 15, 30)
    );
    assert_eq!(t.nanosecond(), 500_000_000);
    assert_eq!(t.unix_seconds(), 1_795_353_330);
    assert_eq!(
        parse("2026-11-22T08:15:30")
            .expect("local")
            .offset_minutes(),
        None
    );
    assert_eq!(
        parse("1970-01-01T00:00:00Z").expect("epoch").unix_seconds(),
        0
    );
    let leap = parse("2016-12-31T23:59:60Z").expect("a leap second");
    assert!(leap.is_leap_second());
    assert_eq!(
        leap.unix_seconds(),
        parse("2016-12-31T23:59:59Z").expect("").unix_seconds()
    );
}

#[test]
fn week_years_have_52_or_53_weeks() {
    // ISO 8601's long years of the 400-year cycle: 71 of them.
    let long = (2000..2400).filter(|y| weeks_in_year(*y) == 53).count();
    assert_eq!(long, 71);
    assert_eq!(weeks_in_year(2026), 53);
    assert_eq!(weeks_in_year(2025), 52);
}

#[test]
fn days_and_dates_round_trip() {
    for days in (-800_000..3_000_000).step_by(997) {
        let (y, m, d) = civil_from_days(days);
        assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
    }
}

proptest::proptest! {
    /// Where chrono reads RFC 3339 (no leap second), the reader names
    /// chrono's instant, and what ISO 8601 accepts the client reads alike.
    #[test]
    fn instants_agree_with_chrono(
        text in "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.,][0-9]{1,12})?([Zz]|[+-]([01][0-9]|2[0-4]):?[0-5][0-9])?",
    ) {
        let ours = parse(&text);
        if let Ok(strict) = parse_iso8601(&text) {
            proptest::prop_assert_eq!(ours, Ok(strict));
        }
        if let Ok(theirs) = chrono::DateTime::parse_from_rfc3339(&text) {
            let utc = theirs.with_timezone(&chrono::Utc);
            let in_range = (0..=9999).contains(&chrono::Datelike::year(&utc));
            proptest::prop_assert_eq!(ours.is_ok(), in_range, "{}", text);
            if let Ok(ours) = ours {
                proptest::prop_assert_eq!(
                    ours.to_string(),
                    utc.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
                );
            }
        }
    }
}
