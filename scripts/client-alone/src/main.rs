//! payments-client in an application that does not turn on serde_json's
//! arbitrary_precision: amounts stay exact, and the application's own
//! untagged types with numbers still work.
use payments_client::PaymentStatus;
use payments_client::wire::decode_response;

#[derive(serde::Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Mine {
    Number(f64),
    Text(String),
}

fn main() {
    let body = br#"{"isSuccess":true,"errorCode":null,"message":null,"data":{"transactionId":"t1","referenceNo":"R","status":"SUCCESSFUL","amount":90071992547409.91,"productCode":"TOPUP","createdAt":"2026-01-01T00:00:00Z","extraProperties":{"n":1.50,"pins":["1"]}}}"#;
    let reply = decode_response::<PaymentStatus>(200, None, body).expect("decodes");
    assert_eq!(reply.data().amount.to_string(), "90071992547409.91");
    assert_eq!(
        reply.data().extra_properties.as_deref(),
        Some(r#"{"n":1.50,"pins":["1"]}"#),
        "extraProperties as sent, its numbers as written"
    );
    let written = serde_json::to_string(reply.data()).expect("serializes");
    assert!(
        written.contains(r#""amount":90071992547409.91,"#),
        "{written}"
    );
    let scaled = br#"{"isSuccess":true,"errorCode":null,"message":null,"data":{"transactionId":"t1","referenceNo":"R","status":"SUCCESSFUL","amount":"150.00","productCode":"TOPUP","createdAt":"2026-01-01T00:00:00Z"}}"#;
    let reply = decode_response::<PaymentStatus>(200, None, scaled).expect("decodes");
    assert_eq!(reply.data().amount.to_string(), "150.00");
    let mine: Mine = serde_json::from_str("1.5").expect("the application's own untagged type");
    assert_eq!(mine, Mine::Number(1.5));
    println!(
        "payments-client in an application without arbitrary_precision: amounts exact, its own untagged types work"
    );
}
