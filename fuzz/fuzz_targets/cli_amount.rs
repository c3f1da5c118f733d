//! The CLI's amount parser. payments-cli is a binary only, so its
//! `amount.rs` is compiled in here as a module, with the real `text.rs`
//! (`printable` and `quote`, which its messages use) as `crate::output`,
//! where `amount.rs` finds them in the CLI (`output` re-exports them).
//! Property: an accepted amount formats back to a text that parses to the
//! same minor units; a refusal's message is made without a panic.
#![no_main]

// An inline module with a path is a directory: `amount.rs` and `text.rs`
// are found in payments-cli/src, and `text.rs`'s own `mod width;` in
// payments-cli/src/text/, as in the CLI. Only the parser's part of them
// is used here (as payments-mock-server's private modules allow it).
#[path = "../../payments-cli/src"]
#[allow(dead_code, unused_imports)]
mod cli {
    pub mod amount;
    pub mod text;
}

mod output {
    pub use crate::cli::text::{printable, quote};
}

use cli::amount;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (code, number) = text.split_once(' ').unwrap_or(("MYR", text));
    if let Err(e) = amount::parse_minor(number) {
        let _ = e.to_string();
    }
    let (currency, exponent) = match amount::currency(code) {
        Ok(found) => found,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    match amount::parse_major(number, &currency) {
        Ok(minor) => {
            let shown = amount::format_minor(minor, exponent);
            assert_eq!(
                amount::parse_major(&shown, &currency),
                Ok(minor),
                "{number} -> {shown}"
            );
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
