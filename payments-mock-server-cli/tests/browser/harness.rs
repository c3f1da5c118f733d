//! The browser harness: headless Chromium driven over WebDriver
//! (chromedriver, fantoccini), with axe-core injected to check each page.
//!
//! `scripts/install-browser.sh` installs Debian's `chromium` and
//! `chromium-driver` and axe-core (npm). Without them the tests fail under
//! `CI=true` and, anywhere else, print loudly that they were skipped and
//! how to enable them.
//!
//! Each test gets its own chromedriver (a process group that is killed when
//! the test ends, however it ends) and a fresh profile. Tests take turns
//! (one browser at a time): on two cores, parallel browsers only slow each
//! other down.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use tokio::sync::{Mutex, MutexGuard};

/// One browser at a time.
static TURN: Mutex<()> = Mutex::const_new(());

/// How long a page may take to show what a test waits for.
pub const WAIT: Duration = Duration::from_secs(20);

/// Widths every page is checked at: a phone and a desktop.
pub const PHONE: (u32, u32) = (375, 812);
pub const DESKTOP: (u32, u32) = (1280, 900);

fn tool(env: &str, default: &str) -> PathBuf {
    std::env::var_os(env).map_or_else(|| PathBuf::from(default), PathBuf::from)
}

fn axe_path() -> PathBuf {
    std::env::var_os("AXE_CORE_JS").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/browser/node_modules/axe-core/axe.min.js")
        },
        PathBuf::from,
    )
}

/// Whether the browser tests must run (CI) or may be skipped.
fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// A chromedriver process group, killed on drop.
struct Driver {
    child: Child,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The whole group: chromedriver and the Chromium it started.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A headless Chromium session for one test.
pub struct Browser {
    client: Client,
    axe: String,
    _driver: Driver,
    _turn: MutexGuard<'static, ()>,
    _profile: tempfile::TempDir,
}

/// A free loopback port (bound and released: chromedriver cannot be told
/// to pick one and say which).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Browser {
    /// Starts Chromium, or `None` (with a loud message) when it is not
    /// installed outside CI. Under `CI=true` a missing browser panics.
    pub async fn start(test: &str) -> Option<Self> {
        let chromedriver = tool("CHROMEDRIVER", "/usr/bin/chromedriver");
        let chromium = tool("CHROMIUM", "/usr/bin/chromium");
        let axe = axe_path();
        let missing: Vec<String> = [&chromedriver, &chromium, &axe]
            .into_iter()
            .filter(|p| !p.exists())
            .map(|p| p.display().to_string())
            .collect();
        if !missing.is_empty() {
            let message = format!(
                "browser test {test} needs {}: run scripts/install-browser.sh \
                 (or set CHROMIUM, CHROMEDRIVER, AXE_CORE_JS)",
                missing.join(", ")
            );
            assert!(!required(), "CI=true and {message}");
            // Straight to stderr: the test harness captures eprintln! of a
            // passing test, and a skip must be seen.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("\n*** SKIPPED *** {message}\n").as_bytes(),
            );
            return None;
        }
        let turn = TURN.lock().await;
        let axe = std::fs::read_to_string(&axe).expect("axe-core readable");
        let mut last_error = String::new();
        // A port picked and released can be taken in between: retry.
        for _ in 0..3 {
            let port = free_port();
            let driver = Driver {
                child: {
                    use std::os::unix::process::CommandExt as _;
                    Command::new(&chromedriver)
                        .args([
                            format!("--port={port}"),
                            "--allowed-ips=127.0.0.1".to_owned(),
                        ])
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .process_group(0)
                        .spawn()
                        .expect("chromedriver starts")
                },
            };
            let profile = tempfile::tempdir().expect("a profile directory");
            match connect(port, &chromium, &profile).await {
                Ok(client) => {
                    let browser = Self {
                        client,
                        axe,
                        _driver: driver,
                        _turn: turn,
                        _profile: profile,
                    };
                    browser.size(DESKTOP).await;
                    return Some(browser);
                }
                Err(e) => last_error = e,
            }
        }
        panic!("Chromium did not start under chromedriver: {last_error}");
    }

    /// The WebDriver client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Opens `url` and waits for its `<main>` (or `<body>`).
    pub async fn open(&self, url: &str) {
        self.client.goto(url).await.expect("navigates");
        self.wait_for("body").await;
    }

    /// The element `css`, waiting for it to appear.
    pub async fn wait_for(&self, css: &str) -> Element {
        self.client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css} did not appear: {e}"))
    }

    /// The visible text of `css`.
    pub async fn text(&self, css: &str) -> String {
        self.fresh(css, |e| async move { e.text().await }).await
    }

    /// Clicks `css`.
    pub async fn click(&self, css: &str) {
        self.fresh(css, |e| async move { e.click().await }).await;
    }

    /// `act` on the element `css`, found again when the page replaced it
    /// between finding and acting (a live table re-renders its rows as
    /// data arrives: the element found is then stale, not missing).
    async fn fresh<T, F>(&self, css: &str, act: impl Fn(Element) -> F) -> T
    where
        F: std::future::Future<Output = Result<T, fantoccini::error::CmdError>>,
    {
        let deadline = Instant::now() + WAIT;
        loop {
            match act(self.wait_for(css).await).await {
                Ok(value) => return value,
                Err(fantoccini::error::CmdError::Standard(e))
                    if e.error == fantoccini::error::ErrorStatus::StaleElementReference
                        && Instant::now() < deadline => {}
                Err(e) => panic!("{css}: {e}"),
            }
        }
    }

    /// The current address.
    pub async fn url(&self) -> String {
        self.client.current_url().await.expect("a URL").to_string()
    }

    /// Waits until `check` holds for the page's current address.
    pub async fn wait_for_url(&self, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let url = self.url().await;
            if check(&url) {
                return url;
            }
            assert!(Instant::now() < deadline, "the page stayed at {url}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until the text of `css` satisfies `check` (a page that
    /// updates itself), returning it.
    pub async fn wait_for_text(&self, css: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let found = self.client.find(Locator::Css(css)).await;
            if let Ok(element) = found
                && let Ok(text) = element.text().await
                && check(&text)
            {
                return text;
            }
            if Instant::now() >= deadline {
                let url = self.url().await;
                let body = self
                    .script("return document.body ? document.body.innerText : ''")
                    .await;
                panic!("{css} never showed what was expected at {url}; the page said:\n{body}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Resizes the window (inner size as Chrome reports it may differ by
    /// the frame; the checks read `window.innerWidth`).
    pub async fn size(&self, (width, height): (u32, u32)) {
        self.client
            .set_window_size(width, height)
            .await
            .expect("resizes");
    }

    /// Runs a script and returns its value.
    pub async fn script(&self, js: &str) -> Value {
        self.client
            .execute(js, vec![])
            .await
            .expect("the script runs")
    }

    /// Runs axe-core on the page: every violation, as `id: help (targets)`.
    pub async fn axe(&self) -> Vec<String> {
        let loaded = self
            .script("return typeof axe !== 'undefined'")
            .await
            .as_bool()
            .unwrap_or(false);
        if !loaded {
            self.client
                .execute(&self.axe, vec![])
                .await
                .expect("axe-core loads");
        }
        let result = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, { resultTypes: ['violations'] })
                   .then(r => done(r.violations.map(v =>
                       v.id + ': ' + v.help + ' (' + v.nodes.map(n => n.target.join(' ')).join(', ') + ')')))
                   .catch(e => done(['axe failed: ' + e]));",
                vec![],
            )
            .await
            .expect("axe-core runs");
        serde_json::from_value(result).expect("a list of violations")
    }

    /// Checks the open page at a phone's and a desktop's width: no axe
    /// violation and no sideways scrolling of the page at either.
    pub async fn check_page(&self, what: &str) {
        for size in [PHONE, DESKTOP] {
            self.size(size).await;
            let violations = self.axe().await;
            assert!(
                violations.is_empty(),
                "{what} at {size:?}: axe found\n{}",
                violations.join("\n")
            );
            let overflow = self
                .script(
                    "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
                )
                .await;
            assert!(
                overflow.as_i64().is_some_and(|o| o <= 0),
                "{what} at {size:?} scrolls sideways by {overflow} px"
            );
        }
        self.size(DESKTOP).await;
    }

    /// A PNG of the window, written to `target/browser-screenshots/NAME.png`
    /// and, with `UPDATE_SCREENSHOTS=1`, to `docs/images/NAME.png` (the
    /// docs' pictures come from the tests, never from a hand edit).
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("a screenshot");
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| root.join("target"), PathBuf::from)
            .join("browser-screenshots");
        std::fs::create_dir_all(&target).expect("a screenshot folder");
        let path = target.join(format!("{name}.png"));
        std::fs::write(&path, &png).expect("the screenshot is written");
        if std::env::var("UPDATE_SCREENSHOTS").is_ok_and(|v| v == "1") {
            let docs = root.join("docs/images");
            std::fs::create_dir_all(&docs).expect("docs/images");
            std::fs::write(docs.join(format!("{name}.png")), &png).expect("written");
        }
        path
    }

    /// Ends the session (Chromium exits); the driver is killed on drop.
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}

async fn connect(
    port: u16,
    chromium: &std::path::Path,
    profile: &tempfile::TempDir,
) -> Result<Client, String> {
    let url = format!("http://127.0.0.1:{port}");
    // Wait for chromedriver to listen.
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if Instant::now() > deadline {
            return Err(format!("chromedriver did not listen on {port}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("browserName".to_owned(), json!("chrome"));
    capabilities.insert(
        "goog:chromeOptions".to_owned(),
        json!({
            "binary": chromium,
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                format!("--user-data-dir={}", profile.path().display()),
            ],
        }),
    );
    ClientBuilder::new(HttpConnector::new())
        .capabilities(capabilities)
        .connect(&url)
        .await
        .map_err(|e| e.to_string())
}
