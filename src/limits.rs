//! The bounds on what people and models may hand CommiTea, and how an error quotes what it refuses.
//!
//! A PM's quote is words, not a megabyte: every text a caller supplies has a limit, in characters
//! (Unicode scalar values, as JSON Schema's `maxLength` counts them), published in the tools' schemas and
//! in `docs/tools.md`. An error names the field and the limit and quotes at most [`EXCERPT_CHARS`] of the
//! input, so a refused megabyte never comes back as a megabyte.

/// A whole tool input, as JSON text.
pub(crate) const INPUT_BYTES: usize = 256 * 1024;
/// A directive's verbatim quote.
pub(crate) const QUOTE_CHARS: usize = 2_000;
/// A directive's one-line rationale.
pub(crate) const RATIONALE_CHARS: usize = 500;
/// A `capture_work` braindump.
pub(crate) const BRAINDUMP_CHARS: usize = 20_000;
/// One interview question or answer of `capture_work`.
pub(crate) const ANSWER_CHARS: usize = 2_000;
/// Interview turns in one `capture_work` call.
pub(crate) const ANSWERS: usize = 20;
/// An issue title (Gitea's own limit).
pub(crate) const TITLE_CHARS: usize = 255;
/// An issue body an op may carry.
pub(crate) const BODY_CHARS: usize = 20_000;
/// Ops in one `apply_changes` call: one coherent change.
pub(crate) const OPS: usize = 100;
/// Labels or dependencies on one `create_issue` op.
pub(crate) const LIST_ITEMS: usize = 20;
/// A search query, a label, a username, an issue reference or another short name.
pub(crate) const NAME_CHARS: usize = 200;
/// How much of a refused input an error quotes.
pub(crate) const EXCERPT_CHARS: usize = 40;

/// The first [`EXCERPT_CHARS`] characters of `text`, with `…` when there is more, control characters shown
/// as spaces: safe to put in an error message.
pub(crate) fn excerpt(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(EXCERPT_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(EXCERPT_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// Checks that `text` has at most `limit` characters; the error says how many it has and quotes its start.
pub(crate) fn check_len(text: &str, limit: usize) -> Result<(), String> {
    let n = text.chars().count();
    if n > limit {
        Err(format!(
            "{n} characters, more than the limit of {limit} (\"{}\")",
            excerpt(text)
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_short_and_printable() {
        assert_eq!(excerpt("short"), "short");
        let long = "x".repeat(10_000);
        assert_eq!(excerpt(&long).chars().count(), EXCERPT_CHARS + 1);
        assert_eq!(excerpt("a\nb\u{1b}c"), "a b c");
        let e = check_len(&"é".repeat(QUOTE_CHARS + 1), QUOTE_CHARS).unwrap_err();
        assert!(
            e.starts_with("2001 characters, more than the limit of 2000"),
            "{e}"
        );
        assert!(e.len() < 200, "{e}");
        assert!(check_len(&"é".repeat(QUOTE_CHARS), QUOTE_CHARS).is_ok());
    }
}
