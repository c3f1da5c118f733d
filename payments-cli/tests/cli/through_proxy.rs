//! The verified fake (issue 24): the CLI's commands through the contract
//! proxy in front of the mock — initiate of every product, confirm, status
//! by id, by reference and many at once, the refusals, a redirect payment's
//! verify-return — and the proxy finds no violation.

use payments_contract_proxy::{Level, Proxy, ProxyConfig};
use payments_mock_server::{MockServer, PayerAction};

use crate::common::{MERCHANT, Sandbox, run, stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_through_the_proxy_finds_no_violation() {
    let server = MockServer::start().await;
    let proxy = Proxy::start(ProxyConfig::new(server.base_url().parse().expect("a URL")))
        .await
        .expect("a proxy");
    let base = proxy.base_url();
    let sandbox = Sandbox::new();
    let cli = |args: &[&str]| {
        let mut cmd = sandbox.payments();
        cmd.args(["--base-url", &base, "--merchant-id", MERCHANT, "-o", "json"])
            .args(args);
        cmd
    };
    let mut ids = Vec::new();
    for (n, product) in [
        "TOPUP",
        "BILLPAY",
        "GIFTCARD",
        "EWALLET",
        "DECLINED",
        "ONLINEBANKING",
    ]
    .into_iter()
    .enumerate()
    {
        let reference = format!("CLI-PX-{n}/?#");
        let mut args = vec![
            "initiate",
            "--reference-no",
            &reference,
            "--amount",
            "10.50",
            "--product",
            product,
            "--store-id",
            "S1",
            "--payer-id",
            "60123456789",
        ];
        if product == "ONLINEBANKING" {
            args.extend(["--return-url", "https://shop.example/back"]);
        }
        let initiated = run(cli(&args)).await.success();
        let envelope: serde_json::Value = serde_json::from_str(&stdout(&initiated)).expect("JSON");
        let id = envelope["data"]["transactionId"]
            .as_str()
            .expect("an id")
            .to_owned();
        let mut confirm = vec!["confirm", &id, "--reference-no", &reference];
        if product == "EWALLET" {
            confirm.extend(["--code", "123456"]);
        }
        run(cli(&confirm)).await.success();
        run(cli(&["status", &id])).await.success();
        run(cli(&["status", "--reference-no", &reference]))
            .await
            .success();
        if product == "ONLINEBANKING" {
            let paid = server
                .payer(&id, PayerAction::Decline)
                .await
                .expect("decided");
            run(cli(&["verify-return", &paid.redirect_to]))
                .await
                .success();
        }
        ids.push(id);
    }
    let mut many = vec!["status"];
    many.extend(ids.iter().map(String::as_str));
    run(cli(&many)).await.success();
    // Refusals: a second confirm (exit 1), an unknown id (exit 3).
    run(cli(&["confirm", &ids[0], "--reference-no", "CLI-PX-0/?#"]))
        .await
        .code(1);
    run(cli(&["status", "01a20813-0000-7000-8000-000000000000"]))
        .await
        .code(3);
    let summary = proxy.shutdown().await;
    eprintln!(
        "verified fake (CLI): {} exchanges, {} violations, {} undocumented",
        summary.exchanges,
        summary.count(Level::Violation),
        summary.count(Level::Undocumented)
    );
    assert_eq!(summary.count(Level::Violation), 0, "{}", summary.table());
    assert!(summary.exchanges >= 30, "{}", summary.exchanges);
}
