//! `POST /_mock/clock/advance` racing itself near the clock's end, on a
//! server over each store (on PostgreSQL, two replicas of one database):
//! of advances only one of which fits, exactly one answers 200 "clock
//! advanced"; the others are 400 `VALIDATION_ERROR` saying the room left,
//! and move nothing. (Two or three answered 200 while the handler checked
//! the room and then added, and the clock stood at its end,
//! "offsetSeconds": 9223372036.854775807.)

use std::sync::Arc;

use payments_mock_server::{MockServer, StoreSpec};
use serde_json::{Value, json};
use tokio::sync::Barrier;

use crate::backends::{self, postgres_database};

const RACERS: usize = 8;
const ROUNDS: usize = 10;

async fn post(client: &reqwest::Client, url: String, body: Option<&Value>) -> (u16, Value) {
    let mut request = client.post(url);
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    (status, response.json().await.expect("the envelope"))
}

async fn server(spec: StoreSpec, name: &str) -> MockServer {
    MockServer::builder()
        .store(spec)
        .replica_name(name)
        .start()
        .await
        .expect("a server")
}

/// `ROUNDS` times: reset, two advances of 3e9 s, then `RACERS` more at
/// once (spread over `bases`), of which only one fits.
async fn one_racer_answers_200(bases: &[String]) {
    let client = reqwest::Client::new();
    let advance = json!({"seconds": 3_000_000_000_u64});
    let first = &bases[0];
    for round in 0..ROUNDS {
        let (status, _) = post(&client, format!("{first}/_mock/reset"), None).await;
        assert_eq!(status, 200);
        for _ in 0..2 {
            let url = format!("{first}/_mock/clock/advance");
            let (status, body) = post(&client, url, Some(&advance)).await;
            assert_eq!(status, 200, "{body}");
        }
        let barrier = Arc::new(Barrier::new(RACERS));
        let racers: Vec<_> = (0..RACERS)
            .map(|i| {
                let (client, barrier, body) = (client.clone(), barrier.clone(), advance.clone());
                let url = format!("{}/_mock/clock/advance", bases[i % bases.len()]);
                tokio::spawn(async move {
                    barrier.wait().await;
                    post(&client, url, Some(&body)).await
                })
            })
            .collect();
        let mut answered = Vec::new();
        for racer in racers {
            answered.push(racer.await.expect("joined"));
        }
        let ok: Vec<&Value> = answered
            .iter()
            .filter(|(status, _)| *status == 200)
            .map(|(_, body)| body)
            .collect();
        assert_eq!(ok.len(), 1, "round {round}: {answered:?}");
        assert_eq!(ok[0]["message"], "clock advanced");
        assert_eq!(ok[0]["data"]["offsetSeconds"], json!(9_000_000_000_u64));
        for (status, body) in answered.iter().filter(|(status, _)| *status != 200) {
            assert_eq!(*status, 400, "{body}");
            assert_eq!(body["errorCode"], "VALIDATION_ERROR", "{body}");
            let message = body["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("seconds must be at most 223372036.854775807:"),
                "{body}"
            );
        }
        for base in bases {
            let clock: Value = client
                .get(format!("{base}/_mock/clock"))
                .send()
                .await
                .expect("an answer")
                .json()
                .await
                .expect("the envelope");
            assert_eq!(
                clock["data"]["offsetSeconds"],
                json!(9_000_000_000_u64),
                "round {round}: the refused moved nothing"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_one_of_racing_advances_that_only_one_fits_answers_200() {
    let server = server(StoreSpec::Memory, "memory").await;
    one_racer_answers_200(&[server.base_url()]).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_one_of_racing_advances_that_only_one_fits_answers_200() {
    let (_dir, path) = backends::sqlite_path();
    let server = server(StoreSpec::Sqlite(path), "sqlite").await;
    one_racer_answers_200(&[server.base_url()]).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_one_of_racing_advances_on_two_replicas_answers_200() {
    let Some(url) = postgres_database("racing HTTP advances on two replicas").await else {
        return;
    };
    let a = server(url.parse().expect("a store URL"), "a").await;
    let b = server(url.parse().expect("a store URL"), "b").await;
    one_racer_answers_200(&[a.base_url(), b.base_url()]).await;
    a.shutdown().await;
    b.shutdown().await;
}
