//! Talking to Gitea: the REST client, the wire types it decodes, and the sync into a snapshot. (The API
//! emulator the tests run against lives in `crates/testkit`, outside the shipped binary.)

pub mod client;
pub mod sync;
pub mod wire;

/// The words before an issue reference that make Gitea close or reopen the issue, as Gitea and Forgejo
/// ship them (`[repository.pull-request] CLOSE_KEYWORDS`, `REOPEN_KEYWORDS`).
const ACTION_KEYWORDS: [&str; 12] = [
    "close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved",
    "reopen", "reopens", "reopened",
];

/// `text` with every issue reference that follows a closing or reopening keyword made inert: the space
/// between the two becomes a tab.
///
/// Gitea reads references in what reaches it: a pull request's title and body (closing the issues on the
/// merge) and the messages of commits pushed to the default branch (at the push). A reference acts where
/// a keyword, an optional colon and one space come right before it (`references.go`), in any
/// repository the pusher may write. CommiTea's texts quote issue and milestone titles, the PM's words and
/// its own ops ("close acme/api#114"): a proposal's merge closed issues no op file names (an issue titled
/// "… fixes acme/api#12") and carried out a close before any check of the run's, and a run's commit
/// saying "Gitea refuses to close acme/api#114" would close it (audit 159). A tab still separates the
/// words, and Gitea still links the reference.
pub(crate) fn inert_refs(text: &str) -> String {
    let is_ref = |rest: &str| {
        let token = rest.split(char::is_whitespace).next().unwrap_or_default();
        let numbered = |t: &str| {
            let mut chars = t.chars();
            matches!(chars.next(), Some('#' | '!'))
                && chars.next().is_some_and(|c| c.is_ascii_digit())
        };
        let path = |t: &str| {
            t.split_once('/').is_some_and(|(owner, tail)| {
                let name_end = tail.find(['#', '!']).unwrap_or(tail.len());
                let part = |p: &str| {
                    !p.is_empty()
                        && p.chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                };
                part(owner) && part(&tail[..name_end]) && numbered(&tail[name_end..])
            })
        };
        let url = |t: &str| {
            (t.starts_with("http://") || t.starts_with("https://"))
                && ["/issues/", "/pulls/"].iter().any(|k| {
                    t.find(k)
                        .is_some_and(|i| t[i + k.len()..].starts_with(|c: char| c.is_ascii_digit()))
                })
        };
        numbered(token) || path(token) || url(token)
    };
    let keyword_before = |before: &str| {
        let word = before
            .rsplit(|c: char| c.is_whitespace() || c == '(' || c == '[')
            .next()
            .unwrap_or_default();
        let word = word.strip_suffix(':').unwrap_or(word);
        ACTION_KEYWORDS.iter().any(|k| folds_to(word, k))
    };
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c == ' ' && keyword_before(&text[..i]) && is_ref(&text[i + 1..]) {
            out.push('\t');
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `word` is the ASCII `keyword` under Go's case folding, as Gitea's `(?i)` patterns read it:
/// ASCII case, and the two letters outside ASCII that fold into it, `ſ` (long s) and `K` (Kelvin sign)
/// (audit 160: `cloſes acme/api#12` closed the issue).
fn folds_to(word: &str, keyword: &str) -> bool {
    let folded = word.chars().map(|c| match c {
        'ſ' => 's',
        '\u{212A}' => 'k',
        c => c.to_ascii_lowercase(),
    });
    folded.eq(keyword.chars())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_reference_after_a_closing_keyword_is_made_inert() {
        let inert = super::inert_refs;
        assert_eq!(inert("close acme/api#114"), "close\tacme/api#114");
        assert_eq!(
            inert("Crash on start, Fixes: acme/api#12 and resolves #3"),
            "Crash on start, Fixes:\tacme/api#12 and resolves\t#3"
        );
        assert_eq!(
            inert("(reopened https://g.example/a/b/issues/9)"),
            "(reopened\thttps://g.example/a/b/issues/9)"
        );
        // Go folds the long s into s: so does this (audit 160).
        assert_eq!(inert("cloſes acme/api#12"), "cloſes\tacme/api#12");
        assert_eq!(inert("reſolved: #7"), "reſolved:\t#7");
        // Anything else is left as written.
        for kept in [
            "set the priority of acme/web#30 to p/1",
            "closes the gap",
            "hotfix acme/api#1",
            "fix acme/api",
            "close #x",
        ] {
            assert_eq!(inert(kept), kept);
        }
    }
}
