//! Where a client may send its data (webhook alerts, exported spans): the one check of an
//! endpoint URL the `alerts` and `traces` options share.

use captcha_dlq_core::support::weburl;

/// Whether `text` may receive the client's data: an `https` URL, or `http` to this machine (to
/// anywhere with `allow_insecure_http`). Read with `weburl`, the core's parser that agrees with
/// the WHATWG parser reqwest and `fetch` send with (`core/tests/it/weburl_vs_url.rs`), so that
/// what is checked is where it goes: a test on the text let `http:\\host` (`http://host/` to
/// the parser) pass as https (issue 44). Not the `url` crate: its IDNA tables would be the largest
/// part of the browser's alerts (decision 0071).
pub fn secure_endpoint(text: &str, allow_insecure_http: bool) -> Result<(), &'static str> {
    let url = weburl::parse(text).map_err(|e| match e {
        weburl::UrlError::NoHost => "names no host",
        _ => "is not an http(s) URL",
    })?;
    match url.scheme {
        "https" => Ok(()),
        _ if url.host.is_loopback() || allow_insecure_http => Ok(()),
        _ => Err("is plain http to another machine: use https, or allow insecure http explicitly"),
    }
}
