//! Text an operator reads in a terminal or on a page, written by someone else: a park reason,
//! an operator's name (issue 44, finding 9). Control characters would move the cursor, clear
//! the screen or forge lines in `captcha-dlq dlq audit`; bidi overrides and isolates (and the
//! invisible marks around them) make a name read as another. The rule refuses such text where
//! it enters ([`check_shown_text`]) and escapes it where it leaves for a terminal
//! ([`escape_for_terminal`]), for entries written before the rule or by another program.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Characters that change how the text around them reads without showing: the bidi embeddings,
/// overrides and isolates, the directional marks, and zero-width characters.
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Whether `c` may not appear in text shown to an operator.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control() || is_invisible_format(c)
}

/// `Ok` when `text` has no control, bidi or zero-width character; else what is wrong, naming
/// the first such character and where it is (characters counted from 1).
pub fn check_shown_text(text: &str) -> Result<(), String> {
    match text.chars().enumerate().find(|(_, c)| is_unsafe_char(*c)) {
        None => Ok(()),
        Some((i, c)) => {
            let kind = if c.is_control() { "a control character" } else { "a bidi or invisible formatting character" };
            Err(format!("contains {kind} (U+{:04X}) at character {}", u32::from(c), i + 1))
        }
    }
}

/// `text` with each control, bidi or zero-width character written as `\u{XXXX}`, so a terminal
/// shows it instead of obeying it. Borrowed when there is none.
pub fn escape_for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_char(c) {
            let _ = write!(out, "\\u{{{:04X}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_are_refused_and_escaped() {
        assert!(check_shown_text("wrong sitekey, ask ops — ключ").is_ok());
        let e = check_shown_text("ok\u{1b}[2J").unwrap_err();
        assert!(e.contains("control character (U+001B) at character 3"), "{e}");
        let e = check_shown_text("alice\u{202E}gnp.exe").unwrap_err();
        assert!(e.contains("bidi") && e.contains("U+202E"), "{e}");
        assert!(check_shown_text("a\u{2067}b").is_err());
        assert!(check_shown_text("line\nbreak").is_err());
        assert_eq!(escape_for_terminal("a\u{1b}[31mb\u{202E}c"), "a\\u{001B}[31mb\\u{202E}c");
        assert!(matches!(escape_for_terminal("plain"), Cow::Borrowed(_)));
    }
}
