//! [`Error`]: what the library and the binary report before any request is
//! served. The bottom of the crate: it imports nothing of it. A failure
//! while serving is an [`payments_serve::ApiError`], the envelope.

/// Everything that can go wrong while configuring or starting the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listener could not be bound or prepared.
    #[error("cannot listen on {addr}")]
    Bind {
        /// What was being bound.
        addr: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The product catalogue is not valid; the message names the problem
    /// (and, for TOML syntax, the line).
    #[error("invalid catalogue: {0}")]
    Catalog(String),
    /// The catalogue file could not be read.
    #[error("cannot read catalogue file {path}")]
    CatalogFile {
        /// The file given.
        path: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// An option value is out of range or malformed.
    #[error("invalid option: {0}")]
    Config(String),
    /// `--store` names no store this mock knows (an unknown scheme, an
    /// empty path): a usage error.
    #[error("invalid --store: {0}")]
    StoreSpec(String),
    /// The store cannot be opened: not a SQLite database, a damaged file, a
    /// file another process holds, a database that cannot be reached,
    /// wrong credentials. `store` names it, without a password.
    #[error("cannot open store {store}: {reason}")]
    StoreOpen {
        /// The store, as the console shows it (password as `***`).
        store: String,
        /// Why, without secrets.
        reason: String,
    },
    /// The store, once open, failed while the start was still under way
    /// (seeding it).
    #[error("store {store} failed: {reason}")]
    Store {
        /// The store, as the console shows it (password as `***`).
        store: String,
        /// Why, without secrets.
        reason: String,
    },
    /// The store was written by a newer version of the mock.
    #[error(
        "store {store} has schema version {found}, newer than this mock's {supported}: use a newer payments-mock-server"
    )]
    StoreSchemaNewer {
        /// The store.
        store: String,
        /// The version the store records.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// `--catalog` or `--expiry` differ from what the store holds
    /// (replicas never disagree on behaviour): a usage error.
    #[error(
        "store {store} holds other settings than this start gives: {difference}; start without --catalog/--expiry to use the store's, or with --fresh to replace them, which deletes every transaction and sandbox the store holds (on PostgreSQL the whole service's: stop the other replicas first)"
    )]
    SettingsDiffer {
        /// The store.
        store: String,
        /// What differs, item by item.
        difference: String,
    },
    /// `--fresh` on a PostgreSQL store that other replicas serve right
    /// now: it would delete the whole service's transactions and sandboxes
    /// under them (and they would keep their old settings); a usage error,
    /// and nothing was changed.
    #[error(
        "--fresh refused: store {store} is served right now by other replicas ({replicas}); --fresh would delete every transaction and sandbox of the whole service; stop the other replicas first (one killed less than 2 s ago still counts), then start with --fresh, or start without --fresh to join them"
    )]
    FreshWhileServed {
        /// The store.
        store: String,
        /// The live replicas' names, at most 200 bytes of them.
        replicas: String,
    },
    /// TLS cannot be set up: a certificate or key file that is missing,
    /// not PEM, or not a pair; a `--tls-self-signed` directory that cannot
    /// be written. The message names the file, never key material.
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    #[error(transparent)]
    Tls(#[from] payments_serve::tls::TlsError),
    /// The span export (`--otlp-endpoint`, feature `otlp`) cannot start:
    /// its HTTP client cannot be made.
    #[cfg(feature = "otlp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
    #[error(transparent)]
    SpanExport(#[from] payments_serve::otlp::ExportError),
}

impl Error {
    /// The binary's exit code for this error (COMMANDS.md, CONTRACT
    /// section 15): 2 for what the command line got wrong, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Catalog(_)
            | Self::CatalogFile { .. }
            | Self::Config(_)
            | Self::StoreSpec(_)
            | Self::SettingsDiffer { .. }
            | Self::FreshWhileServed { .. } => 2,
            // What the flags point at: a usage error too.
            #[cfg(feature = "tls")]
            Self::Tls(_) => 2,
            #[cfg(feature = "otlp")]
            Self::SpanExport(_) => 1,
            Self::Bind { .. }
            | Self::StoreOpen { .. }
            | Self::Store { .. }
            | Self::StoreSchemaNewer { .. } => 1,
        }
    }
}
