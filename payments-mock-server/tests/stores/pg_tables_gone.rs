//! A PostgreSQL database dropped and made again empty while the mock
//! serves: the database can be reached, but the store's tables are gone.
//! Every request answers 503 saying to restart the mock (no retry brings
//! the tables back), health too, and the log says so once; it never says
//! the store serves again.

use payments_mock_server::InitialState;
use payments_mock_server::StoreSpec;
use payments_mock_server::domain::port::{Store, StoreErrorKind};
use payments_mock_server::store::PostgresStore;

use crate::backends::{self, REPLICA};
use crate::behaviour::{MERCHANT, MINUTE, new};
use crate::captured::Captured;

/// Runs `sql` on the test server's own database (not the store's).
async fn on_server(sql: &str) {
    let server = backends::postgres_server("pg tables gone").expect("checked before");
    let (client, connection) = tokio_postgres::connect(&server, tokio_postgres::NoTls)
        .await
        .expect("the test PostgreSQL server answers");
    tokio::spawn(connection);
    client.batch_execute(sql).await.expect(sql);
}

/// The reviewer's case: the log said "can be reached again: requests are
/// served from it" and every request answered 503 "relation \"mock_clock\"
/// does not exist; retry later", forever.
#[tokio::test]
async fn a_database_made_again_empty_says_restart_once_and_never_serves_again() {
    let Some(url) = backends::postgres_database("pg tables gone").await else {
        return;
    };
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);
    let spec: StoreSpec = url.parse().expect("a store URL");
    let StoreSpec::Postgres(pg) = &spec else {
        unreachable!("a postgres:// URL");
    };
    let store = PostgresStore::open(pg, REPLICA).await.expect("opens");
    store
        .create(new(MERCHANT, "BEFORE"), InitialState::Initiated, MINUTE)
        .await
        .expect("the store")
        .expect("created");
    let name = url::Url::parse(&url).expect("a URL").path()[1..].to_owned();
    on_server(&format!("DROP DATABASE {name} WITH (FORCE)")).await;
    let away = store.check().await.expect_err("no database");
    assert_eq!(away.kind(), StoreErrorKind::Unavailable, "{away}");
    on_server(&format!("CREATE DATABASE {name}")).await;

    for _ in 0..3 {
        let health = store.check().await.expect_err("the tables are gone");
        assert_eq!(health.kind(), StoreErrorKind::Lost, "{health}");
        let create = store
            .create(new(MERCHANT, "AFTER"), InitialState::Initiated, MINUTE)
            .await
            .expect_err("the tables are gone");
        assert_eq!(create.kind(), StoreErrorKind::Lost, "{create}");
        let said = create.to_string();
        assert!(
            said.contains("tables are gone") && said.contains("restart the mock"),
            "{said}"
        );
    }
    let log = captured.text();
    let lines = |words: &str| log.lines().filter(|l| l.contains(words)).count();
    assert_eq!(lines("tables are gone"), 1, "once:\n{log}");
    assert_eq!(lines("cannot be reached"), 1, "{log}");
    assert!(!log.contains("reached again"), "{log}");
    drop(store);
    on_server(&format!("DROP DATABASE {name} WITH (FORCE)")).await;
}
