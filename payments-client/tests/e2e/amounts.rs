//! Amounts stay exact from minor units to major-unit decimals.

use payments_client::{ConfirmRequest, Currency, Decimal, money};
use payments_mock_server::MockServer;

use crate::support::*;

#[tokio::test]
async fn the_largest_amount_survives_exactly() {
    let server = MockServer::start().await;
    let client = client(&server);
    let req = request("AMT-MAX", 9_007_199_254_740_991, "TOPUP")
        .payer_id("P")
        .build()
        .unwrap();
    let tx = client.initiate(req).await.unwrap().into_data();
    assert_eq!(tx.amount.get(), 9_007_199_254_740_991);

    let expected = Decimal::from_str_exact("90071992547409.91").unwrap();
    let status = client.status(&tx.transaction_id).await.unwrap();
    assert_eq!(status.data().amount, expected);
    assert_eq!(status.data().amount.to_string(), "90071992547409.91");
    assert!(
        status
            .raw_envelope()
            .contains("\"amount\":90071992547409.91")
    );

    let confirm = ConfirmRequest::builder(&tx.transaction_id, "AMT-MAX")
        .build()
        .unwrap();
    let confirmed = client.confirm(confirm).await.unwrap().into_data();
    assert_eq!(confirmed.amount.to_string(), "90071992547409.91");
    assert_eq!(
        money::to_minor(confirmed.amount, Currency::MYR)
            .unwrap()
            .get(),
        9_007_199_254_740_991
    );
}

#[tokio::test]
async fn each_currency_keeps_its_own_scale() {
    let server = MockServer::start().await;
    let client = client(&server);
    for (reference, currency, minor, shown, scale) in [
        ("AMT-MYR", Currency::MYR, 15000, "150.00", 2),
        ("AMT-JPY", Currency::JPY, 1500, "1500", 0),
        ("AMT-KWD", Currency::KWD, 1500, "1.500", 3),
        (
            "AMT-KWD-MAX",
            Currency::KWD,
            9_007_199_254_740_991,
            "9007199254740.991",
            3,
        ),
        (
            "AMT-JPY-MAX",
            Currency::JPY,
            9_007_199_254_740_991,
            "9007199254740991",
            0,
        ),
    ] {
        let req = request(reference, minor, "TOPUP")
            .currency(currency.clone())
            .payer_id("P")
            .build()
            .unwrap();
        let tx = client.initiate(req).await.unwrap().into_data();
        assert_eq!(tx.currency_code, currency);
        let status = client
            .status_by_reference(reference, None)
            .await
            .unwrap()
            .into_data();
        assert_eq!(status.amount.to_string(), shown, "{reference}");
        assert_eq!(status.amount.scale(), scale, "{reference}");
        assert_eq!(
            money::to_minor(status.amount, &currency).unwrap().get(),
            minor
        );
        let stored = server
            .transactions()
            .await
            .into_iter()
            .find(|t| t.reference_no == reference)
            .unwrap();
        assert_eq!(
            (stored.amount_minor, stored.currency_code.as_str()),
            (minor, currency.code())
        );
    }
}
