//! The `search` view: issues ranked by how well their title, body and comments match a query.
//!
//! Ranking is a plain, deterministic score: every query word found in the title counts 5, in a label 3,
//! in the body 2 and in a comment 1 (each place counted once per word), and the whole query found as a
//! phrase in the title adds 5. An issue number (`#12`, `12`, `owner/repo#12`) in the query matches that
//! issue first. Ties go to open issues, then by key. Words are compared without case; words of one
//! character are ignored.

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

fn words(query: &str) -> Vec<String> {
    let mut out: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '/' && c != '-' && c != '_')
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() > 1)
        .collect();
    out.sort();
    out.dedup();
    out
}

fn snippet(text: &str, word: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let at = lower.find(word)?;
    // Byte offsets of `lower` and `text` agree only for ASCII; work in characters.
    let char_at = lower[..at].chars().count();
    let start = char_at.saturating_sub(SNIPPET / 3);
    let tail: String = text.chars().skip(start).collect();
    let (s, _) = cut(&tail, SNIPPET);
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(if start > 0 { format!("…{s}") } else { s })
}

fn number_in(query: &str) -> Option<(Option<String>, u64)> {
    let q = query.trim();
    if let Ok(k) = q.parse::<IssueKey>() {
        return Some((Some(k.repo.to_string()), k.number));
    }
    q.trim_start_matches('#')
        .parse::<u64>()
        .ok()
        .map(|n| (None, n))
}

/// Searches the snapshot's issues that pass the filters.
pub fn search(
    inputs: Inputs<'_>,
    snapshot: &Snapshot,
    query: &str,
    selection: &Selection,
) -> SearchView {
    let ws = words(query);
    let phrase = query.trim().to_lowercase();
    let number = number_in(query);
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
        if let Some((repo, n)) = &number
            && *n == p.key.number
            && repo.as_ref().is_none_or(|r| *r == p.key.repo.to_string())
        {
            score += 100;
            note(100, "number", &mut best);
        }
        let title = raw.title.to_lowercase();
        if phrase.chars().count() > 1 && title.contains(&phrase) && ws.len() > 1 {
            score += 5;
        }
        let body = raw.body.to_lowercase();
        for w in &ws {
            if title.contains(w.as_str()) {
                score += 5;
                note(5, "title", &mut best);
            }
            if raw
                .labels
                .iter()
                .any(|l| l.to_lowercase().contains(w.as_str()))
            {
                score += 3;
                note(3, "label", &mut best);
            }
            if body.contains(w.as_str()) {
                score += 2;
                note(2, "body", &mut best);
                if snip.is_none() {
                    snip = snippet(&raw.body, w);
                }
            }
            if let Some(c) = raw
                .comments
                .iter()
                .find(|c| c.body.to_lowercase().contains(w.as_str()))
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
        matches: hits
            .into_iter()
            .take(selection.limit)
            .map(|(_, _, _, m)| m)
            .collect(),
    }
}
