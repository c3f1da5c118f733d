//! The mock's counts for `GET /metrics` (CONTRACT section 18), feature
//! `metrics`: requests by endpoint, HTTP status and `errorCode`, request
//! durations, faults injected by kind, the SQLite and PostgreSQL stores'
//! operations; every series labelled with the replica's name.
//!
//! Counting is off the hot path's bill: every counter is an atomic
//! prepared at start, found by small indexes (the endpoint's, the status's
//! and the code's), never by a label look-up; the labels are written only
//! when scraped ([`Collector`]). Without the feature the same calls count
//! nothing and compile to nothing.

#[cfg(feature = "metrics")]
pub(crate) use counted::*;

/// The server's sandboxes as counts (CONTRACT section 19): the registry
/// keeps them, `/metrics` reads them (no label per sandbox) once the
/// registry dropped those whose time ran out.
#[derive(Debug, Default)]
pub(crate) struct SandboxTally {
    /// Live now.
    pub(crate) live: std::sync::atomic::AtomicU64,
    /// Made since start.
    pub(crate) created: std::sync::atomic::AtomicU64,
    /// Gone by their time to live since start.
    pub(crate) expired: std::sync::atomic::AtomicU64,
    /// Drops the registry's expired sandboxes, counting them here, before
    /// a scrape reads these (else the gauge stayed high, and the expired
    /// count 0, until the sandboxes were listed): set by the registry.
    #[cfg(feature = "metrics")]
    pub(crate) sweeper: std::sync::OnceLock<Sweeper>,
}

/// A registry's sweep, run at each scrape.
#[cfg(feature = "metrics")]
pub(crate) struct Sweeper(pub(crate) Box<dyn Fn(&SandboxTally) + Send + Sync>);

#[cfg(feature = "metrics")]
impl std::fmt::Debug for Sweeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sweeper")
    }
}
#[cfg(not(feature = "metrics"))]
pub(crate) use uncounted::*;

#[cfg(feature = "metrics")]
/// Where a request went: the four operations of the interface, and the
/// routes outside `/api/` grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// An operation of the interface.
    Api(payments_interface::Endpoint),
    /// The `/_mock/` JSON controls, `/_mock/health` included.
    Admin,
    /// The console (`/_mock/ui/`).
    Console,
    /// The payment page (`/pay/`).
    Page,
    /// `/openapi.json`.
    OpenApi,
    /// `/metrics`.
    Metrics,
    /// Any other path (answered 404), unknown `/api/` paths included.
    Other,
}

#[cfg(feature = "metrics")]
/// The routes' label values, in [`Route::index`] order.
const ROUTES: [&str; 10] = [
    "initiate",
    "confirm",
    "statusById",
    "statusByReference",
    "admin",
    "console",
    "page",
    "openapi",
    "metrics",
    "other",
];

#[cfg(feature = "metrics")]
impl Route {
    /// The route of `path`, given the endpoint `payments_interface::route`
    /// found for it (an `/api/` path is routed once per request, by the
    /// middleware; `api` is ignored elsewhere).
    pub(crate) fn answered(path: &str, api: Option<payments_interface::Endpoint>) -> Self {
        if path.starts_with("/api/") {
            return api.map_or(Self::Other, Self::Api);
        }
        if path == "/metrics" {
            Self::Metrics
        } else if path.starts_with("/_mock/ui") {
            Self::Console
        } else if path.starts_with("/_mock") {
            Self::Admin
        } else if path.starts_with("/pay/") {
            Self::Page
        } else if path == "/openapi.json" {
            Self::OpenApi
        } else {
            Self::Other
        }
    }

    fn index(self) -> usize {
        use payments_interface::Endpoint;
        match self {
            Self::Api(Endpoint::Initiate) => 0,
            Self::Api(Endpoint::Confirm) => 1,
            Self::Api(Endpoint::StatusById) => 2,
            Self::Api(Endpoint::StatusByReference) => 3,
            Self::Admin => 4,
            Self::Console => 5,
            Self::Page => 6,
            Self::OpenApi => 7,
            Self::Metrics => 8,
            Self::Other => 9,
        }
    }
}

/// The statuses the mock answers, each with a counter (here and in the
/// coverage, `coverage.rs`); any other is counted as `other`.
pub(crate) const STATUSES: [u16; 22] = [
    200, 201, 204, 301, 302, 303, 304, 400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 429, 500,
    502, 503, 504,
];

#[cfg(feature = "metrics")]
/// [`STATUSES`] as label values, and `other`.
const STATUS_LABELS: [&str; 23] = [
    "200", "201", "204", "301", "302", "303", "304", "400", "401", "403", "404", "405", "406",
    "409", "413", "415", "422", "429", "500", "502", "503", "504", "other",
];

/// The index of `status` in [`STATUSES`]; `STATUSES.len()` for any other.
#[inline]
pub(crate) fn status_index(status: u16) -> usize {
    STATUSES
        .iter()
        .position(|&s| s == status)
        .unwrap_or(STATUSES.len())
}

/// The faults' kinds, in the order of `Fault::kind` (`faults.rs`): the
/// metrics' label values and the coverage's fault cells.
pub(crate) const FAULT_KINDS: [&str; 12] = [
    "internal-error",
    "commit-then-error",
    "reset",
    "commit-then-reset",
    "delay",
    "rate-limit",
    "answer-other",
    "hang",
    "commit-then-hang",
    "truncate",
    "slow-body",
    "gateway",
];

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// A store's operation, timed on the SQLite and PostgreSQL stores (the
/// memory store's are too cheap to time).
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub(crate) enum StoreOp {
    Now,
    Clock,
    AdvanceClock,
    Create,
    Confirm,
    Seed,
    Decide,
    WithId,
    WithReference,
    WithPaymentPage,
    Page,
    Count,
    RequestsSince,
    RequestsAfter,
    Request,
    JournalStats,
    Reset,
    Settings,
    SaveSettings,
    Erase,
    Check,
}

/// [`StoreOp`]s' label values, in order.
#[cfg(feature = "metrics")]
const STORE_OPS: [&str; 21] = [
    "now",
    "clock",
    "advance_clock",
    "create",
    "confirm",
    "seed",
    "decide",
    "with_id",
    "with_reference",
    "with_payment_page",
    "page",
    "count",
    "requests_since",
    "requests_after",
    "request",
    "journal_stats",
    "reset",
    "settings",
    "save_settings",
    "erase",
    "check",
];

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// The stores that are timed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Backend {
    /// `--store sqlite:PATH`.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    Sqlite,
    /// `--store postgres://…`.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

#[cfg(feature = "metrics")]
const BACKENDS: [&str; 2] = ["sqlite", "postgres"];

#[cfg(feature = "metrics")]
mod counted {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    use std::time::Instant;

    use payments_interface::ErrorCode;
    use payments_serve::metrics::Histogram;
    use payments_serve::metrics::prometheus_client::collector::Collector;
    use payments_serve::metrics::prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
    use payments_serve::metrics::prometheus_client::metrics::MetricType;
    use payments_serve::metrics::prometheus_client::registry::Registry;

    use super::{BACKENDS, FAULT_KINDS, ROUTES, Route, STATUS_LABELS, STORE_OPS, status_index};
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    use super::{Backend, StoreOp};

    /// Codes: every `ErrorCode`, and none (a success, or a page).
    const CODES: usize = ErrorCode::ALL.len() + 1;
    const PER_ROUTE: usize = STATUS_LABELS.len() * CODES;

    /// A server's counts, and the registry that writes them.
    #[derive(Debug)]
    pub(crate) struct Metrics {
        counts: Arc<Counts>,
        registry: Registry,
    }

    #[derive(Debug)]
    struct Counts {
        /// Route × status × code.
        requests: Box<[AtomicU64]>,
        /// By route.
        durations: [Histogram; ROUTES.len()],
        faults: [AtomicU64; FAULT_KINDS.len()],
        /// The server's SQLite or PostgreSQL store; none for memory.
        store: Option<StoreCounts>,
        /// The sandboxes.
        sandboxes: Arc<super::SandboxTally>,
    }

    /// The operations of the SQLite or PostgreSQL store one server opened
    /// (each server its own, so servers embedded in one process never mix
    /// their counts); cheap to clone, shared with the server's scrape.
    #[derive(Debug, Clone)]
    #[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) struct StoreCounts(Arc<StoreCells>);

    #[derive(Debug)]
    #[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    struct StoreCells {
        /// Index into `BACKENDS`.
        backend: usize,
        durations: [Histogram; STORE_OPS.len()],
        failures: [AtomicU64; STORE_OPS.len()],
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    impl StoreCounts {
        /// No operation yet, of a store of `backend`.
        pub(crate) fn new(backend: Backend) -> Self {
            Self(Arc::new(StoreCells {
                backend: backend as usize,
                durations: [const { Histogram::new() }; STORE_OPS.len()],
                failures: [const { AtomicU64::new(0) }; STORE_OPS.len()],
            }))
        }

        /// Counts one operation `op` that took since `started`.
        pub(crate) fn record(&self, op: StoreOp, started: Instant, failed: bool) {
            let o = op as usize;
            self.0.durations[o].observe(started.elapsed());
            if failed {
                self.0.failures[o].fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    impl Metrics {
        /// Counts for the replica `replica`, with its store's operations
        /// when it runs on SQLite or PostgreSQL.
        pub(crate) fn new(
            replica: &str,
            store: Option<StoreCounts>,
            sandboxes: Arc<super::SandboxTally>,
        ) -> Self {
            let counts = Arc::new(Counts {
                requests: (0..ROUTES.len() * PER_ROUTE)
                    .map(|_| AtomicU64::new(0))
                    .collect(),
                durations: Default::default(),
                faults: Default::default(),
                store,
                sandboxes,
            });
            let mut registry = Registry::with_labels(std::iter::once((
                "replica".into(),
                replica.to_owned().into(),
            )));
            registry.register_collector(Box::new(Arc::clone(&counts)));
            Self { counts, registry }
        }

        /// Counts one answer to `path` (for `/api/`, of the endpoint `api`
        /// it was routed to), `elapsed` after its head arrived.
        #[inline]
        pub(crate) fn request(
            &self,
            path: &str,
            api: Option<payments_interface::Endpoint>,
            status: u16,
            code: Option<ErrorCode>,
            elapsed: Duration,
        ) {
            let route = Route::answered(path, api).index();
            let code = code.map_or(0, |c| c as usize + 1);
            let cell = route * PER_ROUTE + status_index(status) * CODES + code;
            self.counts.requests[cell].fetch_add(1, Ordering::Relaxed);
            self.counts.durations[route].observe(elapsed);
        }

        /// Counts one injected fault of the kind `FAULT_KINDS[kind]`.
        pub(crate) fn fault(&self, kind: usize) {
            self.counts.faults[kind].fetch_add(1, Ordering::Relaxed);
        }

        /// The scrape: body and content type, as `accept` asks.
        pub(crate) fn render(&self, accept: Option<&[u8]>) -> (String, &'static str) {
            let tally = &self.counts.sandboxes;
            if let Some(super::Sweeper(sweep)) = tally.sweeper.get() {
                sweep(tally);
            }
            payments_serve::metrics::render(&self.registry, accept)
        }
    }

    /// A store operation's start.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn store_started() -> Instant {
        Instant::now()
    }

    fn nonzero(v: &AtomicU64) -> Option<u64> {
        Some(v.load(Ordering::Relaxed)).filter(|&n| n > 0)
    }

    impl Collector for Counts {
        fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
            let mut family = encoder.encode_descriptor(
                "payments_mock_requests",
                "Requests answered, by endpoint, HTTP status and errorCode (empty on a success).",
                None,
                MetricType::Counter,
            )?;
            for (cell, count) in self.requests.iter().enumerate() {
                let Some(n) = nonzero(count) else { continue };
                let (route, rest) = (cell / PER_ROUTE, cell % PER_ROUTE);
                let (status, code) = (rest / CODES, rest % CODES);
                let code = code
                    .checked_sub(1)
                    .map_or("", |c| ErrorCode::ALL[c].as_str());
                let labels = [
                    ("endpoint", ROUTES[route]),
                    ("status", STATUS_LABELS[status]),
                    ("error_code", code),
                ];
                family
                    .encode_family(&labels)?
                    .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
            }
            let mut family = encoder.encode_descriptor(
                "payments_mock_request_duration_seconds",
                "Time from a request's head to its answer, by endpoint.",
                None,
                MetricType::Histogram,
            )?;
            for (route, histogram) in self.durations.iter().enumerate() {
                if histogram.count() > 0 {
                    histogram.encode(&mut family.encode_family(&[("endpoint", ROUTES[route])])?)?;
                }
            }
            let mut family = encoder.encode_descriptor(
                "payments_mock_faults_injected",
                "Faults injected (X-Mock-Fault, fault rules, --fail-rate), by kind; --latency and --rate-limit are not counted here.",
                None,
                MetricType::Counter,
            )?;
            for (kind, count) in self.faults.iter().enumerate() {
                let n = count.load(Ordering::Relaxed);
                family
                    .encode_family(&[("kind", FAULT_KINDS[kind])])?
                    .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
            }
            let tally = &self.sandboxes;
            let live = i64::try_from(tally.live.load(Ordering::Relaxed)).unwrap_or(i64::MAX);
            encoder
                .encode_descriptor(
                    "payments_mock_sandboxes",
                    "Sandboxes live now (POST /_mock/sandboxes).",
                    None,
                    MetricType::Gauge,
                )?
                .encode_gauge(&live)?;
            for (name, help, value) in [
                (
                    "payments_mock_sandboxes_created",
                    "Sandboxes made since start.",
                    &tally.created,
                ),
                (
                    "payments_mock_sandboxes_expired",
                    "Sandboxes removed by their time to live since start.",
                    &tally.expired,
                ),
            ] {
                let n = value.load(Ordering::Relaxed);
                encoder
                    .encode_descriptor(name, help, None, MetricType::Counter)?
                    .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
            }
            let mut family = encoder.encode_descriptor(
                "payments_mock_store_operation_duration_seconds",
                "Operations of the SQLite or PostgreSQL store, by store and operation.",
                None,
                MetricType::Histogram,
            )?;
            if let Some(StoreCounts(store)) = &self.store {
                for (o, histogram) in store.durations.iter().enumerate() {
                    if histogram.count() > 0 {
                        let labels = [
                            ("store", BACKENDS[store.backend]),
                            ("operation", STORE_OPS[o]),
                        ];
                        histogram.encode(&mut family.encode_family(&labels)?)?;
                    }
                }
            }
            let mut family = encoder.encode_descriptor(
                "payments_mock_store_failures",
                "Operations of the SQLite or PostgreSQL store that failed, by store and operation.",
                None,
                MetricType::Counter,
            )?;
            if let Some(StoreCounts(store)) = &self.store {
                for (o, count) in store.failures.iter().enumerate() {
                    if let Some(n) = nonzero(count) {
                        let labels = [
                            ("store", BACKENDS[store.backend]),
                            ("operation", STORE_OPS[o]),
                        ];
                        family
                            .encode_family(&labels)?
                            .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
                    }
                }
            }
            Ok(())
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn codes_index_in_the_order_of_the_table() {
            for (i, code) in ErrorCode::ALL.iter().enumerate() {
                assert_eq!(*code as usize, i, "{code:?}");
            }
            assert_eq!(super::super::STATUSES.len() + 1, STATUS_LABELS.len());
            for (s, label) in super::super::STATUSES.iter().zip(STATUS_LABELS) {
                assert_eq!(s.to_string(), label);
            }
        }

        #[test]
        fn a_request_is_counted_under_its_labels() {
            let metrics = Metrics::new("r1", None, Arc::default());
            let started = Duration::from_millis(3);
            let endpoint = |path| payments_interface::route(path).map(|m| m.endpoint);
            let count =
                |path, status, code| metrics.request(path, endpoint(path), status, code, started);
            count("/api/payments/initiate", 201, None);
            count(
                "/api/payments/x/status",
                404,
                Some(ErrorCode::TransactionNotFound),
            );
            count("/_mock/reset", 200, None);
            count("/nowhere", 418, None);
            let (text, _) = metrics.render(None);
            for line in [
                "payments_mock_requests_total{replica=\"r1\",endpoint=\"initiate\",status=\"201\",error_code=\"\"} 1",
                "payments_mock_requests_total{replica=\"r1\",endpoint=\"statusById\",status=\"404\",error_code=\"TRANSACTION_NOT_FOUND\"} 1",
                "payments_mock_requests_total{replica=\"r1\",endpoint=\"admin\",status=\"200\",error_code=\"\"} 1",
                "payments_mock_requests_total{replica=\"r1\",endpoint=\"other\",status=\"other\",error_code=\"\"} 1",
                "payments_mock_request_duration_seconds_count{replica=\"r1\",endpoint=\"initiate\"} 1",
                "payments_mock_faults_injected_total{replica=\"r1\",kind=\"reset\"} 0",
            ] {
                assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
            }
        }
    }
}

#[cfg(not(feature = "metrics"))]
mod uncounted {
    use std::time::Duration;

    use payments_interface::ErrorCode;

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    use super::{Backend, StoreOp};

    /// Nothing counted (feature `metrics` off).
    #[derive(Debug)]
    pub(crate) struct Metrics;

    /// A store's operations, not counted (feature `metrics` off).
    #[derive(Debug, Clone)]
    pub(crate) struct StoreCounts;

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    impl StoreCounts {
        pub(crate) fn new(_: Backend) -> Self {
            Self
        }

        #[inline(always)]
        pub(crate) fn record(&self, _: StoreOp, _: (), _: bool) {}
    }

    impl Metrics {
        pub(crate) fn new(
            _: &str,
            _: Option<StoreCounts>,
            _: std::sync::Arc<super::SandboxTally>,
        ) -> Self {
            Self
        }

        #[inline(always)]
        pub(crate) fn request(
            &self,
            _: &str,
            _: Option<payments_interface::Endpoint>,
            _: u16,
            _: Option<ErrorCode>,
            _: Duration,
        ) {
        }

        #[inline(always)]
        pub(crate) fn fault(&self, _: usize) {}
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[inline(always)]
    pub(crate) fn store_started() {}
}
