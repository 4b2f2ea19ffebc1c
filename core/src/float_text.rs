//! Decimal text for floats (`0.3`, `12.5`) through serde_json's shortest
//! round-trip formatter, which the core links anyway. `f64`'s `Display`
//! would pull a second float formatter (~14 KB) into the browser build.

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

#[cfg(test)]
mod tests {
    use super::float_text;

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
