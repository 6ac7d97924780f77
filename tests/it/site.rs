//! The rendered site as a whole: a page per issue, milestone and person and the changes page, every link
//! resolving, the Content-Security-Policy on every page, and hostile text staying text everywhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use commitea::pipeline;

use crate::pipeline::{options, state_from_fixture};

/// Every file of the site under `public/`, by path relative to it.
fn site(dir: &Path) -> BTreeMap<String, String> {
    let public = dir.join("public");
    walkdir::WalkDir::new(&public)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(&public)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect()
}

/// The values of `attr="…"` in the tags of some HTML (not in its text), unescaped as a browser would.
fn attrs(html: &str, attr: &str) -> Vec<String> {
    let needle = format!(" {attr}=\"");
    html.split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap_or(""))
        .flat_map(|tag| tag.split(needle.as_str()).skip(1))
        .map(|rest| {
            rest.split('"')
                .next()
                .unwrap_or("")
                .replace("&amp;", "&")
                .replace("&#39;", "'")
                .replace("&quot;", "\"")
        })
        .collect()
}

/// Every internal link of every page that points at no file, or at an anchor the target lacks.
fn broken_links(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut broken = Vec::new();
    for (page, html) in files.iter().filter(|(p, _)| p.ends_with(".html")) {
        for href in attrs(html, "href") {
            if href.starts_with("http://")
                || href.starts_with("https://")
                || href.starts_with("mailto:")
            {
                continue;
            }
            let (path, frag) = href.split_once('#').unwrap_or((&href, ""));
            let target = if path.is_empty() {
                page.clone()
            } else {
                let mut t: PathBuf = Path::new(page)
                    .parent()
                    .unwrap_or(Path::new(""))
                    .to_path_buf();
                for part in path.split('/') {
                    match part {
                        ".." => {
                            t.pop();
                        }
                        "." | "" => {}
                        p => t.push(p),
                    }
                }
                t.to_string_lossy().replace('\\', "/")
            };
            match files.get(&target) {
                None => broken.push(format!("{page}: {href}")),
                Some(t) if !frag.is_empty() && !t.contains(&format!("id=\"{frag}\"")) => {
                    broken.push(format!("{page}: {href} (no anchor)"))
                }
                Some(_) => {}
            }
        }
    }
    broken
}

#[test]
fn every_issue_milestone_and_person_has_a_page_and_every_link_resolves() {
    let dir = state_from_fixture("small");
    pipeline::run(&options(dir.path())).unwrap();
    let files = site(dir.path());
    let issues: Vec<&String> = files.keys().filter(|k| k.starts_with("issues/")).collect();
    // Every issue of the snapshot (8, open and closed), both milestones, both people, the changes.
    assert_eq!(issues.len(), 8, "{issues:?}");
    for page in [
        "issues/acme/api/3.html",
        "milestones/1.html",
        "milestones/2.html",
        "people/ann.html",
        "people/bo.html",
        "changes.html",
    ] {
        assert!(
            files.contains_key(page),
            "{page} missing: {:?}",
            files.keys()
        );
    }
    let broken = broken_links(&files);
    assert!(broken.is_empty(), "broken links: {broken:?}");
    for (page, html) in files.iter().filter(|(p, _)| p.ends_with(".html")) {
        assert!(
            html.contains("http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'"),
            "{page} has no CSP"
        );
        // The CSP forbids inline styles and scripts: a page that used them would break.
        assert!(!html.contains(" style=\""), "{page} has an inline style");
        assert_eq!(
            html.matches("<script").count(),
            html.matches("<script src=\"").count(),
            "{page} has an inline script"
        );
    }
    // The issue page links to Gitea, its milestone, its people, and shows the comment.
    let issue = &files["issues/acme/api/3.html"];
    assert!(
        issue.contains("href=\"https://gitea.example.com/acme/api/issues/3\""),
        "{issue}"
    );
    assert!(issue.contains("href=\"../../../milestones/1.html\""));
    assert!(issue.contains("href=\"../../../people/ann.html\""));
    assert!(
        issue.contains("<p>Should refresh tokens rotate?</p>"),
        "{issue}"
    );
    // The milestone page draws its cone and lists its issues with links.
    let ms = &files["milestones/1.html"];
    assert!(ms.contains("<svg class=\"chart ranges\""), "{ms}");
    assert!(ms.contains("href=\"../issues/acme/api/3.html\""), "{ms}");
    assert!(ms.contains("href=\"https://gitea.example.com/acme/api/milestone/1\""));
    // The person page draws their load.
    assert!(files["people/ann.html"].contains("<svg class=\"chart load\""));
    insta::assert_snapshot!("small_issue_html", issue);
    insta::assert_snapshot!("small_milestone_html", ms);
}

/// What a hostile user might type into any field that reaches a page.
const CORPUS: [&str; 7] = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[click](javascript:alert(3))",
    "<a href=\"javascript:alert(4)\">x</a>",
    "evil\u{202E}txt.exe",
    "{{ title }}{% raw %}",
    "Wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww",
];

#[test]
fn hostile_text_in_every_field_stays_text() {
    let dir = state_from_fixture("small");
    let payload = CORPUS.join(" ");
    let quoted = serde_json::to_string(&payload).unwrap();
    let issues = dir.path().join("snapshot/issues/acme/api");
    // Title, body and comment of an issue; a milestone's title; a label on an issue.
    let path = issues.join("3.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text
        .replace(
            "title: Authentication endpoints",
            &format!("title: {quoted}"),
        )
        .replace(
            "body: Login, logout and token refresh.",
            &format!("body: {quoted}"),
        )
        .replace(
            "body: Should refresh tokens rotate?",
            &format!("body: {quoted}"),
        )
        .replace("- p/1\n", &format!("- p/1\n- {quoted}\n"));
    std::fs::write(&path, text).unwrap();
    let ms = dir.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&ms).unwrap();
    std::fs::write(
        &ms,
        text.replace("title: v1.0", &format!("title: {quoted}")),
    )
    .unwrap();
    pipeline::run(&options(dir.path())).unwrap();
    let files = site(dir.path());
    let mut seen = 0;
    for (page, html) in files.iter().filter(|(p, _)| p.ends_with(".html")) {
        assert!(!html.contains("<script>"), "{page}: a live script tag");
        assert!(!html.contains("<img"), "{page}: a live image");
        assert!(!html.contains('\u{202E}'), "{page}: a bidi override");
        for href in attrs(html, "href") {
            assert!(
                !href.to_lowercase().starts_with("javascript:"),
                "{page}: {href}"
            );
        }
        assert!(
            attrs(html, "onerror").is_empty(),
            "{page}: an event handler"
        );
        if html.contains("&lt;script&gt;alert(1)&lt;/script&gt;") {
            seen += 1;
            // Template syntax in the data is printed, never evaluated.
            assert!(html.contains("{{ title }}"), "{page}");
        }
    }
    // The payload reached the board, the runway, the overview, the issue and milestone pages at least.
    assert!(seen >= 5, "the payload reached only {seen} pages");
    // The index is data in a script: the payload is a JSON string there, never markup.
    let index = &files["search-index.js"];
    assert!(index.starts_with("window.commiteaIndex = {"), "{index}");
    assert!(!index.contains('\u{202E}'));
    // Long words wrap instead of pushing the layout: the stylesheet says so for every text container.
    assert!(files["style.css"].contains("overflow-wrap: anywhere"));
}

#[test]
fn a_milestone_page_shows_how_its_forecast_moved_across_committed_forecasts() {
    let dir = state_from_fixture("small");
    pipeline::run(&options(dir.path())).unwrap();
    let first = site(dir.path());
    assert!(
        !first["milestones/1.html"].contains("How the forecast moved"),
        "one forecast is no history"
    );
    // A week later, the committed forecast of the first run is the history.
    let mut later = options(dir.path());
    later.now = Some(later.clock + chrono::Duration::days(7));
    pipeline::run(&later).unwrap();
    let page = &site(dir.path())["milestones/1.html"];
    assert!(page.contains("How the forecast moved"), "{page}");
    assert!(page.contains("<svg class=\"chart drift\""), "{page}");
    // Both days 0 are in the table.
    assert!(page.contains(">2026-11-30</td>"), "{page}");
    assert!(page.contains(">2026-12-07</td>"), "{page}");
}
