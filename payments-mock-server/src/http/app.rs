//! The service: which requests go where, and the layers around them.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::DefaultBodyLimit;
use axum::http::Request;
use axum::response::Response;
use axum::routing::{MethodRouter, get, post};
use futures_util::future::BoxFuture;
use hyper::body::Incoming;
use payments_serve::{ApiError, ConnectionAbort};
use tower::ServiceBuilder;
use tower::util::BoxCloneSyncService;
use tower_http::body::Limited;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;

use crate::http::answers::panic_response;

/// A request in a sandbox that takes this long renews it again as it is
/// answered: half the shortest time to live (1 s).
const LONG_REQUEST: std::time::Duration = std::time::Duration::from_millis(500);
use crate::http::extract::BODY_LIMIT;
use crate::http::guard::unread;
use crate::http::handlers::{admin, faults, sandboxes};
use crate::http::middleware::{Others, respond};
use crate::state::AppState;

/// The whole service as a router: drive it with
/// `tower::ServiceExt::oneshot` in tests. To serve the mock, use
/// [`crate::http::serve_app`] (what the binary, [`crate::Service`] and
/// [`crate::MockServer`] run): it also watches each connection, so a `hang`
/// ends when its client leaves and at the shutdown. Served through the
/// generic [`crate::http::run`], a hang is held to its own bound.
///
/// Every request, routed or not (404, 405), gets a request id, the
/// envelope guarantee and a log line; `/api/` requests go through the guard
/// (auth, rate limit, faults, journal) to routes matched by hand
/// (`http/route.rs`); everything else through the router of the
/// admin routes, pages and console, behind a body size limit and panic →
/// 500. The guard enforces the body limit itself (a declared length over it
/// first of all, before authentication), so an oversized `/api/` request is
/// journaled like any other.
pub fn app(state: AppState) -> Router {
    Router::new().fallback_service(MockService::new(state))
}

/// The service [`app`] wraps, and what the server drives itself
/// ([`crate::http::server::serve_app`]): one per connection, knowing how to
/// close it ([`ConnectionAbort`]). Without a router around it: a router
/// whose only route is a fallback service cost ~1.6k instructions a
/// request, and a stack of tower layers (each boxing or moving the future
/// of the layer below) several thousand more (BENCHMARKS.md, "The hot
/// paths at the framework's limit").
#[derive(Clone)]
pub(crate) struct MockService {
    shared: Arc<(AppState, Others)>,
    abort: Option<ConnectionAbort>,
}

impl MockService {
    /// The service for `state`; builds its routes and its OpenAPI document.
    pub(crate) fn new(state: AppState) -> Self {
        let others = others(&state);
        Self {
            shared: Arc::new((state, others)),
            abort: None,
        }
    }

    /// The service with `routes` outside `/api/` (no layers: tests).
    #[cfg(test)]
    pub(crate) fn around(state: AppState, routes: Router) -> Self {
        Self {
            shared: Arc::new((state, BoxCloneSyncService::new(routes))),
            abort: None,
        }
    }

    /// The future of one answer (its size is tested).
    #[cfg(test)]
    pub(crate) fn respond_for_test(
        &self,
        req: Request<Body>,
    ) -> impl Future<Output = Response> + '_ {
        respond(&self.shared.0, &self.shared.1, None, req)
    }

    /// This service for one connection, which `abort` closes.
    pub(crate) fn on_connection(&self, abort: ConnectionAbort) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            abort: Some(abort),
        }
    }

    /// Outside `/api/` (whose guard tells it itself), an answer made with
    /// the request's body unread says `Connection: close`
    /// ([`unread::watch`]).
    fn answer<B>(&self, req: Request<B>) -> BoxFuture<'static, Result<Response, Infallible>>
    where
        B: HttpBody<Data = Bytes> + Send + Unpin + 'static,
        B::Error: Into<axum::BoxError>,
    {
        let this = self.clone();
        Box::pin(async move {
            let (state, others) = &*this.shared;
            // An embedded server dropped: a request that comes on a
            // connection still open (a pooled client's) is not answered,
            // its connection closed without a byte; one already being
            // answered finishes. In-process there is no connection.
            if state.dropped.load(std::sync::atomic::Ordering::Acquire)
                && let Some(abort) = &this.abort
            {
                abort.trigger();
                return Ok(std::future::pending::<Response>().await);
            }
            if req.uri().path().starts_with(SANDBOXES) {
                // Replicas share sandboxes through the database: one made
                // or removed on another replica is asked of it. Found, not
                // yet renewed: a caller turned away keeps nothing alive.
                let id = sandbox_id(req.uri().path());
                let found = match id {
                    // Boxed: only a shared store's requests carry its future.
                    Some(id) if state.store.is_shared() => Box::pin(state.shared_sandbox(id)).await,
                    Some(id) => state.find_sandbox(id),
                    None => None,
                };
                // Only the admin and its merchant learn that it lives
                // (`let_in`); anyone else is answered as under an unknown id.
                let found = match found {
                    Some(sandbox) if let_in(state, &sandbox, &req) => Some(sandbox),
                    #[cfg(feature = "pages")]
                    Some(sandbox) if Box::pin(pays_in(&sandbox, req.uri().path())).await => {
                        Some(sandbox)
                    }
                    _ => None,
                };
                let mut req = req;
                if let (Some(sandbox), Some(id)) = (into_sandbox(found, &mut req), id) {
                    state.renew_sandbox(id);
                    let started = tokio::time::Instant::now();
                    let (req, unread) = unread::watch(req);
                    let response =
                        unread.settle(respond(&sandbox, others, this.abort.as_ref(), req).await);
                    // A request long enough to outlast the shortest time to
                    // live renews its sandbox as it is answered (it was kept
                    // while served: `Lifetime::in_use`).
                    if started.elapsed() >= LONG_REQUEST {
                        state.renew_sandbox(id);
                    }
                    return Ok(response);
                }
                let (req, unread) = unread::watch(req);
                return Ok(unread.settle(respond(state, others, this.abort.as_ref(), req).await));
            }
            let (req, unread) = unread::watch(req);
            Ok(unread.settle(respond(state, others, this.abort.as_ref(), req).await))
        })
    }
}

impl tower::Service<Request<Body>> for MockService {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        self.answer(req)
    }
}

impl hyper::service::Service<Request<Incoming>> for MockService {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        self.answer(req)
    }
}

/// Where sandboxes are served: `/sandboxes/{id}/…` (CONTRACT section 19).
const SANDBOXES: &str = "/sandboxes/";

/// The sandbox id a path under `/sandboxes/` names, if it is one.
fn sandbox_id(path: &str) -> Option<uuid::Uuid> {
    let rest = path.get(SANDBOXES.len()..)?;
    let segment = rest.find('/').map_or(rest, |i| &rest[..i]);
    crate::sandboxes::parse_id(segment)
}

/// The path under a sandbox's prefix: `/sandboxes/{id}/api/…` is
/// `/api/…` (empty for `/sandboxes/{id}` itself).
fn tail_of(path: &str) -> &str {
    let rest = path.get(SANDBOXES.len()..).unwrap_or_default();
    rest.find('/').map_or("", |i| &rest[i..])
}

/// Whether the caller of `req` may learn that `sandbox` lives, by its key
/// or its console session (CONTRACT sections 18 and 19: its id cannot be
/// probed). With `--admin-key`: the admin key, and a key of the merchant
/// that made it; on its `/api/` also, as on the root's, any API key when
/// it is the admin's (no merchant's), and anyone when no API key is
/// configured. No key, a wrong one, one bound to no merchant or another
/// merchant's: no (then the answer is an unknown id's, and the sandbox is
/// not renewed). Without `--admin-key` sandboxes are as open as the root,
/// but another merchant's API key finds no merchant's sandbox on `/api/`.
fn let_in<B>(root: &AppState, sandbox: &AppState, req: &Request<B>) -> bool {
    use crate::domain::access::Role;
    let Some(owner) = sandbox.sandbox.map(|s| s.owner) else {
        return true;
    };
    let api = tail_of(req.uri().path()).starts_with("/api/");
    let headers = req.headers();
    let api_caller = || {
        let token = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| payments_serve::admin::bearer_token(v.as_bytes()));
        root.auth.authenticate(token).ok()
    };
    if !root.admin.is_enabled() {
        return !(api
            && owner.is_some()
            && root.auth.is_enabled()
            && api_caller().is_some_and(|caller| caller.merchant != owner));
    }
    let sees = |role: Role| match role {
        Role::Admin => true,
        Role::Merchant(m) | Role::Owner(m) => owner == Some(m),
        Role::Open => false,
    };
    if let Some(Ok(role)) = root.admin.bearer(headers, &root.auth)
        && sees(role)
    {
        return true;
    }
    if api && owner.is_none() {
        // The admin's sandbox: its API takes the root's API keys.
        return !root.auth.is_enabled() || api_caller().is_some();
    }
    #[cfg(feature = "pages")]
    for session in crate::admin::session_cookies(headers) {
        if root.admin.sessions.find(session).is_some_and(sees) {
            return true;
        }
    }
    false
}

/// Whether `path` is a payment page of `sandbox` (`/pay/TOKEN`) its token
/// opens: the token is the payer's capability (CONTRACT section 18),
/// whoever holds it. A token the sandbox does not know is answered as
/// under an unknown id. A store that cannot be asked lets the page tell.
#[cfg(feature = "pages")]
async fn pays_in(sandbox: &AppState, path: &str) -> bool {
    use crate::domain::port::{PaymentPageKey, Store as _};
    let Some(token) = tail_of(path).strip_prefix("/pay/") else {
        return false;
    };
    !matches!(
        sandbox
            .store
            .with_payment_page(PaymentPageKey::Token(token), |_, _| ())
            .await,
        Ok(None)
    )
}

/// A request under `/sandboxes/{id}`, with the live sandbox it names
/// (`found`) when its caller may use it: the sandbox, the prefix taken off
/// the request's path in place, to be answered as the root answers it but
/// with the sandbox's state. `None` leaves the request unchanged when
/// there is no such live sandbox, or its caller may not learn of it: the
/// root's router then answers 404 `SANDBOX_NOT_FOUND`.
/// (In place: moving the request in and out cost a copy of it each way.)
fn into_sandbox<B>(found: Option<AppState>, req: &mut Request<B>) -> Option<AppState> {
    let sandbox = found?;
    let path = req.uri().path();
    let rest = &path[SANDBOXES.len()..];
    let tail = tail_of(path);
    // The path after the prefix and the query, one slice of what was
    // asked: validated once more, but not formatted again.
    let uri = if tail.is_empty() {
        match req.uri().query() {
            Some(query) => format!("/?{query}").parse::<axum::http::Uri>().ok(),
            None => Some(axum::http::Uri::from_static("/")),
        }
    } else {
        let asked = req.uri().path_and_query().map_or("", |pq| pq.as_str());
        let from = SANDBOXES.len() + (rest.len() - tail.len());
        asked
            .get(from..)
            .and_then(|after| axum::http::Uri::try_from(after).ok())
    };
    *req.uri_mut() = uri?;
    Some(sandbox)
}

/// The route table outside `/api/`: the router, and what it routes
/// (method and path template), which the OpenAPI document must list
/// exactly (a test holds the two together).
pub(crate) struct Table {
    router: Router<AppState>,
    routed: Vec<(&'static str, &'static str)>,
}

impl Table {
    fn new() -> Self {
        Self {
            router: Router::new(),
            routed: Vec::new(),
        }
    }

    /// Routes `path` to `handler`, which takes `methods`.
    pub(crate) fn route(
        mut self,
        path: &'static str,
        methods: &[&'static str],
        handler: MethodRouter<AppState>,
    ) -> Self {
        self.routed.extend(methods.iter().map(|m| (*m, path)));
        self.router = self.router.route(path, handler);
        self
    }

    /// The operations routed, as (method, path template).
    #[cfg(all(test, feature = "openapi"))]
    pub(crate) fn routed(&self) -> &[(&'static str, &'static str)] {
        &self.routed
    }
}

/// Every route outside `/api/` (the four operations of the interface are
/// `route.rs`'s): the admin API, `/openapi.json`, `/metrics`, the payment
/// page and the console.
pub(crate) fn table() -> Table {
    let table = Table::new()
        .route(
            "/_mock/health",
            &["get"],
            get(crate::http::handlers::health::health),
        )
        .route("/_mock/transactions", &["get"], get(admin::transactions))
        .route(
            "/_mock/transactions/{transactionId}/payer",
            &["post"],
            post(admin::payer),
        )
        .route("/_mock/reset", &["post"], post(admin::reset))
        .route("/_mock/clock", &["get"], get(admin::clock))
        .route("/_mock/clock/advance", &["post"], post(admin::advance))
        .route("/_mock/requests", &["get"], get(admin::requests))
        .route(
            "/_mock/coverage",
            &["get"],
            get(crate::http::handlers::coverage::coverage),
        )
        .route(
            "/_mock/faults",
            &["get", "post", "delete"],
            get(faults::list).post(faults::add).delete(faults::clear),
        )
        .route(
            "/_mock/faults/{ruleId}",
            &["delete"],
            axum::routing::delete(faults::remove),
        )
        .route(
            "/_mock/sandboxes",
            &["get", "post"],
            get(sandboxes::list).post(sandboxes::add),
        )
        .route(
            "/_mock/sandboxes/{sandboxId}",
            &["get", "delete"],
            get(sandboxes::one).delete(sandboxes::remove),
        );
    // Under a sandbox that is not live: every route and method (a live
    // one is served before routing, `MockService::answer`).
    let table = table
        .route("/sandboxes", &[], axum::routing::any(sandboxes::unknown))
        .route("/sandboxes/", &[], axum::routing::any(sandboxes::unknown))
        .route(
            "/sandboxes/{*rest}",
            &[],
            axum::routing::any(sandboxes::unknown),
        );
    #[cfg(feature = "openapi")]
    let table = table.route("/openapi.json", &["get"], get(admin::openapi));
    #[cfg(feature = "metrics")]
    let table = table.route("/metrics", &["get"], get(admin::metrics));
    #[cfg(feature = "pages")]
    let table = crate::web::routes(table, Table::route);
    table
}

/// The routes outside `/api/` (admin, pages, console, `/openapi.json`)
/// behind a body size limit and panic → 500; builds the OpenAPI document
/// into `state`.
fn others(state: &AppState) -> Others {
    #[cfg(feature = "openapi")]
    {
        let document = crate::http::openapi::generate(state);
        // A sandbox serves neither /_mock/sandboxes nor its own sandboxes:
        // its document leaves them out.
        let mut for_sandboxes = document.clone();
        crate::http::openapi::sandbox::for_sandbox(&mut for_sandboxes);
        let bytes = |doc: &serde_json::Value| {
            bytes::Bytes::from(serde_json::to_vec(doc).expect("a JSON value serializes"))
        };
        state.set_openapi(bytes(&document), bytes(&for_sandboxes));
    }
    let routes: Router = table()
        .router
        .fallback(|| async { ApiError::not_found() })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .with_state(state.clone());
    // The layers wrap the routed service once (`ServiceBuilder`), not each
    // route (`Router::layer`), which would clone every layer's boxed
    // service per request.
    let stack = ServiceBuilder::new()
        // The limit's own answer has a body type of its own.
        .map_response(|res: axum::http::Response<_>| res.map(Body::new))
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        // The limit wraps the body; the layers below take axum's `Body`.
        .map_request(|req: Request<Limited<Body>>| req.map(Body::new))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .service(routes);
    BoxCloneSyncService::new(stack)
}
