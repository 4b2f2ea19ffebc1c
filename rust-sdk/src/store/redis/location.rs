//! Reading a Redis DLQ location: the one place that knows the URL forms the store accepts,
//! which of their parts are ours (the namespace, the CA file) and which are the redis
//! crate's (user, password, hosts, database), and how a location is shown in messages
//! (never with its user or password).
//!
//! Forms (`[…]` optional):
//! - `redis://[user[:password]@]host[:port][/db][?namespace=NS]`: one server;
//! - `rediss://…[?namespace=NS][&ca=FILE]`: one server over TLS, the server's certificate
//!   checked against the PEM certificates in `FILE` (without `ca`, the system's roots);
//! - `redis+cluster://[user[:password]@]host[:port][,host[:port]…][?namespace=NS]` and
//!   `rediss+cluster://…[&ca=FILE]`: a Redis Cluster reached through any of the hosts listed
//!   (the rest of the cluster is found from them), database 0 only.
//!
//! The redis crate has no URL for a cluster (its cluster client takes a list of node URLs),
//! so the hosts are split here and each becomes the crate's own `redis://` or `rediss://`
//! URL with the same user and password. Any other query parameter, or a fragment (the crate's
//! `#insecure`, which would skip checking the server's name), is refused, naming it.

use std::path::PathBuf;

use captcha_dlq_core::dlq::StoreError;
use captcha_dlq_core::support::quoted::Quoted;
use redis::{ConnectionInfo, IntoConnectionInfo};

/// The namespace of a URL that names none.
pub const DEFAULT_NAMESPACE: &str = "captcha-dlq";

/// What an unreadable URL is called in messages: it may carry a password, so it is not echoed.
const NOT_SHOWN: &str = "(a Redis URL, not shown: it may carry a password)";

/// The query parameters a URL may carry.
const PARAMETERS: &str = "namespace, ca";

/// `location` as messages show it: the scheme, hosts and database, without user, password or
/// query; a URL that cannot be read is not shown at all.
pub fn shown_location(location: &str) -> String {
    RedisUrl::parse(location).map_or_else(|_| NOT_SHOWN.to_string(), |url| url.shown)
}

/// The servers a URL names.
pub(super) enum Topology {
    Single(Box<ConnectionInfo>),
    /// The nodes to discover the cluster from.
    Cluster(Vec<ConnectionInfo>),
}

/// A Redis location, read and checked.
pub(super) struct RedisUrl {
    pub(super) topology: Topology,
    /// The file of PEM certificates that `ca=` names (a `rediss` URL only).
    pub(super) ca: Option<PathBuf>,
    /// The namespace `namespace=` names.
    pub(super) namespace: Option<String>,
    /// For messages: see [`shown_location`].
    pub(super) shown: String,
}

impl std::fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The connection infos hold the password: only what messages show is printed.
        f.debug_struct("RedisUrl")
            .field("shown", &self.shown)
            .field("ca", &self.ca)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

/// Why a namespace cannot be used, if it cannot: its name is the keys' hash tag (`{dlq:NS}`),
/// so braces would end the tag early and put the namespace's keys on several cluster slots.
pub(super) fn namespace_problem(namespace: &str) -> Option<&'static str> {
    (namespace.is_empty() || namespace.contains(['{', '}']) || namespace.chars().any(char::is_whitespace))
        .then_some("a Redis namespace must be non-empty, without braces or spaces")
}

fn unusable(problem: impl Into<String>) -> StoreError {
    StoreError::Unusable { location: NOT_SHOWN.into(), problem: problem.into() }
}

impl RedisUrl {
    /// Reads `url`; the error names what is wrong without echoing the URL.
    pub(super) fn parse(url: &str) -> Result<RedisUrl, StoreError> {
        let url = url.trim();
        let invalid = |why: &str| unusable(format!("it is not a valid URL: {why}"));
        let (scheme, rest) = url.split_once("://").ok_or_else(|| invalid("no scheme (`redis://…`)"))?;
        let (tls, cluster) = match scheme.to_ascii_lowercase().as_str() {
            "redis" => (false, false),
            "rediss" => (true, false),
            "redis+cluster" => (false, true),
            "rediss+cluster" => (true, true),
            _ => return Err(invalid("the scheme is not redis, rediss, redis+cluster or rediss+cluster")),
        };
        let node_scheme = if tls { "rediss" } else { "redis" };
        // The authority ends at the path, query or fragment; user and password end at its last
        // `@` (as URL parsers read it: an `@` in a password should be written `%40`).
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (userinfo, hosts) = match authority.rfind('@') {
            Some(at) => (authority.get(..=at).unwrap_or_default(), authority.get(at + 1..).unwrap_or_default()),
            None => ("", authority),
        };
        let hosts: Vec<&str> = hosts.split(',').collect();
        if hosts.iter().any(|h| h.is_empty()) {
            return Err(invalid("a host is missing"));
        }
        if hosts.len() > 1 && !cluster {
            return Err(unusable(format!(
                "a {scheme}:// URL names one server, and this one names {}: a cluster's URL starts with \
                 {scheme}+cluster://",
                hosts.len()
            )));
        }
        let first = hosts.first().copied().unwrap_or_default();
        let parsed = url::Url::parse(&format!("{node_scheme}://{userinfo}{first}{tail}"))
            .map_err(|e| invalid(&e.to_string()))?;
        let mut others = Vec::new();
        for host in hosts.iter().skip(1) {
            let other =
                url::Url::parse(&format!("{node_scheme}://{userinfo}{host}/")).map_err(|e| invalid(&e.to_string()))?;
            if other.path() != "/" || other.query().is_some() || other.fragment().is_some() {
                return Err(invalid("a cluster's hosts are listed as host[:port],host[:port]…"));
            }
            others.push(other);
        }
        // From here on, messages name the location without its user and password.
        let host_of = |u: &url::Url| {
            let host = u.host_str().unwrap_or_default();
            u.port().map_or_else(|| host.to_string(), |port| format!("{host}:{port}"))
        };
        let shown_hosts: Vec<String> = std::iter::once(&parsed).chain(&others).map(host_of).collect();
        let shown = format!("{}://{}{}", scheme.to_ascii_lowercase(), shown_hosts.join(","), parsed.path());
        let unusable = |problem: String| StoreError::Unusable { location: shown.clone(), problem };
        if parsed.fragment().is_some() {
            return Err(unusable(
                "a Redis URL takes no fragment (`#…`): the server's certificate is always checked; name the CA \
                 that signed it with `ca=FILE`"
                    .into(),
            ));
        }
        let mut namespace = None;
        let mut ca = None;
        for (name, value) in parsed.query_pairs() {
            let twice = || unusable(format!("the parameter {} is given twice", Quoted(&name)));
            match name.as_ref() {
                "namespace" => {
                    if let Some(problem) = namespace_problem(&value) {
                        return Err(StoreError::Unusable {
                            location: format!("namespace {}", Quoted(&value)),
                            problem: problem.into(),
                        });
                    }
                    if namespace.replace(value.into_owned()).is_some() {
                        return Err(twice());
                    }
                }
                "ca" => {
                    if !tls {
                        return Err(unusable(format!(
                            "the parameter `ca` names the CA of a TLS server, and {scheme}:// is not TLS: use \
                             {node_scheme}s{}://",
                            if cluster { "+cluster" } else { "" }
                        )));
                    }
                    if value.is_empty() {
                        return Err(unusable("the parameter `ca` is empty: name a file of PEM certificates".into()));
                    }
                    if ca.replace(PathBuf::from(value.as_ref())).is_some() {
                        return Err(twice());
                    }
                }
                other => {
                    return Err(unusable(format!(
                        "unknown parameter {} in the Redis URL (known: {PARAMETERS})",
                        Quoted(other)
                    )))
                }
            }
        }
        let info = |node: url::Url| {
            node.into_connection_info().map_err(|e| unusable(format!("the redis client refuses it: {e}")))
        };
        let mut node = parsed.clone();
        node.set_query(None);
        let topology = if cluster {
            if !matches!(parsed.path(), "" | "/" | "/0") {
                return Err(unusable(
                    "a Redis Cluster has database 0 only: leave the path out of a cluster's URL".into(),
                ));
            }
            let mut nodes = vec![info(node)?];
            for other in others {
                nodes.push(info(other)?);
            }
            Topology::Cluster(nodes)
        } else {
            Topology::Single(Box::new(info(node)?))
        };
        Ok(RedisUrl { topology, ca, namespace, shown })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(url: &str) -> String {
        match RedisUrl::parse(url) {
            Err(StoreError::Unusable { location, problem }) => {
                assert!(!location.contains("pw") && !location.contains('?'), "{location}");
                assert!(!problem.contains("pw"), "the password leaked into: {problem}");
                problem
            }
            other => panic!("{url}: expected an unusable location, got {other:?}"),
        }
    }

    #[test]
    fn every_form_is_read_with_its_namespace_ca_and_hosts() {
        let single = RedisUrl::parse("redis://alice:pw@127.0.0.1:6380/2?namespace=fleet-a").expect("single");
        assert_eq!(single.shown, "redis://127.0.0.1:6380/2");
        assert_eq!(single.namespace.as_deref(), Some("fleet-a"));
        let Topology::Single(info) = &single.topology else { panic!("one server") };
        assert_eq!(
            (info.redis_settings().username(), info.redis_settings().password(), info.redis_settings().db()),
            (Some("alice"), Some("pw"), 2)
        );
        assert!(!format!("{single:?}").contains("pw"), "{single:?}");

        let tls = RedisUrl::parse("rediss://u:pw@localhost/?ca=/etc/ca%20dir/ca.pem").expect("tls");
        assert_eq!(tls.ca.as_deref(), Some(std::path::Path::new("/etc/ca dir/ca.pem")));
        assert_eq!((tls.shown.as_str(), tls.namespace), ("rediss://localhost/", None));

        let cluster =
            RedisUrl::parse("rediss+cluster://bob:p%40w@10.0.0.1:7000,10.0.0.2,[::1]:7002?namespace=n&ca=ca.pem")
                .expect("cluster");
        assert_eq!(cluster.shown, "rediss+cluster://10.0.0.1:7000,10.0.0.2,[::1]:7002");
        let Topology::Cluster(nodes) = &cluster.topology else { panic!("a cluster") };
        let addrs: Vec<String> = nodes.iter().map(|n| n.addr().to_string()).collect();
        assert_eq!(addrs, ["10.0.0.1:7000", "10.0.0.2:6379", "::1:7002"]);
        for node in nodes {
            assert_eq!(
                (node.redis_settings().username(), node.redis_settings().password()),
                (Some("bob"), Some("p@w"))
            );
        }
        assert_eq!(shown_location("redis://:pw@h:1"), "redis://h:1");
        assert_eq!(shown_location("redis://:pw@[::1"), NOT_SHOWN);
    }

    #[test]
    fn what_is_wrong_is_named_without_the_password() {
        assert!(problem("redis://:pw@h:1/?protocol=resp3").contains("unknown parameter \"protocol\""));
        match RedisUrl::parse("redis://u:pw@h:1,/") {
            Err(StoreError::Unusable { location, .. }) => assert_eq!(location, NOT_SHOWN),
            other => panic!("expected an invalid URL, got {other:?}"),
        }
        match RedisUrl::parse("rediss+cluster://u:pw@h:1,h:2?tls=1") {
            Err(StoreError::Unusable { location, .. }) => assert_eq!(location, "rediss+cluster://h:1,h:2"),
            other => panic!("expected an unknown parameter, got {other:?}"),
        }
        assert!(problem("redis://:pw@h:1/?namespace=a&namespace=b").contains("\"namespace\" is given twice"));
        assert!(problem("redis://:pw@h:1/?ca=ca.pem").contains("use rediss://"));
        assert!(problem("redis+cluster://:pw@h:1?ca=ca.pem").contains("use rediss+cluster://"));
        assert!(problem("rediss://:pw@h:1/?ca=").contains("`ca` is empty"));
        assert!(problem("rediss://:pw@h:1/#insecure").contains("no fragment"));
        assert!(problem("redis://:pw@h:1,h:2/").contains("cluster's URL starts with redis+cluster://"));
        assert!(problem("redis+cluster://:pw@h:1,h:2/3").contains("database 0 only"));
        assert!(problem("redis+cluster://:pw@h:1,,h:2").contains("a host is missing"));
        assert!(problem("redis+cluster://:pw@h:1,h:x").contains("not a valid URL"));
        assert!(problem("redis://:pw@h:1/x").contains("Invalid database number"));
        assert!(problem("http://:pw@h:1/").contains("scheme is not redis"));
        assert!(problem("not a url").contains("no scheme"));
        match RedisUrl::parse("redis://:pw@h:1/?namespace=a%7Bb%7D") {
            Err(StoreError::Unusable { location, problem }) => {
                assert_eq!(location, "namespace \"a{b}\"");
                assert!(problem.contains("without braces"), "{problem}");
            }
            other => panic!("expected a bad namespace, got {other:?}"),
        }
    }
}
