//! `advance_clock` past the clock's end (about 292 years), on the server
//! and on a sandbox, with the largest durations there are: refused with
//! the HTTP control's own words (a panic: the method returns nothing, and
//! a clock stopped short while the test went on would pass it for the
//! wrong reason), and the clock does not move at all.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt as _;
use payments_mock_server::{Controls, MockServer};

/// What `advance_clock(by)` panicked with; `None` if it returned.
async fn refusal(controls: &Controls, by: Duration) -> Option<String> {
    let ran = AssertUnwindSafe(controls.advance_clock(by))
        .catch_unwind()
        .await;
    ran.err().map(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default()
    })
}

async fn refuses_past_the_end_and_moves_nothing(controls: &Controls) {
    let hour = Duration::from_secs(3600);
    controls.advance_clock(hour).await;
    let before = controls.now().await;
    for by in [
        Duration::MAX,
        Duration::new(u64::MAX, 0),
        Duration::from_nanos(u64::MAX),
        Duration::from_secs(300 * 31_557_600),
    ] {
        let said = refusal(controls, by)
            .await
            .unwrap_or_else(|| panic!("advance_clock({by:?}) returned as if the clock had moved"));
        assert!(
            said.contains("seconds must be at most")
                && said.contains("the virtual clock goes at most about 292 years"),
            "{by:?}: {said}"
        );
        let after = controls.now().await;
        assert!(
            (after - before).num_minutes() < 10,
            "{by:?}: the clock moved from {before} to {after}"
        );
    }
    // What fits still moves it.
    controls.advance_clock(hour).await;
    assert!((controls.now().await - before).num_minutes() >= 60);
}

#[tokio::test]
async fn the_largest_advances_are_refused_and_move_nothing_on_a_server_and_a_sandbox() {
    let server = MockServer::start().await;
    refuses_past_the_end_and_moves_nothing(&server).await;
    let sandbox = server.create_sandbox().await.expect("a sandbox");
    refuses_past_the_end_and_moves_nothing(&sandbox).await;
    server.shutdown().await;
}
