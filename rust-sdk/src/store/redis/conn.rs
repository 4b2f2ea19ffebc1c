//! The store's connection: one server (the redis crate's `ConnectionManager`, which
//! reconnects) or a Redis Cluster (its cluster connection, which finds the nodes, follows
//! `MOVED`/`ASK` and reconnects), behind one type that the scripts, pipelines and the batch
//! task use alike, and the failures of opening one that waiting does not fix.
//!
//! A cluster needs nothing else from the store: every key of a namespace carries the hash
//! tag `{dlq:<namespace>}` (see `scripts::namespace_key`), so each script call, pipeline and
//! `MULTI` block touches one slot, and the cluster connection routes it by its first key to
//! the node that holds the slot.

use std::time::Duration;

use captcha_dlq_core::dlq::StoreError;
use captcha_dlq_core::support::quoted::Quoted;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, TlsCertificates, Value};

use super::location::{RedisUrl, Topology};

/// How long connecting to a server may take, and an answer.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);
/// Reconnection attempts before a call to one server fails (the store's callers retry on their
/// own terms). A cluster keeps the crate's default: a redirection during a failover or a
/// resharding costs an attempt too.
const RETRIES: usize = 2;

/// A connection to one server or to a cluster; clones share it.
#[derive(Clone)]
pub(super) enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

/// Connects to what `url` names; `location` is how messages name it. A failure that waiting
/// does not fix (a CA file that cannot be read, refused credentials, a certificate the CA did
/// not sign, a cluster named as one server or the reverse) is [`StoreError::Unusable`].
pub(super) async fn connect(url: RedisUrl, location: &str) -> Result<Conn, StoreError> {
    let certificates = match &url.ca {
        Some(path) => Some(TlsCertificates { client_tls: None, root_cert: Some(read_ca(path, location)?) }),
        None => None,
    };
    // Building a client only reads the settings (it connects later): what it refuses is the URL
    // or, when there is one, the CA file's certificates.
    let refused = |e: RedisError| StoreError::Unusable {
        location: location.to_string(),
        problem: match &url.ca {
            Some(path) => format!("its CA file {} (`ca=`) is refused: {e}", Quoted(&path.display().to_string())),
            None => e.to_string(),
        },
    };
    match url.topology {
        Topology::Single(info) => {
            let client = match certificates {
                Some(certificates) => redis::Client::build_with_tls(*info, certificates),
                None => redis::Client::open(*info),
            }
            .map_err(refused)?;
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(CONNECTION_TIMEOUT))
                .set_response_timeout(Some(RESPONSE_TIMEOUT))
                .set_number_of_retries(RETRIES);
            match client.get_connection_manager_with_config(config).await {
                Ok(conn) => Ok(Conn::Single(conn)),
                Err(e) => Err(open_failure(location, url.ca.as_deref(), &e)),
            }
        }
        Topology::Cluster(nodes) => {
            let mut builder = ClusterClientBuilder::new(nodes)
                .connection_timeout(CONNECTION_TIMEOUT)
                .response_timeout(RESPONSE_TIMEOUT);
            if let Some(certificates) = certificates {
                builder = builder.certs(certificates);
            }
            let client = builder.build().map_err(refused)?;
            match client.get_async_connection().await {
                Ok(conn) => Ok(Conn::Cluster(conn)),
                Err(e) => Err(open_failure(location, url.ca.as_deref(), &e)),
            }
        }
    }
}

/// The PEM certificates of the CA file `path`; what is wrong with it names the file.
fn read_ca(path: &std::path::Path, location: &str) -> Result<Vec<u8>, StoreError> {
    let file = format!("its CA file {} (`ca=`)", Quoted(&path.display().to_string()));
    let unusable = |problem: String| StoreError::Unusable { location: location.to_string(), problem };
    let pem = std::fs::read(path).map_err(|e| unusable(format!("{file} cannot be read: {e}")))?;
    // The redis crate would take a file without certificates as an empty trust store, and every
    // handshake would then fail for a reason that does not name the file.
    if !pem.windows(CERTIFICATE.len()).any(|w| w == CERTIFICATE) {
        return Err(unusable(format!("{file} holds no PEM certificate ({})", String::from_utf8_lossy(CERTIFICATE))));
    }
    Ok(pem)
}

const CERTIFICATE: &[u8] = b"-----BEGIN CERTIFICATE-----";

/// What opening the store at `location` met, as a store error: unusable when waiting does not
/// fix it, else the transient backend error (a server that is down or restarting).
///
/// The cluster client hands on the failure of its first connections as text only (an I/O
/// error whose detail is the node's error, its kind spelled out), so the causes are told
/// apart by their codes and by the redis crate's and rustls's words for them.
pub(super) fn open_failure(location: &str, ca: Option<&std::path::Path>, e: &RedisError) -> StoreError {
    let unusable = |problem: String| StoreError::Unusable { location: location.to_string(), problem };
    let text = with_sources(e);
    let says =
        |words: &[&str]| e.code().is_some_and(|code| words.contains(&code)) || words.iter().any(|w| text.contains(w));
    if e.kind() == ErrorKind::AuthenticationFailed || says(&["WRONGPASS", "NOAUTH", "AuthenticationFailed"]) {
        return unusable(format!("the server refused the user and password of the URL: {e}"));
    }
    if says(&["NOPERM", "NoPerm"]) {
        return unusable(format!(
            "the URL's user may not run what the store needs (give it `+@all ~* &*`, or at least the \
             commands of its scripts, streams, hashes and sorted sets): {e}"
        ));
    }
    if matches!(e.code(), Some("MOVED" | "ASK")) {
        return unusable(format!(
            "the server is a node of a Redis Cluster, and holds another part of the keys: a cluster's URL \
             starts with redis+cluster:// or rediss+cluster:// ({e})"
        ));
    }
    if says(&["cluster support disabled"]) {
        return unusable(format!(
            "the server is not part of a Redis Cluster: one server's URL starts with redis:// or rediss:// ({e})"
        ));
    }
    if let Some(at) = text.find(UNTRUSTED) {
        let trust = match ca {
            Some(path) => format!("the CA file {}", Quoted(&path.display().to_string())),
            None => "the system's CAs (name the CA that signed it with `ca=FILE`)".to_string(),
        };
        let why = text.get(at..).unwrap_or_default();
        return unusable(format!("the server's TLS certificate is not trusted by {trust}: {why}"));
    }
    super::backend(location, e)
}

/// How rustls starts its reason for refusing a server's certificate.
const UNTRUSTED: &str = "invalid peer certificate";

/// `e` and the errors it wraps, as one text.
fn with_sources(e: &RedisError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(err) = source {
        // An error's text often repeats its source's already.
        let more = err.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = err.source();
    }
    text
}
