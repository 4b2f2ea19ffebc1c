//! The `traces` client option: where a client exports its OpenTelemetry spans (one per task,
//! see the native crate's `traces` module) and how, read and checked once here for every
//! front end that can export them.
//!
//! `traces: {otlp_endpoint, headers?, service_name?, protocol?}`:
//! - `otlp_endpoint`: the collector's OTLP/HTTP traces URL (`http(s)://…`); a URL without a
//!   path gets the standard `/v1/traces`, as OpenTelemetry's `OTEL_EXPORTER_OTLP_ENDPOINT` does;
//! - `headers`: sent with every export (a collector's token); their values are never shown;
//! - `service_name`: the `service.name` of the spans' resource, `captcha-dlq` by default;
//! - `protocol`: `http/protobuf` or `http/json`, OpenTelemetry's names; left out, the front end's
//!   own: `http/protobuf` natively, `http/json` in the browser (the client's exporter, which has
//!   no protobuf encoder, refuses `http/protobuf` by name).
//!
//! Feature `traces`; a build without it refuses the option in
//! [`crate::options::ClientOptions::from_value`] with a sentence saying so.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use captcha_dlq_core::support::json_read::{unit_variant, FieldError, Fields, FromJson};
use captcha_dlq_core::support::quoted::Quoted;
use captcha_dlq_core::support::weburl;

/// The `service.name` spans carry when the options do not name one.
pub const DEFAULT_SERVICE_NAME: &str = "captcha-dlq";

/// The path a collector takes traces at (OTLP/HTTP), added to an endpoint given without a path.
pub const OTLP_TRACES_PATH: &str = "/v1/traces";

/// How spans are encoded on the wire (OpenTelemetry's `OTEL_EXPORTER_OTLP_PROTOCOL` values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum OtlpProtocol {
    #[default]
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    #[serde(rename = "http/json")]
    HttpJson,
}

impl OtlpProtocol {
    pub const ALL: [OtlpProtocol; 2] = [OtlpProtocol::HttpProtobuf, OtlpProtocol::HttpJson];

    pub fn as_str(self) -> &'static str {
        match self {
            OtlpProtocol::HttpProtobuf => "http/protobuf",
            OtlpProtocol::HttpJson => "http/json",
        }
    }
}

impl FromJson for OtlpProtocol {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        unit_variant(value, &OtlpProtocol::ALL, OtlpProtocol::as_str)
    }
}

/// Where and how a client exports its spans, checked.
#[derive(Clone, PartialEq, Eq)]
pub struct TraceOptions {
    /// The full traces URL spans are posted to.
    pub otlp_endpoint: String,
    /// Header names (as given) and values sent with every export.
    pub headers: BTreeMap<String, String>,
    pub service_name: String,
    /// As given; `None` is the front end's default (see the module doc).
    pub protocol: Option<OtlpProtocol>,
}

/// The headers' values may be a collector's credentials: shown as `***`.
impl fmt::Debug for TraceOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: BTreeMap<&str, &str> = self.headers.keys().map(|k| (k.as_str(), "***")).collect();
        f.debug_struct("TraceOptions")
            .field("otlp_endpoint", &self.otlp_endpoint)
            .field("headers", &headers)
            .field("service_name", &self.service_name)
            .field("protocol", &self.protocol)
            .finish()
    }
}

impl FromJson for TraceOptions {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let endpoint: String = f.req("otlp_endpoint")?;
        let headers: BTreeMap<String, String> = f.or_default("headers")?;
        let service_name: String = f.or("service_name", DEFAULT_SERVICE_NAME.to_string())?;
        let protocol = f.opt("protocol")?;
        f.finish()?;
        let otlp_endpoint =
            traces_url(&endpoint).map_err(|problem| FieldError::new(field("otlp_endpoint"), problem))?;
        for (name, value) in &headers {
            if let Some(problem) = header_problem(name, value) {
                return Err(FieldError::new(format!("{}.{name}", field("headers")), problem));
            }
        }
        if service_name.trim().is_empty() {
            return Err(FieldError::new(field("service_name"), "is empty: name the service the spans come from"));
        }
        Ok(TraceOptions { otlp_endpoint, headers, service_name, protocol })
    }
}

/// A field's name in the casing being read.
fn field(name: &str) -> String {
    captcha_dlq_core::support::json_read::spelled(name).into_owned()
}

/// The URL spans go to: `endpoint` itself, with `/v1/traces` when it has no path.
fn traces_url(endpoint: &str) -> Result<String, String> {
    let url = weburl::parse(endpoint)
        .map_err(|e| format!("{} is not an http(s) URL of an OTLP collector: {e}", Quoted(endpoint)))?;
    if url.userinfo.is_some() {
        return Err("has a user name or password in it: give a collector's credentials in `headers`".into());
    }
    Ok(match url.path {
        "" | "/" if url.query.is_none() => format!("{}{OTLP_TRACES_PATH}", endpoint.trim_end_matches('/')),
        _ => endpoint.to_string(),
    })
}

/// Why `name: value` cannot be an HTTP header, if it cannot (RFC 9110 token names; values
/// without control characters other than tab).
fn header_problem(name: &str, value: &str) -> Option<String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Some(format!("{} is not an HTTP header name", Quoted(name)));
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Some("the value has a line break or another control character, which no header can carry".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> Result<TraceOptions, FieldError> {
        TraceOptions::from_json(value)
    }

    #[test]
    fn defaults_fill_what_is_not_given_and_a_bare_endpoint_gets_the_traces_path() {
        let o = read(json!({"otlp_endpoint": "http://127.0.0.1:4318"})).unwrap();
        assert_eq!(o.otlp_endpoint, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(o.service_name, DEFAULT_SERVICE_NAME);
        assert_eq!(o.protocol, None);
        assert!(o.headers.is_empty());
        let given = "https://collector.example/otlp/traces";
        let o = read(json!({"otlp_endpoint": given, "protocol": "http/json", "service_name": "shop"})).unwrap();
        assert_eq!(
            (o.otlp_endpoint.as_str(), o.protocol, o.service_name.as_str()),
            (given, Some(OtlpProtocol::HttpJson), "shop")
        );
    }

    #[test]
    fn bad_values_are_refused_naming_the_field() {
        let cases = [
            (json!({}), "otlp_endpoint", "missing field"),
            (json!({"otlp_endpoint": "grpc://x:4317"}), "otlp_endpoint", "not an http(s) URL"),
            (json!({"otlp_endpoint": "http://u:p@x:4318"}), "otlp_endpoint", "password"),
            (json!({"otlp_endpoint": "http://x", "protocol": "grpc"}), "protocol", "unknown value `grpc`"),
            (json!({"otlp_endpoint": "http://x", "headers": {"a b": "1"}}), "headers.a b", "not an HTTP header name"),
            (json!({"otlp_endpoint": "http://x", "headers": {"x-token": "a\r\nb"}}), "headers.x-token", "line break"),
            (json!({"otlp_endpoint": "http://x", "service_name": " "}), "service_name", "is empty"),
            (json!({"otlp_endpoint": "http://x", "endpoint": "y"}), "endpoint", "unknown field `endpoint`"),
        ];
        for (value, field, problem) in cases {
            let e = read(value.clone()).expect_err(&value.to_string());
            assert_eq!(e.field, field, "{value}");
            assert!(e.problem.contains(problem), "{value}: {}", e.problem);
        }
    }

    #[test]
    fn header_values_are_not_shown() {
        let o =
            read(json!({"otlp_endpoint": "http://x", "headers": {"authorization": "Bearer SECRET-TOKEN"}})).unwrap();
        let shown = format!("{o:?}");
        assert!(shown.contains("authorization") && !shown.contains("SECRET-TOKEN"), "{shown}");
    }
}
