//! Connecting to the database, refusing a newer schema, migrating an older
//! one (one replica at a time), joining the replicas, starting the journal
//! writer and the listener.

use super::*;
use replicas::{listen, read_payload, register, write_journal};
use rows::*;

/// A failed migration in one line: the server's complaint, never the
/// migration's SQL.
fn migration_error(e: &refinery::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(cause) = source {
        if let Some(pg) = cause.downcast_ref::<tokio_postgres::Error>() {
            return store_error(pg).reason().to_owned();
        }
        source = cause.source();
    }
    let text = e.to_string();
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect()
}

impl PostgresStore {
    pub async fn open(url: &PostgresUrl, replica: &str) -> Result<Self, Error> {
        let shown = url.to_string();
        let fail = |reason: String| Error::StoreOpen {
            store: shown.clone(),
            reason,
        };
        let mut config: tokio_postgres::Config = url
            .secret()
            .parse()
            .map_err(|_| fail("the URL is not one PostgreSQL accepts".to_owned()))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(STORE_TIMEOUT);
        }
        config.application_name("payments-mock-server");
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .wait_timeout(Some(STORE_TIMEOUT))
            .create_timeout(Some(STORE_TIMEOUT))
            .recycle_timeout(Some(STORE_TIMEOUT))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| fail(format!("cannot set up its connection pool: {e}")))?;
        let mut client = pool
            .get()
            .await
            .map_err(|e| fail(format!("cannot connect: {}", pool_error(&e).reason())))?;
        let client: &mut tokio_postgres::Client = &mut client;
        let sql_error = |e: tokio_postgres::Error| fail(store_error(&e).reason().to_owned());
        client
            .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(sql_error)?;
        let migrated = Self::migrate(client, &shown).await;
        let _ = client
            .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
            .await;
        migrated?;
        let offset: i64 = client
            .query_one("SELECT offset_nanos FROM mock_clock WHERE id = 1", &[])
            .await
            .map_err(sql_error)?
            .get(0);
        let instance = Uuid::now_v7();
        let (epoch, stamp) = register(client, instance, replica)
            .await
            .map_err(sql_error)?;
        let signals = Arc::new(Signals::default());
        let (alive, closed) = tokio::sync::watch::channel(());
        let own_read = read_payload(instance);
        tokio::spawn(listen(
            config.clone(),
            own_read.clone(),
            Arc::clone(&signals),
            closed,
        ));
        let store = Self {
            inner: Arc::new(Inner {
                shown,
                pool,
                config,
                replica: replica.to_owned(),
                instance,
                own_read,
                pending: Mutex::new(Pending::new(epoch, stamp)),
                flushing: tokio::sync::Mutex::new(()),
                signals: Arc::clone(&signals),
                _alive: alive,
                counts: crate::metrics::StoreCounts::new(crate::metrics::Backend::Postgres),
                down: AtomicBool::new(false),
                tables_gone: AtomicBool::new(false),
            }),
            view: View::new(Uuid::nil(), offset),
        };
        tokio::spawn(write_journal(Arc::downgrade(&store.inner), signals));
        Ok(store)
    }

    async fn migrate(client: &mut tokio_postgres::Client, shown: &str) -> Result<(), Error> {
        let fail = |reason: String| Error::StoreOpen {
            store: shown.to_owned(),
            reason,
        };
        let supported = migrations::migrations::runner()
            .get_migrations()
            .iter()
            .map(|m| i64::from(m.version()))
            .max()
            .unwrap_or(0);
        let exists: bool = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&SCHEMA_TABLE])
            .await
            .map_err(|e| fail(store_error(&e).reason().to_owned()))?
            .get(0);
        if exists {
            let found: Option<i32> = client
                .query_one(&format!("SELECT MAX(version) FROM {SCHEMA_TABLE}"), &[])
                .await
                .map_err(|e| fail(store_error(&e).reason().to_owned()))?
                .get(0);
            if let Some(found) = found.map(i64::from)
                && found > supported
            {
                return Err(Error::StoreSchemaNewer {
                    store: shown.to_owned(),
                    found,
                    supported,
                });
            }
        }
        let found = if exists {
            client
                .query_one(&format!("SELECT count(*) FROM {SCHEMA_TABLE}"), &[])
                .await
                .map_err(|e| fail(store_error(&e).reason().to_owned()))?
                .get::<_, i64>(0)
        } else {
            0
        };
        if found == 0 {
            // No history of the mock's: tables named as the mock's are
            // another program's (or a copy's), and the migration would fail
            // on them half-way; refused before anything is written.
            let clashing: Vec<String> = client
                .query(
                    "SELECT c.relname::text FROM pg_class c \
                     WHERE c.relnamespace = to_regnamespace(current_schema())::oid \
                     AND c.relkind IN ('r', 'v', 'm', 'p', 'f') \
                     AND c.relname LIKE 'mock\\_%' AND c.relname <> $1 ORDER BY 1",
                    &[&SCHEMA_TABLE],
                )
                .await
                .map_err(|e| fail(store_error(&e).reason().to_owned()))?
                .iter()
                .map(|r| r.get(0))
                .collect();
            if !clashing.is_empty() {
                return Err(fail(format!(
                    "it holds tables named as the mock's ({}) but no schema history of the mock's: another program's database?; the database was left as it is",
                    clashing.join(", ")
                )));
            }
        }
        migrations::migrations::runner()
            .set_migration_table_name(SCHEMA_TABLE)
            .run_async(client)
            .await
            .map_err(|e| {
                fail(format!(
                    "cannot bring its schema up to date: {}",
                    migration_error(&e)
                ))
            })?;
        Ok(())
    }
}
