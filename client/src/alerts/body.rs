//! What a webhook receives: the body (JSON, or Slack's `{"text"}`), built only from the
//! alert's own fields (reasons, codes, provider names, counts, times: none of them holds the
//! key), then cleared of every key of the client all the same (signed in [`super::signature`]).

use crate::options::alerts::AlertFormat;
use captcha_dlq_core::Secret;
use serde_json::json;

use super::coalesce::Message;

/// The body of `message` for a webhook in `format`, from the client `owner`.
pub(crate) fn body(message: &Message, format: AlertFormat, owner: &str, keys: &[Secret]) -> Vec<u8> {
    let c = &message.latest;
    let value = match format {
        AlertFormat::Json => json!({
            "event": c.kind.as_str(),
            "subject": c.subject,
            "count": message.count,
            "first_at": message.first_at,
            "last_at": message.last_at,
            "summary": c.summary,
            "client": owner,
            "details": c.details,
        }),
        AlertFormat::Slack => {
            let times = if message.count > 1 {
                format!(" ({} times since {})", message.count, message.first_at.to_rfc3339())
            } else {
                String::new()
            };
            json!({ "text": format!("captcha-dlq {}: {}{times}", c.kind.as_str(), c.summary) })
        }
    };
    let mut text = value.to_string();
    for key in keys {
        text = key.redact(&text);
    }
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::trigger::Candidate;
    use crate::options::alerts::AlertKind;
    use captcha_dlq_core::Timestamp;

    fn message(summary: &str) -> Message {
        let at = Timestamp::from_unix_millis(1_700_000_000_000);
        Message {
            latest: Candidate {
                kind: AlertKind::NewReason,
                subject: "ERROR_X".into(),
                summary: summary.into(),
                details: json!({"reason": "ERROR_X"}),
                at,
                only_counts: false,
            },
            count: 3,
            first_at: at,
            last_at: at,
        }
    }

    #[test]
    fn bodies_in_both_formats_never_hold_a_key() {
        let keys = [Secret::new("KEY-123")];
        let json_body: serde_json::Value =
            serde_json::from_slice(&body(&message("cause KEY-123"), AlertFormat::Json, "owner-1", &keys)).unwrap();
        assert_eq!((json_body["event"].as_str(), json_body["count"].as_u64()), (Some("new_reason"), Some(3)));
        assert_eq!(json_body["first_at"], "2023-11-14T22:13:20Z");
        assert_eq!(json_body["summary"], "cause ***");
        let slack = String::from_utf8(body(&message("new"), AlertFormat::Slack, "o", &keys)).unwrap();
        assert_eq!(slack, r#"{"text":"captcha-dlq new_reason: new (3 times since 2023-11-14T22:13:20Z)"}"#);
    }
}
