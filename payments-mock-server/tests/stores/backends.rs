//! How each store is made for a test: memory; a SQLite file in a fresh
//! temporary directory; a fresh database on the PostgreSQL server that
//! `PAYMENTS_TEST_POSTGRES_URL` names (`.ci/run` starts one with
//! `scripts/postgres.sh`). Without that variable a PostgreSQL test says
//! loudly that it was skipped, and under `CI=true` it fails instead.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use payments_mock_server::store::{MemoryStore, PostgresStore, SqliteStore};
use payments_mock_server::{Durability, StoreSpec};

/// The replica name stores of these tests journal under.
pub const REPLICA: &str = "suite";

/// A store and what keeps it alive (the SQLite file's directory).
pub struct Made<S> {
    pub store: std::sync::Arc<S>,
    pub spec: StoreSpec,
    _dir: Option<tempfile::TempDir>,
}

impl<S> std::ops::Deref for Made<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.store
    }
}

pub async fn memory() -> Option<Made<MemoryStore>> {
    Some(Made {
        store: Arc::new(MemoryStore::new(REPLICA)),
        spec: StoreSpec::Memory,
        _dir: None,
    })
}

/// A new SQLite file in its own temporary directory.
pub fn sqlite_path() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("mock.db");
    (dir, path)
}

pub async fn sqlite() -> Option<Made<SqliteStore>> {
    let (dir, path) = sqlite_path();
    let store = SqliteStore::open(&path, Durability::Process, REPLICA).expect("a new SQLite store");
    Some(Made {
        store: Arc::new(store),
        spec: StoreSpec::Sqlite(path),
        _dir: Some(dir),
    })
}

/// `PAYMENTS_TEST_POSTGRES_URL`, or `None` after saying loudly that the
/// test is skipped (a failure under `CI=true`).
pub fn postgres_server(test: &str) -> Option<String> {
    match std::env::var("PAYMENTS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => panic!(
            "{test}: CI=true but PAYMENTS_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL (scripts/postgres.sh)"
        ),
        _ => {
            eprintln!(
                "SKIPPED {test}: no PostgreSQL (set PAYMENTS_TEST_POSTGRES_URL, e.g. from `scripts/postgres.sh start /tmp/pg`)"
            );
            None
        }
    }
}

/// A fresh, empty database on the test server, as a store URL.
pub async fn postgres_database(test: &str) -> Option<String> {
    let server = postgres_server(test)?;
    let (client, connection) = tokio_postgres::connect(&server, tokio_postgres::NoTls)
        .await
        .expect("the test PostgreSQL server answers");
    tokio::spawn(connection);
    let name = format!("mock_{}", uuid::Uuid::new_v4().simple());
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("a test database");
    let mut url = url::Url::parse(&server).expect("a URL");
    url.set_path(&format!("/{name}"));
    Some(url.to_string())
}

pub async fn postgres() -> Option<Made<PostgresStore>> {
    let url = postgres_database("postgres store suite").await?;
    let spec: StoreSpec = url.parse().expect("a store URL");
    let StoreSpec::Postgres(pg) = &spec else {
        unreachable!("a postgres:// URL");
    };
    let store = PostgresStore::open(pg, REPLICA)
        .await
        .expect("a PostgreSQL store");
    Some(Made {
        store: Arc::new(store),
        spec,
        _dir: None,
    })
}
