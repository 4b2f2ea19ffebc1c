//! Issue 44, finding 4: the dashboard served plain HTTP only, its session cookie had no `Secure`
//! flag, sessions never ended and there was no logout. Here it serves HTTPS (rustls) with a
//! certificate signed by a CA made for the test, its cookie is `Secure`, a session ends at its
//! idle limit and at logout (a CSRF-checked POST).

use crate::support;
use captcha_dlq_dashboard::{DashboardConfig, DashboardOptions, TlsFiles};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use reqwest::StatusCode;
use support::{csrf_of, memory_client, TOKEN};

/// A CA's certificate (PEM), and the files of a `localhost`/`127.0.0.1` certificate it signed.
fn certificates(dir: &std::path::Path) -> (String, TlsFiles) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &ca)
        .unwrap();
    let files = TlsFiles { cert: dir.join("cert.pem"), key: dir.join("key.pem") };
    std::fs::write(&files.cert, leaf.pem()).unwrap();
    std::fs::write(&files.key, leaf_key.serialize_pem()).unwrap();
    (ca.pem(), files)
}

/// A client that trusts only the test's CA, keeps no cookies and follows no redirect.
fn https_client(ca: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .tls_built_in_root_certs(false)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn session_of(response: &reqwest::Response) -> (String, String) {
    let set = response.headers()[reqwest::header::SET_COOKIE].to_str().unwrap().to_string();
    let pair = set.split(';').next().unwrap().to_string();
    (set, pair)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_4_https_secure_cookie_expiry_and_logout() {
    let tmp = tempfile::tempdir().unwrap();
    let (ca, files) = certificates(tmp.path());
    let client = memory_client(2).await;
    let config = DashboardConfig {
        token: Some(TOKEN.into()),
        session_idle_ms: 1_000,
        session_max_ms: 60_000,
        ..DashboardConfig::default()
    };
    let options = DashboardOptions { listen: "127.0.0.1:0".parse().unwrap(), config, tls: Some(files) };
    let dash = captcha_dlq_dashboard::serve(client.clone(), options).await.expect("an HTTPS dashboard");
    let url = dash.url();
    assert!(url.starts_with("https://"), "{url}");
    let https = https_client(&ca);

    // Plain HTTP on the same port gets no page.
    let plain = format!("http://{}/login", dash.local_addr());
    let answer = reqwest::Client::new().get(&plain).send().await;
    assert!(answer.is_err() || !answer.unwrap().status().is_success(), "plain HTTP is not served");

    // Log in over HTTPS: the cookie is Secure, HttpOnly, and ends at the absolute limit.
    let login_page = https.get(format!("{url}login")).send().await.expect("TLS handshake").text().await.unwrap();
    let csrf = csrf_of(&login_page);
    let login = https.post(format!("{url}login")).form(&[("token", TOKEN), ("csrf", &csrf)]).send().await.unwrap();
    assert_eq!(login.status(), StatusCode::SEE_OTHER);
    let (set_cookie, session) = session_of(&login);
    for part in ["Secure", "HttpOnly", "SameSite=Strict", "Max-Age=60"] {
        assert!(set_cookie.contains(part), "{part} missing from {set_cookie}");
    }
    let page = |cookie: String| {
        let https = https.clone();
        let url = url.clone();
        async move { https.get(format!("{url}records")).header("cookie", cookie).send().await.unwrap() }
    };
    assert_eq!(page(session.clone()).await.status(), StatusCode::OK);

    // Logout is a POST with the CSRF token; without it, refused and the session lives on.
    let refused = https.post(format!("{url}logout")).header("cookie", &session).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(page(session.clone()).await.status(), StatusCode::OK);
    let out =
        https.post(format!("{url}logout")).header("cookie", &session).form(&[("csrf", &csrf)]).send().await.unwrap();
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    let (cleared, _) = session_of(&out);
    assert!(cleared.contains("Max-Age=0") && cleared.contains("Secure"), "{cleared}");
    assert_eq!(page(session).await.status(), StatusCode::UNAUTHORIZED, "the session ended at logout");

    // A session left idle past its limit ends.
    let login = https.post(format!("{url}login")).form(&[("token", TOKEN), ("csrf", &csrf)]).send().await.unwrap();
    let (_, idle) = session_of(&login);
    assert_eq!(page(idle.clone()).await.status(), StatusCode::OK);
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    assert_eq!(page(idle).await.status(), StatusCode::UNAUTHORIZED, "the idle session ended");
    dash.shutdown().await;
}

/// Behind a proxy declared to terminate HTTPS the cookie is `Secure` too; on plain loopback
/// HTTP without that declaration it is not (a browser would drop it), and bad limits are named.
#[tokio::test]
async fn finding_4_cookie_is_secure_behind_a_declared_https_proxy() {
    let client = memory_client(0).await;
    for (https, secure) in [(true, true), (false, false)] {
        let config = DashboardConfig { token: Some(TOKEN.into()), https, ..DashboardConfig::default() };
        let dash = support::serve(&client, config).await;
        let http = support::http();
        let csrf = csrf_of(&http.get(format!("{}login", dash.url())).send().await.unwrap().text().await.unwrap());
        let login =
            http.post(format!("{}login", dash.url())).form(&[("token", TOKEN), ("csrf", &csrf)]).send().await.unwrap();
        let (set_cookie, _) = session_of(&login);
        assert_eq!(set_cookie.contains("Secure"), secure, "{set_cookie}");
        assert!(set_cookie.contains("Max-Age=43200"), "12 hours by default: {set_cookie}");
        dash.shutdown().await;
    }
    let bad = DashboardConfig { session_idle_ms: 10, ..DashboardConfig::default() };
    let e = captcha_dlq_dashboard::router(client.clone(), bad).unwrap_err().to_string();
    assert!(e.contains("session_idle_ms") && e.contains("below 1000"), "{e}");
    let tmp = tempfile::tempdir().unwrap();
    let missing = TlsFiles { cert: tmp.path().join("none.pem"), key: tmp.path().join("none.key") };
    let options = DashboardOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        config: DashboardConfig::default(),
        tls: Some(missing),
    };
    let e = captcha_dlq_dashboard::serve(client, options).await.unwrap_err().to_string();
    assert!(e.contains("tls_cert") && e.contains("none.pem"), "{e}");
}
