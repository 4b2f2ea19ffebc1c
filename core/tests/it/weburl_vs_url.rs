//! `weburl` against the `url` crate (the WHATWG URL Standard, which reqwest
//! uses to connect), over hand-picked nasty URLs and a few hundred generated
//! ones.
//!
//! What "agree" means here:
//! - both accept, with the same scheme, effective port (a default port made
//!   explicit), host, loopback judgement, presence of a query and of a
//!   fragment, and (for plain paths) the same path once `\` reads as `/`;
//! - or both refuse (a scheme other than http(s) counts as refused: `weburl`
//!   is only for web URLs);
//! - and always, whatever else: a host `weburl` judges loopback is loopback
//!   to the `url` crate too, and credentials the `url` crate sees are seen by
//!   `weburl`. These are the two facts security rests on: plain `http` is
//!   allowed only to loopback, and a base URL may not carry credentials.
//!
//! Where they differ, the difference must be one of the documented ones
//! below ([`Stricter`], [`Lenient`]); anything else fails the test.

use std::collections::BTreeMap;

use captcha_dlq_core::support::weburl::{self, Host, UrlError, WebUrl};

/// Spellings the Standard repairs and `weburl` refuses (see `weburl::parse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stricter {
    /// Spaces and control characters: the Standard strips leading and
    /// trailing ones and drops tabs and newlines anywhere (`http://exa\tmple.com`).
    Whitespace,
    /// `http:/x`, `http:x`, `http:///x`: the Standard skips any number of slashes.
    SlashCount,
    /// `%` in the host: the Standard decodes it (`%6c%6fcalhost` is `localhost`).
    PercentInHost,
    /// An IPv4 address not written as four decimal numbers (`127.1`,
    /// `0x7f.0.0.1`, `2130706433`, octal `010.0.0.1`).
    Ipv4Shorthand,
    /// ASCII punctuation other than `-._~` in a host, or an empty label (`a..b`).
    HostPunctuation,
}

/// Where `weburl`, which has no Unicode tables, accepts what the Standard
/// refuses or writes a host differently (docs/decisions/0012-fewer-dependencies-in-the-core.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Lenient {
    /// A non-ASCII host is kept as written, not mapped and punycoded by IDNA.
    /// Agreeing means: IDNA of `weburl`'s host is the Standard's host.
    UnicodeHost,
    /// A non-ASCII host that IDNA refuses (a right-to-left override, a
    /// full-width `：`); `weburl` accepts it (and never judges it loopback).
    UnicodeHostIdnaRefuses,
    /// An ASCII `xn--` label is not decoded, so invalid punycode is accepted.
    PunycodeLabel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    BothAccept,
    BothRefuse,
    Stricter(Stricter),
    Lenient(Lenient),
}

/// Compares one URL; `Err` describes a divergence that is not documented.
fn compare(input: &str) -> Result<Outcome, String> {
    let ours = weburl::parse(input);
    let theirs = url::Url::parse(input).ok().filter(|t| matches!(t.scheme(), "http" | "https"));
    if let Ok(u) = &ours {
        security_facts_hold(u, theirs.as_ref())?;
    }
    match (ours, theirs) {
        (Err(_), None) => Ok(Outcome::BothRefuse),
        (Err(e), Some(t)) => why_refused(input, &e, &t).map(Outcome::Stricter),
        (Ok(u), None) => match lenient_host(&u.host) {
            Some(_) if u.host.to_string().is_ascii() => Ok(Outcome::Lenient(Lenient::PunycodeLabel)),
            Some(_) => Ok(Outcome::Lenient(Lenient::UnicodeHostIdnaRefuses)),
            None => Err(format!("weburl accepts (host {}), url refuses", u.host)),
        },
        (Ok(u), Some(t)) => both_accept(&u, &t),
    }
}

/// Loopback and credentials: never looser than the Standard, whatever the URL.
fn security_facts_hold(u: &WebUrl<'_>, theirs: Option<&url::Url>) -> Result<(), String> {
    let their_host = theirs.and_then(|t| t.host().map(|h| h.to_owned()));
    if u.host.is_loopback() && !their_host.as_ref().is_some_and(url_host_is_loopback) {
        return Err(format!("weburl judges {} loopback, url does not ({their_host:?})", u.host));
    }
    if let Some(t) = theirs {
        if (!t.username().is_empty() || t.password().is_some()) && u.userinfo.is_none() {
            return Err("url sees credentials, weburl does not".to_string());
        }
    }
    Ok(())
}

/// Which documented refusal this is, checked on the error and on what the
/// `url` crate made of the same text.
fn why_refused(input: &str, error: &UrlError, theirs: &url::Url) -> Result<Stricter, String> {
    let host = theirs.host();
    let odd_punctuation = |h: &str| h.chars().any(|c| c.is_ascii_punctuation() && !matches!(c, '-' | '.' | '_' | '~'));
    let empty_label = |h: &str| h.strip_suffix('.').unwrap_or(h).split('.').any(str::is_empty);
    Ok(match error {
        UrlError::Whitespace if input.chars().any(|c| c.is_whitespace() || c.is_control()) => Stricter::Whitespace,
        UrlError::NoHost if slashes_after_scheme(input) != 2 => Stricter::SlashCount,
        UrlError::InvalidHost(h) if h.contains('%') => Stricter::PercentInHost,
        UrlError::InvalidHost(_) if matches!(host, Some(url::Host::Ipv4(_))) => Stricter::Ipv4Shorthand,
        UrlError::InvalidHost(h)
            if matches!(host, Some(url::Host::Domain(_))) && (odd_punctuation(h) || empty_label(h)) =>
        {
            Stricter::HostPunctuation
        }
        _ => return Err(format!("weburl refuses ({error}), url accepts as {theirs}")),
    })
}

/// How many `/` or `\` follow the scheme's colon.
fn slashes_after_scheme(input: &str) -> usize {
    let rest = input.split_once(':').map_or("", |(_, rest)| rest);
    rest.bytes().take_while(|b| matches!(b, b'/' | b'\\')).count()
}

/// `Some` when `weburl` keeps this host as written where the Standard would convert it.
fn lenient_host(host: &Host) -> Option<Lenient> {
    match host {
        Host::Domain(d) if !d.is_ascii() => Some(Lenient::UnicodeHost),
        Host::Domain(d) if d.split('.').any(|label| label.starts_with("xn--")) => Some(Lenient::PunycodeLabel),
        _ => None,
    }
}

fn both_accept(u: &WebUrl<'_>, t: &url::Url) -> Result<Outcome, String> {
    let mut outcome = Outcome::BothAccept;
    if u.scheme != t.scheme() {
        return Err(format!("scheme {} vs {}", u.scheme, t.scheme()));
    }
    let default_port = if u.scheme == "https" { 443 } else { 80 };
    if Some(u.port.unwrap_or(default_port)) != t.port_or_known_default() {
        return Err(format!("port {:?} vs {:?}", u.port, t.port_or_known_default()));
    }
    let their_host = t.host().map(|h| h.to_owned()).ok_or("url has no host")?;
    let same_host = match (&u.host, &their_host) {
        (Host::Ipv4(a), url::Host::Ipv4(b)) => a == b,
        (Host::Ipv6(a), url::Host::Ipv6(b)) => a == b,
        (Host::Domain(a), url::Host::Domain(b)) if lenient_host(&u.host).is_none() => a == b,
        (Host::Domain(a), _) if lenient_host(&u.host) == Some(Lenient::UnicodeHost) => {
            outcome = Outcome::Lenient(Lenient::UnicodeHost);
            url::Host::parse(a).ok().as_ref() == Some(&their_host)
        }
        (Host::Domain(_), url::Host::Domain(b)) => {
            outcome = Outcome::Lenient(Lenient::PunycodeLabel);
            u.host.to_string() == *b
        }
        _ => false,
    };
    if !same_host {
        return Err(format!("host {} vs {their_host}", u.host));
    }
    if u.host.is_loopback() != url_host_is_loopback(&their_host) && outcome != Outcome::Lenient(Lenient::UnicodeHost) {
        return Err(format!("loopback {} vs {}", u.host.is_loopback(), !u.host.is_loopback()));
    }
    if u.query.is_some() != t.query().is_some() || u.fragment.is_some() != t.fragment().is_some() {
        return Err(format!("query/fragment {:?}/{:?} vs {:?}/{:?}", u.query, u.fragment, t.query(), t.fragment()));
    }
    let plain_path = u.path.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'\\' | b'-' | b'_'));
    if plain_path {
        let ours = if u.path.is_empty() { "/".to_string() } else { u.path.replace('\\', "/") };
        if ours != t.path() {
            return Err(format!("path {} vs {}", u.path, t.path()));
        }
    }
    Ok(outcome)
}

/// The loopback rule `weburl::Host::is_loopback` states, applied to the `url` crate's host.
fn url_host_is_loopback(host: &url::Host<String>) -> bool {
    match host {
        url::Host::Domain(d) => d == "localhost",
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    }
}

/// Hand-picked: each is a known trap (WHATWG special cases, spoofing tricks).
const NASTY: &[&str] = &[
    // Backslashes: path separators in http(s).
    "http://evil.com\\@good.com/",
    "http://evil.com\\@127.0.0.1/",
    "http://127.0.0.1\\@evil.com/",
    "http://localhost\\.evil.com/",
    "http:\\\\evil.com\\x",
    "http:/\\evil.com",
    "http:\\/evil.com",
    "https:\\\\\\evil.com",
    "http://u:p\\@h/",
    "http://h:81\\x",
    "http://h\\?q#f",
    // Slashes.
    "http:/x",
    "http:x",
    "http:///x",
    "http:////x",
    "http://",
    "http:",
    "//example.com/",
    "/relative",
    "example.com",
    // Userinfo.
    "http://u:p@ss@example.com/",
    "http://user:pa%40ss@example.com/",
    "http://u%3Ap:x@example.com/",
    "http://@example.com/",
    "http://:@example.com/",
    "http://u@/",
    "http://u@:80/",
    "http://[::1]@evil.com/",
    "http://evil.com@127.0.0.1/",
    "http://127.0.0.1@evil.com/",
    "http://127.0.0.1:80@evil.com/",
    "http://localhost#@evil.com/",
    "http://localhost?@evil.com/",
    "http://a@b@localhost/",
    // IPv4.
    "http://127.0.0.1/",
    "http://127.0.0.1./",
    "http://127.0.0.1../",
    "http://127.1/",
    "http://0x7f.0.0.1/",
    "http://0x7F000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://0177.0.0.1/",
    "http://010.0.0.1/",
    "http://127.0.0.0x1/",
    "http://127.0.0.256/",
    "http://1.2.3.4.5/",
    "http://999.1.1.1/",
    "http://foo.0x/",
    "http://foo.0x1f/",
    "http://foo.09/",
    "http://a.1/",
    "http://1.2.3/",
    "http://0.0.0.0/",
    "http://127.255.255.255/",
    // IPv6.
    "http://[::1]/",
    "http://[::1]:8080/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::127.0.0.1]/",
    "http://[::1%25eth0]/",
    "http://[fe80::1%eth0]/",
    "http://[::1/",
    "http://[::1]x/",
    "http://[::1]:/",
    "http://[1:2:3:4:5:6:7:8:9]/",
    "http://[::ffff:1.2.3]/",
    "http://[::ffff:01.2.3.4]/",
    "http://[v1.fe]/",
    "http://[FE80::ABCD]/",
    "http://::1/",
    // Ports.
    "http://h:0/",
    "http://h:65535/",
    "http://h:65536/",
    "http://h:/",
    "http://h:80/",
    "https://h:443/",
    "https://h:80/",
    "http://h:0080/",
    "http://h:00000000000000000080/",
    "http://h:8o/",
    "http://h:-1/",
    "http://h:+80/",
    "http://h:80:80/",
    "http://h:٨٠/",
    "http://:80/",
    // Hosts: case, dots, punctuation, percent-encoding.
    "HTTP://EXAMPLE.COM/",
    "hTtPs://LocalHost/",
    "http://LOCALHOST./",
    "http://localhost./",
    "http://localhost../",
    "http://.localhost/",
    "http://a..b/",
    "http://./",
    "http://../",
    "http://ex%61mple.com/",
    "http://%6c%6fcalhost/",
    "http://localhost%00/",
    "http://a_b.example/",
    "http://a~b.example/",
    "http://a-.example/",
    "http://-a.example/",
    "http://a!b.example/",
    "http://a$b.example/",
    "http://a*b.example/",
    "http://a<b/",
    "http://a^b/",
    "http://a|b/",
    "http://a\"b/",
    "http://a{b}/",
    "http://a`b/",
    // Unicode hosts.
    "https://bücher.example/",
    "https://BÜCHER.example/",
    "https://xn--bcher-kva.example/",
    "http://xn--/",
    "http://xn--a/",
    "http://xn--zz-zzz.example/",
    "http://☃.net/",
    "http://ｌｏｃａｌｈｏｓｔ/",
    "http://１２７.０.０.１/",
    "http://example。com/",
    "http://example．com/",
    "http://h：80/",
    "http://a\u{202e}b.example/",
    "http://a\u{200b}b.example/",
    "http://a\u{ad}b.example/",
    "http://ß.example/",
    "http://faß.de/",
    "http://ǅ.example/",
    "http://\u{3000}example.com/",
    "http://exa\u{a0}mple.com/",
    // Whitespace and controls.
    "http://exa\tmple.com/",
    "http://exa\nmple.com/",
    "http://exa\rmple.com/",
    " http://example.com/",
    "http://example.com/ ",
    "http://example.com/\u{0}",
    "ht\ttp://example.com/",
    "http://example.com/a b",
    "http://exam\u{7f}ple.com/",
    // Schemes.
    "ftp://example.com/",
    "javascript:alert(1)",
    "https+x://example.com/",
    "1http://example.com/",
    "ws://example.com/",
    "file:///etc/passwd",
    "data:text/html,x",
    // Paths, queries, fragments.
    "http://h/a/../b",
    "http://h/%2e%2e/x",
    "http://h?",
    "http://h#",
    "http://h/?#",
    "http://h/#?x",
    "http://h/p?q#f",
    "http://h/p?q=a@b/c",
];

const SCHEMES: &[&str] = &["http", "https", "HTTP", "hTTps", "ftp", "ht tp"];
const SLASHES: &[&str] = &["//", "//", "//", "\\\\", "/\\", "\\/", "/", "", "///", "\\\\\\"];
const USERINFO: &[&str] =
    &["", "", "", "u@", "u:p@", "u:p@ss@", "u%40:p%3A@", "@", ":@", "evil.com\\@", "[::1]@", "a b@", "ü:ß@", "u\t@"];
const HOSTS: &[&str] = &[
    "example.com",
    "Example.COM",
    "localhost",
    "LOCALHOST",
    "localhost.",
    "127.0.0.1",
    "127.0.0.1.",
    "127.1",
    "0x7f.0.0.1",
    "2130706433",
    "010.0.0.1",
    "1.2.3.4..",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[0:0:0:0:0:0:0:1]",
    "[::1%25eth0]",
    "[::1",
    "bücher.example",
    "xn--bcher-kva.example",
    "xn--a",
    "ｌｏｃａｌｈｏｓｔ",
    "１２７.０.０.１",
    "ex%61mple.com",
    "%6c%6fcalhost",
    "a..b",
    ".a",
    "a_b.com",
    "a!b.com",
    "",
    "foo.0x",
    "foo.09",
    "☃.net",
    "ex\tample.com",
    "exa mple.com",
];
const PORTS: &[&str] = &["", "", "", ":", ":0", ":80", ":443", ":65535", ":65536", ":0080", ":8o", ":-1"];
const TAILS: &[&str] =
    &["", "/", "/a/b", "\\a\\b", "?q=1", "#f", "/p?q#f", "\\@good.com/", "@evil.com", "/../x", "?@evil.com"];

/// URLs put together from the pieces above, at random (seeded).
fn generated(count: usize) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(14);
    let mut pick = |list: &[&'static str]| list[rng.usize(..list.len())];
    (0..count)
        .map(|_| {
            let (scheme, slashes, userinfo) = (pick(SCHEMES), pick(SLASHES), pick(USERINFO));
            format!("{scheme}:{slashes}{userinfo}{}{}{}", pick(HOSTS), pick(PORTS), pick(TAILS))
        })
        .collect()
}

#[test]
fn weburl_agrees_with_the_url_crate_or_differs_as_documented() {
    let inputs: Vec<String> = NASTY.iter().map(|s| s.to_string()).chain(generated(1000)).collect();
    let mut outcomes: BTreeMap<Outcome, usize> = BTreeMap::new();
    let mut divergences = Vec::new();
    for input in &inputs {
        match compare(input) {
            Ok(outcome) => *outcomes.entry(outcome).or_default() += 1,
            Err(why) => divergences.push(format!("{input:?}: {why}")),
        }
    }
    assert!(divergences.is_empty(), "{} undocumented divergences:\n{}", divergences.len(), divergences.join("\n"));
    println!("{} URLs: {outcomes:?}", inputs.len());
    // Every documented difference is met by at least one input, so none of
    // them is a description of something that no longer happens.
    for expected in [
        Outcome::BothAccept,
        Outcome::BothRefuse,
        Outcome::Stricter(Stricter::Whitespace),
        Outcome::Stricter(Stricter::SlashCount),
        Outcome::Stricter(Stricter::PercentInHost),
        Outcome::Stricter(Stricter::Ipv4Shorthand),
        Outcome::Stricter(Stricter::HostPunctuation),
        Outcome::Lenient(Lenient::UnicodeHost),
        Outcome::Lenient(Lenient::UnicodeHostIdnaRefuses),
        Outcome::Lenient(Lenient::PunycodeLabel),
    ] {
        assert!(outcomes.contains_key(&expected), "no input showed {expected:?}: {outcomes:?}");
    }
}

/// The cases a spoofing attempt relies on, spelled out: the host `weburl`
/// reports is the one reqwest would connect to.
#[test]
fn spoofing_tricks_name_the_host_reqwest_connects_to() {
    for (input, host, loopback) in [
        ("http://evil.com\\@127.0.0.1/", "evil.com", false),
        ("http://127.0.0.1\\@evil.com/", "127.0.0.1", true),
        ("http://evil.com@127.0.0.1/", "127.0.0.1", true),
        ("http://127.0.0.1:80@evil.com/", "evil.com", false),
        ("http://localhost#@evil.com/", "localhost", true),
        ("http:\\\\evil.com\\x", "evil.com", false),
        ("http://[::1]@evil.com/", "evil.com", false),
    ] {
        let ours = weburl::parse(input).unwrap();
        let theirs = url::Url::parse(input).unwrap();
        assert_eq!((ours.host.to_string().as_str(), theirs.host_str()), (host, Some(host)), "{input}");
        assert_eq!(ours.host.is_loopback(), loopback, "{input}");
    }
}
