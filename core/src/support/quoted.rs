//! `"text"` in messages, quoted and escaped as a JSON string. `{:?}` on a
//! `str` would do the same but pulls ~5 KB of Unicode tables into the
//! browser build (it escapes by grapheme and printability).

use core::fmt;

/// Displays `text` between double quotes, with quotes, backslashes and
/// control characters escaped as in JSON.
#[derive(Debug)]
pub struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match serde_json::to_string(self.0) {
            Ok(text) => f.write_str(&text),
            Err(_) => Err(fmt::Error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Quoted;

    #[test]
    fn quotes_and_escapes_like_debug_for_ascii() {
        for text in ["plain", "", "with \"quotes\"", "back\\slash", "tab\tand\nnewline"] {
            assert_eq!(Quoted(text).to_string(), format!("{text:?}"));
        }
        assert_eq!(Quoted("\u{1}").to_string(), "\"\\u0001\"");
    }
}
