//! How long a webhook alert takes to arrive after the event it reports (issue 35: within
//! 2 s). Each round starts a client whose DLQ is empty, dead-letters one task against the
//! in-process mock (`ERROR_CAPTCHA_UNSOLVABLE`, a reason new to the client) and times, on
//! one clock, the engine's `dead_lettered` event (the client's event callback) to the
//! `new_reason` message arriving at a webhook receiver on loopback. Rows: the default
//! gathering (500 ms: a burst in that time is one message) and none (the pipeline alone).
//!
//! Run: `cargo run --release -p captcha-dlq-bench-native --bin alerts -- [--rounds N]`

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use captcha_dlq::core::engine::{EngineConfig, FirstPoll};
use captcha_dlq::{Event, Task};
use captcha_dlq_mock::{Behavior, MockConfig, MockSolver, Outcome};
use clap::Parser;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Debug, Parser)]
#[command(name = "alerts")]
struct Args {
    /// Rounds per row.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=1000))]
    rounds: u64,
}

/// A receiver that notes when each request's body has arrived, and answers 200.
async fn receiver(arrivals: Arc<Mutex<Vec<Instant>>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let arrivals = arrivals.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Ok(n) = stream.read(&mut chunk).await else { return };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4) else { continue };
                    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
                        .unwrap_or(0);
                    if buf.len() < end + length {
                        continue;
                    }
                    arrivals.lock().expect("arrivals").push(Instant::now());
                    buf.drain(..end + length);
                    if stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

fn config() -> EngineConfig {
    let mut c = EngineConfig::default();
    c.polling.first_poll_ms = FirstPoll::uniform(5);
    c.polling.interval_ms = 5;
    c.polling.coalesce_ms = 1;
    c
}

/// Event-to-arrival times of `rounds` rounds with `gather_ms`.
async fn row(mock_url: &str, rounds: u64, gather_ms: u64) -> Vec<Duration> {
    let mut out = Vec::new();
    for round in 0..rounds {
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let url = receiver(arrivals.clone()).await;
        let events: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
        let seen = events.clone();
        let client = captcha_dlq::builder()
            .api_key("bench-key")
            .base_url(mock_url)
            .dlq("memory")
            .config(config())
            .option("alerts", json!({"webhooks": [{"url": url, "events": ["new_reason"]}], "gather_ms": gather_ms}))
            .on_event(move |e| {
                if matches!(e, Event::DeadLettered { .. }) {
                    seen.lock().expect("events").get_or_insert_with(Instant::now);
                }
            })
            .build()
            .await
            .expect("client");
        let task = Task::from_json_value(
            json!({"type": "recaptcha_v2", "sitekey": "6Le-K", "page_url": format!("https://example.com/{round}")}),
        )
        .expect("task");
        let _ = client.solve(task).await;
        let arrived = loop {
            if let Some(at) = arrivals.lock().expect("arrivals").first().copied() {
                break at;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        let event = events.lock().expect("events").expect("a dead_lettered event");
        out.push(arrived.saturating_duration_since(event));
        client.close().await;
    }
    out.sort();
    out
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = Args::parse();
    let script = MockConfig {
        default_behavior: Behavior { outcome: Outcome::Unsolvable, solve_after_ms: 0, ..Behavior::default() },
        ..MockConfig::default()
    };
    let mock = MockSolver::start(script).await.expect("mock");
    println!("event -> webhook arrival, {} rounds each (target: within 2 s)", args.rounds);
    for gather_ms in [500, 0] {
        let times = row(&mock.base_url(), args.rounds, gather_ms).await;
        let p = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        println!("gather_ms {gather_ms:>3}: p50 {}  p95 {}  max {}", ms(p(0.5)), ms(p(0.95)), ms(p(1.0)));
    }
    mock.shutdown().await;
}
