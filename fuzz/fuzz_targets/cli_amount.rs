//! The CLI's amount parser. payments-cli is a binary only, so its
//! self-contained `amount.rs` is compiled in here as a module.
//! Property: an accepted amount formats back to a text that parses to the
//! same minor units.
#![no_main]
#![allow(dead_code)]

#[path = "../../payments-cli/src/amount.rs"]
mod amount;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (code, number) = text.split_once(' ').unwrap_or(("MYR", text));
    let _ = amount::parse_minor(number);
    let Ok((currency, exponent)) = amount::currency(code) else {
        return;
    };
    if let Ok(minor) = amount::parse_major(number, currency) {
        let shown = amount::format_minor(minor, exponent);
        assert_eq!(
            amount::parse_major(&shown, currency),
            Ok(minor),
            "{number} -> {shown}"
        );
    }
});
