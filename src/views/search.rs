//! The `search` view: issues ranked by how well their title, body and comments match a query.
//!
//! Ranking is a plain, deterministic score: every query word found in the title counts 5, in a label 3,
//! in the body 2 and in a comment 1 (each place counted once per word), and the whole query found as a
//! phrase in the title adds 5. An issue number (`#12`, `12`, `owner/repo#12`) in the query matches that
//! issue first; a reference (`#12`, `owner/repo#12`) matches nothing else. Ties go to open issues, then by
//! key. Words are compared without case and match where a word of the text starts (`paginat` finds
//! "pagination"; `api` does not find "rapid"); a number matches only the whole number (`102` is not in
//! "1024" or "deb102ea"). Words of one character are left out, and the view says which.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::issue::cut;
use super::{Inputs, Selection};
use crate::domain::IssueKey;
use crate::state::Snapshot;

/// Characters of context kept around a match.
const SNIPPET: usize = 100;

/// The matches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchView {
    /// The query, as given.
    pub query: String,
    /// How many issues matched (the list is cut to the limit).
    pub total: usize,
    /// Words of the query left out of the search (one character long).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
    /// Best first.
    pub matches: Vec<SearchMatch>,
}

/// One matching issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchMatch {
    /// `owner/repo#N`.
    pub issue: String,
    /// Title.
    pub title: String,
    /// Lifecycle column.
    pub state: String,
    /// The score (see the module docs).
    pub score: u32,
    /// Where the best match is: `number`, `title`, `label`, `body` or `comment`.
    #[serde(rename = "in")]
    pub found_in: String,
    /// The text around the first match in the body or a comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// The query's words to search for, and those left out (one character long).
pub fn words(query: &str) -> (Vec<String>, Vec<String>) {
    let (mut out, mut ignored): (Vec<String>, Vec<String>) = query
        .split(|c: char| !c.is_alphanumeric() && c != '/' && c != '-' && c != '_')
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty())
        .partition(|w| w.chars().count() > 1);
    for v in [&mut out, &mut ignored] {
        v.sort();
        v.dedup();
    }
    (out, ignored)
}

/// Where `word` (lower case) first occurs in `lower` at the start of one of its words — and, for a
/// number, as a whole number — as a byte offset.
fn find_word(lower: &str, word: &str) -> Option<usize> {
    let numeric = word.chars().all(|c| c.is_ascii_digit());
    lower.match_indices(word).map(|(at, _)| at).find(|&at| {
        let starts = lower[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let ends = lower[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
        starts && (!numeric || ends)
    })
}

fn snippet(text: &str, word: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let at = find_word(&lower, word)?;
    // Byte offsets of `lower` and `text` agree only for ASCII; work in characters.
    let char_at = lower[..at].chars().count();
    let start = char_at.saturating_sub(SNIPPET / 3);
    let tail: String = text.chars().skip(start).collect();
    let (s, _) = cut(&tail, SNIPPET);
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(if start > 0 { format!("…{s}") } else { s })
}

/// The issue number the query names, with its repository when given, and whether the query is a
/// reference (`#12`, `owner/repo#12`: nothing else is searched) rather than a bare number.
fn number_in(query: &str) -> Option<(Option<String>, u64, bool)> {
    let q = query.trim();
    if let Ok(k) = q.parse::<IssueKey>() {
        return Some((Some(k.repo.to_string()), k.number, true));
    }
    q.trim_start_matches('#')
        .parse::<u64>()
        .ok()
        .map(|n| (None, n, q.starts_with('#')))
}

/// Searches the snapshot's issues that pass the filters.
pub fn search(
    inputs: Inputs<'_>,
    snapshot: &Snapshot,
    query: &str,
    selection: &Selection,
) -> SearchView {
    let number = number_in(query);
    let (ws, ignored) = match number {
        Some((_, _, true)) => (Vec::new(), Vec::new()),
        _ => words(query),
    };
    let phrase = query.trim().to_lowercase();
    let planned: std::collections::HashMap<&IssueKey, Option<&str>> = inputs
        .report
        .issues
        .iter()
        .map(|f| (&f.issue, f.planned_assignee.as_deref()))
        .collect();
    let mut hits: Vec<(u32, bool, &IssueKey, SearchMatch)> = Vec::new();
    for p in &inputs.plan.issues {
        if !selection.matches(p, planned.get(&p.key).copied().flatten()) {
            continue;
        }
        let Some(raw) = snapshot.issues.get(&p.key) else {
            continue;
        };
        let mut score = 0u32;
        let mut best: Option<(u32, &str)> = None;
        let mut snip: Option<String> = None;
        let note = |s: u32, place: &'static str, best: &mut Option<(u32, &str)>| {
            if best.is_none_or(|(b, _)| s > b) {
                *best = Some((s, place));
            }
        };
        if let Some((repo, n, _)) = &number
            && *n == p.key.number
            && repo.as_ref().is_none_or(|r| *r == p.key.repo.to_string())
        {
            score += 100;
            note(100, "number", &mut best);
        }
        let title = raw.title.to_lowercase();
        if ws.len() > 1 && find_word(&title, &phrase).is_some() {
            score += 5;
        }
        let body = raw.body.to_lowercase();
        for w in &ws {
            if find_word(&title, w).is_some() {
                score += 5;
                note(5, "title", &mut best);
            }
            if raw
                .labels
                .iter()
                .any(|l| find_word(&l.to_lowercase(), w).is_some())
            {
                score += 3;
                note(3, "label", &mut best);
            }
            if find_word(&body, w).is_some() {
                score += 2;
                note(2, "body", &mut best);
                if snip.is_none() {
                    snip = snippet(&raw.body, w);
                }
            }
            if let Some(c) = raw
                .comments
                .iter()
                .find(|c| find_word(&c.body.to_lowercase(), w).is_some())
            {
                score += 1;
                note(1, "comment", &mut best);
                if snip.is_none() {
                    snip = snippet(&c.body, w);
                }
            }
        }
        let Some((_, place)) = best else {
            continue;
        };
        let m = SearchMatch {
            issue: p.key.to_string(),
            title: raw.title.clone(),
            state: p.lifecycle.as_str().to_owned(),
            score,
            found_in: place.to_owned(),
            snippet: snip.filter(|_| place == "body" || place == "comment"),
        };
        hits.push((score, raw.is_closed(), &p.key, m));
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(b.2)));
    SearchView {
        query: query.to_owned(),
        total: hits.len(),
        ignored,
        matches: hits
            .into_iter()
            .take(selection.limit)
            .map(|(_, _, _, m)| m)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::{find_word, words};

    #[test]
    fn a_word_matches_where_a_word_of_the_text_starts_and_a_number_only_whole() {
        assert_eq!(find_word("cursor pagination", "paginat"), Some(7));
        assert_eq!(find_word("a rapid api", "api"), Some(8));
        assert_eq!(find_word("rapid", "api"), None);
        assert_eq!(find_word("see acme/api#102.", "102"), Some(13));
        assert_eq!(find_word("commit deb102ea and 1024", "102"), None);
        assert_eq!(find_word("est/2d", "2d"), Some(4));
        assert_eq!(find_word("über straße", "straße"), Some(6));
    }

    #[test]
    fn one_character_words_are_left_out_and_named() {
        let (ws, ignored) = words("a B pagination x pagination");
        assert_eq!(ws, ["pagination"]);
        assert_eq!(ignored, ["a", "b", "x"]);
    }
}
