//! Secrets (the Gitea token, a model's API key) and how they are kept out of everything CommiTea prints.
//!
//! A server may echo what it was sent: a proxy's error page quoting the request's headers, an API's
//! "token abc… is invalid". Every text a server or `git` hands back passes through [`scrub`] before it
//! reaches an error, a log line or a file, so the secret is never printed whatever the server says — and
//! before it is cut short: a secret cut in two no longer matches, and its first part would be printed.

use std::fmt;

/// What replaces a secret in printed text.
pub(crate) const MASK: &str = "***";

/// The fewest characters of a secret, in a row, that are masked where they appear on their own.
const PART: usize = 8;

/// A secret: used to authenticate, never printed (`Debug` shows [`MASK`]).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    /// `text` trimmed, or `None` when nothing is left.
    pub(crate) fn new(text: &str) -> Option<Self> {
        let t = text.trim();
        (!t.is_empty()).then(|| Self(t.to_owned()))
    }

    /// The secret itself, for the request that needs it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of this secret replaced by [`MASK`], and every run of at least
    /// [`PART`] of its characters too: an API's "Incorrect API key provided: sk-proj-SECRETab...Z789"
    /// quotes a part, which is a part too many (audit 69). A secret shorter than [`PART`] is masked only
    /// as a word of its own, and one without a digit only whole: such a key is a placeholder
    /// (`sk-no-key-required`, llama.cpp's), not a random one, and its parts are words — audit 162: the
    /// model's "required" was filed as `***` in an issue title, and with a key `b` every `b` of a reply
    /// was masked, its `body` field with them.
    pub(crate) fn scrub(&self, text: &str) -> String {
        if self.0.len() < PART {
            return self.whole_words(text);
        }
        let whole = text.replace(self.0.as_str(), MASK);
        if !self.0.is_ascii() || !self.0.bytes().any(|b| b.is_ascii_digit()) {
            return whole;
        }
        // Every place a PART-long piece of the secret occurs is covered; pieces that overlap or touch
        // make one run, masked once. Each piece is found by the standard library's substring search, so
        // a long body (an error page) costs a few scans of it, not a comparison per byte and offset.
        // In either case: a model that writes the key back in lower case is quoting it all the same
        // (audit 143). ASCII case folding keeps every byte where it was.
        let folded = whole.to_ascii_lowercase();
        let secret = self.0.to_ascii_lowercase();
        let mut covered: Vec<(usize, usize)> = secret
            .as_bytes()
            .windows(PART)
            .filter_map(|w| std::str::from_utf8(w).ok())
            .flat_map(|piece| {
                // Overlapping occurrences too (`match_indices` skips them): an ASCII piece starts on a
                // character boundary, and so does the byte after that start.
                let mut at = Vec::new();
                let mut from = 0;
                while let Some(k) = folded[from..].find(piece) {
                    at.push((from + k, from + k + PART));
                    from += k + 1;
                }
                at
            })
            .collect();
        if covered.is_empty() {
            return whole;
        }
        covered.sort_unstable();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for (a, b) in covered {
            match runs.last_mut() {
                Some((_, end)) if a <= *end => *end = (*end).max(b),
                _ => runs.push((a, b)),
            }
        }
        // The secret is ASCII, so every run starts and ends on a character boundary.
        let mut out = String::with_capacity(whole.len());
        let mut copied = 0;
        for (a, b) in runs {
            out.push_str(&whole[copied..a]);
            out.push_str(MASK);
            copied = b;
        }
        out.push_str(&whole[copied..]);
        out
    }
}

impl Secret {
    /// `text` with each occurrence of this secret that is a word of its own (no letter, digit or `_`
    /// either side) replaced by [`MASK`].
    fn whole_words(&self, text: &str) -> String {
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (at, found) in text.match_indices(self.0.as_str()) {
            if at < copied {
                continue;
            }
            let end = at + found.len();
            if word(text[..at].chars().next_back()) || word(text[end..].chars().next()) {
                continue;
            }
            out.push_str(&text[copied..at]);
            out.push_str(MASK);
            copied = end;
        }
        out.push_str(&text[copied..]);
        out
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

/// `text` with `secret` (when there is one) replaced by [`MASK`].
pub(crate) fn scrub(text: &str, secret: Option<&Secret>) -> String {
    match secret {
        Some(s) => s.scrub(text),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_is_masked_and_the_rest_kept() {
        let s = Secret::new("  s3cret-tok \n").expect("a secret");
        assert_eq!(
            scrub(
                "token s3cret-tok refused; header: token s3cret-tok",
                Some(&s)
            ),
            "token *** refused; header: token ***"
        );
        assert_eq!(scrub("nothing here", Some(&s)), "nothing here");
        assert_eq!(scrub("s3cret-tok", None), "s3cret-tok");
        assert_eq!(format!("{s:?}"), "***");
        assert!(Secret::new("  ").is_none());
    }

    #[test]
    fn a_part_of_the_secret_quoted_on_its_own_is_masked_too() {
        // Overlapping pieces of a repetitive secret leave nothing of eight or more.
        let rep = Secret::new("aaaaaaaaab12").expect("a secret");
        assert_eq!(rep.scrub("x aaaaaaaaa y"), "x *** y");
        let s = Secret::new("sk-proj-SECRETabc123XYZ789").expect("a secret");
        assert_eq!(
            s.scrub("Incorrect API key provided: sk-proj-SECRETab...Z789 (é)"),
            "Incorrect API key provided: ***...Z789 (é)"
        );
        assert_eq!(s.scrub("key ends c123XYZ789."), "key ends ***.");
        // In another case too.
        assert_eq!(s.scrub("echo: SK-PROJ-secretABC123xyz789!"), "echo: ***!");
        // Seven characters in a row are too few to tell from ordinary text.
        assert_eq!(s.scrub("sk-proj is a prefix"), "sk-proj is a prefix");
    }

    #[test]
    fn a_placeholder_key_leaves_the_words_it_is_made_of() {
        // llama.cpp's placeholder: its parts are words a model writes (audit 162: "required" → "***").
        let s = Secret::new("sk-no-key-required").expect("a secret");
        assert_eq!(
            s.scrub("The email field must be required."),
            "The email field must be required."
        );
        assert_eq!(s.scrub("key: sk-no-key-required."), "key: ***.");
        // A key of one letter masks itself alone, not every letter of the kind.
        let b = Secret::new("b").expect("a secret");
        assert_eq!(
            b.scrub(r#"{"body": "plan b", "b": 1}"#),
            r#"{"body": "plan ***", "***": 1}"#
        );
        assert_eq!(b.scrub("bb b_ b"), "bb b_ ***");
    }
}
