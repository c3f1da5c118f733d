//! The mock's request body handling: bytes → JSON object → initiate and
//! confirm validation. Never a panic; a rejection is a 400 (the answer
//! the mock makes of it, `ApiError::from`) whose every rule starts with a
//! field name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use payments_mock_server::Catalog;
use payments_mock_server::domain::invalid::Invalid;
use payments_mock_server::domain::validate::{
    confirm as validate_confirm, initiate as validate_initiate, parse_object,
};

const FIELDS: [&str; 15] = [
    "merchantId",
    "referenceNo",
    "description",
    "amount",
    "currencyCode",
    "productCode",
    "quantity",
    "countryCode",
    "storeId",
    "deviceId",
    "payerId",
    "returnUrl",
    "extraProperties",
    "transactionId",
    "confirmationCode",
];

fuzz_target!(|data: &[u8]| {
    let Ok(body) = parse_object(data) else {
        return;
    };
    let catalog = Catalog::default();
    for result in [
        validate_initiate(&body, &catalog).map(|_| ()),
        validate_confirm(&body).map(|_| ()),
    ] {
        if let Err(e) = result {
            // The body is an object: only the rules can refuse it.
            assert!(matches!(e, Invalid::Rules(_)), "{e:?}");
            let message = e.to_string();
            assert_eq!(payments_serve::ApiError::from(e).status.as_u16(), 400);
            for rule in message.split("; ") {
                assert!(FIELDS.iter().any(|f| rule.starts_with(f)), "{rule}");
            }
        }
    }
});
