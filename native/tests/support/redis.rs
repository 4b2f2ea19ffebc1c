//! A throwaway `redis-server` for the Redis store tests: started on a free
//! loopback port with persistence off, stopped (killed by pid and reaped)
//! when dropped.
//!
//! It runs as our child rather than with `--daemonize yes`: a daemonized
//! server is re-parented to PID 1, which in a container often never reaps it,
//! so every test run would leave zombies behind.
//!
//! If `redis-server` is not installed the tests fail with a message saying so,
//! unless `CAPTCHA_DLQ_SKIP_REDIS=1` is set (CI installs it).

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const SKIP_ENV: &str = "CAPTCHA_DLQ_SKIP_REDIS";

#[derive(Debug)]
pub struct RedisServer {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    /// A running server, or `None` when the tests are told to skip Redis.
    pub fn start() -> Option<RedisServer> {
        let installed = Command::new("redis-server").arg("--version").output().is_ok_and(|o| o.status.success());
        if !installed {
            if std::env::var(SKIP_ENV).as_deref() == Ok("1") {
                eprintln!("redis-server is not installed and {SKIP_ENV}=1: skipping the Redis store tests");
                return None;
            }
            panic!(
                "redis-server is not installed: install it (apt-get install -y redis-server) \
                 or set {SKIP_ENV}=1 to skip the Redis store tests"
            );
        }
        let dir = tempfile::tempdir().expect("tempdir for redis-server");
        // Bind port 0 to find a free high port, then hand it to redis-server.
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--dir"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let mut server = RedisServer { port, child, _dir: dir };
        // Readiness wait, not a timing assertion: give up (and fail) after a generous bound.
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("redis-server exited with {status} before accepting connections on port {port}");
            }
            assert!(Instant::now() < deadline, "redis-server did not come up on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(server)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
