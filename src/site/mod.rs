//! The static site: the views rendered through Tera templates into plain HTML files.
//!
//! The default templates and the stylesheet live in `site-templates/` at the crate root and are embedded in
//! the binary. A state repo may override any of them by putting a file of the same name in its own
//! `site-templates/` folder; another file there is said and not read. The pages open from `file://`: relative links,
//! no external resources, no JavaScript. Templates receive a [`pages::PageContext`]: the plain views plus
//! labels and cone positions computed in Rust, so no template does date arithmetic.

mod charts;
pub mod detail;
pub mod pages;
pub(crate) mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use rayon::prelude::*;
use tera::{Context, Tera};

#[cfg(test)]
use pages::Cone;

/// Everything the site shows.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SiteData {
    /// The site title (from the config).
    pub title: String,
    /// The front page's overview.
    pub overview: crate::views::Overview,
    /// The board.
    pub board: crate::views::Board,
    /// The runway.
    pub runway: crate::views::Runway,
    /// The directives: recent ledger entries, the pending consequence, ledger problems.
    pub directives: crate::views::directives::Directives,
    /// The calibration: the estimate fit, the abandonment model and the backtest's hit-rates.
    pub calibration: crate::views::calibration::CalibrationView,
    /// The forecast horizon in days (`forecast.horizon_days`): a date beyond it is said as "not within 2
    /// years".
    pub horizon_days: u32,
    /// The pages per issue, milestone and person, and the changes page; none when the site is redrawn
    /// from the view payloads alone (`commitea render`), and then nothing links to them.
    pub detail: Option<detail::Detail>,
    /// Said at the top of every page when the site is a preview of another day than the committed
    /// forecast's (`commitea render --now`): the tools and the standup read the committed one.
    pub preview: Option<String>,
}

/// Why the site could not be rendered or written.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// An override file exists but could not be read.
    #[error("cannot read site template override {path}: {source}")]
    ReadOverride {
        /// The override file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An override template is not UTF-8 text.
    #[error("site template override {path} is not UTF-8 text")]
    NotText {
        /// The override file.
        path: PathBuf,
    },
    /// A template does not parse, or its inheritance is broken.
    #[error("site template {name} ({origin}) is invalid: {source}")]
    Parse {
        /// The template name, such as `index.html`.
        name: String,
        /// Where it came from: the override file, or the embedded default.
        origin: String,
        /// Tera's report.
        source: tera::Error,
    },
    /// A template failed while rendering.
    #[error("site template {name} ({origin}) failed to render{drawing}: {source}")]
    Render {
        /// The template name, such as `index.html`.
        name: String,
        /// Where it came from: the override file, or the embedded default.
        origin: String,
        /// The page it was drawing, after a space (` issues/acme/api/1.html`), where it draws many: one
        /// page's data may fail a template the others pass (audit 191: a closed issue's, and nothing said
        /// which); empty for a page of its own.
        drawing: String,
        /// Tera's report.
        source: Box<tera::Error>,
    },
    /// A rendered file's name would leave the output folder.
    #[error("site file name {name:?} is not a plain relative path")]
    BadPath {
        /// The offending name.
        name: String,
    },
    /// The output folder holds a state repo's files: nothing is deleted or written there.
    #[error(
        "{path} holds {found}: it looks like a state repo, not a site folder; nothing was written. Set site.output to a folder of its own"
    )]
    NotASiteFolder {
        /// The output folder.
        path: PathBuf,
        /// What was found in it.
        found: String,
    },
    /// The output path is there but is not a folder.
    #[error(
        "site folder {path} is a file, not a folder; nothing was written. Move the file away, or set site.output to \
         another folder"
    )]
    NotAFolder {
        /// The output path.
        path: PathBuf,
    },
    /// The output folder could not be listed, or a file in it not written or removed.
    #[error(
        "cannot write site file {path}: {source}{}",
        crate::state::io_hint(source)
    )]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl SiteError {
    /// This error, said as the one of drawing `file` (a render's), where a template draws many pages.
    fn drawing(self, file: &str) -> Self {
        match self {
            Self::Render {
                name,
                origin,
                source,
                ..
            } => Self::Render {
                name,
                origin,
                drawing: format!(" {file}"),
                source,
            },
            other => other,
        }
    }
}

/// Checks that the site can go to `out`: nothing there yet, or a folder that holds no state repo's files.
/// A run checks before it commits, so a site that cannot be written fails the run with nothing committed.
pub fn check_output(out: &Path) -> Result<(), SiteError> {
    // A linked site folder would have the clean-up below delete files wherever it points; so would a
    // linked folder above it in the state repo (audit 159: `web -> /anywhere` with `output: web/site`).
    let link = match crate::state::root_of(out) {
        Some(root) => crate::state::link_below(root, out),
        None => crate::state::is_link(out).then(|| out.to_path_buf()),
    };
    if let Some(path) = link {
        return Err(SiteError::Write {
            path,
            source: crate::state::link_refused(),
        });
    }
    if !out.exists() {
        return Ok(());
    }
    if !out.is_dir() {
        return Err(SiteError::NotAFolder {
            path: out.to_path_buf(),
        });
    }
    // The config refuses such an output; this is the last line of defence before anything is deleted.
    // (A `.git` there is fine: the site folder may be a checkout of a pages branch.)
    if let Some(kept) = ["commitea.yaml", crate::state::LEDGER_FILE, "snapshot"]
        .iter()
        .find(|n| out.join(n).exists())
    {
        return Err(SiteError::NotASiteFolder {
            path: out.to_path_buf(),
            found: (*kept).to_owned(),
        });
    }
    Ok(())
}

/// The suffix of a file being written (see [`crate::state::TMP_SUFFIX`]).
use crate::state::TMP_SUFFIX;

/// The layout every page extends.
const BASE: &str = "base.html";

/// The embedded templates, parents first.
const TEMPLATES: [(&str, &str); 17] = [
    (BASE, include_str!("../../site-templates/base.html")),
    (
        "index.html",
        include_str!("../../site-templates/index.html"),
    ),
    (
        "board.html",
        include_str!("../../site-templates/board.html"),
    ),
    // A part the runway and the people pages include, before them.
    (
        "capacity.html",
        include_str!("../../site-templates/capacity.html"),
    ),
    (
        "runway.html",
        include_str!("../../site-templates/runway.html"),
    ),
    (
        "people.html",
        include_str!("../../site-templates/people.html"),
    ),
    (
        "directives.html",
        include_str!("../../site-templates/directives.html"),
    ),
    (
        "calibration.html",
        include_str!("../../site-templates/calibration.html"),
    ),
    (
        "issue.html",
        include_str!("../../site-templates/issue.html"),
    ),
    (
        "milestone.html",
        include_str!("../../site-templates/milestone.html"),
    ),
    (
        "person.html",
        include_str!("../../site-templates/person.html"),
    ),
    (
        "changes.html",
        include_str!("../../site-templates/changes.html"),
    ),
    (
        "search.html",
        include_str!("../../site-templates/search.html"),
    ),
    (
        "standup.html",
        include_str!("../../site-templates/standup.html"),
    ),
    (
        "roadmap.html",
        include_str!("../../site-templates/roadmap.html"),
    ),
    (
        "closed.html",
        include_str!("../../site-templates/closed.html"),
    ),
    (
        "closed-month.html",
        include_str!("../../site-templates/closed-month.html"),
    ),
];

/// The pages rendered to files: template name and the `page` value the layout's navigation sees.
const PAGES: [(&str, &str); 6] = [
    ("index.html", "index"),
    ("board.html", "board"),
    ("runway.html", "runway"),
    ("people.html", "people"),
    ("directives.html", "directives"),
    ("calibration.html", "calibration"),
];

/// The embedded assets, copied through as they are.
const ASSETS: [(&str, &str); 1] = [("style.css", include_str!("../../site-templates/style.css"))];

/// The scripts of the board's filters, the search page and the milestone pages' charts, copied through as
/// they are, only when the site has the pages that load them (see [`detail::Detail`]).
const SCRIPTS: [(&str, &str); 3] = [
    ("board.js", include_str!("../../site-templates/board.js")),
    ("search.js", include_str!("../../site-templates/search.js")),
    ("charts.js", include_str!("../../site-templates/charts.js")),
];

/// What the error messages call an embedded default.
const EMBEDDED: &str = "embedded default";

/// Serialising a page's item behind a trait object, so one closure renders every kind of page.
mod erased {
    /// Anything a detail page shows.
    pub(super) trait Item {
        /// The item as JSON.
        fn value(&self) -> Result<serde_json::Value, serde_json::Error>;
    }
    impl<T: serde::Serialize> Item for T {
        fn value(&self) -> Result<serde_json::Value, serde_json::Error> {
            serde_json::to_value(self)
        }
    }
}

/// The names of the embedded templates and assets (so users know what they can override).
#[cfg(test)]
pub(crate) fn template_names() -> Vec<&'static str> {
    TEMPLATES
        .iter()
        .map(|(n, _)| *n)
        .chain(ASSETS.iter().map(|(n, _)| *n))
        .chain(SCRIPTS.iter().map(|(n, _)| *n))
        .collect()
}

/// Renders the site in memory: relative path (e.g. "index.html", "style.css") -> bytes. Templates come from the embedded defaults, except that a file with the same name in `overrides` (the state repo's `site-templates/` folder, may not exist) replaces the embedded one.
pub fn render(
    data: &SiteData,
    overrides: Option<&Path>,
) -> Result<BTreeMap<String, Vec<u8>>, SiteError> {
    let overrides = overrides.filter(|dir| dir.is_dir());
    warn_unused_overrides(overrides);
    warn_unlinked_pages(overrides);
    let mut tera = Tera::new();
    tera.autoescape_on([".html"]);
    let mut origins: BTreeMap<&str, String> = BTreeMap::new();
    // One at a time, parents first, so an error names the template that caused it.
    for (name, embedded) in TEMPLATES {
        let (text, origin) = match read_override(overrides, name)? {
            Some((bytes, path)) => {
                let text = String::from_utf8(bytes)
                    .map_err(|_| SiteError::NotText { path: path.clone() })?;
                (text, path.display().to_string())
            }
            None => (embedded.to_owned(), EMBEDDED.to_owned()),
        };
        // A page can break because an overridden layout lacks one of its blocks: say where the layout is from.
        let origin = match origins.get(BASE) {
            Some(layout) if name != BASE && layout != EMBEDDED => {
                format!("{origin}, extending {BASE} from {layout}")
            }
            _ => origin,
        };
        tera.add_raw_template(name, &text)
            .map_err(|source| SiteError::Parse {
                name: name.to_owned(),
                origin: origin.clone(),
                source,
            })?;
        origins.insert(name, origin);
    }

    let page = pages::page_context(data);
    let base_error = |source| SiteError::Render {
        name: BASE.to_owned(),
        origin: origins.get(BASE).cloned().unwrap_or_default(),
        drawing: String::new(),
        source: Box::new(source),
    };
    // Every string a template can print loses its control and bidi-override characters first.
    let mut value = serde_json::to_value(&page).map_err(|e| base_error(tera::Error::message(e)))?;
    text::clean_value(&mut value);
    let words = text::horizon_words(data.horizon_days);
    text::say_horizon(&mut value, &words);
    // The words every page may say a range or a chance in: the horizon, and the abandonment model's
    // window, which "done at all" left unsaid (audit 68).
    let said = serde_json::json!({
        "horizonWords": words,
        "notWithin": format!("not within {words}"),
        "doneWithin": data
            .calibration
            .abandonment
            .as_ref()
            .map(|a| format!("done within {}", text::horizon_words(a.window_days)))
            .unwrap_or_else(|| "done".to_owned()),
        // The window in the words the rest of the site says it in ("1 year", not "365 days": audit 171).
        "windowWords": data
            .calibration
            .abandonment
            .as_ref()
            .map(|a| text::horizon_words(a.window_days)),
    });
    let with_words = |value: &mut serde_json::Value| {
        if let (Some(o), Some(words)) = (value.as_object_mut(), said.as_object()) {
            o.extend(words.clone());
        }
    };
    with_words(&mut value);
    if let Some(o) = value.as_object_mut() {
        o.insert("preview".to_owned(), data.preview.clone().into());
    }
    let base = Context::from_serialize(&value).map_err(base_error)?;
    let mut files = BTreeMap::new();
    for (name, page) in PAGES {
        let mut ctx = base.clone();
        ctx.insert("page", page);
        let html = tera
            .render(name, &ctx)
            .map_err(|source| SiteError::Render {
                name: name.to_owned(),
                origin: origins.get(name).cloned().unwrap_or_default(),
                drawing: String::new(),
                source: Box::new(source),
            })?;
        files.insert(name.to_owned(), html.into_bytes());
    }
    if let Some(d) = &data.detail {
        // What every page shares, cleaned and said once: cleaning it per page (the overview with its
        // warnings, on each of thousands of issue pages) was half of a long ledger's run (audit 93).
        let mut shared = serde_json::json!({
            "title": data.title,
            "overview": data.overview,
            "linked": true,
            "preview": data.preview,
        });
        text::clean_value(&mut shared);
        text::say_horizon(&mut shared, &words);
        with_words(&mut shared);
        let render_one = |template: &str, page: &str, root: &str, item: &dyn erased::Item| {
            // A small context per page: the layout's needs and the one item, never the whole board.
            let mut value = shared.clone();
            let mut it = item
                .value()
                .map_err(|e| base_error(tera::Error::message(e)))?;
            text::clean_value(&mut it);
            text::say_horizon(&mut it, &words);
            if let Some(o) = value.as_object_mut() {
                o.insert("page".to_owned(), page.into());
                o.insert("root".to_owned(), root.into());
                o.insert("it".to_owned(), it);
            }
            let ctx = Context::from_serialize(&value).map_err(base_error)?;
            tera.render(template, &ctx)
                .map_err(|source| SiteError::Render {
                    name: template.to_owned(),
                    origin: origins.get(template).cloned().unwrap_or_default(),
                    drawing: String::new(),
                    source: Box::new(source),
                })
        };
        let changes = render_one("changes.html", "changes", "", &d.changes)?;
        files.insert("changes.html".to_owned(), changes.into_bytes());
        let search = render_one("search.html", "search", "", &())?;
        files.insert("search.html".to_owned(), search.into_bytes());
        let standup = render_one("standup.html", "standup", "", &d.standup)?;
        files.insert("standup.html".to_owned(), standup.into_bytes());
        let roadmap = render_one("roadmap.html", "roadmap", "", &d.roadmap)?;
        files.insert("roadmap.html".to_owned(), roadmap.into_bytes());
        let closed = render_one("closed.html", "closed", "", &d.closed)?;
        files.insert("closed.html".to_owned(), closed.into_bytes());
        for m in &d.closed_months {
            let html = render_one("closed-month.html", "closed", "../", m)
                .map_err(|e| e.drawing(&m.path))?;
            files.insert(m.path.clone(), html.into_bytes());
        }
        // The index as a script that sets a global: a page opened from file:// may load a script but
        // not fetch a JSON file.
        let mut index =
            serde_json::to_value(&d.index).map_err(|e| base_error(tera::Error::message(e)))?;
        text::clean_value(&mut index);
        let json =
            serde_json::to_string(&index).map_err(|e| base_error(tera::Error::message(e)))?;
        files.insert(
            "search-index.js".to_owned(),
            format!("window.commiteaIndex = {json};\n").into_bytes(),
        );
        for (name, embedded) in SCRIPTS {
            let bytes = match read_override(overrides, name)? {
                Some((bytes, _)) => bytes,
                None => embedded.as_bytes().to_vec(),
            };
            files.insert(name.to_owned(), bytes);
        }
        // Thousands of issue pages, rendered side by side; the map keeps them in path order.
        let pages = d
            .issues
            .par_iter()
            .map(|i| {
                render_one("issue.html", "issue", "../../../", i)
                    .map(|html| (i.path.clone(), html.into_bytes()))
                    .map_err(|e| e.drawing(&i.path))
            })
            .collect::<Result<Vec<_>, _>>()?;
        files.extend(pages);
        for m in &d.milestones {
            let html = render_one("milestone.html", "milestone", "../", m)
                .map_err(|e| e.drawing(&m.path))?;
            files.insert(m.path.clone(), html.into_bytes());
        }
        for p in &d.people {
            let html =
                render_one("person.html", "person", "../", p).map_err(|e| e.drawing(&p.path))?;
            files.insert(p.path.clone(), html.into_bytes());
        }
    }
    for (name, embedded) in ASSETS {
        let bytes = match read_override(overrides, name)? {
            Some((bytes, _)) => bytes,
            None => embedded.as_bytes().to_vec(),
        };
        files.insert(name.to_owned(), bytes);
    }
    Ok(files)
}

/// Says which files of the overrides folder override nothing (`directive.html` for `directives.html`):
/// they are not read, and a typo would otherwise go unseen.
fn warn_unused_overrides(dir: Option<&Path>) {
    let Some(dir) = dir else { return };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let known = || {
        TEMPLATES
            .iter()
            .chain(&ASSETS)
            .chain(&SCRIPTS)
            .map(|(name, _)| *name)
    };
    let mut stray: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !known().any(|k| k == n))
        .collect();
    stray.sort();
    for name in stray {
        let hint = crate::plan::nearest(&name, known())
            .map(|(_, k)| format!(" (did you mean {k}?)"))
            .unwrap_or_default();
        tracing::warn!(
            "{} overrides nothing and is not read{hint}: the files a state repo may override are {}",
            dir.join(&name).display(),
            known().collect::<Vec<_>>().join(", ")
        );
    }
}

/// Says which of the site's pages a `base.html` override does not link, where the default does: an
/// override written before a page existed (the People page) leaves it out of the navigation without a
/// word (audit 86).
fn warn_unlinked_pages(dir: Option<&Path>) {
    let Some(path) = dir.map(|d| d.join(BASE)).filter(|p| p.is_file()) else {
        return;
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let default = TEMPLATES
        .iter()
        .find(|(name, _)| *name == BASE)
        .map_or("", |(_, t)| *t);
    let missing: Vec<&str> = PAGES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| default.contains(name) && !text.contains(name))
        .collect();
    if !missing.is_empty() {
        tracing::warn!(
            "{} links no {} (the default layout does): compare it with the default, or no page leads there",
            path.display(),
            missing.join(", ")
        );
    }
}

/// The override file `name` in `dir` and its path, when there is one.
fn read_override(dir: Option<&Path>, name: &str) -> Result<Option<(Vec<u8>, PathBuf)>, SiteError> {
    let Some(dir) = dir else { return Ok(None) };
    let path = dir.join(name);
    if crate::state::is_link(dir) {
        return Err(SiteError::ReadOverride {
            path: dir.to_path_buf(),
            source: crate::state::link_refused(),
        });
    }
    if !path.is_file() && !crate::state::is_link(&path) {
        return Ok(None);
    }
    match crate::state::read_file(&path) {
        Ok(bytes) => Ok(Some((bytes, path))),
        Err(source) => Err(SiteError::ReadOverride { path, source }),
    }
}

/// Writes rendered files under `out` (creating it), removing files there that the render did not produce; only rewrites changed files.
///
/// Hidden entries (names starting with a dot, such as `.git` or `.nojekyll`) are left alone, and folders
/// emptied by the clean-up are removed.
pub fn write(files: &BTreeMap<String, Vec<u8>>, out: &Path) -> Result<(), SiteError> {
    check_output(out)?;
    let mut wanted: BTreeSet<PathBuf> = BTreeSet::new();
    for name in files.keys() {
        let rel = Path::new(name);
        let plain = !name.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
        if !plain {
            return Err(SiteError::BadPath { name: name.clone() });
        }
        wanted.insert(rel.to_path_buf());
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SiteError::Write { path, source }
    };
    // A first render (the folder is not there, as in a CI job's fresh checkout) is written into a staging
    // folder beside it, file by file, and renamed into place at the end: a reader meets no site or the whole
    // site, and each page costs one file created instead of a temporary file and a rename (at 5,000 issues
    // that is seconds of system time).
    let staging = out.with_file_name(format!(
        ".{}{TMP_SUFFIX}",
        out.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    ));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?; // left by a killed run
    }
    if !out.exists() {
        let staged = || -> Result<(), SiteError> {
            let mut made: BTreeSet<PathBuf> = BTreeSet::new();
            for (name, bytes) in files {
                let path = staging.join(name);
                if let Some(parent) = path.parent()
                    && !made.contains(parent)
                {
                    std::fs::create_dir_all(parent).map_err(io(parent))?;
                    made.insert(parent.to_path_buf());
                }
                std::fs::write(&path, bytes).map_err(io(&path))?;
            }
            std::fs::create_dir_all(&staging).map_err(io(&staging))?; // an empty site is a folder too
            std::fs::rename(&staging, out).map_err(io(out))
        };
        // A write that failed (a full disk) takes its half-written folder away with it (audit 152: it
        // stayed on the full disk until the next run).
        return staged().inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&staging);
        });
    }

    // Remove what the render did not produce, then the folders that left empty, deepest first.
    let mut dirs: Vec<PathBuf> = Vec::new();
    let walker = walkdir::WalkDir::new(out)
        .min_depth(1)
        .follow_root_links(false)
        .sort_by_file_name();
    // Hidden entries at the top are not ours (a checkout's `.git`, a host's `.nojekyll`), except the
    // temporary files of a write that was interrupted; below, only a `.git` is not: a repository named
    // `.github` has its pages there, which stayed and were published after it left the plan (audit 191).
    let visible = |e: &walkdir::DirEntry| {
        let name = e.file_name().to_string_lossy();
        e.depth() == 0
            || !name.starts_with('.')
            || name.ends_with(TMP_SUFFIX)
            || (e.depth() > 1 && name != ".git")
    };
    for entry in walker.into_iter().filter_entry(visible) {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(out).to_path_buf();
            SiteError::Write {
                path,
                source: e.into(),
            }
        })?;
        let rel = entry.path().strip_prefix(out).unwrap_or(entry.path());
        if entry.file_type().is_dir() {
            dirs.push(entry.path().to_path_buf());
        } else if !wanted.contains(rel) {
            std::fs::remove_file(entry.path()).map_err(io(entry.path()))?;
        }
    }
    for dir in dirs.iter().rev() {
        let empty = std::fs::read_dir(dir).map_err(io(dir))?.next().is_none();
        if empty {
            std::fs::remove_dir(dir).map_err(io(dir))?;
        }
    }

    for (name, bytes) in files {
        let path = out.join(name);
        if std::fs::read(&path).is_ok_and(|old| old == *bytes) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        // Through a temporary file and a rename: a reader (or a crash) never meets half a page.
        let tmp = path.with_file_name(format!(
            ".{}{TMP_SUFFIX}",
            path.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        ));
        crate::state::replace_through(&tmp, &path, bytes).map_err(io(&path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
