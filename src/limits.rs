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
/// How much of a server's or a model's own words an error quotes.
pub(crate) const LONG_EXCERPT_CHARS: usize = 200;
/// The largest answer read from a model server: a reply that never ends is cut here and refused.
pub(crate) const MODEL_REPLY_BYTES: usize = 1024 * 1024;
/// What a model's prose answer may be, in characters, before it is refused as a runaway.
pub(crate) const ANSWER_PROSE_CHARS: usize = 8_000;
/// Follow-up questions `capture_work` passes on at once, and the characters of one.
pub(crate) const QUESTIONS: usize = 5;
/// The characters of one follow-up question.
pub(crate) const QUESTION_CHARS: usize = 300;
/// Issues in one `capture_work` proposal.
pub(crate) const PROPOSED_ISSUES: usize = 12;
/// The body of one proposed issue: a proposal is read in a review tray, not a document store.
pub(crate) const PROPOSED_BODY_CHARS: usize = 1_500;
/// What the PM says to `commitea directive --say`, in characters (a quote's bound).
pub(crate) const SAY_CHARS: usize = QUOTE_CHARS;

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

/// The most an error message says, in characters: errors are short, for a 4B model as much as a person.
pub(crate) const ERROR_CHARS: usize = 600;

/// The byte budget of one tool answer (compact JSON), sized for a 4B model's context: `focus` 2 KB, the
/// other views 8 KB, `apply_changes` and `record_directive` 4 KB, `capture_work` 24 KB (a proposal must
/// arrive whole to be filed; its size is bounded by [`PROPOSED_ISSUES`] and [`PROPOSED_BODY_CHARS`]).
/// Lists are cut to fit, each cut said in the answer.
pub(crate) fn answer_budget(tool: &str, view: Option<&str>) -> usize {
    match (tool, view) {
        ("query_project", Some("focus")) => 2 * 1024,
        ("query_project", _) => 8 * 1024,
        ("apply_changes" | "record_directive", _) => 4 * 1024,
        ("capture_work", _) => 24 * 1024,
        _ => 8 * 1024,
    }
}

/// The first [`LONG_EXCERPT_CHARS`] characters of `text`, as [`excerpt`] does: for a server's own error
/// message, which may say more than a refused input should.
pub(crate) fn excerpt_long(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(LONG_EXCERPT_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(LONG_EXCERPT_CHARS).is_some() {
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
