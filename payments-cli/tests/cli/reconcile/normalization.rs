//! A reference the ledger writes in one Unicode normalization form and the
//! service in the other (`résumé` as NFC, é one code point, or as NFD, e
//! and a combining accent): they look the same and their bytes differ.
//! The row stays `missing` (nothing is matched silently), and its detail
//! names the transaction the other form finds.

use payments_client::{Client, Currency};
use payments_mock_server::MockServer;

use super::{pay, reconcile};
use crate::common::{Sandbox, run, stdout};

const NFC: &str = "r\u{e9}sum\u{e9}-9";
const NFD: &str = "re\u{301}sume\u{301}-9";

fn details(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|line| serde_json::from_str(line).expect("a json line"))
        .collect()
}

/// Before: `missing … the service has no transaction with this
/// referenceNo`, and nothing said a reference that looks the same exists.
#[tokio::test(flavor = "multi_thread")]
async fn a_reference_in_the_other_normalization_form_is_named() {
    for (stored, written, form) in [(NFD, NFC, "NFD"), (NFC, NFD, "NFC")] {
        let server = MockServer::start().await;
        let client = Client::builder(server.base_url())
            .build()
            .expect("a client");
        let id = pay(&client, stored, 1000, Currency::MYR, "TOPUP", true).await;
        let sandbox = Sandbox::new();
        let ledger = sandbox.write_file(
            "ledger.csv",
            &format!("referenceNo,amount,currency\n{written},10.00,MYR\nINV-NONE,1.00,MYR\n"),
        );
        let mut cmd = reconcile(&sandbox, &server, &ledger);
        cmd.args(["-o", "json"]);
        let out = stdout(&run(cmd).await.code(6));
        let lines = details(&out);
        assert_eq!(lines[0]["class"], "missing", "{out}");
        let detail = lines[0]["detail"].as_str().expect("a detail");
        assert_eq!(
            detail,
            format!(
                "the service has no transaction with this referenceNo; a transaction with \
                 the same reference in another Unicode normalization form ({form}) exists: \
                 {id}; the ledger and the service write it differently"
            ),
            "{out}"
        );
        // A reference with no other form: only `missing`.
        assert_eq!(lines[1]["class"], "missing", "{out}");
        assert_eq!(
            lines[1]["detail"], "the service has no transaction with this referenceNo",
            "{out}"
        );
    }
}
