//! A cache of the snapshot's parsed issue files, kept in the state repo's git directory.
//!
//! Reading 5,000 issue files is mostly parsing YAML (a third of a second on two cores), and every read —
//! a tool call, `plan`, an agent's what-if — reads them all. An issue file whose size and modification
//! time are what they were when it was cached is taken from the cache instead; any other file is parsed.
//! The cache lives in `.git/` (never committed, never pushed) and is only an accelerator: a missing,
//! unreadable or foreign cache is ignored, and failing to write it is not an error.
//!
//! As in git's index, a file modified within [`RACY_SECS`] of the moment the cache is written is not
//! cached: a rewrite within the file system's timestamp granularity could keep both its size and its time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::domain::Issue;

/// The cache's file name, in the git directory.
const FILE: &str = "commitea-parsed-issues.json";
/// Bumped whenever what a cached entry means changes.
const FORMAT: u32 = 1;
/// Files modified this recently (seconds) are parsed every time rather than cached.
const RACY_SECS: u64 = 2;

/// When a file was last written, and how long it is: what must be unchanged for its cached parse to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    len: u64,
    secs: u64,
    nanos: u32,
}

impl Stamp {
    /// The stamp of a file's metadata; none where the platform gives no modification time.
    pub(crate) fn of(meta: &std::fs::Metadata) -> Option<Self> {
        let t = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some(Self {
            len: meta.len(),
            secs: t.as_secs(),
            nanos: t.subsec_nanos(),
        })
    }
}

#[derive(Deserialize)]
struct Stored {
    format: u32,
    version: String,
    entries: BTreeMap<String, (Stamp, Issue)>,
}

#[derive(Serialize)]
struct ToStore<'a> {
    format: u32,
    version: &'a str,
    entries: BTreeMap<&'a str, (Stamp, &'a Issue)>,
}

/// The parsed issue files of the last read, by path under `snapshot/issues/`.
#[derive(Debug, Default)]
pub(crate) struct ParsedCache {
    path: Option<PathBuf>,
    entries: BTreeMap<String, (Stamp, Issue)>,
    existed: bool,
}

impl ParsedCache {
    /// The cache of the state repo at `root`: empty where there is no `.git` directory or no usable cache.
    pub(crate) fn open(root: &Path) -> Self {
        let git = root.join(".git");
        if !git.is_dir() {
            return Self::default();
        }
        let path = git.join(FILE);
        let existed = path.is_file();
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Stored>(&bytes).ok())
            .filter(|s| s.format == FORMAT && s.version == env!("CARGO_PKG_VERSION"))
            .map(|s| s.entries)
            .unwrap_or_default();
        Self {
            path: Some(path),
            entries,
            existed,
        }
    }

    /// Whether there was a cache file (usable or not): a checkout someone reads from, not only runs in.
    pub(crate) fn existed(&self) -> bool {
        self.existed
    }

    /// The cached parse of the file at `rel`, taken out of the cache, if the file's stamp is the one cached.
    pub(crate) fn take(&mut self, rel: &str, stamp: Stamp) -> Option<Issue> {
        match self.entries.remove(rel) {
            Some((s, issue)) if s == stamp => Some(issue),
            _ => None,
        }
    }

    /// Whether the cache holds files the read did not ask for (removed since, or changed).
    pub(crate) fn has_stale(&self) -> bool {
        !self.entries.is_empty()
    }

    /// Writes the cache of `files` (path under `snapshot/issues/`, stamp, parse), leaving out files modified
    /// too recently to trust their stamp. Best effort: a cache that cannot be written is not an error.
    pub(crate) fn store<'a>(&self, files: impl Iterator<Item = (&'a str, Stamp, &'a Issue)>) {
        let Some(path) = &self.path else {
            return;
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let entries = files
            .filter(|(_, s, _)| s.secs.saturating_add(RACY_SECS) < now)
            .map(|(rel, s, issue)| (rel, (s, issue)))
            .collect();
        let store = ToStore {
            format: FORMAT,
            version: env!("CARGO_PKG_VERSION"),
            entries,
        };
        // Written aside and renamed, so that a reader never sees half a cache.
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        let written = serde_json::to_vec(&store)
            .map_err(std::io::Error::other)
            .and_then(|bytes| std::fs::write(&tmp, bytes))
            .and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            tracing::debug!("the cache of parsed issue files was not written ({e})");
        }
    }
}
