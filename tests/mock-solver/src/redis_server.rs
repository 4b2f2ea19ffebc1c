//! A throwaway `redis-server` for tests and benchmarks: started as our child on a free
//! loopback port with persistence off, killed and reaped when dropped. It can be paused
//! (`SIGSTOP`, a hung server) and resumed, or killed mid-run, to test what a client does
//! when its store stops answering.
//!
//! It runs as our child rather than with `--daemonize yes`: a daemonized server is
//! re-parented to PID 1, which in a container often never reaps it.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Tests that need Redis fail when it is not installed, unless this is set to `1`.
pub const SKIP_ENV: &str = "CAPTCHA_DLQ_SKIP_REDIS";

#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    child: Child,
    dir: std::path::PathBuf,
}

impl RedisServer {
    /// Starts a server; an error says what is missing or what failed.
    pub fn start() -> io::Result<RedisServer> {
        let installed = Command::new("redis-server").arg("--version").output().is_ok_and(|o| o.status.success());
        if !installed {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "redis-server is not installed (apt-get install -y redis-server)",
            ));
        }
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let dir = std::env::temp_dir().join(format!("captcha-dlq-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--dir"])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let mut server = RedisServer { port, child, dir };
        // A readiness wait with a generous bound, not a timing assertion.
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = server.child.try_wait()? {
                return Err(io::Error::other(format!(
                    "redis-server exited with {status} before accepting connections"
                )));
            }
            if Instant::now() > deadline {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "redis-server did not come up within 20 s"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }

    /// A server, `None` when Redis tests are skipped (`CAPTCHA_DLQ_SKIP_REDIS=1` and no
    /// redis-server); panics with the reason otherwise — for tests.
    pub fn for_tests() -> Option<RedisServer> {
        match RedisServer::start() {
            Ok(server) => Some(server),
            Err(e) if e.kind() == io::ErrorKind::NotFound && std::env::var(SKIP_ENV).as_deref() == Ok("1") => {
                eprintln!("{e}; {SKIP_ENV}=1: skipping the Redis tests");
                None
            }
            Err(e) => panic!("{e}; set {SKIP_ENV}=1 to skip the Redis tests"),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// `SIGSTOP`: the server holds its connections but answers nothing.
    pub fn pause(&self) -> io::Result<()> {
        self.signal("-STOP")
    }

    /// `SIGCONT`: it answers again.
    pub fn resume(&self) -> io::Result<()> {
        self.signal("-CONT")
    }

    /// Kills the server (`SIGKILL`), as a crash would.
    pub fn kill(&mut self) -> io::Result<()> {
        self.child.kill()?;
        self.child.wait().map(|_| ())
    }

    fn signal(&self, which: &str) -> io::Result<()> {
        let status = Command::new("kill").args([which, &self.child.id().to_string()]).status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("kill {which} failed: {status}")))
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.resume();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
