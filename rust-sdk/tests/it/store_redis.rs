//! RedisStore against a real `redis-server`: the shared conformance suite,
//! several workers receiving at once, the stream's pending-entries list as
//! the lease ledger, receive walking far into the age order, peek/count/purge
//! and eviction paging through a large namespace, persistence
//! across connections, clear errors, batched writes (and `complete_many`), settled keys in pages,
//! namespaces written before settled keys and before URLs named namespaces. TLS, ACL users and
//! clusters: `store_redis_deployments.rs`.

use crate::support;
use std::collections::BTreeSet;
use std::time::Duration;

use captcha_dlq::store::{LimitedStore, RedisStore};
use captcha_dlq_core::class::reason;
use captcha_dlq_core::dlq::memory::MemoryStore;
use captcha_dlq_core::dlq::rule_cases::{run_rule_cases, store_case_count};
use captcha_dlq_core::dlq::testkit::{at, run_store_suite, sample_journal_entry, sample_record, CASES};
use captcha_dlq_core::dlq::{DlqStore, Filter, Leased, Page, RecordState, Settlement, StoreError};
use captcha_dlq_mock::redis_server::RedisServer;

const LEASE: Duration = Duration::from_secs(30);

async fn connect(server: &RedisServer, ns: &str) -> RedisStore {
    RedisStore::connect(&server.url(), ns).await.expect("connect to the test redis-server")
}

/// A connection of the test's own to the server, beside the store's.
async fn side_connection(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(server.url()).expect("client");
    client.get_multiplexed_async_connection().await.expect("connection")
}

/// (entry id, consumer, idle ms, deliveries) of every pending entry of `store`'s stream.
async fn pending(server: &RedisServer, store: &RedisStore) -> Vec<(String, String, u64, u64)> {
    let mut conn = side_connection(server).await;
    redis::cmd("XPENDING")
        .arg(store.stream_key())
        .arg("dlq")
        .arg("-")
        .arg("+")
        .arg(10_000)
        .query_async(&mut conn)
        .await
        .expect("XPENDING")
}

#[tokio::test]
async fn conformance_suite() {
    let Some(server) = RedisServer::for_tests() else { return };
    let mut n = 0;
    let ran = run_store_suite(|| {
        n += 1;
        let ns = format!("suite-{n}");
        let url = server.url();
        async move { RedisStore::connect(&url, &ns).await.expect("connect") }
    })
    .await;
    assert_eq!(ran, CASES.len());
}

/// The store rules' case table (`dlq::rules::cases`) against the Lua scripts on a real server:
/// each case in a namespace of its own, with the delivery limit it names.
#[tokio::test]
async fn the_lua_scripts_answer_the_rules_case_table() {
    let Some(server) = RedisServer::for_tests() else { return };
    let mut n = 0;
    let ran = run_rule_cases(|max| {
        n += 1;
        let ns = format!("rules-{n}");
        let url = server.url();
        async move {
            let store = RedisStore::connect(&url, &ns).await.expect("connect");
            store.with_max_deliveries(max).expect("a limit of at least 1")
        }
    })
    .await;
    assert_eq!(ran, store_case_count());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_workers_never_lease_the_same_record() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "fleet").await;
    let mut workers = Vec::new();
    for _ in 0..4 {
        workers.push(connect(&server, "fleet").await);
    }
    support::drain_at_once(&store, workers).await;
    let stats = store.stats(at(100_000)).await.expect("stats");
    assert_eq!((stats.total, stats.leased), (120, 120));
    assert_eq!(pending(&server, &store).await.len(), 120, "every lease is a pending entry");
}

#[tokio::test]
async fn pending_entries_list_tracks_holder_and_deliveries() {
    let Some(server) = RedisServer::for_tests() else { return };
    let a = connect(&server, "pel").await;
    let b = connect(&server, "pel").await;
    assert_ne!(a.consumer(), b.consumer(), "each connection is its own consumer");
    a.push(sample_record("r1", 0)).await.expect("push");
    assert!(pending(&server, &a).await.is_empty(), "a ready record is not pending");

    let first = a.receive(&Filter::all(), 1, LEASE, at(60)).await.expect("receive");
    let pel = pending(&server, &a).await;
    assert_eq!(pel.len(), 1);
    assert_eq!((pel[0].1.as_str(), pel[0].3), (a.consumer(), 1));

    // a's lease expires unsettled; b takes it over and the entry moves to b.
    let second = b.receive(&Filter::all(), 1, LEASE, at(120)).await.expect("receive");
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].record.deliveries, 2);
    let pel = pending(&server, &a).await;
    assert_eq!(pel.len(), 1);
    assert_eq!((pel[0].1.as_str(), pel[0].3), (b.consumer(), 2));
    assert!(matches!(a.complete(&first[0].token, at(121)).await, Err(StoreError::LeaseLost { .. })));

    assert_eq!(b.abandon(&second[0].token, None, at(122)).await.expect("abandon"), RecordState::Ready);
    assert!(pending(&server, &a).await.is_empty(), "abandon acknowledges the entry");
    let third = a.receive(&Filter::all(), 1, LEASE, at(130)).await.expect("receive");
    a.complete(&third[0].token, at(131)).await.expect("complete");
    assert!(pending(&server, &a).await.is_empty(), "complete acknowledges the entry");
    let mut conn = side_connection(&server).await;
    let len: u64 = redis::cmd("XLEN").arg(a.stream_key()).query_async(&mut conn).await.expect("XLEN");
    assert_eq!(len, 0, "complete deletes the stream entry");
    let stats = a.stats(at(132)).await.expect("stats");
    assert_eq!((stats.total, stats.completed, stats.abandoned), (0, 1, 2));
}

fn ids_of(leased: &[Leased]) -> Vec<&str> {
    leased.iter().map(|l| l.record.id.as_str()).collect()
}

fn only_ids(ids: &[&str]) -> Filter {
    Filter { ids: ids.iter().map(|id| id.to_string()).collect(), ..Filter::default() }
}

/// Receive with no filter leases while it walks the age order: past more live leases and
/// parked records than one script call inspects, taking over expired leases and parking a
/// record at its delivery limit on the way, oldest first.
#[tokio::test]
async fn receive_walks_past_live_leases_and_parked_records() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "walk").await.with_max_deliveries(2).expect("max deliveries");
    let name = |i: usize| format!("r{i:04}");
    for i in 0..1300 {
        store.push(sample_record(&name(i), i as u64)).await.expect("push");
    }
    let t0 = at(200_000);
    let short = Duration::from_secs(30);
    // r1102 leased once, r1103 twice (its limit); both leases end long before t1.
    assert_eq!(ids_of(&store.receive(&only_ids(&["r1102"]), 5, short, t0).await.expect("receive")), ["r1102"]);
    for t in [t0, t0.add(short)] {
        let got = store.receive(&only_ids(&["r1103"]), 5, short, t).await.expect("receive");
        assert_eq!(ids_of(&got), ["r1103"]);
    }
    // The 1,100 oldest, in one receive larger than what one script call inspects.
    let hour = Duration::from_secs(3600);
    let first = store.receive(&Filter::all(), 1100, hour, t0).await.expect("receive");
    let want: Vec<String> = (0..1100).map(name).collect();
    assert_eq!(ids_of(&first), want.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(first.iter().all(|l| l.record.deliveries == 1 && l.record.state == RecordState::Leased));
    assert!(store.park("r1100", "NeedsReview", t0).await.expect("park"));

    let t1 = t0.add(Duration::from_secs(1000));
    let next = store.receive(&Filter::all(), 3, hour, t1).await.expect("receive");
    assert_eq!(ids_of(&next), ["r1101", "r1102", "r1104"], "oldest ready or expired, past 1,100 live leases");
    assert_eq!(next.iter().map(|l| l.record.deliveries).collect::<Vec<_>>(), [1, 2, 1]);
    let r1103 = store.peek(&only_ids(&["r1103"]), Page::default(), t1).await.expect("peek");
    assert_eq!(r1103[0].state, RecordState::Parked, "a record at its delivery limit is parked, not received");
    assert_eq!(r1103[0].parked_reason.as_deref(), Some(reason::MAX_DELIVERY_COUNT_EXCEEDED));

    let stats = store.stats(t1).await.expect("stats");
    assert_eq!((stats.total, stats.ready, stats.leased, stats.parked), (1300, 195, 1103, 2));
    assert_eq!(stats.oldest_dead_lettered_at, Some(sample_record("r0000", 0).dead_lettered_at));
    assert_eq!(stats.abandoned, 3, "each expired lease taken over counts as abandoned (r1103 twice)");
    let parked = Filter { states: vec![RecordState::Parked], ..Filter::default() };
    assert_eq!(store.count(&parked, t1).await.expect("count"), 2);
    let mine = Filter { states: vec![RecordState::Leased, RecordState::Parked], ..Filter::default() };
    assert_eq!(store.count(&mine, t1).await.expect("count"), 1105);
    assert_eq!(store.count(&Filter::all(), t1).await.expect("count"), 1300);

    let rest = store.receive(&Filter::all(), 1000, hour, t1).await.expect("receive");
    let want: Vec<String> = (1105..1300).map(name).collect();
    assert_eq!(ids_of(&rest), want.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(store.receive(&Filter::all(), 10, hour, t1).await.expect("receive").is_empty());
}

/// A filtered receive finds the few matching records behind many older ones that do not
/// match, skips those parked or under a live lease, and hands them out oldest first (equal
/// times ordered by id), `max` at a time.
#[tokio::test]
async fn filtered_receive_finds_matches_deep_in_the_age_order() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "deep").await;
    let deep = |id: &str, minutes: u64| {
        let mut r = sample_record(id, minutes);
        r.labels.insert("job".into(), "deep".into());
        r
    };
    for i in 0..1000u64 {
        let id = format!("r{i:04}");
        let record = if [700, 703, 705, 706, 990].contains(&i) { deep(&id, i) } else { sample_record(&id, i) };
        store.push(record).await.expect("push");
    }
    for id in ["z-eq", "a-eq", "A-eq"] {
        store.push(deep(id, 995)).await.expect("push");
    }
    let filter = Filter { labels: [("job".to_string(), "deep".to_string())].into(), ..Filter::default() };
    let t0 = at(100_000);
    let short = Duration::from_secs(30);
    assert!(store.park("r0703", "NeedsReview", t0).await.expect("park"));
    let ids = |ids: &[&str]| Filter { ids: ids.iter().map(|id| id.to_string()).collect(), ..filter.clone() };
    // By id: only those present and matching, oldest first, each once.
    let by_id = ids(&["z-eq", "r0001", "A-eq", "missing", "r0001", "z-eq", "r0705", "r0706"]);
    let got = store.receive(&by_id, 10, short, t0).await.expect("receive");
    assert_eq!(ids_of(&got), ["r0705", "r0706", "A-eq", "z-eq"]);
    for l in got.iter().filter(|l| l.record.id != "r0705" && l.record.id != "r0706") {
        assert_eq!(store.abandon(&l.token, None, t0).await.expect("abandon"), RecordState::Ready);
    }
    // r0705's lease is renewed past t1; r0706's ends before it.
    let renewed = store.receive(&ids(&["r0705"]), 1, Duration::from_secs(3600), t0.add(short)).await;
    assert_eq!(ids_of(&renewed.expect("receive")), ["r0705"]);

    let t1 = t0.add(Duration::from_secs(600));
    let first = store.receive(&filter, 2, LEASE, t1).await.expect("receive");
    assert_eq!(ids_of(&first), ["r0700", "r0706"]);
    assert_eq!(first[1].record.deliveries, 2, "the expired lease was taken over");
    let rest = store.receive(&filter, 10, LEASE, t1).await.expect("receive");
    assert_eq!(ids_of(&rest), ["r0990", "A-eq", "a-eq", "z-eq"]);
    assert_eq!(rest.iter().map(|l| l.record.deliveries).collect::<Vec<_>>(), [1, 2, 1, 2]);
    assert!(store.receive(&filter, 10, LEASE, t1).await.expect("receive").is_empty());
    // Everything else is still ready, oldest first.
    let others = store.receive(&Filter::all(), 3, LEASE, t1).await.expect("receive");
    assert_eq!(ids_of(&others), ["r0000", "r0001", "r0002"]);
}

/// Workers draining by filter while the others complete records under their walks (so a
/// walk's cursor record may vanish): every match is handed out once, the rest stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_filtered_drains_complete_every_match_once() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "drain").await;
    for i in 0..600u64 {
        // Ten records per minute, so walks resume among equal times; every third matches.
        let mut record = sample_record(&format!("r{:03}", (i * 7) % 600), i / 10);
        if i % 3 == 0 {
            record.labels.insert("pick".into(), "yes".into());
        }
        store.push(record).await.expect("push");
    }
    let filter = Filter { labels: [("pick".to_string(), "yes".to_string())].into(), ..Filter::default() };
    let mut workers = Vec::new();
    for _ in 0..4 {
        let worker = connect(&server, "drain").await;
        let filter = filter.clone();
        workers.push(tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                let batch = worker.receive(&filter, 4, LEASE, at(100_000)).await.expect("receive");
                if batch.is_empty() {
                    return got;
                }
                for l in batch {
                    worker.complete(&l.token, at(100_000)).await.expect("complete");
                    got.push(l.record.id);
                }
            }
        }));
    }
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.await.expect("worker"));
    }
    let distinct: BTreeSet<String> = all.iter().cloned().collect();
    assert_eq!((all.len(), distinct.len()), (200, 200), "each match completed exactly once");
    assert_eq!(store.count(&filter, at(100_000)).await.expect("count"), 0);
    assert_eq!(store.count(&Filter::all(), at(100_000)).await.expect("count"), 400);
}

#[tokio::test]
async fn data_survives_reconnect_and_namespaces_are_separate() {
    let Some(server) = RedisServer::for_tests() else { return };
    {
        let store = connect(&server, "persist").await;
        store.push(sample_record("r1", 0)).await.expect("push");
        store.journal_upsert(&sample_journal_entry("j1", 1)).await.expect("journal");
        assert!(store.park("r1", "NeedsReview", at(10)).await.expect("park"));
    }
    let other = connect(&server, "someone-else").await;
    assert_eq!(other.count(&Filter::all(), at(20)).await.expect("count"), 0);
    assert!(other.journal_entries().await.expect("journal").is_empty());
    let again = connect(&server, "persist").await;
    let all = again.peek(&Filter::all(), Page::default(), at(20)).await.expect("peek");
    let want = sample_record("r1", 0);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].state, RecordState::Parked);
    assert_eq!(all[0].parked_reason.as_deref(), Some("NeedsReview"));
    assert_eq!((&all[0].history, &all[0].labels, &all[0].task), (&want.history, &want.labels, &want.task));
    assert_eq!(again.journal_entries().await.expect("journal"), vec![sample_journal_entry("j1", 1)]);
}

#[tokio::test]
async fn capacity_evicts_oldest_ready_and_counts_it() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "bounded").await.with_capacity(3).expect("capacity");
    for i in 0..3 {
        assert!(store.push(sample_record(&format!("r{i}"), i)).await.expect("push").evicted.is_empty());
    }
    let now = at(600);
    let leased = store.receive(&Filter::all(), 1, LEASE, now).await.expect("receive");
    assert_eq!(leased[0].record.id, "r0");
    assert!(store.park("r1", "x", now).await.expect("park"));
    assert_eq!(store.push(sample_record("r3", 3)).await.expect("push").evicted, ["r2"]);
    assert_eq!(store.push(sample_record("r4", 4)).await.expect("push").evicted, ["r3"]);
    let stats = store.stats(now).await.expect("stats");
    assert_eq!((stats.total, stats.dropped), (3, 2));
}

/// `peek`, `count` and `purge` read the namespace a page at a time: with more records than
/// several pages, mixed states and a filter, they agree with the memory store given the same
/// operations, and `purge` leaves live leases alone.
#[tokio::test]
async fn peek_count_and_purge_page_through_a_large_namespace() {
    let Some(server) = RedisServer::for_tests() else { return };
    let redis = connect(&server, "pages").await;
    let memory = MemoryStore::new();
    let tagged = |i: u64| {
        let mut r = sample_record(&format!("r{i:04}"), i);
        if i % 3 == 0 {
            r.labels.insert("job".into(), "x".into());
        }
        r
    };
    for i in 0..700u64 {
        redis.push(tagged(i)).await.expect("push");
        memory.push(tagged(i)).await.expect("push");
    }
    let t0 = at(100_000);
    let stores: [&dyn DlqStore; 2] = [&redis, &memory];
    for store in stores {
        for i in (0..700u64).step_by(7) {
            assert!(store.park(&format!("r{i:04}"), "NeedsReview", t0).await.expect("park"));
        }
        let leased = store.receive(&only_ids(&["r0300", "r0302", "r0303", "r0600"]), 4, LEASE, t0).await;
        assert_eq!(leased.expect("receive").len(), 4);
    }
    let job = Filter { labels: [("job".to_string(), "x".to_string())].into(), ..Filter::default() };
    let filters = [
        Filter::all(),
        job.clone(),
        Filter { states: vec![RecordState::Parked], ..job.clone() },
        Filter { states: vec![RecordState::Leased, RecordState::Ready], ..job.clone() },
        Filter {
            ids: vec!["r0690".into(), "r0003".into(), "r0300".into(), "r0302".into(), "nope".into()],
            ..job.clone()
        },
    ];
    for filter in &filters {
        assert_eq!(redis.count(filter, t0).await.expect("count"), memory.count(filter, t0).await.expect("count"));
        for page in [Page { offset: 0, limit: 10 }, Page { offset: 250, limit: 40 }, Page { offset: 0, limit: 1000 }] {
            let got = redis.peek(filter, page, t0).await.expect("peek");
            assert_eq!(got, memory.peek(filter, page, t0).await.expect("peek"), "{filter:?} {page:?}");
        }
    }
    assert_eq!(redis.count(&job, t0).await.expect("count"), 234, "700 records, every third tagged");
    let deep = redis.peek(&job, Page { offset: 200, limit: 3 }, t0).await.expect("peek");
    assert_eq!(deep.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["r0600", "r0603", "r0606"]);
    assert_eq!(deep[0].state, RecordState::Leased);
    assert_eq!(deep[2].state, RecordState::Ready);

    let purged = redis.purge(&job, t0).await.expect("purge");
    assert_eq!(purged, memory.purge(&job, t0).await.expect("purge"));
    assert_eq!(purged, 234 - 3, "the three tagged live leases stay");
    let left = redis.peek(&job, Page::default(), t0).await.expect("peek");
    assert_eq!(left.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["r0300", "r0303", "r0600"]);
    assert_eq!(redis.count(&Filter::all(), t0).await.expect("count"), 700 - 231);
}

/// A capacity evicts the oldest ready records even when more than a page of parked and leased
/// records lie in front of them.
#[tokio::test]
async fn capacity_evicts_past_a_page_of_parked_and_leased_records() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "bounded-deep").await.with_capacity(300).expect("capacity");
    for i in 0..300u64 {
        store.push(sample_record(&format!("r{i:03}"), i)).await.expect("push");
    }
    let now = at(100_000);
    for i in 0..150u64 {
        assert!(store.park(&format!("r{i:03}"), "NeedsReview", now).await.expect("park"));
    }
    let leased = store.receive(&Filter::all(), 10, LEASE, now).await.expect("receive");
    assert_eq!(leased.first().map(|l| l.record.id.as_str()), Some("r150"));
    let outcome = store.push(sample_record("new", 400)).await.expect("push");
    assert_eq!(outcome.evicted, ["r160"], "the oldest ready record, past 150 parked and 10 leased");
    let mut evicted = Vec::new();
    for i in 0..3 {
        evicted.extend(store.push(sample_record(&format!("new{i}"), 401 + i)).await.expect("push").evicted);
    }
    assert_eq!(evicted, ["r161", "r162", "r163"]);
    let stats = store.stats(now).await.expect("stats");
    assert_eq!((stats.total, stats.parked, stats.dropped), (300, 150, 4));
}

#[tokio::test]
async fn foreign_key_types_are_reported_as_corrupt() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "clash").await;
    let mut conn = side_connection(&server).await;
    let _: () = redis::cmd("SET").arg("{dlq:clash}:body").arg("not a hash").query_async(&mut conn).await.expect("SET");
    match store.push(sample_record("r1", 0)).await {
        Err(StoreError::Corrupt { location, problem }) => {
            assert!(location.contains("clash"), "location names the namespace: {location}");
            assert!(problem.contains("WRONGTYPE"), "{problem}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[tokio::test]
async fn bad_settings_give_clear_errors_without_the_password() {
    let Some(server) = RedisServer::for_tests() else { return };
    // Settings that waiting does not fix are not transient: opening the store is not retried.
    for ns in ["", "a{b}", "with space"] {
        match RedisStore::connect(&server.url(), ns).await {
            Err(e @ StoreError::Unusable { .. }) => assert!(e.to_string().contains("namespace") && !e.is_transient()),
            other => panic!("namespace {ns:?}: expected an error, got {other:?}"),
        }
    }
    for url in ["not a url", "redis://:s3cret-pw@[::1"] {
        match RedisStore::connect(url, "ns").await {
            Err(e @ StoreError::Unusable { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("not a valid URL") && !e.is_transient(), "{msg}");
                assert!(!msg.contains("s3cret-pw"), "the password leaked into: {msg}");
            }
            other => panic!("{url}: expected an invalid URL error, got {other:?}"),
        }
    }
    // The server has no password, so AUTH fails; the message must not repeat the secret.
    let url = format!("redis://:s3cret-pw@127.0.0.1:{}/", server.port());
    match RedisStore::connect(&url, "ns").await {
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains("s3cret-pw"), "the password leaked into: {msg}");
            assert!(msg.contains(&format!("127.0.0.1:{}", server.port())), "the error names the server: {msg}");
        }
        Ok(store) => panic!("AUTH against a server without a password should fail, got {store:?}"),
    }
}

/// Writes arriving together share script calls: every one lands, each gets its own answer
/// (a stale token among them loses its lease alone), and the batches are visible in the stats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_arriving_together_are_batched_and_answered_each() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "batched").await;
    let before = store.batch_stats();
    let mut tasks = Vec::new();
    for i in 0..200u64 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("task-{i:03}");
            let mut entry = sample_journal_entry(&id, 1);
            entry.key = Some(format!("key-{i:03}"));
            store.journal_upsert(&entry).await?;
            store.push(sample_record(&id, i)).await.map(drop)
        }));
    }
    for task in tasks {
        task.await.expect("task").expect("journal_upsert then push");
    }
    let after = store.batch_stats();
    assert_eq!(after.operations - before.operations, 400, "every call is one operation");
    assert!(after.round_trips - before.round_trips < 400, "no batching: {after:?}");
    let settled = store.settled("key-").await.expect("settled");
    assert_eq!(settled.len(), 200);
    assert!(store.journal_entries().await.expect("journal").is_empty());

    let leased = store.receive(&Filter::all(), 200, LEASE, at(100_000)).await.expect("receive");
    assert_eq!(leased.len(), 200);
    let stale = captcha_dlq_core::dlq::LeaseToken { id: "task-007".into(), nonce: "stale".into() };
    let mut completes = Vec::new();
    for token in leased.iter().map(|l| l.token.clone()).chain([stale]) {
        let store = store.clone();
        completes.push(tokio::spawn(async move { (token.nonce.clone(), store.complete(&token, at(100_001)).await) }));
    }
    for task in completes {
        match task.await.expect("task") {
            (nonce, Err(StoreError::LeaseLost { id })) if nonce == "stale" => assert_eq!(id, "task-007"),
            (nonce, result) if nonce != "stale" => result.expect("a valid token completes"),
            other => panic!("the stale token must lose its lease: {other:?}"),
        }
    }
    let stats = store.stats(at(100_002)).await.expect("stats");
    assert_eq!((stats.total, stats.completed), (0, 200));
}

/// `complete_many` batches larger than one script call, several at once beside single calls:
/// each token gets its own answer (stale ones `LeaseLost`), and the completes of one call share
/// script calls instead of taking one each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn complete_many_answers_each_token_across_script_calls() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "complete-many").await;
    for i in 0..600 {
        store.push(sample_record(&format!("r{i:04}"), i)).await.expect("push");
    }
    let leased = store.receive(&Filter::all(), 600, LEASE, at(100_000)).await.expect("receive");
    assert_eq!(leased.len(), 600);
    let before = store.batch_stats();
    let mut calls = Vec::new();
    for (n, chunk) in leased.chunks(200).enumerate() {
        // Every 50th token of each call is stale; each call is 200 tokens (more than one script call).
        let tokens: Vec<_> = chunk
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mut token = l.token.clone();
                if i % 50 == 7 {
                    token.nonce = format!("stale-{n}");
                }
                token
            })
            .collect();
        let completer = store.clone();
        calls.push(tokio::spawn(async move {
            let results = completer.complete_many(&tokens, at(100_001)).await;
            (tokens, results)
        }));
        let pusher = store.clone();
        calls.push(tokio::spawn(async move {
            let r = pusher.push(sample_record(&format!("extra-{n}"), 10_000 + n as u64)).await.map(drop);
            (Vec::new(), vec![r])
        }));
    }
    let mut completed = 0;
    for call in calls {
        let (tokens, results) = call.await.expect("task");
        if tokens.is_empty() {
            results.into_iter().for_each(|r| r.expect("a push beside the completes"));
            continue;
        }
        assert_eq!(results.len(), tokens.len(), "one result per token");
        for (token, result) in tokens.iter().zip(results) {
            match result {
                Err(StoreError::LeaseLost { id }) if token.nonce.starts_with("stale") => assert_eq!(id, token.id),
                Ok(()) if !token.nonce.starts_with("stale") => completed += 1,
                other => panic!("token {token:?}: unexpected {other:?}"),
            }
        }
    }
    assert_eq!(completed, 600 - 12);
    let after = store.batch_stats();
    assert_eq!(after.operations - before.operations, 603, "600 completes and 3 pushes");
    assert!(after.round_trips - before.round_trips <= 9, "completes were not sent together: {after:?}");
    let stats = store.stats(at(100_002)).await.expect("stats");
    assert_eq!((stats.total, stats.completed, stats.leased), (12 + 3, 588, 12));
}

/// A server that goes away fails every call of the batch in flight with a transient error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_server_fails_every_batched_call_transiently() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "gone").await;
    store.push(sample_record("before", 0)).await.expect("push while up");
    drop(server);
    for pushed in support::push_at_once(&store, 20).await {
        match pushed {
            Err(e @ StoreError::Backend(_)) => {
                assert!(e.is_transient(), "{e}");
                assert!(e.to_string().contains("namespace gone"), "the error names the store: {e}");
            }
            other => panic!("a push to a stopped server must fail, got {other:?}"),
        }
    }
    let tokens: Vec<_> =
        (0..3).map(|i| captcha_dlq_core::dlq::LeaseToken { id: format!("r{i}"), nonce: "n".into() }).collect();
    let results = store.complete_many(&tokens, at(1)).await;
    assert_eq!(results.len(), 3, "each token is answered");
    for result in results {
        assert!(matches!(&result, Err(e @ StoreError::Backend(_)) if e.is_transient()), "{result:?}");
    }
}

#[tokio::test]
async fn settled_keys_page_by_prefix_in_key_order() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "settled").await;
    // More keys than one page, two prefixes, and a key that sorts right after the prefix range.
    let mut wanted = Vec::new();
    for i in 0..2_500u64 {
        let prefix = if i % 2 == 0 { "batch-a/" } else { "batch-b/" };
        let mut entry = sample_journal_entry(&format!("id-{i:05}"), 1);
        entry.key = Some(format!("{prefix}{i:05}"));
        if i % 2 == 0 {
            wanted.push(entry.key.clone().unwrap_or_default());
        }
        store.journal_upsert(&entry).await.expect("upsert");
        store.journal_forget(&entry.id, at(i)).await.expect("forget");
    }
    let mut edge = sample_journal_entry("edge", 1);
    edge.key = Some("batch-a0".into());
    store.journal_upsert(&edge).await.expect("upsert");
    store.push(sample_record("edge", 3)).await.expect("push settles as dead-lettered");
    let got = store.settled("batch-a/").await.expect("settled");
    assert_eq!(got.iter().map(|s| s.key.clone()).collect::<Vec<_>>(), wanted, "prefix, key order, every page");
    assert_eq!((got[1].id.as_str(), got[1].at), ("id-00002", at(2)));
    let all = store.settled("").await.expect("all");
    assert_eq!(all.len(), 2_501);
    assert_eq!(all.last().map(|s| (s.key.as_str(), s.outcome)), Some(("batch-b/02499", Settlement::Solved)));
    assert_eq!(store.clear_settled("batch-a/").await.expect("clear"), 1_250);
    let left = store.settled("batch-a").await.expect("settled");
    assert_eq!(left.len(), 1);
    assert_eq!((left[0].key.as_str(), left[0].outcome), ("batch-a0", Settlement::DeadLettered));
    assert_eq!(store.clear_settled("").await.expect("clear all"), 1_251);
}

/// A namespace written before settled keys (journal entries without `jkey`) keeps working:
/// its entries are removed as before and settle nothing.
#[tokio::test]
async fn a_namespace_from_before_settled_keys_keeps_working() {
    let Some(server) = RedisServer::for_tests() else { return };
    let mut conn = side_connection(&server).await;
    for id in ["old-a", "old-b"] {
        let json = serde_json::to_string(&sample_journal_entry(id, 1)).expect("json");
        let _: () =
            redis::cmd("HSET").arg("{dlq:old}:journal").arg(id).arg(json).query_async(&mut conn).await.expect("HSET");
    }
    let store = connect(&server, "old").await;
    assert_eq!(store.journal_entries().await.expect("journal").len(), 2);
    store.push(sample_record("old-a", 0)).await.expect("push");
    store.journal_forget("old-b", at(5)).await.expect("forget");
    assert!(store.journal_entries().await.expect("journal").is_empty());
    assert!(store.settled("").await.expect("settled").is_empty(), "unkeyed entries settle nothing");
    assert_eq!(store.count(&Filter::all(), at(10)).await.expect("count"), 1);
}

/// A namespace written before URLs named namespaces (`open_store` always used `captcha-dlq`)
/// opens as it is: its keys keep their names (pinned here: `{dlq:<namespace>}:<name>`, the hash
/// tag that keeps a namespace on one cluster slot), a URL without `namespace=` still opens it,
/// and one naming it opens the same records.
#[tokio::test]
async fn a_namespace_written_before_urls_named_one_opens_as_it_is() {
    let Some(server) = RedisServer::for_tests() else { return };
    {
        let old = connect(&server, captcha_dlq::open::DEFAULT_REDIS_NAMESPACE).await;
        old.push(sample_record("r1", 0)).await.expect("push");
        old.journal_upsert(&sample_journal_entry("j1", 1)).await.expect("journal");
    }
    let mut conn = side_connection(&server).await;
    let keys: BTreeSet<String> = redis::cmd("KEYS").arg("*").query_async(&mut conn).await.expect("KEYS");
    let want: BTreeSet<String> = ["age", "body", "deliv", "entry", "journal", "stream"]
        .iter()
        .map(|name| format!("{{dlq:captcha-dlq}}:{name}"))
        .collect();
    assert_eq!(keys, want, "the key names of every release so far");
    for url in [server.url(), format!("{}?namespace=captcha-dlq", server.url())] {
        let store = captcha_dlq::open_store(&url).await.expect("open_store");
        let records = store.peek(&Filter::all(), Page::default(), at(10)).await.expect("peek");
        assert_eq!(records.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["r1"], "{url}");
        assert_eq!(store.journal_entries().await.expect("journal"), vec![sample_journal_entry("j1", 1)]);
    }
    let other = captcha_dlq::open_store(&format!("{}?namespace=other", server.url())).await.expect("open_store");
    assert_eq!(other.count(&Filter::all(), at(10)).await.expect("count"), 0);
    // The namespace is given once: in the URL, or to `connect`.
    match RedisStore::connect(&format!("{}?namespace=a", server.url()), "b").await {
        Err(e @ StoreError::Unusable { .. }) => assert!(e.to_string().contains("give it once"), "{e}"),
        other => panic!("two namespaces: expected an error, got {other:?}"),
    }
    let same = RedisStore::connect(&format!("{}?namespace=other", server.url()), "other").await.expect("connect");
    assert_eq!(same.namespace(), "other");
}

/// A server that lost the store's scripts (restarted, `SCRIPT FLUSH`) gets them again: a call
/// going out alone (its operation's own script) and calls going out together (`APPLY`) both
/// reload what they run and succeed.
#[tokio::test]
async fn scripts_lost_by_the_server_are_loaded_again() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = connect(&server, "flushed").await;
    let mut conn = side_connection(&server).await;
    let flush = || redis::cmd("SCRIPT").arg("FLUSH").clone();
    let _: () = flush().query_async(&mut conn).await.expect("SCRIPT FLUSH");
    assert!(!store.push(sample_record("alone", 0)).await.expect("a lone push").replaced);
    let _: () = flush().query_async(&mut conn).await.expect("SCRIPT FLUSH");
    let before = store.batch_stats();
    let together = futures::future::join_all((0..50u64).map(|i| store.push(sample_record(&format!("r{i:02}"), i + 1))));
    for outcome in together.await {
        assert!(!outcome.expect("a push among many").replaced);
    }
    let after = store.batch_stats();
    assert!(after.round_trips - before.round_trips < 50, "the 50 pushes went together, through APPLY");
    assert_eq!(store.count(&Filter::all(), at(0)).await.expect("count"), 51);
}
