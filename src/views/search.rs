//! The `search` view: issues ranked by how well their title, body and comments match a query.
//!
//! Ranking is a plain, deterministic score: every query word found in the title counts 5, in a label 3,
//! in the body 2, in a comment 1 and naming the issue's repository (`acme/web`, or `web` alone) 1 (each
//! place counted once per word), and the whole query found as a phrase in the title adds 5. A reference
//! anywhere in the query (`#12`, `owner/repo#12`, `repo#12`, the repository without case) matches that
//! issue first, and so does a bare number where the query is only numbers or
//! it follows `issue` (in "Android 15" the 15 is a word); a reference is not also a word. Ties go to open issues, then by
//! key. Words are compared without case and match where a word of the text starts (`paginat` finds
//! "pagination"; `api` does not find "rapid"); a number matches only the whole number (`102` is not in
//! "1024" or "deb102ea"). Words of one character are left out, and the view says which.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::issue::cut;
use super::{Inputs, Selection};
use crate::domain::{IssueKey, RepoName};
use crate::state::Snapshot;

/// Characters of context kept around a match.
const SNIPPET: usize = 100;

/// The matches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchView {
    /// Day 0 of the forecast the answer comes from: its dates are as of this day (audit 122: a focus on a
    /// week-old snapshot gave dates in the past, with nothing to say so).
    #[serde(rename = "asOf")]
    pub as_of: String,
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
    /// Where the best match is: `number`, `title`, `label`, `body`, `comment` or `repository`.
    #[serde(rename = "in")]
    pub found_in: String,
    /// The text around the first match in the body or a comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// What a query asks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Terms {
    /// Issue numbers it names, each with its repository (lower case) when given: `12`, `#12`,
    /// `owner/repo#12`, `repo#12`.
    pub numbers: Vec<(Option<String>, u64)>,
    /// Words to look for, lower case (a bare number is one too).
    pub words: Vec<String>,
    /// Words left out, one character long.
    pub ignored: Vec<String>,
    /// The words as typed, in their order: the phrase a title holding them all together matches
    /// (audit 151: built from the sorted words, "stale data" was looked for as "data stale").
    pub phrase: String,
}

/// The query read into its terms: a reference (`#12`, `owner/repo#12`) names an issue and is nothing
/// else; a bare number is a word, and names an issue as well where the query is only numbers (`102`)
/// or the word before it is `issue` (`issue 102`) — in "Android 15" it is part of what is looked for,
/// not issue #15; the rest is words.
pub fn terms(query: &str) -> Terms {
    let mut t = Terms::default();
    let tokens: Vec<String> = query
        .split_whitespace()
        .map(|raw| {
            lowered(raw.trim_matches(|c: char| {
                matches!(c, ',' | '.' | ';' | ':' | '(' | ')' | '"' | '\'')
            }))
        })
        .collect();
    let only_numbers = tokens
        .iter()
        .all(|tok| tok.is_empty() || tok.parse::<u64>().is_ok() || reference(tok).is_some());
    for (i, tok) in tokens.iter().enumerate() {
        let after_issue = i > 0
            && tokens
                .get(i - 1)
                .is_some_and(|w| matches!(w.as_str(), "issue" | "issues"));
        if let Some(r) = reference(tok) {
            t.numbers.push(r);
            continue;
        }
        if let Ok(n) = tok.parse::<u64>()
            && (only_numbers || after_issue)
        {
            t.numbers.push((None, n));
        }
        for w in tok
            .split(|c: char| !in_word(c) && c != '/' && c != '-' && c != '_')
            .filter(|w| !w.is_empty())
        {
            // One character is too little to look for, but for a script written without spaces, where
            // one character is a word.
            if w.chars().count() > 1 || w.chars().all(unspaced) {
                t.words.push(w.to_owned());
            } else {
                t.ignored.push(w.to_owned());
            }
        }
    }
    t.phrase = t.words.join(" ");
    for v in [&mut t.words, &mut t.ignored] {
        v.sort();
        v.dedup();
    }
    t.numbers.sort();
    t.numbers.dedup();
    t
}

/// A reference in a query: `#12`, `owner/repo#12`, or `repo#12` with the repository's name alone.
fn reference(tok: &str) -> Option<(Option<String>, u64)> {
    let (repo, n) = tok.split_once('#')?;
    let n = n.parse::<u64>().ok()?;
    if repo.is_empty() {
        Some((None, n))
    } else {
        RepoName::could_be(repo).then(|| (Some(repo.to_owned()), n))
    }
}

impl Terms {
    /// Whether there is neither a number nor a word to look for.
    pub fn is_empty(&self) -> bool {
        self.numbers.is_empty() && self.words.is_empty()
    }
}

/// Text as the search compares it: composed (NFC: "é" typed as one character or as "e" and an accent
/// is one letter), lower case, without zero-width characters (`zero\u{200b}width` is one word).
pub(crate) fn lowered(text: &str) -> String {
    composed(text).to_lowercase()
}

/// `text` composed (NFC) and without zero-width characters, its case kept.
fn composed(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    text.nfc()
        .filter(|c| {
            !matches!(
                c,
                '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}'
            )
        })
        .collect()
}

/// Whether `c` belongs in a word: a letter, a digit, or a mark on one (a Thai tone mark, the Devanagari
/// virama), as the site's search reads words (`\p{L}\p{N}\p{M}`).
fn in_word(c: char) -> bool {
    c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c)
}

/// Whether `c` is of a script written without spaces between words (Chinese, Japanese, Korean's
/// Hangul syllables, Thai, Lao, Khmer, Myanmar): there a word starts anywhere, and one character can be a
/// word (audit 95: a Thai word inside a title was found by neither search).
fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0x20000..=0x2FA1F // CJK extensions B and after
    )
}

/// Each place `word` occurs in `lower`, with whether a word of `lower` starts there (anywhere, in a
/// script written without spaces) and whether one ends where it does.
fn occurrences<'t>(
    lower: &'t str,
    word: &'t str,
) -> impl Iterator<Item = (usize, bool, bool)> + 't {
    let anywhere = word.chars().next().is_some_and(unspaced);
    lower.match_indices(word).map(move |(at, _)| {
        let starts = anywhere
            || lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !in_word(c) || unspaced(c));
        let ends = lower[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !in_word(c));
        (at, starts, ends)
    })
}

/// Where `word` (lower case) first occurs in `lower` at the start of one of its words — and, for a
/// number, as a whole number — as a byte offset. In a script written without spaces a word starts
/// anywhere: "登录失败" is found in "新用户登录失败的问题".
fn find_word(lower: &str, word: &str) -> Option<usize> {
    let numeric = word.chars().all(|c| c.is_ascii_digit());
    occurrences(lower, word)
        .find(|&(_, starts, ends)| starts && (!numeric || ends))
        .map(|(at, _, _)| at)
}

/// How `word` occurs in `lower`: `Some(true)` where it is a whole word somewhere, `Some(false)` where it
/// only starts one (`log` in "login"), `None` where it is not there as [`find_word`] finds words.
fn word_match(lower: &str, word: &str) -> Option<bool> {
    find_word(lower, word)?;
    let anywhere = word.chars().next().is_some_and(unspaced);
    Some(anywhere || occurrences(lower, word).any(|(_, starts, ends)| starts && ends))
}

/// A field's score for a word: `whole` where it is a whole word there, less where it only starts one
/// (audit 140: "audit log" ranked "logging out" and "login" as high as an audit log).
fn weigh(found: Option<bool>, whole: u32) -> Option<u32> {
    found.map(|w| if w { whole } else { whole.div_ceil(2) })
}

fn snippet(text: &str, word: &str) -> Option<String> {
    let text = composed(text);
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

/// Searches the snapshot's issues that pass the filters.
pub fn search(
    inputs: Inputs<'_>,
    snapshot: &Snapshot,
    query: &str,
    selection: &Selection,
) -> SearchView {
    let Terms {
        numbers,
        words: ws,
        ignored,
        phrase,
    } = terms(query);
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
        if numbers.iter().any(|(repo, n)| {
            *n == p.key.number && repo.as_ref().is_none_or(|r| p.key.repo.is_named(r))
        }) {
            score += 100;
            note(100, "number", &mut best);
        }
        let title = lowered(&raw.title);
        if ws.len() > 1 && find_word(&title, &phrase).is_some() {
            score += 5;
        }
        let body = lowered(&raw.body);
        // Folded once per issue, not once per word of the query.
        let labels: Vec<String> = raw.labels.iter().map(|l| lowered(l)).collect();
        let comments: Vec<String> = raw.comments.iter().map(|c| lowered(&c.body)).collect();
        for w in &ws {
            if p.key.repo.is_named(w) {
                score += 1;
                note(1, "repository", &mut best);
            }
            if let Some(n) = weigh(word_match(&title, w), 5) {
                score += n;
                note(n, "title", &mut best);
            }
            if let Some(n) = weigh(labels.iter().filter_map(|l| word_match(l, w)).max(), 3) {
                score += n;
                note(n, "label", &mut best);
            }
            if let Some(n) = weigh(word_match(&body, w), 2) {
                score += n;
                note(n, "body", &mut best);
                if snip.is_none() {
                    snip = snippet(&raw.body, w);
                }
            }
            if let Some(c) = comments
                .iter()
                .position(|c| find_word(c, w).is_some())
                .map(|at| &raw.comments[at])
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
        as_of: inputs.report.as_of.to_string(),
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
    use super::{find_word, lowered, terms, weigh, word_match};

    #[test]
    fn a_word_that_only_starts_a_longer_one_weighs_less() {
        assert_eq!(word_match("the audit log", "log"), Some(true));
        assert_eq!(word_match("the login form", "log"), Some(false));
        assert_eq!(word_match("login, then the log", "log"), Some(true));
        assert_eq!(word_match("catalog", "log"), None);
        assert_eq!(weigh(word_match("audit log", "log"), 5), Some(5));
        assert_eq!(weigh(word_match("login", "log"), 5), Some(3));
        assert_eq!(weigh(word_match("logging out", "log"), 2), Some(1));
        // The phrase is the words as typed (audit 151: sorted, "stale data" was "data stale").
        assert_eq!(terms("Stale data").phrase, "stale data");
        assert_eq!(terms("data, stale").phrase, "data stale");
        // A script without spaces has no word ends: a match is whole.
        assert_eq!(word_match("新用户登录失败的问题", "登录"), Some(true));
    }

    #[test]
    fn text_without_spaces_and_decomposed_letters_are_found_as_people_type_them() {
        // A Chinese title has no spaces: a word in the middle of it is found.
        let title = lowered("新用户登录失败的问题");
        assert_eq!(terms("登录失败").words, ["登录失败"]);
        assert!(find_word(&title, "登录失败").is_some());
        // One character is a word there; a Latin letter is not.
        assert_eq!(terms("猫 a").words, ["猫"]);
        // After such text a Latin word starts.
        assert!(find_word(&lowered("新用户login失败"), "login").is_some());
        // "Café" decomposed (macOS) and "CAFÉ" composed are one word.
        let nfd = lowered("Cafe\u{301} API");
        assert_eq!(terms("CAFÉ").words, ["café"]);
        assert!(find_word(&nfd, "café").is_some());
        // A zero-width space does not split a word.
        assert!(find_word(&lowered("zero\u{200b}width"), "zerowidth").is_some());
        // Thai is written without spaces too, and a tone mark is part of its word (audit 95).
        let thai = lowered("แก้ไขการเข้าสู่ระบบล้มเหลว");
        assert_eq!(terms("ล้มเหลว").words, ["ล้มเหลว"]);
        assert!(terms("ล้มเหลว").ignored.is_empty());
        assert!(find_word(&thai, "เข้าสู่ระบบ").is_some());
        assert!(find_word(&thai, "ล้มเหลว").is_some());
        // A Devanagari word keeps its virama and vowel signs: one word, found whole.
        assert_eq!(terms("प्रदर्शन").words, ["प्रदर्शन"]);
        assert!(find_word(&lowered("प्रदर्शन सुधार"), "प्रदर्शन").is_some());
        // Inside a Latin word is still no match.
        assert_eq!(find_word(&lowered("rapid"), "api"), None);
    }

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
        let t = terms("a B pagination x pagination");
        assert_eq!(t.words, ["pagination"]);
        assert_eq!(t.ignored, ["a", "b", "x"]);
    }

    #[test]
    fn numbers_and_references_are_read_anywhere_in_the_query() {
        let t = terms("Keys #12, ACME/Web#3 and issue 102");
        assert_eq!(
            t.numbers,
            [(None, 12), (None, 102), (Some("acme/web".to_owned()), 3)]
        );
        // A reference is not a word; a bare number after `issue` is both.
        assert_eq!(t.words, ["102", "and", "issue", "keys"]);
        // A bare number alone names an issue; among words it is one of them.
        assert_eq!(terms("102").numbers, [(None, 102)]);
        assert_eq!(terms("#3 102").numbers, [(None, 3), (None, 102)]);
        let android = terms("Android 15");
        assert!(android.numbers.is_empty(), "{android:?}");
        assert_eq!(android.words, ["15", "android"]);
        assert!(terms("a b").is_empty() && !terms("a #5").is_empty());
        // A repository's name alone before `#` names it; what could be no repository is words.
        assert_eq!(terms("web#30").numbers, [(Some("web".to_owned()), 30)]);
        let odd = terms("c++#3");
        assert!(odd.numbers.is_empty(), "{odd:?}");
    }
}
