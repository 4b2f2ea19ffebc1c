//! A throwaway `redis-server` for the Redis rows of the benchmark: started as
//! our child on a free loopback port with persistence off, killed and reaped
//! when dropped. The approach of `native/tests/support/redis.rs`, copied (bench
//! code does not import test code), with errors returned instead of panics.
//!
//! It runs as a child rather than `--daemonize yes`, so that it is reaped and
//! never outlives the benchmark.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

/// Whether `redis-server` can be run at all.
pub fn installed() -> bool {
    Command::new("redis-server").arg("--version").output().is_ok_and(|o| o.status.success())
}

impl RedisServer {
    /// Starts a server and waits until it accepts connections.
    pub fn start() -> Result<RedisServer, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory for redis-server: {e}"))?;
        // Bind port 0 to find a free high port, then hand it to redis-server.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free loopback port for redis-server: {e}"))?
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--dir"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start redis-server: {e}"))?;
        let mut server = RedisServer { port, child, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("redis-server exited with {status} before accepting connections on port {port}"));
            }
            if Instant::now() >= deadline {
                return Err(format!("redis-server did not accept connections on port {port} within 20 s"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
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
