//! Untrusted text on the site: everything people typed into Gitea or the ledger stays text.
//!
//! Three defences, each independent of the templates:
//!
//! - [`clean`] removes control characters (but newlines and tabs) and the bidirectional embedding,
//!   override and isolate characters, so a title with U+202E cannot reverse the sentence around it; every
//!   string a page context holds passes through it ([`clean_value`]) before a template sees it, and the
//!   templates put names in `<bdi>` so right-to-left text stays in its place;
//! - [`markdown`] renders issue bodies and comments with pulldown-cmark and sanitises the HTML with
//!   ammonia: a small allow-list of tags, links only to `http`, `https` and `mailto` with
//!   `rel="nofollow noopener"`, no images (each a link to it, with its alt text), no raw HTML that survives;
//! - Tera's autoescaping escapes everything else, and the Content-Security-Policy of every page forbids
//!   inline script and anything not from the site itself.

use std::collections::HashSet;

/// Whether `c` is a bidirectional formatting character that can reorder the text around it: the
/// embeddings and overrides (U+202A–U+202E), the isolates (U+2066–U+2069) and the invisible marks
/// (U+200E, U+200F, U+061C).
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Whether `c` forces the characters after it to run one way whatever they are: the overrides LRO and RLO
/// (U+202D, U+202E), which make a line read otherwise than its characters say. The embeddings, isolates
/// and marks only set a run's direction, as right-to-left text pasted from a chat holds (an audit's
/// Hebrew quote with its isolates was refused).
pub(crate) fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202D}' | '\u{202E}')
}

/// The text without control characters (newlines and tabs kept) and bidirectional formatting
/// characters; borrowed when there is nothing to remove.
pub(crate) fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c);
    if s.chars().any(bad) {
        std::borrow::Cow::Owned(s.chars().filter(|c| !bad(*c)).collect())
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// JSON text with every bidirectional formatting character written as its `\uXXXX` escape: the same
/// JSON, but a terminal that shows it (`commitea tool`, an MCP log) is not reordered by a hostile title.
/// They can only stand inside strings, where the escape means the same character.
pub(crate) fn escape_bidi_json(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.chars().any(is_bidi_control) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_bidi_control(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A moment as people read it: `2026-11-25T10:00:00Z` → `2026-11-25 10:00 UTC`; anything that is not
/// RFC 3339 as given.
pub(crate) fn moment(s: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(s).map_or_else(
        |_| s.to_owned(),
        |t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%d %H:%M UTC")
                .to_string()
        },
    )
}

/// The forecast horizon in words people read: `730` → `2 years`, `365` → `1 year`, `90` → `3 months`,
/// `100` → `100 days`.
pub(crate) fn horizon_words(days: u32) -> String {
    let plural = |n: u32, one: &str| crate::prose::count(n, one, &format!("{one}s"));
    if days > 0 && days.is_multiple_of(365) {
        plural(days / 365, "year")
    } else if days > 0 && days.is_multiple_of(30) {
        plural(days / 30, "month")
    } else if days > 0 && days.is_multiple_of(7) {
        plural(days / 7, "week")
    } else {
        plural(days, "day")
    }
}

/// Says the horizon in words in every string of a page context: a view's `beyond horizon` becomes
/// `not within 2 years`, and the phrases the site's Rust code writes (`not within the horizon`, `beyond
/// the horizon`, `within the horizon`) name the horizon too.
pub(crate) fn say_horizon(v: &mut serde_json::Value, words: &str) {
    match v {
        serde_json::Value::String(s) => {
            if s == "beyond horizon" {
                *s = format!("not within {words}");
            } else if s.contains("horizon") {
                *s = s
                    .replace("not within the horizon", &format!("not within {words}"))
                    .replace("beyond the horizon", &format!("not within {words}"))
                    .replace("beyond horizon", &format!("not within {words}"))
                    .replace("within the horizon", &format!("within {words}"));
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| say_horizon(x, words)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| say_horizon(x, words)),
        _ => {}
    }
}

/// Cleans every string in a JSON value, keys included ([`clean`]).
pub(crate) fn clean_value(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => {
            if let std::borrow::Cow::Owned(c) = clean(s) {
                *s = c;
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(clean_value),
        serde_json::Value::Object(o) => {
            let dirty: Vec<String> = o
                .keys()
                .filter(|k| matches!(clean(k), std::borrow::Cow::Owned(_)))
                .cloned()
                .collect();
            for k in dirty {
                if let Some(val) = o.remove(&k) {
                    o.insert(clean(&k).into_owned(), val);
                }
            }
            o.values_mut().for_each(clean_value);
        }
        _ => {}
    }
}

/// The tags a rendered body may keep.
const TAGS: &[&str] = &[
    "a",
    "p",
    "br",
    "hr",
    "em",
    "strong",
    "del",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
];

/// Markdown nested deeper than this (lists in lists, quotes in quotes, emphasis in a link in a list…) is
/// shown as the plain text it is: no real body comes near it.
const MAX_NESTING: usize = 32;

/// Markdown as safe HTML: CommonMark with tables, strikethrough and task lists, then ammonia's
/// sanitiser with a small allow-list (see the module documentation). Headings are shifted down by
/// three levels, so a body's `#` never competes with the page's own headings.
pub(crate) fn markdown(source: &str) -> String {
    // The first characters only: anyone who may write an issue could make every run render a 50 MB body
    // (audit 159: an 88 MB page, 1.7 GB of memory). The rest is said, and is on Gitea.
    let (source, left_out) = match source.char_indices().nth(MAX_RENDERED_CHARS) {
        Some((at, _)) => (&source[..at], source[at..].chars().count()),
        None => (source, 0),
    };
    let html = markdown_whole(source);
    if left_out == 0 {
        return html;
    }
    format!(
        "{html}<p><em>… and {left_out} more characters, not shown here: the whole text is on Gitea.</em></p>"
    )
}

/// The most characters of one body or comment the site renders.
const MAX_RENDERED_CHARS: usize = 100_000;

/// [`markdown`] of the whole of `source`.
fn markdown_whole(source: &str) -> String {
    use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
    let source = clean(source);
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let shift = |l: HeadingLevel| match l {
        HeadingLevel::H1 => HeadingLevel::H4,
        HeadingLevel::H2 => HeadingLevel::H5,
        _ => HeadingLevel::H6,
    };
    // html5ever, under ammonia, takes time that grows faster than the square of the depth of nested
    // elements (a body of 10,000 nested list markers took 1.3 s to clean, 32,000 took 17 s, and every
    // run renders every body): anyone who may write an issue could stall every run. Parsing is linear,
    // so the depth is measured as the events are read, before anything is cleaned.
    let mut depth = 0usize;
    let mut too_deep = false;
    let mut events: Vec<Event<'_>> = Vec::new();
    for e in Parser::new_ext(&source, options) {
        match &e {
            Event::Start(_) => {
                depth += 1;
                too_deep |= depth > MAX_NESTING;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        // An image is shown as a link to it, its alt text said (audit 129: a screenshot in a bug report
        // vanished, alt text and address with it): the site loads nothing from elsewhere.
        if let Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) = e
        {
            events.push(Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }));
            events.push(Event::Text("image: ".into()));
            continue;
        }
        events.push({
            match e {
                Event::Start(Tag::Heading {
                    level,
                    id,
                    classes,
                    attrs,
                }) => Event::Start(Tag::Heading {
                    level: shift(level),
                    id,
                    classes,
                    attrs,
                }),
                Event::End(TagEnd::Heading(level)) => Event::End(TagEnd::Heading(shift(level))),
                // Raw HTML in a body is shown as the text it is, never interpreted.
                Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
                // A task's box as a character: a disabled, unlabelled checkbox is a form control
                // without a name.
                Event::TaskListMarker(done) => Event::Text(if done { "☑ " } else { "☐ " }.into()),
                Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
                other => other,
            }
        });
    }
    if too_deep {
        let shown = format!(
            "<p><em>Shown as plain text: its markdown nests more than {MAX_NESTING} levels deep.</em></p><pre>{}</pre>",
            super::charts::esc(&source)
        );
        return SANITISER.clean(&shown).to_string();
    }
    let mut html = String::with_capacity(source.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    SANITISER.clean(&html).to_string()
}

/// The sanitiser, built once: a site of 5,000 issues cleans tens of thousands of bodies and comments.
static SANITISER: std::sync::LazyLock<ammonia::Builder<'static>> =
    std::sync::LazyLock::new(sanitiser);

/// The ammonia builder for bodies and comments.
fn sanitiser() -> ammonia::Builder<'static> {
    let mut b = ammonia::Builder::empty();
    b.tags(TAGS.iter().copied().collect::<HashSet<_>>())
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .link_rel(Some("nofollow noopener"))
        .url_relative(ammonia::UrlRelative::Deny)
        .add_tag_attributes("a", ["href", "title"])
        .add_tag_attributes("th", ["align"])
        .add_tag_attributes("td", ["align"])
        .add_tag_attributes("ol", ["start"])
        .strip_comments(true);
    b
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_huge_body_is_cut_and_says_so() {
        let huge = "word ".repeat(60_000);
        let html = super::markdown(&huge);
        assert!(
            html.ends_with("<p><em>… and 200000 more characters, not shown here: the whole text is on Gitea.</em></p>"),
            "{}",
            &html[html.len() - 200..]
        );
        assert!(html.len() < 150_000);
        assert!(!super::markdown("short").contains("more characters"));
    }
    use super::*;

    #[test]
    fn bidi_and_control_characters_are_removed() {
        assert_eq!(clean("v1\u{202E}txt.exe"), "v1txt.exe");
        assert_eq!(clean("a\u{0007}b\u{2066}c\u{2069}\nd\te"), "abc\nd\te");
        assert!(matches!(clean("plain"), std::borrow::Cow::Borrowed(_)));
        // Right-to-left text itself is kept: only the formatting characters go.
        assert_eq!(clean("שלום"), "שלום");
        let mut v = serde_json::json!({"a\u{202E}": ["x\u{202E}y", {"t": "\u{0000}z"}], "n": 3});
        clean_value(&mut v);
        assert_eq!(v, serde_json::json!({"a": ["xy", {"t": "z"}], "n": 3}));
    }

    /// The tags of some HTML, lower-cased: everything from a `<` to the next `>`.
    fn live_tags(html: &str) -> Vec<String> {
        html.split('<')
            .skip(1)
            .map(|t| format!("<{}", t.split('>').next().unwrap_or("")).to_lowercase())
            .collect()
    }

    #[test]
    fn markdown_nested_past_the_limit_is_shown_as_its_text() {
        // Ten levels of lists are a body like any other.
        let ten = (0..10)
            .map(|d| format!("{}- level {d}", "  ".repeat(d)))
            .collect::<Vec<_>>()
            .join("\n");
        let html = markdown(&ten);
        assert_eq!(html.matches("<ul>").count(), 10, "{html}");
        assert!(!html.contains("<pre>"), "{html}");
        // Tens of thousands of nested markers (which took minutes to clean) are text, all of it kept and
        // escaped.
        let hostile = "- ".repeat(40_000) + "<b>x</b>";
        let html = markdown(&hostile);
        assert!(
            html.contains("nests more than 32 levels deep"),
            "{}",
            &html[..200]
        );
        assert!(!html.contains("<ul>"));
        assert!(html.contains("- - - ") && html.ends_with("&lt;b&gt;x&lt;/b&gt;</pre>"));
        let quotes = ">".repeat(100) + " x";
        assert!(markdown(&quotes).contains("<pre>&gt;&gt;&gt;"));
    }

    #[test]
    fn markdown_keeps_formatting_and_drops_everything_active() {
        let html = markdown(
            "# Title\n\n**bold** and [a link](https://example.com \"t\") and `code`\n\n- [x] done",
        );
        assert!(html.contains("<h4>Title</h4>"), "{html}");
        assert!(html.contains("<strong>bold</strong>"), "{html}");
        assert!(
            html.contains(
                "<a href=\"https://example.com\" title=\"t\" rel=\"nofollow noopener\">a link</a>"
            ),
            "{html}"
        );
        assert!(html.contains("<code>code</code>"), "{html}");
        assert!(html.contains("<li>☑ done</li>"), "{html}");
        for evil in [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "[x](javascript:alert(1))",
            "<a href=\"javascript:alert(1)\">x</a>",
            "[x](data:text/html,<script>alert(1)</script>)",
            "<iframe src=\"https://evil.example\"></iframe>",
            "![img](https://evil.example/track.png)",
            "<svg onload=alert(1)>",
            "[rel](/relative/path)",
        ] {
            let html = markdown(evil);
            // Raw HTML survives only as escaped text, so look at the live markup: the tags.
            for tag in live_tags(&html) {
                assert!(
                    ["<p", "</p", "<a ", "</a"]
                        .iter()
                        .any(|ok| tag.starts_with(ok)),
                    "{evil}: {tag} in {html}"
                );
                assert!(!tag.contains(" on"), "{evil}: {tag}");
                if let Some(href) = tag.split("href=\"").nth(1) {
                    assert!(
                        ["http://", "https://", "mailto:"]
                            .iter()
                            .any(|s| href.starts_with(s)),
                        "{evil}: {tag}"
                    );
                }
            }
        }
        // An image is a link to it, with its alt text; one whose address is not a web page's is its text.
        let html = markdown("Remote image: ![the crash](https://example.com/s.png)");
        assert!(
            html.contains(
                "<a href=\"https://example.com/s.png\" rel=\"nofollow noopener\">image: the crash</a>"
            ),
            "{html}"
        );
        let html = markdown("![x](javascript:alert(1))");
        assert!(
            html.contains("image: x") && !html.contains("javascript"),
            "{html}"
        );
        // Raw HTML is shown as text.
        assert!(markdown("<b>hi</b>").contains("&lt;b&gt;hi&lt;/b&gt;"));
        assert!(markdown("[m](mailto:a@example.com)").contains("href=\"mailto:a@example.com\""));
    }
}
