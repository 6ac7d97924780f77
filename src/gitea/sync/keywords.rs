//! Closing keywords in pull request descriptions: `close[sd]?`, `fix(e[sd])?` or `resolve[sd]?` (any case,
//! optionally followed by `:`), whitespace, then `#N` or `owner/repo#N`.

use crate::domain::{IssueKey, RepoName};

/// Longest first, so that `closes` is not read as `close` followed by `s`.
const KEYWORDS: [&str; 9] = [
    "closes", "closed", "close", "fixes", "fixed", "fix", "resolves", "resolved", "resolve",
];

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_name(b: u8) -> bool {
    is_word(b) || b == b'-' || b == b'.'
}

/// The issues `body` closes by keyword; `#N` means an issue of `own`. Sorted, without duplicates.
pub fn closing_references(body: &str, own: &RepoName) -> Vec<IssueKey> {
    let lower = body.to_ascii_lowercase();
    let b = lower.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if i > 0 && is_word(b[i - 1]) {
            i += 1;
            continue;
        }
        let Some(kw) = KEYWORDS.iter().find(|k| b[i..].starts_with(k.as_bytes())) else {
            i += 1;
            continue;
        };
        let mut j = i + kw.len();
        if j < b.len() && is_word(b[j]) {
            i += 1;
            continue;
        }
        if j < b.len() && b[j] == b':' {
            j += 1;
        }
        let ws = j;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        if j > ws
            && let Some((key, end)) = reference(body, j, own)
        {
            out.push(key);
            i = end;
            continue;
        }
        i += 1;
    }
    out.sort();
    out.dedup();
    out
}

/// `#N` or `owner/repo#N` starting at byte `at`: the key and the byte after it.
fn reference(body: &str, at: usize, own: &RepoName) -> Option<(IssueKey, usize)> {
    let b = body.as_bytes();
    let mut j = at;
    let repo = if b.get(j) == Some(&b'#') {
        own.clone()
    } else {
        let start = j;
        while j < b.len() && is_name(b[j]) {
            j += 1;
        }
        if b.get(j) != Some(&b'/') {
            return None;
        }
        j += 1;
        while j < b.len() && is_name(b[j]) {
            j += 1;
        }
        if b.get(j) != Some(&b'#') {
            return None;
        }
        body.get(start..j)?.parse::<RepoName>().ok()?
    };
    j += 1;
    let digits = j;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    if j == digits || (j < b.len() && is_word(b[j])) {
        return None;
    }
    let number = body.get(digits..j)?.parse().ok()?;
    Some((repo.issue(number), j))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(body: &str) -> Vec<String> {
        closing_references(body, &RepoName::new("acme", "api"))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn finds_keywords_and_references() {
        assert_eq!(refs("Closes #4"), ["acme/api#4"]);
        assert_eq!(
            refs("fixes: acme/web#12\nResolved #3."),
            ["acme/api#3", "acme/web#12"]
        );
        assert_eq!(refs("FIX #7 and close #7"), ["acme/api#7"]);
    }

    #[test]
    fn ignores_non_keywords() {
        assert!(refs("prefixes #4").is_empty());
        assert!(refs("closesx #4").is_empty());
        assert!(refs("Closes#4").is_empty());
        assert!(refs("Closes #4a").is_empty());
        assert!(refs("see #4").is_empty());
        assert!(refs("closes ü/x#1 close").is_empty());
    }
}
