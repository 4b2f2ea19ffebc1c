//! Real Chromium through chromedriver (WebDriver) for the dashboard's browser tests: the
//! driver on a free port, a headless session, waiting for the page, screenshots, and POSTs
//! from the page's own origin.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client as Browser, ClientBuilder, Locator};
use serde_json::json;

pub const SKIP_ENV: &str = "CAPTCHA_DLQ_SKIP_BROWSER";
/// A generous bound on waiting for the page to show something; not a timing assertion.
pub const WAIT: Duration = Duration::from_secs(60);

pub fn skipped() -> bool {
    std::env::var(SKIP_ENV).as_deref() == Ok("1")
}

pub fn python() -> String {
    std::env::var("CAPTCHA_DLQ_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// chromedriver on a free port, killed when dropped.
pub struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_driver() -> Driver {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("chromedriver could not start ({e}): apt-get install -y chromium chromium-driver, or {SKIP_ENV}=1")
        });
    let deadline = Instant::now() + WAIT;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not listen within {WAIT:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    Driver { child, port }
}

pub async fn open_browser(driver: &Driver) -> Browser {
    let binary = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,1000",
    ];
    let capabilities = json!({ "goog:chromeOptions": { "binary": binary, "args": args } });
    let capabilities = capabilities.as_object().unwrap().clone();
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a Chromium session")
}

/// Waits until `read` returns `Some`, re-reading the page (elements may be replaced by a reload).
pub async fn wait_for<T, F, Fut>(what: &str, mut read: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(value) = read().await {
            return value;
        }
        assert!(Instant::now() < deadline, "waited {WAIT:?} for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub async fn text_of(browser: &Browser, css: &str) -> Option<String> {
    browser.find(Locator::Css(css)).await.ok()?.text().await.ok()
}

pub async fn wait_text(browser: &Browser, css: &str, expected: &str) {
    wait_for(&format!("{css} to read {expected:?}"), || async {
        (text_of(browser, css).await.as_deref() == Some(expected)).then_some(())
    })
    .await;
}

pub fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/dashboard-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub async fn screenshot(browser: &Browser, name: &str) {
    let png = browser.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(screenshot_dir().join(format!("{name}.png")), png).unwrap();
}

/// POSTs from the page's own origin with fetch; the status.
pub async fn fetch_post(browser: &Browser, url: &str, body: &str) -> u64 {
    let script = "return fetch(arguments[0], { method: 'POST', headers: { 'content-type': \
                  'application/x-www-form-urlencoded' }, body: arguments[1] }).then((r) => r.status);";
    let status = browser.execute(script, vec![json!(url), json!(body)]).await.expect("fetch ran");
    status.as_u64().expect("a status")
}
