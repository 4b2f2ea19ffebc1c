//! Where a client may send its data (webhook alerts, exported spans): the one check of an
//! endpoint URL the `alerts` and `traces` options share. Only with one of those features: the
//! check reads URLs with the `url` crate, which the browser build leaves out (see `weburl`).

/// Whether `text` may receive the client's data: an `https` URL, or `http` to this machine (to
/// anywhere with `allow_insecure_http`). Read with the WHATWG parser reqwest sends with, so that
/// what is checked is where it goes: a test on the text let `http:\\host` (`http://host/` to
/// the parser) pass as https (issue 44).
pub fn secure_endpoint(text: &str, allow_insecure_http: bool) -> Result<(), &'static str> {
    let url = url::Url::parse(text).map_err(|_| "is not an http(s) URL")?;
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err("names no host"),
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback || allow_insecure_http => Ok(()),
        "http" => Err("is plain http to another machine: use https, or allow insecure http explicitly"),
        _ => Err("is not an http(s) URL"),
    }
}
