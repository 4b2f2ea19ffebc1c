//! Redirects (issue 44, finding 6): a provider's request follows a redirect only on its own
//! host (its key is in the URL or the body), a webhook's follows none, each against loopback
//! servers answering 307. The alert and OTLP sides end to end are in `alerts.rs` and `traces.rs`.

use crate::support;
use captcha_dlq::core::{HttpRequest, Method, Secret};
use captcha_dlq::transport::ReqwestTransport;
use captcha_dlq::Transport;
use support::Redirects;

fn get(url: String) -> HttpRequest {
    HttpRequest::new(Method::Get, url, &Secret::new("KEY-redirects"))
}

#[tokio::test]
async fn a_providers_redirect_to_another_host_is_not_followed_one_on_its_host_is() {
    let servers = Redirects::start().await;
    let transport = ReqwestTransport::new(vec![Secret::new("KEY-redirects")], None).unwrap();
    let answer = transport.send(get(format!("{}/elsewhere?key=KEY-redirects", servers.redirector))).await.unwrap();
    assert_eq!(answer.status, 307, "the redirect is the answer, a failure like any unexpected status");
    assert_eq!(servers.target_hits(), 0, "the key never went to the other host");
    let answer = transport.send(get(format!("{}/same", servers.redirector))).await.unwrap();
    assert_eq!((answer.status, answer.body.as_slice()), (200, b"final".as_slice()), "followed on its host");
}

#[tokio::test]
async fn a_webhooks_request_follows_no_redirect_even_on_its_host() {
    let servers = Redirects::start().await;
    let transport = ReqwestTransport::new(Vec::new(), None).unwrap();
    for path in ["/same", "/elsewhere"] {
        let answer = transport.send_without_redirects(get(format!("{}{path}", servers.redirector))).await.unwrap();
        assert_eq!(answer.status, 307, "{path}");
    }
    assert_eq!((servers.redirector_hits(), servers.target_hits()), (2, 0), "nothing followed");
}
