//! [`Error`]: what keeps a proxy from starting.

/// A bad configuration, or a listener that cannot be used.
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
    /// An option value is out of range or malformed (never quoting a
    /// credential).
    #[error("invalid option: {0}")]
    Config(String),
    /// A file a flag names cannot be used: opened, written, or it is the
    /// same file as another flag's (`--record`, `--report`, `--junit`,
    /// `--sarif`).
    #[error("{0}")]
    File(String),
    /// The span export (`--otlp-endpoint`, feature `otlp`) cannot start:
    /// its HTTP client cannot be made.
    #[cfg(feature = "otlp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
    #[error(transparent)]
    SpanExport(#[from] payments_serve::otlp::ExportError),
}
