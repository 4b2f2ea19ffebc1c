//! The dashboard over HTTP, without a browser: security from outside (CSP,
//! CSRF, origins, loopback names, tokens, read-only, refusing a public bind),
//! paging, filters, purge confirmation, export, replays with cancel, the
//! fleet (its page, `/api/fleet` and its gauges), and the API key nowhere.

use crate::support;
use captcha_dlq::core::dlq::{Filter, RecordState};
use captcha_dlq::core::support::json_read::Casing;
use captcha_dlq::Client;
use captcha_dlq_dashboard::{DashboardConfig, DashboardOptions};
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::StatusCode;
use support::{csrf_of, http, memory_client, serve, API_KEY, TOKEN};

async fn get(url: &str) -> (StatusCode, HeaderMap, String) {
    let r = http().get(url).send().await.expect("GET");
    (r.status(), r.headers().clone(), r.text().await.expect("body"))
}

async fn post(url: &str, form: &[(&str, &str)], headers: &[(&str, &str)]) -> (StatusCode, String) {
    let mut request = http().post(url).form(form);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let r = request.send().await.expect("POST");
    (r.status(), r.text().await.expect("body"))
}

async fn count(client: &Client, filter: &Filter) -> u64 {
    client.dlq().count(filter).await.expect("count")
}

#[tokio::test]
async fn the_overview_shows_what_sites_accepted_by_provider_kind_and_host() {
    let client = memory_client(0).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let (_, _, page) = get(&dash.url()).await;
    assert!(!page.contains("Acceptance on pages"), "no section before any page outcome");
    let outcome = |verdict: &str| {
        serde_json::json!({
            "verdict": verdict,
            "task": { "type": "turnstile", "sitekey": "0x4AAAAAAA-k", "page_url": "https://shop.example/login" },
            "solution": { "text": "0.token", "provider": "captchaai" },
            "host": "shop.example",
        })
    };
    for verdict in ["accepted", "accepted", "rejected"] {
        client.dlq().record_page_outcome(outcome(verdict), Casing::Snake).await.expect("recorded");
    }
    let (_, _, page) = get(&dash.url()).await;
    assert!(page.contains("Acceptance on pages"), "{page}");
    let row = page
        .split("data-acceptance=\"captchaai turnstile shop.example\"")
        .nth(1)
        .expect("a row")
        .split("</tr>")
        .next()
        .unwrap();
    let cells: Vec<&str> = row.split("<td>").skip(1).map(|c| c.split("</td>").next().unwrap()).collect();
    assert_eq!(cells, ["captchaai", "turnstile", "shop.example", "2", "1", "67%"]);
    dash.shutdown().await;
}

#[tokio::test]
async fn responses_carry_a_nonced_csp_nosniff_and_no_store() {
    let client = memory_client(3).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let (status, headers, page) = get(&dash.url()).await;
    assert_eq!(status, StatusCode::OK);
    let csp = headers["content-security-policy"].to_str().unwrap().to_string();
    let nonce = csp.split("'nonce-").nth(1).unwrap().split('\'').next().unwrap().to_string();
    assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(page.contains(&format!("nonce=\"{nonce}\"")), "the page's script carries the header's nonce");
    assert!(!page.contains(" style=\"") && !page.contains("<script>"), "no inline style or script the CSP would block");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["cache-control"], "no-store");
    let (_, again, _) = get(&dash.url()).await;
    assert_ne!(again["content-security-policy"], headers["content-security-policy"], "a fresh nonce per response");
    // Refusals carry the headers too.
    let (status, refused) = post(&format!("{}actions/park", dash.url()), &[("id", "rec-00000")], &[]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    dash.shutdown().await;
}

#[tokio::test]
async fn a_post_without_the_right_csrf_token_or_from_another_origin_is_refused() {
    let client = memory_client(3).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let url = format!("{}actions/park", dash.url());
    let csrf = csrf_of(&get(&dash.url()).await.2);
    let (status, body) = post(&url, &[("id", "rec-00000")], &[]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body.contains("CSRF"), "{body}");
    let (status, _) = post(&url, &[("id", "rec-00000"), ("csrf", "forged")], &[]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = post(&url, &[("id", "rec-00000")], &[("x-csrf-token", "forged")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body) =
        post(&url, &[("id", "rec-00000"), ("csrf", &csrf)], &[("origin", "http://evil.example")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _) = post(&url, &[("id", "rec-00000"), ("csrf", &csrf)], &[("sec-fetch-site", "cross-site")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let parked = Filter { states: vec![RecordState::Parked], ..Filter::default() };
    assert_eq!(count(&client, &parked).await, 0, "nothing refused was done");
    let (status, _) = post(&url, &[("id", "rec-00000"), ("csrf", &csrf)], &[]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(count(&client, &parked).await, 1);
    dash.shutdown().await;
}

#[tokio::test]
async fn read_only_hides_and_refuses_every_action() {
    let client = memory_client(6).await;
    let dash = serve(&client, DashboardConfig { read_only: true, ..DashboardConfig::default() }).await;
    for path in ["", "records", "records/rec-00001", "groups", "journal", "fleet", "replays"] {
        let (status, _, page) = get(&format!("{}{path}", dash.url())).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(!page.contains("action=\"/actions"), "{path} shows an action form");
        assert!(page.contains("read-only"), "{path}");
    }
    let csrf = csrf_of(&get(&dash.url()).await.2);
    let forms: [(&str, Vec<(&str, &str)>); 7] = [
        ("actions/resume-accounts", vec![("provider", "captchaai")]),
        ("actions/park", vec![("id", "rec-00001")]),
        ("actions/unpark", vec![("id", "rec-00001")]),
        ("actions/purge", vec![("filter", ""), ("confirm", "purge")]),
        ("actions/replay", vec![("filter", "")]),
        ("actions/selected", vec![("id", "rec-00001"), ("action", "park")]),
        ("actions/recover", vec![("owner", "someone")]),
    ];
    for (path, mut fields) in forms {
        fields.push(("csrf", &csrf));
        let (status, body) = post(&format!("{}{path}", dash.url()), &fields, &[]).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
        assert!(body.contains("read-only"), "{body}");
    }
    assert_eq!(count(&client, &Filter::all()).await, 6, "nothing was purged");
    dash.shutdown().await;
}

#[tokio::test]
async fn a_public_address_without_a_long_token_refuses_to_start() {
    let client = memory_client(0).await;
    let public =
        DashboardOptions { listen: "0.0.0.0:0".parse().unwrap(), config: DashboardConfig::default(), tls: None };
    let refused = captcha_dlq_dashboard::serve(client.clone(), public.clone()).await.unwrap_err().to_string();
    assert!(refused.contains("refusing to listen on 0.0.0.0:0 without a token"), "{refused}");
    assert!(refused.contains("--token"), "it says what to do: {refused}");
    let mut short = public.clone();
    short.config.token = Some("short".into());
    let refused = captcha_dlq_dashboard::serve(client.clone(), short).await.unwrap_err().to_string();
    assert!(refused.contains("at least 16 characters"), "{refused}");
    let mut with_token = public;
    with_token.config.token = Some(TOKEN.into());
    with_token.validate().expect("a token makes a public address acceptable");
}

#[tokio::test]
async fn without_a_token_only_loopback_names_are_answered() {
    let client = memory_client(1).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let r = http().get(dash.url()).header("host", "evil.example").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "a rebinding name is refused");
    let r =
        http().get(dash.url()).header("host", format!("localhost:{}", dash.local_addr().port())).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    dash.shutdown().await;
}

/// Issue 44, finding 1: a host mounting the router with plain `axum::serve` records no
/// peer address; a remote client claiming `Host: 127.0.0.1` must not get in as an operator.
#[tokio::test]
async fn loopback_rule_is_not_skipped_when_the_peer_address_is_unknown() {
    let client = memory_client(1).await;
    let mount = |config| {
        let client = client.clone();
        async move {
            let app = captcha_dlq_dashboard::router(client, config).unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move { axum::serve(listener, app).await });
            addr
        }
    };
    let addr = mount(DashboardConfig::default()).await;
    for path in ["", "records", "metrics"] {
        let r = http().get(format!("http://{addr}/{path}")).header("host", "127.0.0.1").send().await.unwrap();
        assert_eq!(r.status(), StatusCode::INTERNAL_SERVER_ERROR, "{path}");
        let body = r.text().await.unwrap();
        assert!(body.contains("into_make_service_with_connect_info"), "the refusal names the fix: {body}");
    }
    let csrf_free = http().post(format!("http://{addr}/actions/purge")).header("host", "127.0.0.1").send().await;
    assert_eq!(csrf_free.unwrap().status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(count(&client, &Filter::default()).await, 1, "nothing was purged");
    let with_token = mount(DashboardConfig { token: Some(TOKEN.into()), ..DashboardConfig::default() }).await;
    let r = http().get(format!("http://{with_token}/metrics")).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "a token does not need the peer's address");
}

#[tokio::test]
async fn with_a_token_pages_need_a_login_or_a_bearer_header() {
    let client = memory_client(2).await;
    let config = DashboardConfig { token: Some(TOKEN.into()), ..DashboardConfig::default() };
    let dash = serve(&client, config).await;
    let r = http().get(dash.url()).header("accept", "text/html").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()["location"], "/login");
    let r = http().get(format!("{}metrics", dash.url())).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r =
        http().get(format!("{}metrics", dash.url())).bearer_auth("wrong-token-of-some-length").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = http().get(format!("{}metrics", dash.url())).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = http().get(format!("{}api/fleet", dash.url())).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "the fleet's data is behind the token too");
    let (_, _, login) = get(&format!("{}login", dash.url())).await;
    let csrf = csrf_of(&login);
    let (status, _) =
        post(&format!("{}login", dash.url()), &[("token", "wrong-token-of-some-length"), ("csrf", &csrf)], &[]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let r =
        http().post(format!("{}login", dash.url())).form(&[("token", TOKEN), ("csrf", &csrf)]).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(!cookie.contains(TOKEN), "the cookie is a session, not the token");
    let session = cookie.split(';').next().unwrap().to_string();
    let mut headers = HeaderMap::new();
    headers.insert("cookie", HeaderValue::from_str(&session).unwrap());
    let r = http().get(format!("{}records", dash.url())).headers(headers).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    dash.shutdown().await;
}

/// The record ids linked from a records page, in order.
fn linked_ids(page: &str) -> Vec<String> {
    page.split("class=\"record-link\" href=\"/records/")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_string())
        .collect()
}

fn link(page: &str, rel: &str) -> Option<String> {
    let marker = format!("\" rel=\"{rel}\"");
    let end = page.find(&marker)?;
    let start = page[..end].rfind("href=\"")? + 6;
    Some(page[start..end].replace("&amp;", "&"))
}

/// Follows "Next" from the first page to the last, then "Previous" once.
async fn walk_every_page(client: &Client, n: u64) {
    let dash = serve(client, DashboardConfig::default()).await;
    let root = dash.url().trim_end_matches('/').to_string();
    let mut url = format!("{root}/records?size=20");
    let mut seen = Vec::new();
    let mut pages = Vec::new();
    loop {
        let (status, _, page) = get(&url).await;
        assert_eq!(status, StatusCode::OK, "{url}");
        seen.extend(linked_ids(&page));
        pages.push((url.clone(), linked_ids(&page)));
        match link(&page, "next") {
            Some(next) => url = format!("{root}{next}"),
            None => break,
        }
    }
    let expected: Vec<String> = (0..n).map(|i| format!("rec-{i:05}")).collect();
    assert_eq!(seen, expected, "every record once, oldest first");
    let last = pages.len() - 1;
    assert_eq!(last as u64, n.div_ceil(20) - 1);
    // Previous from the last page is the page before it.
    let (_, _, page) = get(&pages[last].0).await;
    let previous = link(&page, "prev").expect("a previous link");
    let (_, _, page) = get(&format!("{root}{previous}")).await;
    assert_eq!(linked_ids(&page), pages[last - 1].1);
    dash.shutdown().await;
}

#[tokio::test]
async fn paging_walks_every_record_once_oldest_first_and_back() {
    // Three records per minute: pages end in the middle of a millisecond's records.
    walk_every_page(&memory_client(230).await, 230).await;
}

#[tokio::test]
async fn paging_walks_sqlite_and_redis_through_their_age_index() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = captcha_dlq::store::SqliteStore::open(dir.path().join("dlq.sqlite")).unwrap();
    walk_every_page(&support::client_over(std::sync::Arc::new(sqlite), 130).await, 130).await;
    if let Some(server) = captcha_dlq_mock::redis_server::RedisServer::for_tests() {
        let redis = captcha_dlq::store::RedisStore::connect(&server.url(), "paging").await.unwrap();
        walk_every_page(&support::client_over(std::sync::Arc::new(redis), 130).await, 130).await;
    }
}

#[tokio::test]
async fn filters_search_and_counts_select_the_right_records() {
    let client = memory_client(30).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let (_, _, page) = get(&format!("{}records?reason=Timeout&label=job%3Dx", dash.url())).await;
    let ids = linked_ids(&page);
    assert_eq!(ids, ["rec-00003", "rec-00009", "rec-00015", "rec-00021", "rec-00027"]);
    let counted: serde_json::Value =
        http().get(format!("{}api/count?reason=Timeout", dash.url())).send().await.unwrap().json().await.unwrap();
    assert_eq!(counted["count"], 15);
    let (_, _, page) = get(&format!("{}records?q=REC-0001", dash.url())).await;
    assert_eq!(linked_ids(&page).len(), 10, "text search is case-insensitive over ids");
    let (status, _, page) = get(&format!("{}records?reasn=Timeout", dash.url())).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(page.contains("reasn: unknown parameter"), "the bad parameter is named");
    let (status, _, page) = get(&format!("{}records/no-such-record", dash.url())).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("no record no-such-record"));
    dash.shutdown().await;
}

#[tokio::test]
async fn purge_needs_the_number_of_records_or_the_word_typed() {
    let client = memory_client(30).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let csrf = csrf_of(&get(&dash.url()).await.2);
    let url = format!("{}actions/purge", dash.url());
    let (status, body) = post(&url, &[("filter", "reason=Timeout"), ("confirm", "14"), ("csrf", &csrf)], &[]).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(body.contains("nothing purged: 15 records match"), "{body}");
    let (status, body) = post(&url, &[("filter", "reason=Timeout"), ("confirm", "15"), ("csrf", &csrf)], &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("Purged 15 of the 15 records"), "{body}");
    assert_eq!(count(&client, &Filter::all()).await, 15);
    let (status, body) = post(&url, &[("filter", "reasn=X"), ("confirm", "purge"), ("csrf", &csrf)], &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a misspelt filter never widens a purge: {body}");
    let (status, _) = post(&url, &[("id", "rec-00000"), ("confirm", "purge"), ("csrf", &csrf)], &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(count(&client, &Filter::all()).await, 14);
    let (status, body) = post(&url, &[("confirm", "purge"), ("csrf", &csrf), ("filtre", "")], &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("filtre: unknown form field"), "{body}");
    dash.shutdown().await;
}

#[tokio::test]
async fn exports_download_the_selection_as_json_or_jsonl() {
    let client = memory_client(12).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let r = http().get(format!("{}export?reason=Timeout&format=jsonl", dash.url())).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers()["content-disposition"].to_str().unwrap().starts_with("attachment"));
    let text = r.text().await.unwrap();
    assert_eq!(text.lines().count(), 6);
    let r = http().get(format!("{}export?format=json", dash.url())).send().await.unwrap();
    let records: Vec<serde_json::Value> = r.json().await.unwrap();
    assert_eq!(records.len(), 12);
    let r = http().get(format!("{}export?format=xml", dash.url())).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    dash.shutdown().await;
}

#[tokio::test]
async fn the_api_key_is_in_no_page_or_response() {
    let client = memory_client(5).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    for path in [
        "",
        "records",
        "records/rec-00001",
        "groups?by=provider",
        "journal",
        "fleet",
        "replays",
        "metrics",
        "api/summary",
        "api/balance",
        "api/fleet",
        "export?format=json",
        "records?reasn=bad",
    ] {
        let (_, headers, body) = get(&format!("{}{path}", dash.url())).await;
        assert!(!body.contains(API_KEY), "{path} shows the key");
        assert!(!format!("{headers:?}").contains(API_KEY), "{path}'s headers show the key");
    }
    dash.shutdown().await;
}

#[tokio::test]
async fn nested_under_a_path_its_links_and_cookies_follow_the_mount() {
    let client = memory_client(3).await;
    let dashboard = captcha_dlq_dashboard::router(client, DashboardConfig::default()).unwrap();
    let app = axum::Router::new().nest("/ops/dlq", dashboard);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, service).await });
    let (status, _, page) = get(&format!("http://{addr}/ops/dlq/records")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("href=\"/ops/dlq/records/rec-00000\""), "record links follow the mount");
    assert!(page.contains("src=\"/ops/dlq/assets/app.js\""));
    assert!(page.contains("action=\"/ops/dlq/actions/purge\""));
    let (status, _, _) = get(&format!("http://{addr}/ops/dlq/assets/app.css")).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_replay_at_a_rate_reports_progress_and_cancel_returns_the_rest() {
    let script = captcha_dlq_mock::MockConfig {
        default_behavior: captcha_dlq_mock::Behavior { solve_after_ms: 100, ..Default::default() },
        ..Default::default()
    };
    let mock = captcha_dlq_mock::MockSolver::start(script).await.unwrap();
    let client = captcha_dlq::builder()
        .api_key(API_KEY)
        .provider("captchaai")
        .base_url(mock.base_url())
        .dlq("memory")
        .config(support::fast_config())
        .build()
        .await
        .unwrap();
    for i in 0..30 {
        let record = captcha_dlq::core::dlq::testkit::sample_record(&format!("rec-{i:05}"), i);
        client.backends().store.push(record).await.unwrap();
    }
    let dash = serve(&client, DashboardConfig::default()).await;
    let csrf = csrf_of(&get(&dash.url()).await.2);
    // One record per second: the cancel comes long before the thirtieth is started.
    let r = http()
        .post(format!("{}actions/replay", dash.url()))
        .form(&[("filter", ""), ("per_second", "1"), ("csrf", &csrf)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()["location"], "/replays/1");
    let (status, _) = post(&format!("{}actions/replays/1/cancel", dash.url()), &[("csrf", &csrf)], &[]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let progress = loop {
        let p: serde_json::Value =
            http().get(format!("{}api/replays/1", dash.url())).send().await.unwrap().json().await.unwrap();
        if p["active"] == false {
            break p;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(progress["status"], "cancelled");
    let number = |k: &str| progress[k].as_str().unwrap().parse::<u64>().unwrap();
    let recovered = number("recovered");
    assert!(number("skipped") > 0, "records not started were returned: {progress}");
    assert_eq!(number("received"), number("recovered") + number("failed_again") + number("skipped") + number("parked"));
    assert_eq!(count(&client, &Filter::all()).await, 30 - recovered, "recovered records left, the rest stayed");
    let ready = Filter { states: vec![RecordState::Ready], ..Filter::default() };
    assert_eq!(count(&client, &ready).await, 30 - recovered, "no lease is left behind");
    let (_, _, page) = get(&format!("{}replays", dash.url())).await;
    assert!(page.contains("every record") && page.contains("cancelled"), "the request is listed");
    dash.shutdown().await;
    mock.shutdown().await;
}

#[tokio::test]
async fn after_an_action_it_goes_back_only_to_its_own_pages() {
    let client = memory_client(3).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let csrf = csrf_of(&get(&dash.url()).await.2);
    for (back, expected) in [
        ("/records?reason=Timeout", "/records?reason=Timeout"),
        ("//evil.example/", "/records"),
        ("/\\evil.example/", "/records"),
        ("https://evil.example/", "/records"),
    ] {
        let r = http()
            .post(format!("{}actions/unpark", dash.url()))
            .form(&[("id", "rec-00000"), ("back", back), ("csrf", &csrf)])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert_eq!(r.headers()["location"], expected, "back={back}");
    }
    dash.shutdown().await;
}

/// Bounded wait for a fleet answer that `ready` accepts (clients join the ledger with their
/// first sync, which runs on their own driver); panics with the last answer otherwise.
async fn fleet_when(url: &str, ready: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let fleet: serde_json::Value = http().get(url).send().await.unwrap().json().await.unwrap();
        if ready(&fleet) {
            return fleet;
        }
        assert!(std::time::Instant::now() < deadline, "the fleet never got there: {fleet}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn listed(fleet: &serde_json::Value, owner: &str) -> bool {
    fleet["owners"].as_array().is_some_and(|owners| owners.iter().any(|o| o["owner"] == owner))
}

/// Issue 43, item 8: another member's zero balance holds the fleet; an operator ends the hold
/// from the Fleet page (a POST with the CSRF token), the ledger's account error is gone for every
/// client, and the audit trail names the operator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_ends_an_account_hold_from_the_fleet_page_and_it_is_audited() {
    use captcha_dlq::core::fleet::{FleetReport, OwnerInfo, SharedAccountError};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.sqlite");
    let a = support::client_over(std::sync::Arc::new(captcha_dlq::store::SqliteStore::open(&path).unwrap()), 0).await;
    let own = a.fleet_accounts();
    let [(provider, account)] = own.as_slice() else { panic!("one provider: {own:?}") };
    // Another member of the fleet was answered a zero balance at this account.
    let other = captcha_dlq::store::SqliteStore::open(&path).unwrap();
    let owner =
        OwnerInfo { owner: "worker-9/99/x".into(), host: "worker-9".into(), pid: 99, started_at: support::now() };
    let error = SharedAccountError {
        code: "ERROR_ZERO_BALANCE".into(),
        description: "the account has no money left".into(),
        hold_ms: 1_200_000,
    };
    let report = FleetReport { rate: 10.0, window_max: 20, account_error: Some(error), ..FleetReport::default() };
    use captcha_dlq::core::dlq::DlqStore as _;
    other.fleet_ledger().unwrap().sync(account, &owner, &report, support::now()).await.expect("sync");

    let dash = serve(&a, DashboardConfig::default()).await;
    let api = format!("{}api/fleet", dash.url());
    let ours = |f: &serde_json::Value| {
        f["accounts"].as_array().and_then(|all| all.iter().find(|x| &x["account"] == account).cloned())
    };
    fleet_when(&api, |f| ours(f).is_some_and(|x| x["account_error"]["code"] == "ERROR_ZERO_BALANCE")).await;
    let (_, _, page) = get(&format!("{}fleet", dash.url())).await;
    assert!(page.contains("action=\"/actions/resume-accounts\""), "the held account has its form");
    assert!(page.contains(&format!("Resume {provider} now")), "naming this client's provider");
    let csrf = csrf_of(&page);
    let (status, body) =
        post(&format!("{}actions/resume-accounts", dash.url()), &[("provider", provider), ("csrf", &csrf)], &[]).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    // The client tells the ledger with its next sync: the hold ends for every client.
    fleet_when(&api, |f| ours(f).is_some_and(|x| x["account_error"].is_null())).await;
    let trail = a.backends().store.audit_list(10, None).await.expect("the audit trail");
    let entry = trail.iter().find(|e| e.action.as_str() == "resume_accounts").expect("the resume is audited");
    assert_eq!(entry.filter["provider"], provider.as_str());
    assert!(!entry.operator.is_empty());
    // Without the CSRF token the action is refused.
    let (status, _) = post(&format!("{}actions/resume-accounts", dash.url()), &[("provider", provider)], &[]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    dash.shutdown().await;
    a.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_on_one_sqlite_file_and_a_gone_worker_are_the_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.sqlite");
    // Two opens of the file, as two processes would have.
    let first = captcha_dlq::store::SqliteStore::open(&path).unwrap();
    let second = captcha_dlq::store::SqliteStore::open(&path).unwrap();
    support::gone_worker(&first, std::time::Duration::from_secs(40)).await;
    let a = support::client_over(std::sync::Arc::new(first), 0).await;
    let b = support::client_over(std::sync::Arc::new(second), 0).await;
    let dash = serve(&a, DashboardConfig::default()).await;
    let api = format!("{}api/fleet", dash.url());
    let fleet = fleet_when(&api, |f| listed(f, a.owner()) && listed(f, b.owner())).await;

    assert_eq!(fleet["ledger"], true);
    assert_eq!((fleet["live"].as_u64(), fleet["gone"].as_u64()), (Some(2), Some(1)), "{fleet}");
    let owners = fleet["owners"].as_array().unwrap();
    let row = |owner: &str| owners.iter().find(|o| o["owner"] == owner).unwrap();
    for (client, mine) in [(&a, true), (&b, false)] {
        let r = row(client.owner());
        assert_eq!((r["state"].as_str(), r["alive"].as_bool()), (Some("live"), Some(true)), "{r}");
        assert_eq!(r["pid"], std::process::id());
        assert_eq!(r["mine"], mine, "{r}");
        assert!(r["heartbeat"].as_str().unwrap().ends_with("s ago"), "{r}");
        assert!(r["heartbeat_age_ms"].as_u64().unwrap() < 15_000, "live: a heartbeat within the TTL: {r}");
    }
    let gone = row(support::GONE_OWNER);
    assert_eq!(
        (gone["state"].as_str(), gone["host"].as_str(), gone["pid"].as_u64()),
        (Some("gone"), Some("worker-3.example"), Some(4242))
    );
    assert_eq!(gone["in_flight"], 4);
    assert!(gone["heartbeat_age_ms"].as_u64().unwrap() >= 40_000, "{gone}");
    assert_eq!(owners.last().unwrap()["owner"], support::GONE_OWNER, "live clients first");

    // One account for the two clients' shared key, named as the client names it.
    let own = a.fleet_accounts();
    assert_eq!(own, b.fleet_accounts(), "one key at one URL: one account");
    let [(provider, account)] = own.as_slice() else { panic!("one provider: {own:?}") };
    let accounts = fleet["accounts"].as_array().unwrap();
    assert_eq!(accounts.len(), 2, "{fleet}");
    let ours = accounts.iter().find(|x| &x["account"] == account).expect("the clients' account");
    assert_eq!(ours["providers"], serde_json::json!([provider]));
    assert!(ours["window"].as_u64().unwrap() > 0, "set by the first sync: {ours}");
    assert_eq!((ours["paused"].as_str(), ours["error"].as_str()), (Some("no"), Some("none")));
    let banned = accounts.iter().find(|x| x["account"] == support::BANNED_ACCOUNT).unwrap();
    assert_eq!(banned["in_flight"], 0, "a gone worker's tasks do not count: {banned}");
    assert_eq!(banned["pause_code"], "MAX_USER_TURN");
    assert!(banned["paused"].as_str().unwrap().ends_with("more (MAX_USER_TURN)"), "{banned}");
    assert_eq!(banned["account_error"]["code"], "ERROR_ZERO_BALANCE");
    assert!(banned["error"].as_str().unwrap().starts_with("ERROR_ZERO_BALANCE: the account has no money left (holds "));
    assert_eq!(fleet["spend"]["fleet"]["cost"], 0.0, "the fleet solved nothing yet: {fleet}");
    assert_eq!(fleet["spend"]["client"]["solved"], 0);

    // The page shows the same rows; the gone worker's heartbeat as an age on the ledger's clock.
    let (status, _, page) = get(&format!("{}fleet", dash.url())).await;
    assert_eq!(status, StatusCode::OK);
    for owner in [a.owner(), b.owner(), support::GONE_OWNER] {
        assert!(page.contains(&format!("data-owner=\"{owner}\"")), "{owner} has a row");
    }
    assert!(page.contains("this dashboard's client"), "{page}");
    assert!(page.contains("worker-3.example") && page.contains(">gone<") && page.contains(">live<"));
    assert!(page.contains("(MAX_USER_TURN)") && page.contains("ERROR_ZERO_BALANCE: the account has no money left"));
    assert!(page.contains(&format!("data-account=\"{account}\"")));
    assert!(!page.contains("no fleet to show"));
    assert!(!page.contains(API_KEY));
    let fleet_text = http().get(&api).send().await.unwrap().text().await.unwrap();
    assert!(!fleet_text.contains(API_KEY));

    // The gauges: by account and state, never by owner.
    let (_, headers, metrics) = get(&format!("{}metrics", dash.url())).await;
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/plain; version=0.0.4"));
    assert!(!metrics.contains(API_KEY));
    for line in [
        "captcha_dlq_fleet_up 1\n".to_string(),
        "captcha_dlq_fleet_owners{state=\"live\"} 2\n".to_string(),
        "captcha_dlq_fleet_owners{state=\"gone\"} 1\n".to_string(),
        format!("captcha_dlq_fleet_in_flight{{account=\"{account}\"}} 0\n"),
        format!("captcha_dlq_fleet_paused_seconds{{account=\"{account}\"}} 0\n"),
        format!("captcha_dlq_fleet_in_flight{{account=\"{}\"}} 0\n", support::BANNED_ACCOUNT),
        format!(
            "captcha_dlq_fleet_account_error{{account=\"{}\",code=\"ERROR_ZERO_BALANCE\"}} 1\n",
            support::BANNED_ACCOUNT
        ),
        format!("captcha_dlq_fleet_account_info{{account=\"{account}\",provider=\"{provider}\"}} 1\n"),
        "# TYPE captcha_dlq_spend_total counter\n".to_string(),
    ] {
        assert!(metrics.contains(&line), "{line} in\n{metrics}");
    }
    let window = format!("captcha_dlq_fleet_window{{account=\"{account}\"}} {}\n", ours["window"]);
    assert!(metrics.contains(&window), "{window} in\n{metrics}");
    let paused = metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix(&format!("captcha_dlq_fleet_paused_seconds{{account=\"{}\"}} ", support::BANNED_ACCOUNT))
        })
        .expect("the banned account's pause");
    assert!(paused.parse::<f64>().unwrap() > 0.0, "{paused}");
    assert!(!metrics.contains(a.owner()) && !metrics.contains(support::GONE_OWNER), "no series per process");

    // A closing client's row leaves at once; the page of a dashboard over it still reads the file.
    b.close().await;
    let after = fleet_when(&api, |f| !listed(f, b.owner())).await;
    assert!(listed(&after, a.owner()), "the other client stays: {after}");
    dash.shutdown().await;
    a.close().await;
}

#[tokio::test]
async fn a_memory_store_keeps_no_fleet_and_says_so() {
    let client = memory_client(2).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let r = http().get(format!("{}api/fleet", dash.url())).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "an answer, not an error");
    let fleet: serde_json::Value = r.json().await.unwrap();
    assert_eq!(fleet["ledger"], false);
    assert!(fleet["message"].as_str().unwrap().contains("keeps no fleet ledger"), "{fleet}");
    assert_eq!(fleet["owners"], serde_json::json!([]));
    assert_eq!(fleet["spend"]["client"]["solved"], 0, "the client's own spend still shows");
    let (status, _, page) = get(&format!("{}fleet", dash.url())).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("id=\"no-fleet\"") && page.contains("it keeps no fleet ledger"), "{page}");
    assert!(!page.contains("data-owner="));
    let (_, _, metrics) = get(&format!("{}metrics", dash.url())).await;
    assert!(!metrics.contains("captcha_dlq_fleet_"), "no fleet, no fleet families (not a 0 that looks like an outage)");
    assert!(metrics.contains("captcha_dlq_dlq_up 1\n") && metrics.contains("# TYPE captcha_dlq_spend_total counter"));
    dash.shutdown().await;
}

/// What makes a memory store's fleet ledger never answer (a store that hangs).
struct SilentLedger;

fn silent_ledger_store() -> std::sync::Arc<captcha_dlq::core::dlq::interpose::Interposed<SilentLedger>> {
    let store = std::sync::Arc::new(captcha_dlq::core::dlq::MemoryStore::default());
    std::sync::Arc::new(captcha_dlq::core::dlq::interpose::Interposed { store, hooks: SilentLedger })
}

mod silent {
    use std::sync::Arc;

    use captcha_dlq::core::dlq::interpose::Interpose;
    use captcha_dlq::core::dlq::StoreError;
    use captcha_dlq::core::fleet::{FleetGrant, FleetLedger, FleetReport, FleetView, OwnerInfo};
    use captcha_dlq::core::http::Secret;
    use captcha_dlq::core::Timestamp;

    struct Hangs;

    #[async_trait::async_trait]
    impl FleetLedger for Hangs {
        fn account_id(&self, _: &str, _: &Secret) -> String {
            "silent-account".into()
        }
        async fn sync(&self, _: &str, _: &OwnerInfo, _: &FleetReport, _: Timestamp) -> Result<FleetGrant, StoreError> {
            futures::future::pending().await
        }
        async fn leave(&self, _: &str) -> Result<(), StoreError> {
            futures::future::pending().await
        }
        async fn view(&self, _: Timestamp) -> Result<FleetView, StoreError> {
            futures::future::pending().await
        }
    }

    #[async_trait::async_trait]
    impl Interpose for super::SilentLedger {
        fn ledger(&self, _: Option<Arc<dyn FleetLedger>>) -> Option<Arc<dyn FleetLedger>> {
            Some(Arc::new(Hangs))
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_that_does_not_answer_is_a_zero_in_metrics_and_a_503_on_the_page() {
    let client = captcha_dlq::builder()
        .api_key(API_KEY)
        .provider("captchaai")
        .base_url("http://127.0.0.1:9/")
        .dlq_store(silent_ledger_store())
        .option("store", serde_json::json!({"timeout_ms": 300}))
        .build()
        .await
        .expect("a client");
    let dash = serve(&client, DashboardConfig::default()).await;
    let (status, _, metrics) = get(&format!("{}metrics", dash.url())).await;
    assert_eq!(status, StatusCode::OK, "{metrics}");
    assert!(metrics.contains("captcha_dlq_fleet_up 0\n"), "{metrics}");
    assert!(!metrics.contains("captcha_dlq_fleet_owners"), "no numbers that were not read");
    assert!(metrics.contains("captcha_dlq_dlq_up 1\n"), "the rest of the scrape is there");
    let r = http().get(format!("{}api/fleet", dash.url())).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("did not answer within 300 ms"), "{body}");
    let (status, _, page) = get(&format!("{}fleet", dash.url())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(page.contains("did not answer within 300 ms") && !page.contains(API_KEY), "{page}");
    dash.shutdown().await;
}

/// Issue 44, finding 2: `GET /export` gave every role full records, proxy logins and
/// passwords, cookies and key-like task fields included, and raw `login:pass@host` proxy strings
/// were redacted nowhere. Now every export and page is redacted; `secrets=1` is an operator's,
/// and it is entered in the audit trail.
#[tokio::test]
async fn finding_2_viewer_export_is_redacted() {
    use captcha_dlq::core::dlq::testkit::sample_record;
    use captcha_dlq::core::dlq::AuditAction;
    use captcha_dlq::core::Task;
    use captcha_dlq_dashboard::{NamedToken, Role};

    const VIEWER: &str = "viewer-token-0123456789-abc";
    const SECRETS: [&str; 5] = ["hunter2", "alice-login", "sid=s3cret-cookie", "raw-pass-42", "tok-api-77"];
    let client = memory_client(0).await;
    let store = client.backends().store.clone();
    let mut typed = sample_record("rec-typed", 1);
    typed.task = Task::from_json_value(serde_json::json!({
        "type": "recaptcha_v2", "sitekey": "6Le-SITEKEY", "page_url": "https://example.com/p",
        "cookies": "sid=s3cret-cookie",
        "proxy": {"type": "http", "host": "10.0.0.9", "port": 3128, "login": "alice-login", "password": "hunter2"},
    }))
    .unwrap();
    let mut raw = sample_record("rec-raw", 2);
    raw.task = Task::from_json_value(serde_json::json!({
        "type": "raw", "method": "userrecaptcha",
        "params": {"proxy": "bob:raw-pass-42@10.0.0.7:8080", "api_key": "tok-api-77", "googlekey": "6Le-X"},
    }))
    .unwrap();
    raw.history[0].error = "connect through http://bob:raw-pass-42@10.0.0.7:8080 refused".into();
    store.push(typed).await.unwrap();
    store.push(raw).await.unwrap();
    let config = DashboardConfig {
        token: Some(TOKEN.into()),
        tokens: vec![NamedToken { name: "vic".into(), token: VIEWER.into(), role: Role::Viewer }],
        ..DashboardConfig::default()
    };
    let dash = serve(&client, config).await;
    let leaks = |text: &str| SECRETS.iter().filter(|s| text.contains(**s)).map(|s| s.to_string()).collect::<Vec<_>>();

    // A viewer's export, in both formats, and every page a viewer reads.
    for format in ["json", "jsonl"] {
        let r = http().get(format!("{}export?format={format}", dash.url())).bearer_auth(VIEWER).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let text = r.text().await.unwrap();
        assert!(leaks(&text).is_empty(), "{format} export leaks {:?}: {text}", leaks(&text));
        assert!(text.contains("10.0.0.9") && text.contains("[redacted]@10.0.0.7:8080"), "{text}");
    }
    for path in ["records/rec-typed", "records/rec-raw", "records", "audit"] {
        let r = http().get(format!("{}{path}", dash.url())).bearer_auth(VIEWER).send().await.unwrap();
        let page = r.text().await.unwrap();
        assert!(leaks(&page).is_empty(), "/{path} leaks {:?}", leaks(&page));
    }
    // The secrets are an operator's explicit, audited action; a viewer asking gets 403.
    let r = http().get(format!("{}export?secrets=1", dash.url())).bearer_auth(VIEWER).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(leaks(&r.text().await.unwrap()).is_empty());
    let r = http().get(format!("{}export?format=json", dash.url())).bearer_auth(TOKEN).send().await.unwrap();
    assert!(leaks(&r.text().await.unwrap()).is_empty(), "an operator's plain export is redacted too");
    let r = http().get(format!("{}export?secrets=1", dash.url())).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let full = r.text().await.unwrap();
    assert_eq!(leaks(&full).len(), SECRETS.len(), "the operator asked for them: {full}");
    let trail = client.dlq().audit(10, None).await.unwrap();
    let entry = trail.iter().find(|e| e.action == AuditAction::ExportSecrets).expect("an export_secrets entry");
    assert_eq!((entry.operator.as_str(), entry.count), ("default", 2));
    dash.shutdown().await;
}
