//! A reference beyond ASCII is sent percent-encoded: the table reads it
//! decoded (as the mock's console does), shortened between clusters; the
//! JSON lines keep the path as sent.

use super::{ADMIN, KEY_A, api, lines, mock, tail};
use crate::common::{Sandbox, run, stdout};

const CJK: &str = "/api/payments/reference/%E8%AB%8B%E6%B1%82%E6%9B%B8/status";
const SLASH: &str = "/api/payments/reference/a%2Fb%20c/status";

/// Before: `…/ref/%E8%A…BA%AC/status`, cut inside the escapes.
#[tokio::test(flavor = "multi_thread")]
async fn a_path_sent_percent_encoded_reads_decoded_in_the_table() {
    let server = mock().await;
    let base = server.base_url();
    let thumbs = format!(
        "/api/payments/reference/{}/status",
        "%F0%9F%91%8D%F0%9F%8F%BD".repeat(30)
    );
    for path in [CJK, SLASH, thumbs.as_str()] {
        api(&base, KEY_A, "GET", path, None).await;
    }
    let sandbox = Sandbox::new();
    let json = stdout(
        &run(tail(&sandbox, &base, ADMIN, "json", &[]))
            .await
            .success(),
    );
    let paths: Vec<String> = lines(&json)
        .iter()
        .map(|entry| entry["path"].as_str().expect("a path").to_owned())
        .collect();
    assert_eq!(paths, [CJK, SLASH, thumbs.as_str()], "{json}");
    for columns in ["80", "100", "200"] {
        let mut cmd = tail(&sandbox, &base, ADMIN, "table", &[]);
        cmd.env("COLUMNS", columns);
        let table = stdout(&run(cmd).await.success());
        let rows: Vec<&str> = table.lines().skip(1).collect();
        assert_eq!(rows.len(), 3, "{table}");
        assert!(rows[0].ends_with("/請求書/status"), "{table}");
        // %2F and %20 read as sent: not a segment, not a blank.
        assert!(rows[1].ends_with("/a%2Fb%20c/status"), "{table}");
        assert!(!rows[2].contains('%'), "{table}");
        assert!(rows[2].contains("👍🏽"), "{table}");
        let bare = rows[2].replace("👍🏽", "");
        assert!(!bare.contains('👍') && !bare.contains('🏽'), "{table}");
    }
}
