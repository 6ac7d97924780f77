//! Closing keywords in a pull request's title and description, read as Gitea and Forgejo read them
//! (`modules/references/references.go`, `modules/markup/mdstripper`): a keyword (`close[sd]?`,
//! `fix(e[sd])?`, `resolve[sd]?`, any case) at the start or after whitespace, `(` or `[`, an optional `:`,
//! one space, then `#N` or `owner/repo#N` ending the word.
//!
//! The description is markdown and read as its text: code spans and blocks, raw HTML and the text of links
//! say nothing, and text in another node (`Closes **#4**`) is not next to the keyword. A full issue URL
//! in the description never closes anything (the forge lists it as a plain link); in the title, which is
//! plain text, one on the forge's own address reads as `owner/repo#N` first, as the forge rewrites it.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::domain::{IssueKey, RepoName};

/// The forge's default `CLOSE_KEYWORDS`; longest first, so that `closes` is not read as `close`.
const KEYWORDS: [&str; 9] = [
    "closes", "closed", "close", "fixes", "fixed", "fix", "resolves", "resolved", "resolve",
];

/// Go's `\s`.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0c' | b'\r')
}

/// A character of an owner or repository name in a reference (`[0-9a-zA-Z-_.]`).
fn is_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
}

/// The issues a pull request titled `title` with the description `body` closes by keyword once merged;
/// `#N` means an issue of `own`, and `web_root` is the forge's own address (`https://git.example.com/`,
/// from the pull request's `html_url`), which full issue URLs in the title are read against. Sorted,
/// without duplicates.
pub fn closing_references(
    title: &str,
    body: &str,
    own: &RepoName,
    web_root: Option<&str>,
) -> Vec<IssueKey> {
    let mut out = Vec::new();
    let title = web_root.map_or_else(|| title.to_owned(), |r| short_refs(title, r));
    scan(&title, own, &mut out);
    scan(&markdown_text(body), own, &mut out);
    out.sort();
    out.dedup();
    out
}

/// The forge's root address a pull request's `html_url` (`ROOT/owner/repo/pulls/N`) starts with.
pub fn web_root<'a>(html_url: &'a str, pull: &IssueKey) -> Option<&'a str> {
    let tail = format!("{}/pulls/{}", pull.repo, pull.number);
    let root = html_url.len().checked_sub(tail.len())?;
    html_url
        .get(root..)
        .filter(|t| t.eq_ignore_ascii_case(&tail))
        .and_then(|_| html_url.get(..root))
        .filter(|r| r.ends_with('/'))
}

/// `text` with each `ROOT owner/repo/issues/N` standing alone (after whitespace, `(`, `[` or the start;
/// before whitespace, `)`, `]`, the end, or punctuation then one of those) as `owner/repo#N`, and a pull
/// request's as `owner/repo!N` (the forge's `convertFullHTMLReferencesToShortRefs`).
fn short_refs(text: &str, root: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(root) {
        // The byte before: in what is left, or the last one written.
        let before = rest.as_bytes()[..at]
            .last()
            .or_else(|| out.as_bytes().last());
        let before_ok = before.is_none_or(|b| is_space(*b) || matches!(b, b'(' | b'['));
        let after = &rest[at + root.len()..];
        match before_ok.then(|| path_ref(after)).flatten() {
            Some((short, used)) => {
                out.push_str(&rest[..at]);
                out.push_str(&short);
                rest = &after[used..];
            }
            None => {
                let skip = at + root.len();
                out.push_str(&rest[..skip]);
                rest = &rest[skip..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `owner/repo/issues/N` (or `pulls`) at the start of `s`, ending as a reference must: the short form and
/// the bytes it took.
fn path_ref(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let name = |from: usize| {
        let mut j = from;
        while j < b.len() && is_name(b[j]) {
            j += 1;
        }
        (j > from).then_some(j)
    };
    let owner_end = name(0)?;
    (b.get(owner_end) == Some(&b'/')).then_some(())?;
    let repo_end = name(owner_end + 1)?;
    let rest = s.get(repo_end..)?;
    let (sep, kind) = if rest.starts_with("/issues/") {
        ('#', "/issues/".len())
    } else if rest.starts_with("/pulls/") {
        ('!', "/pulls/".len())
    } else {
        return None;
    };
    let digits = repo_end + kind;
    let mut end = digits;
    while end < b.len() && b[end].is_ascii_digit() {
        end += 1;
    }
    (end > digits && ends_reference(b, end, false))
        .then(|| (format!("{}{sep}{}", &s[..repo_end], &s[digits..end]), end))
}

/// Whether a reference may end at byte `end` of `b`: the end, whitespace, `)` or `]` (or a quote, after
/// `#N`), or one of `:;,.?!` followed by whitespace or the end.
fn ends_reference(b: &[u8], end: usize, quotes: bool) -> bool {
    match b.get(end) {
        None => true,
        Some(c) if is_space(*c) || matches!(c, b')' | b']') => true,
        Some(b'\'' | b'"') => quotes,
        Some(b':' | b';' | b',' | b'.' | b'?' | b'!') => {
            b.get(end + 1).is_none_or(|c| is_space(*c))
        }
        Some(_) => false,
    }
}

/// Adds the issues `text` closes by keyword to `out`.
fn scan(text: &str, own: &RepoName, out: &mut Vec<IssueKey>) {
    let b = text.as_bytes();
    for (hash, _) in text.match_indices('#') {
        let digits = hash + 1;
        let mut end = digits;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        if end == digits {
            continue;
        }
        let Ok(number) = text[digits..end].parse::<u64>() else {
            continue;
        };
        let opens = |c: Option<&u8>| c.is_none_or(|c| is_space(*c) || matches!(c, b'(' | b'['));
        // `#N` on its own, or `owner/repo#N`.
        let (start, repo) =
            if hash == 0 || opens(b.get(hash - 1)) || matches!(b[hash - 1], b'\'' | b'"') {
                if !ends_reference(b, end, true) {
                    continue;
                }
                (hash, own.clone())
            } else {
                let mut slash = hash;
                while slash > 0 && is_name(b[slash - 1]) {
                    slash -= 1;
                }
                if slash == hash || slash == 0 || b[slash - 1] != b'/' {
                    continue;
                }
                let mut start = slash - 1;
                while start > 0 && is_name(b[start - 1]) {
                    start -= 1;
                }
                if start == slash - 1
                    || !opens(start.checked_sub(1).and_then(|i| b.get(i)))
                    || !ends_reference(b, end, false)
                {
                    continue;
                }
                let Ok(repo) = text[start..hash].parse::<RepoName>() else {
                    continue;
                };
                (start, repo)
            };
        if follows_keyword(&b[..start]) {
            out.push(repo.issue(number));
        }
    }
}

/// Whether `before` ends with a closing keyword, an optional `:` and one space, the keyword at the start
/// or after whitespace, `(` or `[`.
fn follows_keyword(before: &[u8]) -> bool {
    let Some(before) = before.strip_suffix(b" ") else {
        return false;
    };
    let before = before.strip_suffix(b":").unwrap_or(before);
    KEYWORDS.iter().any(|k| {
        before.len() >= k.len()
            && before[before.len() - k.len()..].eq_ignore_ascii_case(k.as_bytes())
            && before[..before.len() - k.len()]
                .last()
                .is_none_or(|c| is_space(*c) || matches!(c, b'(' | b'['))
    })
}

/// The text of markdown `body` as the forge's stripper writes it: each text node on a line of its own
/// unless it follows another, soft line breaks as new lines, nothing of code, raw HTML or links.
fn markdown_text(body: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_DEFINITION_LIST;
    let mut out = String::new();
    let mut after_text = false;
    let mut code = 0usize;
    let mut link = 0usize;
    for event in Parser::new_ext(body, options) {
        match event {
            Event::Text(t) if code == 0 && link == 0 => {
                if !after_text && !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&t);
                after_text = true;
            }
            Event::SoftBreak if code == 0 && link == 0 && after_text => out.push('\n'),
            Event::HardBreak if after_text => {}
            Event::Start(Tag::CodeBlock(_)) => code += 1,
            Event::End(TagEnd::CodeBlock) => code = code.saturating_sub(1),
            Event::Start(Tag::Link { .. }) => link += 1,
            Event::End(TagEnd::Link) => {
                link = link.saturating_sub(1);
                after_text = false;
            }
            _ => after_text = false,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs_in(title: &str, body: &str) -> Vec<String> {
        closing_references(
            title,
            body,
            &RepoName::new("acme", "api"),
            Some("https://git.example.com/"),
        )
        .iter()
        .map(ToString::to_string)
        .collect()
    }

    fn refs(body: &str) -> Vec<String> {
        refs_in("", body)
    }

    #[test]
    fn finds_keywords_and_references() {
        assert_eq!(refs("Closes #4"), ["acme/api#4"]);
        assert_eq!(
            refs("fixes: acme/web#12\nResolved #3."),
            ["acme/api#3", "acme/web#12"]
        );
        assert_eq!(refs("FIX #7 and close #7"), ["acme/api#7"]);
        assert_eq!(refs("(fixes #8)"), ["acme/api#8"]);
        assert_eq!(refs("- [x] closes #9, and more"), ["acme/api#9"]);
    }

    #[test]
    fn ignores_non_keywords() {
        assert!(refs("prefixes #4").is_empty());
        assert!(refs("closesx #4").is_empty());
        assert!(refs("Closes#4").is_empty());
        assert!(refs("Closes #4a").is_empty());
        assert!(refs("see #4").is_empty());
        assert!(refs("closes ü/x#1 close").is_empty());
        assert!(refs("Closes #4.x").is_empty());
        assert!(refs("-fixes #4").is_empty());
    }

    /// What the forge's markdown stripper hides: the keyword and the reference must be one space apart in
    /// one text node, outside code and links.
    #[test]
    fn reads_the_description_as_the_forge_strips_it() {
        assert!(refs("Closes  #4").is_empty(), "two spaces");
        assert!(refs("Closes\n#4").is_empty(), "a line break");
        assert!(refs("`Closes #4`").is_empty(), "a code span");
        assert!(refs("```\nCloses #4\n```").is_empty(), "a code block");
        assert!(refs("    Closes #4").is_empty(), "an indented code block");
        assert!(refs("Closes **#4**").is_empty(), "another node");
        assert!(
            refs("[Closes #4](https://example.com)").is_empty(),
            "a link's text"
        );
        assert_eq!(refs("**Closes #4**"), ["acme/api#4"]);
        assert_eq!(refs("> Fixes #5"), ["acme/api#5"]);
    }

    /// A full issue URL closes from the title (read against the forge's address), never from the
    /// description, where the forge lists it as a plain link.
    #[test]
    fn full_urls_close_from_the_title_only() {
        assert_eq!(
            refs_in("Fix https://git.example.com/acme/web/issues/12", ""),
            ["acme/web#12"]
        );
        assert_eq!(
            refs_in("Fixes #3: the crash", "nothing here"),
            ["acme/api#3"]
        );
        assert!(refs("Closes https://git.example.com/acme/web/issues/12").is_empty());
        assert!(refs_in("Fix https://elsewhere.example.com/acme/web/issues/12", "").is_empty());
        assert!(refs_in("Fix https://git.example.com/acme/web/pulls/12", "").is_empty());
        assert!(refs_in("Fix https://git.example.com/acme/web/issues/12x", "").is_empty());
    }

    #[test]
    fn the_forge_root_is_read_from_the_pull_request_address() {
        let pull = RepoName::new("acme", "api").issue(7);
        assert_eq!(
            web_root("https://git.example.com/sub/acme/api/pulls/7", &pull),
            Some("https://git.example.com/sub/")
        );
        assert_eq!(
            web_root("https://git.example.com/acme/api/issues/7", &pull),
            None
        );
        assert_eq!(web_root("", &pull), None);
    }
}
