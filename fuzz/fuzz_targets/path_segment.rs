//! Path segment decoding of the mock: never a panic, never longer than the
//! raw text, and encoding a decoded segment decodes back to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use payments_mock_server::http::decode_segment;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(decoded) = decode_segment(raw) {
        assert!(decoded.len() <= raw.len());
        let encoded = payments_client::wire::encode_path_segment(&decoded);
        assert_eq!(decode_segment(&encoded).as_deref(), Some(decoded.as_str()));
    }
});
