//! Secrets (the Gitea token, a model's API key) and how they are kept out of everything CommiTea prints.
//!
//! A server may echo what it was sent: a proxy's error page quoting the request's headers, an API's
//! "token abc… is invalid". Every text a server or `git` hands back passes through [`scrub`] before it
//! reaches an error, a log line or a file, so the secret is never printed whatever the server says — and
//! before it is cut short: a secret cut in two no longer matches, and its first part would be printed.

use std::fmt;

/// What replaces a secret in printed text.
pub(crate) const MASK: &str = "***";

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

    /// `text` with every occurrence of this secret replaced by [`MASK`].
    pub(crate) fn scrub(&self, text: &str) -> String {
        text.replace(self.0.as_str(), MASK)
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
}
