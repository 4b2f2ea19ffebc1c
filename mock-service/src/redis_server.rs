//! Throwaway Redis deployments for tests and benchmarks, each on free loopback ports with
//! persistence off, every process killed and reaped (by its pid) and its files removed when
//! the value is dropped, also when a test fails:
//! - [`RedisServer::start`]: one plain server. It can be paused (`SIGSTOP`, a hung server) and
//!   resumed, or killed mid-run, to test what a client does when its store stops answering.
//! - [`RedisServer::start_tls_acl`]: one server that speaks TLS only, with a certificate from a
//!   CA the helper makes ([`TestCa`], with the `openssl` command), no default user, and an
//!   ACL user with a password.
//! - [`RedisCluster::start`]: a Redis Cluster of three masters (`--cluster-enabled yes`,
//!   joined by `redis-cli --cluster create`), plain or with TLS and the ACL user.
//!
//! Servers run as our children rather than with `--daemonize yes`: a daemonized server is
//! re-parented to PID 1, which in a container often never reaps it, and a child's pid is ours
//! to kill without reading a pid file.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Tests that need Redis fail when it is not installed, unless this is set to `1`.
pub const SKIP_ENV: &str = "CAPTCHA_DLQ_SKIP_REDIS";

/// The ACL user of the secured deployments, and its password.
pub const ACL_USER: &str = "dlq-worker";
pub const ACL_PASSWORD: &str = "s3cret-acl-pw";

/// Whether `redis-server` is on the PATH and runs.
pub fn installed() -> bool {
    runs("redis-server")
}

fn runs(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

fn missing(program: &str, package: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{program} is not installed (apt-get install -y {package})"))
}

/// A fresh directory for one deployment's files, removed by its owner's `Drop`.
fn fresh_dir(kind: &str) -> io::Result<PathBuf> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("captcha-dlq-{kind}-{}-{n}", std::process::id()));
    // A directory left by an earlier process with our pid (a killed run) is stale.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// `n` distinct free loopback ports, found by holding a listener on each at once.
fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    let listeners: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0")).collect::<Result<_, _>>()?;
    listeners.iter().map(|l| l.local_addr().map(|a| a.port())).collect()
}

/// Runs `command` to its end; an error carries what it printed.
fn run(command: &mut Command, what: &str) -> io::Result<String> {
    let out = command.stdin(Stdio::null()).output()?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(text)
    } else {
        Err(io::Error::other(format!("{what} failed ({}): {}", out.status, text.trim())))
    }
}

/// A self-signed CA made for one test run, and a server certificate it signed for 127.0.0.1
/// and localhost (ECDSA P-256, valid two days), as PEM files in a directory.
#[derive(Debug)]
pub struct TestCa {
    /// The CA's certificate: what a client is told to trust.
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
}

/// The `openssl` configuration of [`TestCa`]: a CA that may sign, and a server certificate a
/// TLS client accepts for 127.0.0.1 (also as a client, for the cluster bus between nodes).
const OPENSSL_CONFIG: &str = "\
[req]
distinguished_name = dn
x509_extensions = ca_ext
prompt = no
[dn]
CN = captcha-dlq test CA
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth,clientAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
";

impl TestCa {
    /// Makes the CA and the server certificate in `dir` with the `openssl` command.
    pub fn make(dir: &Path) -> io::Result<TestCa> {
        if !runs_openssl() {
            return Err(missing("openssl", "openssl"));
        }
        let config = dir.join("openssl.cnf");
        std::fs::write(&config, OPENSSL_CONFIG)?;
        let ca = TestCa::self_signed(dir, "ca")?;
        let (server_cert, server_key) = (dir.join("server.pem"), dir.join("server.key"));
        let csr = dir.join("server.csr");
        run(
            Command::new("openssl")
                .args(["req", "-new", "-config"])
                .arg(&config)
                .args(["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost"])
                .arg("-keyout")
                .arg(&server_key)
                .arg("-out")
                .arg(&csr),
            "openssl req (server key)",
        )?;
        run(
            Command::new("openssl")
                .args(["x509", "-req", "-days", "2", "-in"])
                .arg(&csr)
                .arg("-CA")
                .arg(&ca)
                .arg("-CAkey")
                .arg(dir.join("ca.key"))
                .args(["-CAcreateserial", "-extensions", "server_ext", "-extfile"])
                .arg(&config)
                .arg("-out")
                .arg(&server_cert),
            "openssl x509 (server certificate)",
        )?;
        Ok(TestCa { ca, server_cert, server_key })
    }

    /// Another self-signed CA in `dir` as `<name>.pem` (and its key): one that signed nothing
    /// a server shows, for a client that trusts the wrong CA.
    pub fn self_signed(dir: &Path, name: &str) -> io::Result<PathBuf> {
        let config = dir.join("openssl.cnf");
        if !config.exists() {
            std::fs::write(&config, OPENSSL_CONFIG)?;
        }
        let pem = dir.join(format!("{name}.pem"));
        run(
            Command::new("openssl")
                .args(["req", "-x509", "-config"])
                .arg(&config)
                .args(["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
                .arg("-keyout")
                .arg(dir.join(format!("{name}.key")))
                .arg("-out")
                .arg(&pem),
            "openssl req -x509 (CA)",
        )?;
        Ok(pem)
    }

    /// The `redis-server` arguments that make it speak TLS only, on `port`, with this
    /// certificate (clients show none).
    fn server_args(&self, port: u16) -> Vec<String> {
        let path = |p: &Path| p.display().to_string();
        vec![
            "--port".into(),
            "0".into(),
            "--tls-port".into(),
            port.to_string(),
            "--tls-cert-file".into(),
            path(&self.server_cert),
            "--tls-key-file".into(),
            path(&self.server_key),
            "--tls-ca-cert-file".into(),
            path(&self.ca),
            "--tls-auth-clients".into(),
            "no".into(),
        ]
    }

    /// The `redis-cli` arguments that reach such a server.
    fn cli_args(&self) -> Vec<String> {
        vec!["--tls".into(), "--cacert".into(), self.ca.display().to_string()]
    }
}

fn runs_openssl() -> bool {
    Command::new("openssl").arg("version").output().is_ok_and(|o| o.status.success())
}

/// The `redis-server` arguments that turn the default user off and add [`ACL_USER`] with
/// every right.
fn acl_args() -> Vec<String> {
    ["--user", "default", "off", "--user", ACL_USER, "on", &format!(">{ACL_PASSWORD}"), "~*", "&*", "+@all"]
        .map(String::from)
        .to_vec()
}

/// `--user ACL_USER --pass ACL_PASSWORD` for `redis-cli` (which warns about a password on the
/// command line: fine for a throwaway server).
fn acl_cli_args() -> Vec<String> {
    ["--user", ACL_USER, "--pass", ACL_PASSWORD, "--no-auth-warning"].map(String::from).to_vec()
}

/// A `redis-server` child process, killed and reaped when dropped.
#[derive(Debug)]
struct Process {
    port: u16,
    child: Child,
}

impl Process {
    /// Starts `redis-server` on `port` in `dir` with `extra` arguments and waits until the port
    /// accepts connections.
    fn start(port: u16, dir: &Path, extra: &[String]) -> io::Result<Process> {
        if !installed() {
            return Err(missing("redis-server", "redis-server"));
        }
        std::fs::create_dir_all(dir)?;
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--dir"])
            .arg(dir)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let mut process = Process { port, child };
        // A readiness wait with a generous bound, not a timing assertion.
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = process.child.try_wait()? {
                return Err(io::Error::other(format!(
                    "redis-server exited with {status} before accepting connections on port {port}"
                )));
            }
            if Instant::now() > deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("redis-server did not come up on port {port} within 20 s"),
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(process)
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

impl Drop for Process {
    fn drop(&mut self) {
        // A paused server (SIGSTOP) still dies of SIGKILL.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `value` percent-encoded for a URL's query.
fn query_value(value: &Path) -> String {
    url::form_urlencoded::byte_serialize(value.display().to_string().as_bytes()).collect()
}

/// The result of `start`, `None` when Redis tests are skipped (`CAPTCHA_DLQ_SKIP_REDIS=1` and a
/// program missing); panics with the reason otherwise — for tests.
fn or_skip<T>(started: io::Result<T>) -> Option<T> {
    match started {
        Ok(deployment) => Some(deployment),
        Err(e) if e.kind() == io::ErrorKind::NotFound && std::env::var(SKIP_ENV).as_deref() == Ok("1") => {
            eprintln!("{e}; {SKIP_ENV}=1: skipping the Redis tests");
            None
        }
        Err(e) => panic!("{e}; set {SKIP_ENV}=1 to skip the Redis tests"),
    }
}

/// One server: plain, or TLS with an ACL user ([`RedisServer::start_tls_acl`]).
#[derive(Debug)]
pub struct RedisServer {
    process: Process,
    /// Set for a TLS server: its CA, and the URL's `ca=` value.
    tls: Option<TestCa>,
    // Last, so that the server is gone before its files.
    dir: DirGuard,
}

/// Removes a deployment's directory when dropped.
#[derive(Debug)]
struct DirGuard(PathBuf);

impl Drop for DirGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl RedisServer {
    /// Starts a plain server; an error says what is missing or what failed.
    pub fn start() -> io::Result<RedisServer> {
        let dir = DirGuard(fresh_dir("redis")?);
        let port = free_ports(1)?.first().copied().unwrap_or_default();
        let process = Process::start(port, &dir.0, &[])?;
        Ok(RedisServer { process, tls: None, dir })
    }

    /// Starts a server that speaks TLS only (a certificate of a CA made here, see [`TestCa`]),
    /// whose default user is off and whose one user is [`ACL_USER`] with [`ACL_PASSWORD`].
    pub fn start_tls_acl() -> io::Result<RedisServer> {
        let dir = DirGuard(fresh_dir("redis-tls")?);
        let ca = TestCa::make(&dir.0)?;
        let port = free_ports(1)?.first().copied().unwrap_or_default();
        let mut args = ca.server_args(port);
        args.extend(acl_args());
        let process = Process::start(port, &dir.0.join("data"), &args)?;
        Ok(RedisServer { process, tls: Some(ca), dir })
    }

    /// A plain server, `None` when Redis tests are skipped (`CAPTCHA_DLQ_SKIP_REDIS=1` and no
    /// redis-server); panics with the reason otherwise — for tests.
    pub fn for_tests() -> Option<RedisServer> {
        or_skip(RedisServer::start())
    }

    /// [`RedisServer::start_tls_acl`] for tests, as [`RedisServer::for_tests`].
    pub fn tls_acl_for_tests() -> Option<RedisServer> {
        or_skip(RedisServer::start_tls_acl())
    }

    pub fn port(&self) -> u16 {
        self.process.port
    }

    /// The server's URL: `redis://127.0.0.1:PORT/`, or for a TLS server
    /// `rediss://USER:PASSWORD@127.0.0.1:PORT/?ca=CA_FILE`.
    pub fn url(&self) -> String {
        match &self.tls {
            None => format!("redis://127.0.0.1:{}/", self.port()),
            Some(ca) => {
                format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{}/?ca={}", self.port(), query_value(&ca.ca))
            }
        }
    }

    /// The CA a TLS server's certificate comes from.
    pub fn ca(&self) -> Option<&TestCa> {
        self.tls.as_ref()
    }

    /// A directory of this server's own, for a test's files (removed with the server).
    pub fn scratch_dir(&self) -> &Path {
        &self.dir.0
    }

    /// `SIGSTOP`: the server holds its connections but answers nothing.
    pub fn pause(&self) -> io::Result<()> {
        self.process.signal("-STOP")
    }

    /// `SIGCONT`: it answers again.
    pub fn resume(&self) -> io::Result<()> {
        self.process.signal("-CONT")
    }

    /// Kills the server (`SIGKILL`), as a crash would.
    pub fn kill(&mut self) -> io::Result<()> {
        self.process.child.kill()?;
        self.process.child.wait().map(|_| ())
    }
}

/// A Redis Cluster of three masters, each a child `redis-server --cluster-enabled yes` with
/// its own cluster bus port, plain or with TLS and the ACL user. Killed when dropped.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<Process>,
    tls: Option<TestCa>,
    dir: DirGuard,
}

impl RedisCluster {
    /// Starts three masters, joins them with `redis-cli --cluster create` (slots split in three)
    /// and waits until every node says `cluster_state:ok`. `secure`: TLS only (certificates of a
    /// CA made here, the cluster bus too) and the ACL user instead of the default user.
    pub fn start(secure: bool) -> io::Result<RedisCluster> {
        if !runs("redis-cli") {
            return Err(missing("redis-cli", "redis-tools"));
        }
        let dir = DirGuard(fresh_dir(if secure { "redis-cluster-tls" } else { "redis-cluster" })?);
        let tls = if secure { Some(TestCa::make(&dir.0)?) } else { None };
        // Client ports and bus ports: the default bus port (client port + 10000) may be taken,
        // or beyond 65535 for a high client port.
        let ports = free_ports(6)?;
        let (client_ports, bus_ports) = ports.split_at(3);
        let mut nodes = Vec::new();
        for (port, bus) in client_ports.iter().zip(bus_ports) {
            let mut args: Vec<String> =
                ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"].map(String::from).to_vec();
            args.extend(["--cluster-port".to_string(), bus.to_string()]);
            if let Some(ca) = &tls {
                args.extend(ca.server_args(*port));
                args.extend(["--tls-cluster".to_string(), "yes".to_string()]);
                args.extend(acl_args());
            }
            nodes.push(Process::start(*port, &dir.0.join(format!("node-{port}")), &args)?);
        }
        let cluster = RedisCluster { nodes, tls, dir };
        let mut create = Command::new("redis-cli");
        create.args(cluster.cli_args()).args(["--cluster", "create"]);
        create.args(client_ports.iter().map(|p| format!("127.0.0.1:{p}")));
        create.args(["--cluster-replicas", "0", "--cluster-yes"]);
        run(&mut create, "redis-cli --cluster create")?;
        // The nodes learn of each other's slots by gossip: a readiness wait with a generous bound.
        let deadline = Instant::now() + Duration::from_secs(30);
        for port in client_ports {
            loop {
                let info = run(
                    Command::new("redis-cli").args(cluster.cli_args()).args([
                        "-p",
                        &port.to_string(),
                        "cluster",
                        "info",
                    ]),
                    "redis-cli cluster info",
                )?;
                if info.contains("cluster_state:ok") {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("the cluster's node on port {port} is not ok within 30 s: {}", info.trim()),
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Ok(cluster)
    }

    /// A cluster for tests, `None` when Redis tests are skipped, as [`RedisServer::for_tests`].
    pub fn for_tests(secure: bool) -> Option<RedisCluster> {
        or_skip(RedisCluster::start(secure))
    }

    /// The nodes' client ports.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|n| n.port).collect()
    }

    /// `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`, or for a secure cluster
    /// `rediss+cluster://USER:PASSWORD@…?ca=CA_FILE`.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self.ports().iter().map(|p| format!("127.0.0.1:{p}")).collect();
        match &self.tls {
            None => format!("redis+cluster://{}", hosts.join(",")),
            Some(ca) => {
                format!("rediss+cluster://{ACL_USER}:{ACL_PASSWORD}@{}?ca={}", hosts.join(","), query_value(&ca.ca))
            }
        }
    }

    /// The URL of one node alone (`redis://` or `rediss://`, with the user and CA), for
    /// looking at what that node holds.
    pub fn node_url(&self, port: u16) -> String {
        match &self.tls {
            None => format!("redis://127.0.0.1:{port}/"),
            Some(ca) => {
                format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{port}/?ca={}", query_value(&ca.ca))
            }
        }
    }

    /// The CA of a secure cluster's certificates.
    pub fn ca(&self) -> Option<&TestCa> {
        self.tls.as_ref()
    }

    /// A directory of this cluster's own, for a test's files (removed with the cluster).
    pub fn scratch_dir(&self) -> &Path {
        &self.dir.0
    }

    /// The `redis-cli` arguments that reach the nodes (TLS and the ACL user when secure).
    fn cli_args(&self) -> Vec<String> {
        let mut args = vec!["-h".to_string(), "127.0.0.1".to_string()];
        if let Some(ca) = &self.tls {
            args.extend(ca.cli_args());
            args.extend(acl_cli_args());
        }
        args
    }
}
