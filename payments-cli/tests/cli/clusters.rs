//! Text beyond ASCII as a terminal shows it: an emoji with its skin tone, a
//! flag (two regional indicators), a family of emoji joined by U+200D are
//! each one thing on screen; the CLI wraps and cuts between them, never
//! inside one.

use payments_mock_server::MockServer;

use crate::common::{MERCHANT, Sandbox, initiate, run, stderr, stdout};

fn is_regional_indicator(c: char) -> bool {
    ('\u{1f1e6}'..='\u{1f1ff}').contains(&c)
}

/// Before: at COLUMNS=37 a line ended with half a flag and the next lines
/// read as other flags (🇾🇲); 👍🏽 lines began with a bare skin tone.
#[tokio::test(flavor = "multi_thread")]
async fn a_status_wrapped_keeps_flags_and_skin_tones_whole() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let flags = "🇲🇾".repeat(32);
    let thumbs = "👍🏽".repeat(32);
    initiate(&sandbox, &base, &flags, "TOPUP").await;
    initiate(&sandbox, &base, &thumbs, "TOPUP").await;
    for columns in 30..=60 {
        for reference in [&flags, &thumbs] {
            let mut cmd = sandbox.payments();
            cmd.env("COLUMNS", columns.to_string())
                .args(["--base-url", &base, "-o", "table", "status"])
                .args(["--reference-no", reference]);
            let out = stdout(&run(cmd).await.success());
            assert!(out.contains('🇲') || out.contains('👍'), "{out}");
            for line in out.lines() {
                let indicators = line.chars().filter(|&c| is_regional_indicator(c)).count();
                assert_eq!(indicators % 2, 0, "half a flag at {columns}: {out}");
                let pieces: Vec<&str> = line.split("🇲🇾").collect();
                assert!(
                    pieces.iter().all(|p| !p.chars().any(is_regional_indicator)),
                    "another flag at {columns}: {out}"
                );
                let bare = line.replace("👍🏽", "");
                assert!(!bare.contains('🏽'), "a bare skin tone at {columns}: {out}");
                assert!(
                    !bare.contains('👍'),
                    "a thumb without its tone at {columns}: {out}"
                );
            }
            // Nothing lost: the reference is all there, over its lines.
            let all: String = out.lines().map(str::trim).collect();
            assert!(all.contains(reference.as_str()), "{out}");
        }
    }
}

/// Before: a value echoed in an error was cut at 200 bytes inside a family
/// (`👨‍👩‍👧‍…`: a dangling joiner, the last emoji read as another family).
#[tokio::test(flavor = "multi_thread")]
async fn an_echoed_value_is_cut_between_clusters() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    let value = format!("a{}", family.repeat(12));
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &server.base_url(),
        "--merchant-id",
        MERCHANT,
        "initiate",
    ])
    .args(["--reference-no", "R", "--amount", "1", "--store-id", "S1"])
    .args(["--product", &value]);
    let err = stderr(&run(cmd).await.failure());
    assert!(err.contains(&format!("{family}…")), "{err}");
    assert!(!err.contains("\u{200d}…"), "{err}");
    assert!(!err.contains(&format!("{family}\u{200d}")), "{err}");
}
