//! RedisStore on the deployments production runs, each started here by the test helper
//! (`captcha_dlq_mock::redis_server`) and stopped when its test ends: a Redis Cluster of three
//! masters, one server with TLS (a CA the test makes) and an ACL user, and a cluster with both.
//! On each: the store conformance suite, the fleet ledger's suite and a fleet of workers draining one namespace; on the
//! cluster, a fleet spread over namespaces whose keys lie on different nodes; and the clear
//! errors of what waiting does not fix (a wrong password, a CA that did not sign the server's
//! certificate, a CA file that is missing, a cluster named as one server and the reverse, a
//! user without the rights the store needs), none showing the password.

use crate::support;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use captcha_dlq::store::RedisStore;
use captcha_dlq_core::dlq::testkit::{at, run_store_suite, sample_record, CASES};
use captcha_dlq_core::dlq::{DlqStore, Filter, StoreError};
use captcha_dlq_mock::redis_server::{RedisCluster, RedisServer, TestCa, ACL_PASSWORD, ACL_USER};
use redis::aio::ConnectionLike;
use redis::TlsCertificates;

/// `url` with `namespace=ns` added to its query.
fn with_namespace(url: &str, ns: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}namespace={ns}")
}

/// The conformance suite, each case on a fresh namespace named in the URL.
async fn conformance_suite(url: &str) {
    let mut n = 0;
    let ran = run_store_suite(|| {
        n += 1;
        let url = with_namespace(url, &format!("suite-{n}"));
        async move { RedisStore::open(&url).await.expect("open") }
    })
    .await;
    assert_eq!(ran, CASES.len());
}

/// The fleet ledger's conformance suite on a namespace named in the URL (the server's clock).
async fn ledger_suite(url: &str) {
    let store = RedisStore::open(&with_namespace(url, "ledger")).await.expect("open");
    let ledger = captcha_dlq_core::dlq::DlqStore::fleet_ledger(&store).expect("a Redis namespace keeps a fleet ledger");
    let now = at(1_700_000_000);
    assert_eq!(captcha_dlq_core::fleet::testkit::run_ledger_suite(ledger.as_ref(), now, 7).await, 9);
}

/// Four workers, each with its own connection, drain 120 records of one namespace at once:
/// each record is leased once, and each lease is a pending entry of the namespace's stream.
async fn fleet_drains_one_namespace<C: ConnectionLike + Send>(url: &str, side: &mut C) {
    let url = with_namespace(url, "fleet");
    let store = RedisStore::open(&url).await.expect("open");
    let mut workers = Vec::new();
    for _ in 0..4 {
        workers.push(RedisStore::open(&url).await.expect("open"));
    }
    support::drain_at_once(&store, workers).await;
    let stats = store.stats(at(100_000)).await.expect("stats");
    assert_eq!((stats.total, stats.leased), (120, 120));
    let pending: Vec<(String, String, u64, u64)> = redis::cmd("XPENDING")
        .arg(store.stream_key())
        .arg("dlq")
        .arg("-")
        .arg("+")
        .arg(10_000)
        .query_async(side)
        .await
        .expect("XPENDING");
    assert_eq!(pending.len(), 120, "every lease is a pending entry");
}

/// `path` as a URL's query value.
fn query_value(path: &std::path::Path) -> String {
    url::form_urlencoded::byte_serialize(path.display().to_string().as_bytes()).collect()
}

fn certificates(ca: &TestCa) -> TlsCertificates {
    TlsCertificates { client_tls: None, root_cert: Some(std::fs::read(&ca.ca).expect("read the CA")) }
}

/// A connection of the test's own to a cluster, beside the stores'.
async fn cluster_side(cluster: &RedisCluster) -> redis::cluster_async::ClusterConnection {
    let scheme = if cluster.ca().is_some() { "rediss" } else { "redis" };
    let auth = if cluster.ca().is_some() { format!("{ACL_USER}:{ACL_PASSWORD}@") } else { String::new() };
    let nodes: Vec<String> = cluster.ports().iter().map(|p| format!("{scheme}://{auth}127.0.0.1:{p}/")).collect();
    let mut builder = redis::cluster::ClusterClientBuilder::new(nodes);
    if let Some(ca) = cluster.ca() {
        builder = builder.certs(certificates(ca));
    }
    builder.build().expect("cluster client").get_async_connection().await.expect("cluster connection")
}

/// A connection to one node alone (no redirections followed).
async fn node_side(cluster: &RedisCluster, port: u16) -> redis::aio::MultiplexedConnection {
    let client = match cluster.ca() {
        Some(ca) => redis::Client::build_with_tls(
            format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{port}/"),
            certificates(ca),
        ),
        None => redis::Client::open(format!("redis://127.0.0.1:{port}/")),
    };
    client.expect("client").get_multiplexed_async_connection().await.expect("node connection")
}

/// The port of the node that holds namespace `ns`'s slot: the one that answers for its keys
/// instead of redirecting (`MOVED`).
async fn owner(cluster: &RedisCluster, ns: &str) -> u16 {
    for port in cluster.ports() {
        let mut node = node_side(cluster, port).await;
        let answer: redis::RedisResult<i64> =
            redis::cmd("EXISTS").arg(format!("{{dlq:{ns}}}:body")).query_async(&mut node).await;
        match answer {
            Ok(_) => return port,
            Err(e) if e.code() == Some("MOVED") => continue,
            Err(e) => panic!("EXISTS on node {port}: {e}"),
        }
    }
    panic!("no node holds the slot of namespace {ns}")
}

/// The keys each node holds (`KEYS *` on each, which answers for that node only).
async fn keys_by_node(cluster: &RedisCluster) -> BTreeMap<u16, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for port in cluster.ports() {
        let keys: BTreeSet<String> =
            redis::cmd("KEYS").arg("*").query_async(&mut node_side(cluster, port).await).await.expect("KEYS");
        out.insert(port, keys);
    }
    out
}

/// What opening the store at `url` says; it must be unusable (waiting does not fix it) and not
/// show the test user's password.
async fn refused(url: &str) -> String {
    match RedisStore::open(url).await {
        Err(e @ StoreError::Unusable { .. }) => {
            let msg = e.to_string();
            assert!(!e.is_transient(), "{msg}");
            assert!(!msg.contains(ACL_PASSWORD) && !msg.contains("wrong-pw"), "the password leaked into: {msg}");
            msg
        }
        Err(other) => panic!("expected an unusable location, got {other}"),
        Ok(store) => panic!("expected an error, the store opened: {store:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_runs_the_suite_and_a_fleet() {
    let Some(cluster) = RedisCluster::for_tests(false) else { return };
    conformance_suite(&cluster.url()).await;
    ledger_suite(&cluster.url()).await;
    fleet_drains_one_namespace(&cluster.url(), &mut cluster_side(&cluster).await).await;

    // Every key of a namespace sits on one node, in one slot: the suite's many namespaces each
    // kept to their own node, whichever it is.
    let mut side = cluster_side(&cluster).await;
    let by_node = keys_by_node(&cluster).await;
    let mut homes: BTreeMap<String, BTreeSet<u16>> = BTreeMap::new();
    for (port, keys) in &by_node {
        for key in keys {
            let tag = key.split_once('}').map(|(tag, _)| tag.to_string()).unwrap_or_default();
            homes.entry(tag).or_default().insert(*port);
        }
    }
    assert!(homes.len() > CASES.len() / 2, "the suite's namespaces were written: {homes:?}");
    for (tag, ports) in &homes {
        assert_eq!(ports.len(), 1, "the keys of {tag}}} are on several nodes: {ports:?}");
        let slots: BTreeSet<u16> = futures::future::join_all(
            by_node.values().flatten().filter(|k| k.starts_with(&format!("{tag}}}"))).map(|key| {
                let mut side = side.clone();
                async move { redis::cmd("CLUSTER").arg("KEYSLOT").arg(key).query_async(&mut side).await.expect("slot") }
            }),
        )
        .await
        .into_iter()
        .collect();
        assert_eq!(slots.len(), 1, "the keys of {tag}}} hash to several slots: {slots:?}");
    }

    // Nodes that lost the scripts (restarted, or a replica promoted by a failover) get them
    // again: a lone push runs its operation's own script, pushes together run `APPLY`.
    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query_async(&mut side).await.expect("SCRIPT FLUSH");
    let store = RedisStore::open(&with_namespace(&cluster.url(), "flushed")).await.expect("open");
    store.push(sample_record("alone", 0)).await.expect("a lone push");
    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query_async(&mut side).await.expect("SCRIPT FLUSH");
    let together = futures::future::join_all((0..20u64).map(|i| store.push(sample_record(&format!("r{i:02}"), i + 1))));
    for outcome in together.await {
        outcome.expect("a push among many");
    }
    assert_eq!(store.count(&Filter::all(), at(0)).await.expect("count"), 21);
}

/// A fleet spread over namespaces: two namespaces whose slots are on different nodes, each
/// drained by its own workers at once, each keeping to its node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_spreads_over_namespaces_on_different_nodes() {
    let Some(cluster) = RedisCluster::for_tests(false) else { return };
    let mut by_owner: BTreeMap<u16, String> = BTreeMap::new();
    for i in 0..32 {
        let ns = format!("spread-{i}");
        let port = owner(&cluster, &ns).await;
        by_owner.entry(port).or_insert(ns);
        if by_owner.len() == 2 {
            break;
        }
    }
    let spread: Vec<(u16, String)> = by_owner.into_iter().collect();
    assert_eq!(spread.len(), 2, "32 namespaces all on one node of three: {spread:?}");
    let url = cluster.url();
    let mut workers = Vec::new();
    for (_, ns) in &spread {
        let store = RedisStore::open(&with_namespace(&url, ns)).await.expect("open");
        for i in 0..60u64 {
            store.push(sample_record(&format!("{ns}-r{i:02}"), i)).await.expect("push");
        }
        for _ in 0..2 {
            let worker = RedisStore::open(&with_namespace(&url, ns)).await.expect("open");
            let ns = ns.clone();
            workers.push(tokio::spawn(async move {
                let mut done = Vec::new();
                loop {
                    let batch = worker.receive(&Filter::all(), 4, Duration::from_secs(60), at(100_000)).await;
                    let batch = batch.expect("receive");
                    if batch.is_empty() {
                        return (ns, done);
                    }
                    let tokens: Vec<_> = batch.iter().map(|l| l.token.clone()).collect();
                    for result in worker.complete_many(&tokens, at(100_001)).await {
                        result.expect("complete");
                    }
                    done.extend(batch.into_iter().map(|l| l.record.id));
                }
            }));
        }
    }
    let mut done: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for w in workers {
        let (ns, ids) = w.await.expect("worker");
        done.entry(ns).or_default().extend(ids);
    }
    for (port, ns) in &spread {
        let ids = done.remove(ns).unwrap_or_default();
        let distinct: BTreeSet<&String> = ids.iter().collect();
        assert_eq!((ids.len(), distinct.len()), (60, 60), "{ns}: each record completed once");
        assert!(ids.iter().all(|id| id.starts_with(ns.as_str())), "{ns} got another namespace's record");
        let store = RedisStore::open(&with_namespace(&url, ns)).await.expect("open");
        let stats = store.stats(at(100_002)).await.expect("stats");
        assert_eq!((stats.total, stats.completed), (0, 60), "{ns}");
        let keys = keys_by_node(&cluster).await;
        let tag = format!("{{dlq:{ns}}}");
        for (node, held) in &keys {
            let mine = held.iter().filter(|k| k.starts_with(&tag)).count();
            assert_eq!(mine > 0, node == port, "{ns}'s keys on node {node}: {held:?}");
        }
    }

    // One server's URL for a cluster node that does not hold the namespace's slot.
    let (held_by, ns) = &spread[0];
    let other = cluster.ports().into_iter().find(|p| p != held_by).unwrap_or_default();
    let msg = refused(&with_namespace(&cluster.node_url(other), ns)).await;
    assert!(msg.contains("node of a Redis Cluster") && msg.contains("redis+cluster://"), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_an_acl_user_runs_the_suite_and_a_fleet() {
    let Some(server) = RedisServer::tls_acl_for_tests() else { return };
    let ca = server.ca().expect("a TLS server");
    conformance_suite(&server.url()).await;
    ledger_suite(&server.url()).await;
    let mut side = redis::Client::build_with_tls(
        format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{}/", server.port()),
        certificates(ca),
    )
    .expect("client")
    .get_multiplexed_async_connection()
    .await
    .expect("side connection");
    fleet_drains_one_namespace(&server.url(), &mut side).await;

    // Through the options' reader, as `--dlq` is.
    let store = captcha_dlq::open_store(&with_namespace(&server.url(), "fleet")).await.expect("open_store");
    assert_eq!(store.count(&Filter::all(), at(100_000)).await.expect("count"), 120);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_and_acl_mistakes_are_named_without_the_password() {
    let Some(server) = RedisServer::tls_acl_for_tests() else { return };
    let ca = server.ca().expect("a TLS server");
    let port = server.port();
    let ca_query = query_value;
    let good_ca = ca_query(&ca.ca);

    let wrong_pw = refused(&format!("rediss://{ACL_USER}:wrong-pw@127.0.0.1:{port}/?ca={good_ca}")).await;
    assert!(wrong_pw.contains("refused the user and password"), "{wrong_pw}");
    assert!(wrong_pw.contains(&format!("rediss://127.0.0.1:{port}/")), "the error names the server: {wrong_pw}");
    // The default user is off: no user at all is refused the same way.
    let anonymous = refused(&format!("rediss://127.0.0.1:{port}/?ca={good_ca}")).await;
    assert!(anonymous.contains("refused the user and password"), "{anonymous}");

    let other_ca = TestCa::self_signed(server.scratch_dir(), "other-ca").expect("another CA");
    let wrong_ca =
        refused(&format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{port}/?ca={}", ca_query(&other_ca))).await;
    assert!(wrong_ca.contains("not trusted by the CA file") && wrong_ca.contains("other-ca.pem"), "{wrong_ca}");
    let system = refused(&format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{port}/")).await;
    assert!(system.contains("system's CAs") && system.contains("ca=FILE"), "{system}");

    let missing = server.scratch_dir().join("no-such-ca.pem");
    let msg = refused(&format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{port}/?ca={}", ca_query(&missing))).await;
    assert!(msg.contains("no-such-ca.pem") && msg.contains("cannot be read"), "{msg}");
    let msg =
        refused(&format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{port}/?ca={}", ca_query(&ca.server_key))).await;
    assert!(msg.contains("server.key") && msg.contains("no PEM certificate"), "{msg}");
    let garbled = server.scratch_dir().join("garbled.pem");
    std::fs::write(&garbled, "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
        .expect("write");
    let msg = refused(&format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{port}/?ca={}", ca_query(&garbled))).await;
    assert!(msg.contains("garbled.pem") && msg.contains("is refused"), "{msg}");

    let msg = refused(&format!("rediss://{ACL_USER}:{ACL_PASSWORD}@127.0.0.1:{port}/?ca={good_ca}&tls=yes")).await;
    assert!(msg.contains("unknown parameter \"tls\""), "{msg}");
}

/// An ACL user on a plain server: the URL's user and password are used, a user without the
/// rights the store needs is told so, and a cluster's URL for this lone server is refused.
#[tokio::test]
async fn acl_users_on_one_server() {
    let Some(server) = RedisServer::for_tests() else { return };
    let mut side =
        redis::Client::open(server.url()).expect("client").get_multiplexed_async_connection().await.expect("side");
    for (user, rights) in [("worker", "+@all"), ("reader", "+@read")] {
        let _: () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(user)
            .arg("on")
            .arg(format!(">{ACL_PASSWORD}"))
            .arg("~*")
            .arg("&*")
            .arg(rights)
            .query_async(&mut side)
            .await
            .expect("ACL SETUSER");
    }
    let port = server.port();
    let store = RedisStore::open(&format!("redis://worker:{ACL_PASSWORD}@127.0.0.1:{port}/?namespace=acl"))
        .await
        .expect("the ACL user opens the store");
    store.push(sample_record("r1", 0)).await.expect("push");
    let clients: String = redis::cmd("CLIENT").arg("LIST").query_async(&mut side).await.expect("CLIENT LIST");
    assert!(clients.contains("user=worker"), "the store is connected as the URL's user: {clients}");
    let keys: Vec<String> = redis::cmd("KEYS").arg("{dlq:acl}:*").query_async(&mut side).await.expect("KEYS");
    assert!(keys.contains(&"{dlq:acl}:body".to_string()), "{keys:?}");

    let msg = refused(&format!("redis://worker:wrong-pw@127.0.0.1:{port}/")).await;
    assert!(msg.contains("refused the user and password"), "{msg}");
    let msg = refused(&format!("redis://reader:{ACL_PASSWORD}@127.0.0.1:{port}/")).await;
    assert!(msg.contains("may not run what the store needs") && msg.contains("xgroup"), "{msg}");
    let msg = refused(&format!("redis+cluster://127.0.0.1:{port}")).await;
    assert!(msg.contains("not part of a Redis Cluster") && msg.contains("redis://"), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_with_tls_and_an_acl_user_runs_the_suite_and_a_fleet() {
    let Some(cluster) = RedisCluster::for_tests(true) else { return };
    assert!(cluster.url().starts_with("rediss+cluster://"));
    conformance_suite(&cluster.url()).await;
    ledger_suite(&cluster.url()).await;
    fleet_drains_one_namespace(&cluster.url(), &mut cluster_side(&cluster).await).await;
    let msg = refused(&cluster.url().replace(ACL_PASSWORD, "wrong-pw")).await;
    assert!(msg.contains("refused the user and password"), "{msg}");
    let ca = cluster.ca().expect("a TLS cluster");
    let other_ca = TestCa::self_signed(cluster.scratch_dir(), "other-ca").expect("another CA");
    let msg = refused(&cluster.url().replace(&query_value(&ca.ca), &query_value(&other_ca))).await;
    assert!(msg.contains("not trusted by the CA file") && msg.contains("other-ca.pem"), "{msg}");
}
