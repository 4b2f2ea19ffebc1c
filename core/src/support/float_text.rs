//! Decimal text for floats (`0.3`, `12.5`) both ways, through serde_json's
//! number formatter and parser, which the core links anyway. `f64`'s
//! `Display` would pull a second float formatter (~14 KB) into the browser
//! build, and `f64::from_str` a 10 KB table of powers of five.

/// The shortest text that reads back as `x`; integral values keep no `.0`
/// (`2`, as `Display` writes them). Non-finite values are written as `NaN`/`inf`.
pub fn float_text(x: f64) -> String {
    match serde_json::Number::from_f64(x) {
        Some(n) => {
            let text = n.to_string();
            match text.strip_suffix(".0") {
                Some(integral) => integral.to_string(),
                None => text,
            }
        }
        None if x.is_nan() => "NaN".to_string(),
        None if x > 0.0 => "inf".to_string(),
        None => "-inf".to_string(),
    }
}

/// Reads decimal text (`12.5`, `-3`, `+0.25`, `1e-3`, `.5`, `7.`, surrounding
/// whitespace allowed) as a finite float; anything else, including `NaN`,
/// `inf` and out-of-range exponents, is `None`.
pub fn parse_float(text: &str) -> Option<f64> {
    let text = text.trim();
    let (sign, unsigned) = match text.as_bytes().first() {
        Some(b'-') => ("-", &text[1..]),
        Some(b'+') => ("", &text[1..]),
        _ => ("", text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => unsigned.split_at(at),
        None => (unsigned, ""),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) {
        return None;
    }
    // JSON's grammar is stricter (no `.5`, `7.` or leading zeros): rewrite to it.
    let whole = whole.trim_start_matches('0');
    let json = format!(
        "{sign}{}{}{}{exponent}",
        if whole.is_empty() { "0" } else { whole },
        if fraction.is_empty() { "" } else { "." },
        fraction
    );
    // Through `Value`, whose reader is linked anyway; reading `f64` directly would
    // link serde's error path that formats floats with `Display`.
    match serde_json::from_str(&json) {
        Ok(serde_json::Value::Number(n)) => n.as_f64().filter(|x| x.is_finite()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{float_text, parse_float};

    #[test]
    fn parse_float_reads_decimal_text_like_from_str() {
        for text in
            ["12.5", "-3", "+0.25", "1e-3", "2E5", ".5", "7.", " 0012.340 ", "0", "-0.0", "123456.789", "3.14159e2"]
        {
            assert_eq!(parse_float(text), text.trim().parse::<f64>().ok(), "{text:?}");
        }
        for text in
            ["", " ", ".", "-", "+", "1.2.3", "1e", "e5", "abc", "NaN", "inf", "1e999", "0x10", "1,5", "--1", "1 2"]
        {
            assert_eq!(parse_float(text), None, "{text:?}");
        }
    }

    #[test]
    fn matches_display_for_the_values_we_print() {
        for x in [0.1, 0.3, 0.5, 0.7, 0.9, 12.5, 2.0, 0.0, -3.25, 1e-7, 123456789.0, 1.5e300] {
            assert_eq!(float_text(x).parse::<f64>().unwrap(), x, "{x}");
        }
        assert_eq!(float_text(0.3), "0.3");
        assert_eq!(float_text(2.0), "2");
        assert_eq!(float_text(f64::NAN), "NaN");
        assert_eq!(float_text(f64::NEG_INFINITY), "-inf");
    }
}
