//! Property tests of the tolerant decoders: decimals in number and string
//! form, timestamp variants, and no panic on arbitrary bodies.

use chrono::{DateTime, Datelike, TimeZone, Timelike, Utc};
use payments_client::wire::{decode_response, parse_timestamp};
use payments_client::{Confirmation, Initiated, PaymentStatus};
use proptest::prelude::*;
use rust_decimal::Decimal;

fn status_json(amount: &str, created_at: &str) -> String {
    format!(
        r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"t","referenceNo":"r","status":"PENDING","amount":{amount},"productCode":"P","createdAt":"{created_at}"}}}}"#
    )
}

fn decode_amount(amount: &str) -> Decimal {
    decode_response::<PaymentStatus>(
        200,
        None,
        status_json(amount, "2026-01-01T00:00:00Z").as_bytes(),
    )
    .expect("decodes")
    .into_data()
    .amount
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decimal_numbers_and_strings_decode_exactly_with_their_scale(
        int in 0u64..=9_007_199_254_740_991,
        frac in 0u32..10_000,
        scale in 0u32..=4,
    ) {
        let text = if scale == 0 {
            int.to_string()
        } else {
            format!("{int}.{:0width$}", frac % 10u32.pow(scale), width = scale as usize)
        };
        let as_number = decode_amount(&text);
        let as_string = decode_amount(&format!("\"{text}\""));
        prop_assert_eq!(as_number.to_string(), text.clone());
        prop_assert_eq!(as_string.to_string(), text);
        prop_assert_eq!(as_number.scale(), scale);
    }

    #[test]
    fn timestamps_parse_in_every_accepted_form(
        secs in 0i64..4_102_444_800,
        nanos in 0u32..1_000_000_000,
        digits in 0usize..=9,
        offset_min in -840i32..=840,
        form in 0u8..3,
    ) {
        let divisor = 10u32.pow(9 - digits as u32);
        let nanos = nanos / divisor * divisor;
        let utc: DateTime<Utc> = Utc.timestamp_opt(secs, nanos).single().unwrap();
        let frac = if digits == 0 { String::new() } else {
            format!(".{:0width$}", nanos / divisor, width = digits)
        };
        let text = match form {
            0 => format!("{}{frac}Z", utc.format("%Y-%m-%dT%H:%M:%S")),
            1 => {
                let offset = chrono::FixedOffset::east_opt(offset_min * 60).unwrap();
                let local = utc.with_timezone(&offset);
                let sign = if offset_min < 0 { '-' } else { '+' };
                let abs = offset_min.abs();
                format!("{}{frac}{sign}{:02}:{:02}", local.format("%Y-%m-%dT%H:%M:%S"), abs / 60, abs % 60)
            }
            _ => format!("{}{frac}", utc.format("%Y-%m-%dT%H:%M:%S")),
        };
        let parsed = parse_timestamp(&text);
        prop_assert_eq!(parsed, Some(utc), "{}", text);
        // And through the decoder.
        let st = decode_response::<PaymentStatus>(200, None, status_json("1", &text).as_bytes()).unwrap();
        prop_assert_eq!(st.data().created_at, utc);
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(
        status in 100u16..600,
        body in prop::collection::vec(any::<u8>(), 0..600),
    ) {
        let _ = decode_response::<PaymentStatus>(status, None, &body);
        let _ = decode_response::<Initiated>(status, Some("text/html"), &body);
        let _ = decode_response::<Confirmation>(status, None, &body);
    }

    #[test]
    fn arbitrary_json_like_text_never_panics_the_decoder(
        body in r#"\{"isSuccess":(true|false|null|1),"errorCode":("[A-Z_]{0,12}"|null|3),"message":(".{0,8}"|null),"data":(null|\{\}|\[\]|"x"|\{"amount":[-0-9.e"]{0,12}\})\}"#,
    ) {
        let _ = decode_response::<PaymentStatus>(200, None, body.as_bytes());
    }
}

#[test]
fn timestamp_edge_forms_parse() {
    let t = |s| parse_timestamp(s).map(|d| (d.year(), d.hour(), d.nanosecond()));
    assert_eq!(t("2026-11-22T08:15:30.123Z"), Some((2026, 8, 123_000_000)));
    assert_eq!(t("2026-11-22 08:15:30Z"), Some((2026, 8, 0)));
    assert_eq!(t("2026-11-22T16:15:30+0800"), Some((2026, 8, 0)));
    assert_eq!(t("2026-11-22t08:15:30z"), Some((2026, 8, 0)));
    assert_eq!(t("yesterday"), None);
    assert_eq!(t(""), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_reference_encodes_to_one_segment_that_decodes_back(reference in "\\PC{1,64}") {
        let encoded = payments_client::wire::encode_path_segment(&reference);
        prop_assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)), "{}", encoded);
        let decoded = percent_encoding::percent_decode_str(&encoded).decode_utf8().unwrap();
        prop_assert_eq!(decoded, reference);
    }
}

/// Not only the encoder: the URL the server actually receives holds the
/// reference as one segment that decodes back to it.
#[test]
fn any_reference_reaches_the_server_as_one_segment_that_decodes_back() {
    use proptest::test_runner::{Config, TestRunner};
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Answers as the service would: the reference it was asked about, and
    // one transaction per reference (the client checks both).
    let echo = |request: &wiremock::Request| {
        let segment = request.url.path().split('/').nth(4).unwrap_or_default();
        let reference = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
        let data = format!(
            r#"{{"transactionId":"t-{segment}","referenceNo":{},"status":"PENDING","amount":1.00,"productCode":"P","createdAt":"2026-01-01T00:00:00Z"}}"#,
            serde_json::to_string(&reference).unwrap()
        );
        ResponseTemplate::new(200).set_body_raw(
            format!(r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{data}}}"#),
            "application/json",
        )
    };
    let server = rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(echo)
            .mount(&server)
            .await;
        server
    });
    let client = payments_client::Client::builder(server.uri())
        .build()
        .unwrap();
    let mut runner = TestRunner::new(Config::with_cases(64));
    runner
        .run(&"\\PC{1,64}", |reference| {
            let sent = rt.block_on(client.status_by_reference(&reference, None));
            if reference.is_empty() || reference == "." || reference == ".." {
                prop_assert!(matches!(sent, Err(payments_client::Error::InvalidInput(_))));
                return Ok(());
            }
            prop_assert!(sent.is_ok(), "{:?}", sent);
            let requests = rt.block_on(server.received_requests()).unwrap();
            let path = requests.last().unwrap().url.path().to_owned();
            let segments: Vec<&str> = path.split('/').collect();
            prop_assert_eq!(segments.len(), 6, "{}", path);
            prop_assert_eq!(&segments[..4], &["", "api", "payments", "reference"]);
            prop_assert_eq!(segments[5], "status");
            let decoded = percent_encoding::percent_decode_str(segments[4])
                .decode_utf8()
                .unwrap();
            prop_assert_eq!(decoded, reference);
            Ok(())
        })
        .unwrap();
}
