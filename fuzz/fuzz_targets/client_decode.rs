//! The client's envelope and model decoding (`decode_response`) of any
//! status, content type and body: never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use payments_client::wire::decode_response;
use payments_client::{Confirmation, Initiated, PaymentStatus};

fuzz_target!(|data: &[u8]| {
    let Some((&head, body)) = data.split_first() else {
        return;
    };
    let status = [200u16, 201, 400, 401, 404, 429, 500, 502, 504][usize::from(head % 9)];
    let content_type = match head / 9 % 3 {
        0 => Some("application/json"),
        1 => Some("text/html"),
        _ => None,
    };
    let _ = decode_response::<PaymentStatus>(status, content_type, body);
    let _ = decode_response::<Initiated>(status, content_type, body);
    let _ = decode_response::<Confirmation>(status, content_type, body);
});
