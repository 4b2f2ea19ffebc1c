//! Just enough URL parsing for what the core checks about URLs: that a page
//! or service URL is an absolute `http(s)` URL, which host it names, and
//! whether that host is this machine.
//!
//! The `url` crate does this and far more, but it brings the IDNA/Unicode
//! tables, which were the largest single item of the browser build (~150 KB)
//! for hosts the core only validates, compares and groups by. Hosts here are
//! kept as written (ASCII lowercased; international names are not converted
//! to punycode, since the solving service receives the page URL verbatim).
//!
//! Security rests on this module agreeing with the WHATWG parser that reqwest
//! uses: plain `http` is allowed only to a base URL judged loopback here, so a
//! URL this module splits differently could send the API key elsewhere in
//! clear. `core/tests/it/weburl_vs_url.rs` checks it against the `url` crate.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::support::quoted::Quoted;

/// The parts of an absolute `http`/`https` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebUrl<'a> {
    /// `http` or `https`, lowercased.
    pub scheme: &'static str,
    /// Everything after `scheme:` and its two slashes, as written.
    pub after_slashes: &'a str,
    pub userinfo: Option<&'a str>,
    pub host: Host,
    pub port: Option<u16>,
    /// From the first `/` or `\` after the authority, as written (may be empty).
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub fragment: Option<&'a str>,
}

/// A URL's host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A registered name, ASCII-lowercased.
    Domain(String),
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
}

impl Host {
    /// Whether the host is this machine (`localhost`, 127.0.0.0/8, `::1`).
    pub fn is_loopback(&self) -> bool {
        match self {
            Host::Domain(d) => d == "localhost",
            Host::Ipv4(ip) => ip.is_loopback(),
            Host::Ipv6(ip) => ip.is_loopback(),
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Domain(d) => f.write_str(d),
            Host::Ipv4(ip) => write!(f, "{ip}"),
            Host::Ipv6(ip) => write!(f, "[{ip}]"),
        }
    }
}

/// Why a string is not an absolute `http(s)` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlError {
    /// No `scheme:` prefix (a path such as `/login`, or plain text).
    NotAbsolute,
    /// A scheme other than `http`/`https`.
    Scheme(String),
    /// `http:` not followed by exactly two slashes and a host, or an empty host.
    NoHost,
    /// A space or control character somewhere in the URL.
    Whitespace,
    InvalidHost(String),
    InvalidPort(String),
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::NotAbsolute => f.write_str("not an absolute URL (no http:// or https:// prefix)"),
            UrlError::Scheme(s) => write!(f, "scheme {} is not http or https", Quoted(s)),
            UrlError::NoHost => f.write_str("the URL has no host (expected http://host or https://host)"),
            UrlError::Whitespace => f.write_str("the URL contains a space or control character"),
            UrlError::InvalidHost(h) => write!(f, "{} is not a valid host", Quoted(h)),
            UrlError::InvalidPort(p) => write!(f, "{} is not a valid port", Quoted(p)),
        }
    }
}

impl std::error::Error for UrlError {}

/// Parses an absolute `http`/`https` URL.
///
/// What it accepts, it splits as the WHATWG URL Standard (browsers, the `url`
/// crate, hence reqwest) does: in `http(s)` a `\` is a path separator like
/// `/`, so `http://evil.com\@good.com/` names the host `evil.com`. Some
/// spellings the Standard repairs are refused here instead (see
/// `core/tests/it/weburl_vs_url.rs`, which checks both against the `url` crate):
/// spaces and control characters (the Standard strips or drops them), a
/// scheme not followed by exactly two slashes (`http:/x`, `http:x`,
/// `http:///x`), percent-escapes or ASCII punctuation other than `-._~` in a
/// host, and IPv4 addresses not written as four decimal numbers (`127.1`,
/// `0x7f.0.0.1`, `2130706433`, `010.0.0.1`).
pub fn parse(input: &str) -> Result<WebUrl<'_>, UrlError> {
    if input.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(UrlError::Whitespace);
    }
    let (scheme, rest) = split_scheme(input).ok_or(UrlError::NotAbsolute)?;
    let scheme = if scheme.eq_ignore_ascii_case("http") {
        "http"
    } else if scheme.eq_ignore_ascii_case("https") {
        "https"
    } else {
        return Err(UrlError::Scheme(scheme.to_ascii_lowercase()));
    };
    let after_slashes = match rest.as_bytes() {
        [a, b, ..] if is_slash(*a) && is_slash(*b) => &rest[2..],
        _ => return Err(UrlError::NoHost),
    };
    // A third slash: the Standard would skip it and read what follows as the host.
    if after_slashes.bytes().next().is_some_and(is_slash) {
        return Err(UrlError::NoHost);
    }
    let authority_end = after_slashes.find(['/', '\\', '?', '#']).unwrap_or(after_slashes.len());
    let (authority, tail) = after_slashes.split_at(authority_end);
    let (userinfo, host_port) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let (host, port) = split_host_port(host_port)?;
    let (before_fragment, fragment) = match tail.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (tail, None),
    };
    let (path, query) = match before_fragment.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (before_fragment, None),
    };
    Ok(WebUrl { scheme, after_slashes, userinfo, host, port, path, query, fragment })
}

/// `/` or `\`: both separate path segments (and end the authority) in `http(s)`.
fn is_slash(b: u8) -> bool {
    b == b'/' || b == b'\\'
}

/// `url` with the user and password of its authority shown as `***`
/// (`redis://:pw@host/0` → `redis://***@host/0`; any scheme, or none as in a proxy's
/// `user:pw@host:3128`), for `Debug` and messages: a Redis URL's or a proxy's credentials.
pub fn hide_userinfo(url: &str) -> String {
    // After a scheme, a slash in an unencoded password must not end the search (better to
    // hide a path too than to print half a password); without one, a file path's slashes do.
    let (scheme, rest, ends): (&str, &str, &[char]) = match url.split_once("://") {
        Some((scheme, rest)) => (&url[..scheme.len() + 3], rest, &['?', '#']),
        None => ("", url, &['/', '?', '#', '\\']),
    };
    let authority = &rest[..rest.find(ends).unwrap_or(rest.len())];
    // The user and password end at the authority's last `@` (a password may hold another).
    match authority.rfind('@') {
        Some(at) => format!("{scheme}***{}", &rest[at..]),
        None => url.to_string(),
    }
}

/// The host of an absolute `http(s)` URL, as [`Host`]'s `Display` writes it.
pub fn host_of(input: &str) -> Option<String> {
    parse(input).ok().map(|u| u.host.to_string())
}

fn split_scheme(input: &str) -> Option<(&str, &str)> {
    let colon = input.find(':')?;
    let scheme = &input[..colon];
    let mut chars = scheme.chars();
    let first_is_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (first_is_letter && rest_ok).then(|| (scheme, &input[colon + 1..]))
}

fn split_host_port(host_port: &str) -> Result<(Host, Option<u16>), UrlError> {
    let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        let close = bracketed.find(']').ok_or_else(|| UrlError::InvalidHost(host_port.to_string()))?;
        let ip = bracketed[..close].parse().map_err(|_| UrlError::InvalidHost(host_port.to_string()))?;
        let after = &bracketed[close + 1..];
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or_else(|| UrlError::InvalidHost(host_port.to_string()))?),
        };
        (Host::Ipv6(ip), port)
    } else {
        let (name, port) = match host_port.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (host_port, None),
        };
        (domain_or_ipv4(name)?, port)
    };
    let port = match port {
        None | Some("") => None,
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().map_err(|_| UrlError::InvalidPort(p.to_string()))?)
        }
        Some(p) => return Err(UrlError::InvalidPort(p.to_string())),
    };
    Ok((host, port))
}

fn domain_or_ipv4(name: &str) -> Result<Host, UrlError> {
    if name.is_empty() {
        return Err(UrlError::NoHost);
    }
    let invalid = || UrlError::InvalidHost(name.to_string());
    // One trailing dot is the DNS root (`example.com.`); other empty labels are mistakes.
    let without_root = name.strip_suffix('.').unwrap_or(name);
    if ends_in_a_number(without_root) {
        return without_root.parse().map(Host::Ipv4).map_err(|_| invalid());
    }
    let allowed = |c: char| !c.is_ascii() || c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~');
    if !name.chars().all(allowed) || without_root.split('.').any(str::is_empty) {
        return Err(invalid());
    }
    Ok(Host::Domain(name.to_ascii_lowercase()))
}

/// The Standard's "ends in a number": a name whose last label is decimal
/// digits or `0x` and hex digits must be an IPv4 address (`999.1.1.1` and
/// `foo.0x1` are errors, not domains). Only the dotted-decimal form is taken
/// here; the Standard's other forms (`127.1`, `0x7f.1`, `2130706433`, octal
/// `010.0.0.1`) are refused rather than read as an address.
fn ends_in_a_number(name_without_root: &str) -> bool {
    let last = name_without_root.rsplit('.').next().unwrap_or("");
    let hex = last.strip_prefix("0x").or_else(|| last.strip_prefix("0X"));
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()))
        || hex.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_parts_of_an_https_url() {
        let u = parse("HTTPS://user:pw@Example.COM:8443/a/b?x=1&y=2#frag").unwrap();
        assert_eq!(u.scheme, "https");
        assert_eq!(u.userinfo, Some("user:pw"));
        assert_eq!(u.host, Host::Domain("example.com".into()));
        assert_eq!(u.port, Some(8443));
        assert_eq!(u.path, "/a/b");
        assert_eq!(u.query, Some("x=1&y=2"));
        assert_eq!(u.fragment, Some("frag"));
    }

    #[test]
    fn hosts_and_loopback() {
        assert_eq!(parse("http://127.0.0.1:9/").unwrap().host, Host::Ipv4(Ipv4Addr::LOCALHOST));
        assert!(parse("http://[::1]:80").unwrap().host.is_loopback());
        assert!(parse("http://LocalHost").unwrap().host.is_loopback());
        assert!(!parse("https://api.captchaai.com").unwrap().host.is_loopback());
        assert!(!parse("http://10.0.0.1").unwrap().host.is_loopback());
        assert_eq!(host_of("https://bücher.example/x").as_deref(), Some("bücher.example"));
        assert_eq!(host_of("http://[::1]:8080/").as_deref(), Some("[::1]"));
        assert_eq!(parse("http://h?q").unwrap().query, Some("q"));
        assert_eq!(parse("http://h:/").unwrap().port, None);
    }

    #[test]
    fn rejects_what_is_not_an_absolute_web_url() {
        assert_eq!(parse("/login"), Err(UrlError::NotAbsolute));
        assert_eq!(parse("example.com/page"), Err(UrlError::NotAbsolute));
        assert_eq!(parse("ftp://example.com/"), Err(UrlError::Scheme("ftp".into())));
        assert_eq!(parse("javascript:alert(1)"), Err(UrlError::Scheme("javascript".into())));
        assert_eq!(parse("http:example.com"), Err(UrlError::NoHost));
        assert_eq!(parse("http:///path"), Err(UrlError::NoHost));
        assert_eq!(parse("http://a b.com/"), Err(UrlError::Whitespace));
        assert_eq!(parse("http://exa<mple.com/"), Err(UrlError::InvalidHost("exa<mple.com".into())));
        assert_eq!(parse("http://999.1.1.1/"), Err(UrlError::InvalidHost("999.1.1.1".into())));
        assert_eq!(parse("http://[::1/"), Err(UrlError::InvalidHost("[::1".into())));
        assert_eq!(parse("http://h:70000/"), Err(UrlError::InvalidPort("70000".into())));
        assert_eq!(parse("http://h:8o/"), Err(UrlError::InvalidPort("8o".into())));
        assert_eq!(parse("http://a..b/"), Err(UrlError::InvalidHost("a..b".into())));
        assert_eq!(parse("http://1.2.3.4../"), Err(UrlError::InvalidHost("1.2.3.4..".into())));
        assert_eq!(parse("http://foo.0x1f/"), Err(UrlError::InvalidHost("foo.0x1f".into())));
        assert_eq!(parse("http://127.1/"), Err(UrlError::InvalidHost("127.1".into())));
        assert_eq!(parse("http://%6cocalhost/"), Err(UrlError::InvalidHost("%6cocalhost".into())));
        assert_eq!(parse("http:/example.com"), Err(UrlError::NoHost));
        assert_eq!(parse("http:\\\\\\example.com"), Err(UrlError::NoHost));
    }

    /// In http(s) a backslash is a path separator: it ends the authority, so
    /// what follows an `@` after it is path, not the host.
    #[test]
    fn backslash_is_a_path_separator() {
        let u = parse("http://evil.com\\@good.com/").unwrap();
        assert_eq!(u.host, Host::Domain("evil.com".into()));
        assert_eq!((u.userinfo, u.path), (None, "\\@good.com/"));
        assert!(!parse("http://evil.com\\@127.0.0.1/").unwrap().host.is_loopback());
        assert_eq!(host_of("http:\\\\example.com\\a").as_deref(), Some("example.com"));
        assert_eq!(host_of("https:/\\example.com").as_deref(), Some("example.com"));
        let u = parse("http://h:81\\x?q#f").unwrap();
        assert_eq!((u.port, u.path, u.query, u.fragment), (Some(81), "\\x", Some("q"), Some("f")));
        assert_eq!(parse("HTTP:\\\\h/x").unwrap().after_slashes, "h/x");
    }
}
