//! A solved task's answer in the shape its kind declares ([`KindDecl::answer`]):
//! named values (`cookie`, `points`, `lot_number`) instead of the provider's own
//! keys, the same in every language.

use serde_json::{Map, Value};

use super::decl::{AnswerType, KindDecl};
use crate::solution::Solution;

/// The declared values of `solution`, by name. The error names the first required value the
/// answer does not hold.
pub fn typed(decl: &KindDecl, solution: &Solution) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for a in decl.answer {
        let raw = if a.keys.is_empty() {
            Some(Value::String(solution.text.clone()))
        } else {
            a.keys.iter().find_map(|k| lookup(&solution.fields, k)).cloned().or_else(|| {
                // The one required value, which the provider sent as plain text (2captcha's v1
                // answers, such as AWS WAF's cookie).
                let only_required = a.required && decl.answer.iter().filter(|x| x.required).count() == 1;
                (only_required && !solution.text.is_empty()).then(|| Value::String(solution.text.clone()))
            })
        };
        let value = raw.and_then(|v| convert(a.ty, v));
        match value {
            Some(v) => {
                out.insert(a.name.to_string(), v);
            }
            None if a.required => {
                return Err(format!("the {} answer has no `{}`", decl.kind, a.name));
            }
            None => {}
        }
    }
    Ok(out)
}

/// `key`, or `outer.inner` one object down.
fn lookup<'a>(fields: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    match key.split_once('.') {
        Some((outer, inner)) => fields.get(outer)?.get(inner),
        None => fields.get(key),
    }
    .filter(|v| !v.is_null())
}

fn convert(ty: AnswerType, value: Value) -> Option<Value> {
    match (ty, value) {
        (AnswerType::Text, Value::String(s)) if !s.is_empty() => Some(Value::String(s)),
        (AnswerType::Text, Value::Number(n)) => Some(Value::String(n.to_string())),
        // Numbers and points are the answers of declared kinds only, which the browser build
        // leaves out (`Task::Declared`).
        #[cfg(feature = "declared-kinds")]
        (AnswerType::Number, Value::Number(n)) => Some(Value::Number(n)),
        #[cfg(feature = "declared-kinds")]
        (AnswerType::Number, Value::String(s)) => {
            let digits = s.trim();
            let digits = digits.strip_prefix("rotate:").unwrap_or(digits);
            crate::support::float_text::parse_float(digits).and_then(serde_json::Number::from_f64).map(Value::Number)
        }
        #[cfg(feature = "declared-kinds")]
        (AnswerType::Points, v) => points(&v).map(Value::Array),
        #[cfg(feature = "declared-kinds")]
        (AnswerType::Indices, v) => indices(&v).map(Value::Array),
        (AnswerType::Object, v @ Value::Object(_)) => Some(v),
        _ => None,
    }
}

#[cfg(feature = "declared-kinds")]
/// Points as `[{x, y}, ...]` from any of the forms the services send: 2captcha's text
/// `coordinates:x=12,y=34;x=56,y=78` (also without the prefix), `[{x, y}]` or `[[x, y]]`.
/// Written as loops: the iterator adapters' copies weighed more in the browser build.
fn points(value: &Value) -> Option<Vec<Value>> {
    let mut out = Vec::new();
    match value {
        Value::String(text) => {
            let text = text.trim();
            for part in text.strip_prefix("coordinates:").unwrap_or(text).split(';') {
                if part.trim().is_empty() {
                    continue;
                }
                let (mut x, mut y) = (None, None);
                for kv in part.split(',') {
                    match kv.trim().split_once('=') {
                        // The core's float reader: std's brings its own tables into the .wasm.
                        Some(("x", v)) => x = crate::support::float_text::parse_float(v),
                        Some(("y", v)) => y = crate::support::float_text::parse_float(v),
                        _ => {}
                    }
                }
                out.push(point(x?, y?)?);
            }
        }
        Value::Array(items) => {
            for item in items {
                let (x, y) = match item {
                    Value::Object(o) => (o.get("x"), o.get("y")),
                    Value::Array(xy) if xy.len() == 2 => (xy.first(), xy.get(1)),
                    _ => return None,
                };
                out.push(point(coordinate(x?)?, coordinate(y?)?)?);
            }
        }
        _ => return None,
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(feature = "declared-kinds")]
/// The 0-based positions that match, from a list of flags (`[false, true]` -> `[1]`), a list of
/// positions (kept as they are), or one flag for a single image (`true` -> `[0]`). Anything else
/// (a negative or fractional position, a list mixing both forms) is no answer.
fn indices(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::Bool(matches) => Some(if *matches { vec![Value::from(0u64)] } else { Vec::new() }),
        Value::Array(items) if items.iter().all(Value::is_boolean) => Some(
            items.iter().enumerate().filter(|(_, v)| v.as_bool() == Some(true)).map(|(i, _)| Value::from(i)).collect(),
        ),
        Value::Array(items) => items.iter().map(|v| v.as_u64().map(Value::from)).collect(),
        _ => None,
    }
}

#[cfg(feature = "declared-kinds")]
/// One coordinate, a number or a number written as a string (2captcha's `json=1` points are
/// `{"x": "12", "y": "34"}`).
fn coordinate(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => crate::support::float_text::parse_float(s.trim()),
        other => other.as_f64(),
    }
}

#[cfg(feature = "declared-kinds")]
fn point(x: f64, y: f64) -> Option<Value> {
    let mut p = Map::new();
    p.insert("x".into(), serde_json::Number::from_f64(x)?.into());
    p.insert("y".into(), serde_json::Number::from_f64(y)?.into());
    Some(Value::Object(p))
}

/// A solution of `text` and the provider's `fields`, for the tests of the answer readers.
#[cfg(test)]
pub(super) fn test_solution(text: &str, fields: Value) -> Solution {
    let mut s = Solution::text(text);
    s.fields = fields.as_object().cloned().unwrap_or_default();
    s
}

#[cfg(test)]
mod tests {
    use super::test_solution as solution;
    use super::*;
    use crate::task::kinds::decl;
    use crate::task::TaskKind;
    use serde_json::json;

    #[test]
    fn points_come_from_every_form() {
        let d = decl(TaskKind::Coordinates);
        let want = json!({"points": [{"x": 12.0, "y": 34.0}, {"x": 56.0, "y": 78.0}]});
        let from_text = typed(d, &solution("coordinates:x=12,y=34;x=56,y=78", json!({}))).unwrap();
        assert_eq!(Value::Object(from_text), want);
        let from_pairs = typed(d, &solution("", json!({"coordinates": [[12, 34], [56, 78]]}))).unwrap();
        assert_eq!(Value::Object(from_pairs), want);
        let from_strings =
            typed(d, &solution("", json!({"coordinates": [{"x": "12", "y": "34"}, {"x": "56", "y": "78"}]}))).unwrap();
        assert_eq!(Value::Object(from_strings), want);
        let garbled = typed(d, &solution("coordinates:x=1", json!({}))).unwrap_err();
        assert_eq!(garbled, "the coordinates answer has no `points`");
    }

    /// A classification answer is the matching positions whatever form the service sends.
    #[test]
    fn classification_cells_come_from_flags_positions_or_one_flag() {
        let d = decl(TaskKind::RecaptchaClassification);
        let cells = |fields: Value| typed(d, &solution("", fields)).map(|a| a["cells"].clone());
        // CapMonster's ComplexImageTask: a flag per cell.
        assert_eq!(cells(json!({"answer": [false, true, false, true]})), Ok(json!([1, 3])));
        assert_eq!(cells(json!({"answer": [false, false]})), Ok(json!([])));
        // CapSolver's ReCaptchaV2Classification: the positions, or `hasObject` for one tile.
        assert_eq!(cells(json!({"type": "multi", "objects": [0, 3, 6]})), Ok(json!([0, 3, 6])));
        assert_eq!(cells(json!({"type": "single", "hasObject": true})), Ok(json!([0])));
        assert_eq!(cells(json!({"type": "single", "hasObject": false})), Ok(json!([])));
        for garbled in [json!({"answer": [1, true]}), json!({"objects": [-1]}), json!({"objects": "0,3"}), json!({})] {
            assert_eq!(cells(garbled), Err("the recaptcha_classification answer has no `cells`".to_string()));
        }
    }

    #[test]
    fn a_clearance_cookie_and_an_antigate_session_are_named() {
        let cf = decl(TaskKind::CloudflareChallenge);
        // CapMonster: `cf_clearance` alone; CapSolver: the cookies with the user agent.
        let capmonster = typed(cf, &solution("C", json!({"cf_clearance": "C"}))).unwrap();
        assert_eq!(Value::Object(capmonster), json!({"cookie": "C"}));
        let capsolver = json!({"cookies": {"cf_clearance": "C"}, "userAgent": "UA"});
        let capsolver = typed(cf, &solution("{...}", capsolver)).unwrap();
        assert_eq!(Value::Object(capsolver), json!({"cookie": "C", "user_agent": "UA"}));

        let session = json!({"url": "https://a.test/done", "domain": "a.test", "cookies": {"s": "1"},
            "localStorage": {"k": "v"}, "fingerprint": {"self.navigator.userAgent": "UA"}, "screenshots": []});
        let typed_session = typed(decl(TaskKind::Antigate), &solution("{...}", session)).unwrap();
        assert_eq!(
            Value::Object(typed_session),
            json!({"url": "https://a.test/done", "domain": "a.test", "cookies": {"s": "1"},
                "local_storage": {"k": "v"}, "fingerprint": {"self.navigator.userAgent": "UA"}})
        );
        let no_url = typed(decl(TaskKind::Antigate), &solution("", json!({"cookies": {}})));
        assert_eq!(no_url.unwrap_err(), "the antigate answer has no `url`");
    }

    #[test]
    fn cookies_and_geetest_fields_are_named() {
        let waf = typed(decl(TaskKind::AmazonWaf), &solution("{}", json!({"cookies": {"aws-waf-token": "T"}})));
        assert_eq!(waf.unwrap()["cookie"], "T");
        let v4 =
            json!({"captcha_id": "c", "lot_number": "l", "pass_token": "p", "gen_time": "1", "captcha_output": "o"});
        let typed_v4 = typed(decl(TaskKind::GeetestV4), &solution("{...}", v4.clone())).unwrap();
        assert_eq!(Value::Object(typed_v4), v4);
        let turnstile = typed(decl(TaskKind::Turnstile), &solution("0.tok", json!({"userAgent": "UA"}))).unwrap();
        assert_eq!(Value::Object(turnstile), json!({"token": "0.tok", "user_agent": "UA"}));
    }
}
