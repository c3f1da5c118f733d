//! `paymentUrl` read out of `extraProperties`.

use super::*;

#[test]
fn payment_urls_are_absolute_http_or_nothing() {
    let url = |extra: &str| payment_url_in(Some(extra)).map(String::from);
    assert_eq!(
        url(r#"{"paymentUrl":"https://bank.example/pay/T0K"}"#).as_deref(),
        Some("https://bank.example/pay/T0K")
    );
    for bad in [
        r#"{"paymentUrl":"javascript:alert(1)"}"#,
        r#"{"paymentUrl":"/pay/relative"}"#,
        r#"{"paymentUrl":17}"#,
        r#"{"pins":["1"]}"#,
        r#"["paymentUrl"]"#,
        "not json",
        "",
    ] {
        assert_eq!(url(bad), None, "{bad}");
    }
    assert_eq!(payment_url_in(None), None);
}
