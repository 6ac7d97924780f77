//! `snapshot/`: what the last sync saw, one YAML file per issue.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::parsed_cache::{ParsedCache, Stamp};
use super::{Layout, StateError, write_if_changed};
use crate::domain::{Issue, IssueKey, Label, Milestone, RepoName};
use crate::yamlfile;

/// The version of the state repo's format, recorded in `snapshot/meta.yaml` as `format`.
///
/// A CommiTea refuses a state repo of a newer format than its own, so that a binary older than the one
/// that wrote the state (a CI job pinned to a release, a teammate's local build) never misreads it or
/// rewrites it in the older form. Format 1, every state repo before the field, is written without it, so
/// those files stay as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Format(pub u32);

impl Format {
    /// The format of every state repo from before the field.
    pub const FIRST: Self = Self(1);
    /// The format this CommiTea reads and writes.
    pub const CURRENT: Self = Self(1);

    fn is_first(&self) -> bool {
        *self == Self::FIRST
    }
}

impl Default for Format {
    /// A `meta.yaml` without `format` is of the first format.
    fn default() -> Self {
        Self::FIRST
    }
}

/// `snapshot/meta.yaml`: when and where the snapshot was taken, and the per-repository sync cursors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// The state repo's format.
    #[serde(default, skip_serializing_if = "Format::is_first")]
    pub format: Format,
    /// When the snapshot was taken; also the default "now" of an offline forecast.
    pub synced_at: DateTime<Utc>,
    /// The server it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// One entry per repository.
    #[serde(default)]
    pub repositories: Vec<RepoMeta>,
}

impl Meta {
    /// The name `repo` goes by now where it is a former name of a synced repository
    /// ([`RepoMeta::formerly`]), compared as Gitea compares names (ignoring case).
    pub fn now_named(&self, repo: &RepoName) -> Option<&RepoName> {
        let same = |a: &RepoName| {
            a.owner.eq_ignore_ascii_case(&repo.owner) && a.name.eq_ignore_ascii_case(&repo.name)
        };
        // A configured name read as itself is its own repository (Gitea drops a redirect once a
        // repository takes the old name), whatever another one went by before.
        if self
            .repositories
            .iter()
            .any(|r| same(&r.name) && r.renamed_to.is_none())
        {
            return None;
        }
        self.repositories
            .iter()
            .find(|r| r.formerly.iter().any(same))
            .map(|r| &r.name)
    }

    /// `key` under the name its repository goes by now, where it names it by a former name
    /// ([`Self::now_named`]): the issue keeps its number through a rename, as the ledger's replay reads it.
    pub fn now_keyed(&self, key: IssueKey) -> IssueKey {
        let number = key.number;
        self.as_now(key.repo).issue(number)
    }

    /// `repo` as it is named now: itself, or the synced repository it is a former name of
    /// ([`Self::now_named`]).
    pub fn as_now(&self, repo: RepoName) -> RepoName {
        self.now_named(&repo).cloned().unwrap_or(repo)
    }

    /// The meta of a snapshot that read every repository in full at `now`.
    pub fn full(now: DateTime<Utc>, server: Option<String>, repos: &[RepoName]) -> Self {
        Self {
            format: Format::CURRENT,
            synced_at: now,
            server,
            repositories: repos
                .iter()
                .map(|r| RepoMeta {
                    name: r.clone(),
                    cursor: Some(now),
                    last_full_sync: Some(now),
                    unreached_since: None,
                    renamed_to: None,
                    formerly: Vec::new(),
                })
                .collect(),
        }
    }
}

/// Sync bookkeeping for one repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoMeta {
    /// `owner/repo`.
    pub name: RepoName,
    /// The `since` cursor of the next incremental sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<DateTime<Utc>>,
    /// When the last full resync ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_full_sync: Option<DateTime<Utc>>,
    /// Since when the server has refused to show the repository (404 or 403: made private, renamed
    /// away, the token's access gone): its issues are the last ones read, carried over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreached_since: Option<DateTime<Utc>>,
    /// The name the server gives it now, where another (renamed or transferred: Gitea answers the old
    /// name through a redirect); said on every reader's page until the config names the new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_to: Option<RepoName>,
    /// The names it went by before, as the server told (a configured name it redirected here): the
    /// ledger's targets, op files and team members' `repositories` that still name one are read as
    /// this one's, so a rename strands nothing written before it (audits 168, 173).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub formerly: Vec<RepoName>,
}

/// The files a snapshot consists of, ready to write.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SnapshotFiles {
    /// Path → canonical bytes.
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    /// Issue files on disk that the snapshot no longer has.
    pub stale: Vec<PathBuf>,
}

/// Everything under `snapshot/`, in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// `meta.yaml`.
    pub meta: Meta,
    /// `labels.yaml`, by repository.
    pub labels: BTreeMap<RepoName, Vec<Label>>,
    /// `milestones.yaml`, by repository.
    pub milestones: BTreeMap<RepoName, Vec<Milestone>>,
    /// `issues/OWNER/REPO/N.yaml`.
    pub issues: BTreeMap<IssueKey, Issue>,
}

impl Snapshot {
    /// Reads the snapshot of the state repo at `layout`, through the cache of parsed issue files
    /// ([`super::parsed_cache`]), which it brings up to date: what every read of the state does.
    pub fn load(layout: &Layout) -> Result<Self, StateError> {
        Self::load_with(layout, true)
    }

    /// [`load`](Self::load) for a run: the cache is used where it matches, and brought up to date only
    /// where it already exists. A CI job reads its checkout once and throws it away, so it should not pay
    /// for writing a cache; a checkout that readers use (a PM's, an agent's host) has one, and keeps it
    /// current so that the first read after the run is quick.
    pub(crate) fn load_for_run(layout: &Layout) -> Result<Self, StateError> {
        Self::load_with(layout, false)
    }

    fn load_with(layout: &Layout, create_cache: bool) -> Result<Self, StateError> {
        let dir = layout.snapshot_dir();
        if super::is_link(&dir) {
            return Err(StateError::Io {
                path: dir,
                source: super::link_refused(),
            });
        }
        let meta_path = dir.join("meta.yaml");
        require(layout)?;
        let meta: Meta = read_meta(layout, &meta_path)?;
        let labels = read_yaml_or_default(layout, &dir.join("labels.yaml"))?;
        let milestones = read_yaml_or_default(layout, &dir.join("milestones.yaml"))?;
        let mut issues = BTreeMap::new();
        let issues_dir = dir.join("issues");
        if issues_dir.exists() {
            // Each file with its path under issues/ and its stamp, for the cache of parsed files.
            let mut files: Vec<(PathBuf, String, Option<Stamp>)> = Vec::new();
            if super::is_link(&issues_dir) {
                return Err(StateError::Io {
                    path: issues_dir.clone(),
                    source: super::link_refused(),
                });
            }
            for entry in walkdir::WalkDir::new(&issues_dir).min_depth(1).max_depth(3) {
                let entry = entry.map_err(|e| StateError::Io {
                    path: e
                        .path()
                        .map_or_else(|| issues_dir.clone(), Path::to_path_buf),
                    source: e.into(),
                })?;
                // Links are not followed (walkdir's default) and not skipped in silence either.
                if entry.path_is_symlink() {
                    return Err(StateError::Io {
                        path: entry.into_path(),
                        source: super::link_refused(),
                    });
                }
                if entry.depth() < 3 {
                    continue;
                }
                if entry.file_type().is_file()
                    && entry.path().extension().is_some_and(|x| x == "yaml")
                {
                    let stamp = entry.metadata().ok().and_then(|m| Stamp::of(&m));
                    let rel = entry
                        .path()
                        .strip_prefix(&issues_dir)
                        .unwrap_or(entry.path())
                        .to_string_lossy()
                        .replace('\\', "/");
                    files.push((entry.into_path(), rel, stamp));
                }
            }
            let mut cache = ParsedCache::open(layout.root());
            let cached: Vec<Option<Issue>> = files
                .iter()
                .map(|(_, rel, stamp)| stamp.and_then(|s| cache.take(rel, s)))
                .collect();
            let parsed_now = cached.iter().filter(|c| c.is_none()).count();
            // The files the cache no longer matches are read and parsed, in parallel.
            let parsed: Vec<Result<(IssueKey, Issue), StateError>> = {
                use rayon::prelude::*;
                files
                    .par_iter()
                    .zip(cached.into_par_iter())
                    .map(|((path, _, _), hit)| match hit {
                        Some(issue) => Ok((issue_key(layout, path)?, issue)),
                        None => read_issue(layout, path),
                    })
                    .collect()
            };
            let parsed: Vec<(IssueKey, Issue)> = parsed.into_iter().collect::<Result<_, _>>()?;
            if (create_cache || cache.existed()) && (parsed_now > 0 || cache.has_stale()) {
                cache.store(files.iter().zip(&parsed).filter_map(
                    |((_, rel, stamp), (_, issue))| Some((rel.as_str(), (*stamp)?, issue)),
                ));
            }
            for (key, issue) in parsed {
                issues.insert(key, issue);
            }
        }
        Ok(Self {
            meta,
            labels,
            milestones,
            issues,
        })
    }

    /// The files of the snapshot in canonical form, and the issue files on disk that are no longer part of it.
    pub fn files(&self, layout: &Layout) -> Result<SnapshotFiles, StateError> {
        let dir = layout.snapshot_dir();
        let mut files = BTreeMap::new();
        let mut add = |path: PathBuf, text: String| {
            files.insert(path, text.into_bytes());
        };
        let yaml = |path: &Path, value: &dyn erased::Yaml| value.to_yaml(layout.rel(path));
        let meta = dir.join("meta.yaml");
        add(meta.clone(), yaml(&meta, &self.meta)?);
        let labels = dir.join("labels.yaml");
        add(labels.clone(), yaml(&labels, &self.labels)?);
        let milestones = dir.join("milestones.yaml");
        add(milestones.clone(), yaml(&milestones, &self.milestones)?);
        for (key, issue) in &self.issues {
            let path = issue_path(layout, key);
            add(path.clone(), yaml(&path, issue)?);
        }
        let mut stale = Vec::new();
        let issues_dir = dir.join("issues");
        if issues_dir.exists() {
            for entry in walkdir::WalkDir::new(&issues_dir).min_depth(3).max_depth(3) {
                let entry = entry.map_err(|e| StateError::Io {
                    path: issues_dir.clone(),
                    source: e.into(),
                })?;
                if entry.file_type().is_file() && !files.contains_key(entry.path()) {
                    stale.push(entry.into_path());
                }
            }
        }
        Ok(SnapshotFiles { files, stale })
    }

    /// Writes the snapshot, rewriting only files whose bytes change and removing issue files no longer present.
    ///
    /// Returns how many files were written or removed.
    pub fn save(&self, layout: &Layout) -> Result<usize, StateError> {
        let SnapshotFiles { files, stale } = self.files(layout)?;
        let mut changed = 0;
        for (path, bytes) in &files {
            changed += usize::from(write_if_changed(path, bytes)?);
        }
        for path in stale {
            std::fs::remove_file(&path).map_err(|source| StateError::Io {
                path: path.clone(),
                source,
            })?;
            changed += 1;
        }
        Ok(changed)
    }

    /// The repositories the snapshot was synced from.
    pub fn synced_repositories(&self) -> std::collections::HashSet<&RepoName> {
        self.meta.repositories.iter().map(|r| &r.name).collect()
    }

    /// The milestone with this id, with its repository.
    pub fn milestone(&self, id: u64) -> Option<(&RepoName, &Milestone)> {
        self.milestones
            .iter()
            .find_map(|(repo, ms)| ms.iter().find(|m| m.id == id).map(|m| (repo, m)))
    }
}

/// `snapshot/issues/OWNER/REPO/N.yaml`.
/// Whether `rel` (slash-separated, from the state repo's root) is a file the snapshot reads: its three
/// top files, or an issue file `snapshot/issues/OWNER/REPO/N.yaml`. Anything else under `snapshot/` is a
/// stray (a note, an editor's backup) that a run does not commit.
pub(crate) fn is_snapshot_file(rel: &str) -> bool {
    match rel.strip_prefix("snapshot/") {
        Some("meta.yaml" | "labels.yaml" | "milestones.yaml") => true,
        Some(rest) => rest.strip_prefix("issues/").is_some_and(|issue| {
            issue.split('/').count() == 3
                && issue.ends_with(".yaml")
                && !issue.split('/').any(str::is_empty)
        }),
        None => false,
    }
}

pub(crate) fn issue_path(layout: &Layout, key: &IssueKey) -> PathBuf {
    layout
        .snapshot_dir()
        .join("issues")
        .join(&key.repo.owner)
        .join(&key.repo.name)
        .join(format!("{}.yaml", key.number))
}

fn read_text(path: &Path) -> Result<String, StateError> {
    super::read_text_file(path).map_err(|source| StateError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn read_yaml<T: serde::de::DeserializeOwned>(
    layout: &Layout,
    path: &Path,
) -> Result<T, StateError> {
    yamlfile::parse(&read_text(path)?, layout.rel(path)).map_err(|mut e| {
        // What it holds only Gitea knows, and every run stops on it, a full sync too (it reads the last
        // snapshot to tell what changed): the way out is to undo the edit, not to guess a value (audit
        // 136: "keep one" of two titles given in a pull request).
        e.message.push_str(&format!(
            ". The snapshot is CommiTea's copy of Gitea, not edited by hand: undo the commit that broke \
             it (`git log -p -- {0}` shows it), with `git revert <that commit>`, or with `git checkout \
             <that commit>~1 -- {0} && git commit -m \"Undo a hand edit of the snapshot\" -- {0}` (a run \
             reads the snapshot as committed); the next sync writes it again",
            e.file.display()
        ));
        StateError::from(e)
    })
}

/// The repositories the snapshot holds (`meta.yaml`), none where there is no snapshot yet.
pub fn synced_repositories(layout: &Layout) -> Result<Vec<RepoName>, StateError> {
    let path = layout.snapshot_dir().join("meta.yaml");
    if !path.exists() {
        return Ok(Vec::new());
    }
    Ok(read_meta(layout, &path)?
        .repositories
        .into_iter()
        .map(|r| r.name)
        .collect())
}

/// Reads `meta.yaml`, refusing a newer format before its fields are read: a newer format may have fields
/// this CommiTea does not know, and "unknown field" would not say what to do.
fn read_meta(layout: &Layout, path: &Path) -> Result<Meta, StateError> {
    let text = read_text(path)?;
    refuse_newer(layout, path, &text)?;
    Ok(yamlfile::parse(&text, layout.rel(path))?)
}

/// The error for the `meta.yaml` at `path` with `text`, when it records a newer format than this
/// CommiTea's (or format 0, which never was one).
fn refuse_newer(layout: &Layout, path: &Path, text: &str) -> Result<(), StateError> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(default)]
        format: Option<Format>,
    }
    match yamlfile::parse::<Probe>(text, layout.rel(path)) {
        Ok(Probe {
            format: Some(found),
        }) if found > Format::CURRENT => Err(StateError::NewerFormat {
            path: layout.rel(path).to_path_buf(),
            found: found.0,
        }),
        Ok(Probe {
            format: Some(Format(0)),
        }) => Err(StateError::Invalid {
            path: layout.rel(path).to_path_buf(),
            message:
                "format: 0 is no state repo format (the first is 1, written without the field): \
                      remove the line"
                    .to_owned(),
        }),
        _ => Ok(()),
    }
}

/// That the state repo is there with a snapshot, said as every reader says it where not: the folder is
/// missing, is none, or has not been synced yet.
pub fn require(layout: &Layout) -> Result<(), StateError> {
    if layout.snapshot_dir().join("meta.yaml").exists() {
        return Ok(());
    }
    if !layout.root().is_dir() {
        return Err(StateError::NoFolder(layout.root().to_path_buf()));
    }
    Err(StateError::NoSnapshot {
        path: layout.root().to_path_buf(),
        configured: crate::config::Config::path_in(layout.root()).exists(),
    })
}

/// Refuses a state repo at `layout` whose `snapshot/meta.yaml` records a newer format, for a command that
/// does not read the snapshot itself (`publish`, `ask`, `mcp`) but must not work on such a state; a
/// missing or unreadable file is left to the commands that read it.
pub fn check_format(layout: &Layout) -> Result<(), StateError> {
    let path = layout.snapshot_dir().join("meta.yaml");
    match std::fs::read_to_string(&path) {
        Ok(text) => refuse_newer(layout, &path, &text),
        Err(_) => Ok(()),
    }
}

fn read_yaml_or_default<T: serde::de::DeserializeOwned + Default>(
    layout: &Layout,
    path: &Path,
) -> Result<T, StateError> {
    if path.exists() {
        read_yaml(layout, path)
    } else {
        Ok(T::default())
    }
}

/// The issue an issue file is named for: `snapshot/issues/OWNER/REPO/N.yaml`.
fn issue_key(layout: &Layout, path: &Path) -> Result<IssueKey, StateError> {
    let invalid = |message: String| StateError::Invalid {
        path: layout.rel(path).to_path_buf(),
        message,
    };
    let mut parts = path.iter().rev();
    let file = parts.next().and_then(|s| s.to_str()).unwrap_or_default();
    let name = parts.next().and_then(|s| s.to_str()).unwrap_or_default();
    let owner = parts.next().and_then(|s| s.to_str()).unwrap_or_default();
    let repo: RepoName = format!("{owner}/{name}").parse().map_err(|e| {
        invalid(format!(
            "{e}: issue files live at snapshot/issues/OWNER/REPO/N.yaml"
        ))
    })?;
    // Written as the sync writes it: `057.yaml` or `+57.yaml` would be a second file for issue 57, and
    // which of the two was read last would depend on the directory's order.
    let number: u64 = file
        .strip_suffix(".yaml")
        .filter(|n| n.bytes().all(|b| b.is_ascii_digit()) && !(n.len() > 1 && n.starts_with('0')))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| invalid("the file name must be the issue number, e.g. 12.yaml".into()))?;
    Ok(repo.issue(number))
}

fn read_issue(layout: &Layout, path: &Path) -> Result<(IssueKey, Issue), StateError> {
    let key = issue_key(layout, path)?;
    let issue: Issue = read_yaml(layout, path)?;
    if issue.number != key.number {
        return Err(StateError::Invalid {
            path: layout.rel(path).to_path_buf(),
            message: format!(
                "number: the file says {} but is named {}.yaml; rename the file or fix the number",
                issue.number, key.number
            ),
        });
    }
    Ok((key, issue))
}

/// Serialising values of different types through one closure.
mod erased {
    use std::path::Path;

    use crate::state::StateError;

    /// A value that can be written as canonical YAML.
    pub(crate) trait Yaml {
        /// The YAML text; `file` names it in errors.
        fn to_yaml(&self, file: &Path) -> Result<String, StateError>;
    }

    impl<T: serde::Serialize> Yaml for T {
        fn to_yaml(&self, file: &Path) -> Result<String, StateError> {
            Ok(crate::yamlfile::to_string(self, file)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    /// A copy of `tests/fixtures/small` with a `.git` directory (where the cache lives), its issue files
    /// dated an hour ago so that the cache trusts their stamps.
    fn state() -> (tempfile::TempDir, Layout) {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small");
        let tmp = tempfile::tempdir().unwrap();
        for entry in walkdir::WalkDir::new(&fixture) {
            let entry = entry.unwrap();
            let to = tmp
                .path()
                .join(entry.path().strip_prefix(&fixture).unwrap());
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                std::fs::copy(entry.path(), &to).unwrap();
                age(&to);
            }
        }
        std::fs::create_dir(tmp.path().join(".git")).unwrap();
        let layout = Layout::new(tmp.path());
        (tmp, layout)
    }

    #[test]
    fn a_second_file_for_an_issue_is_refused_not_read_in_directory_order() {
        let (_tmp, layout) = state();
        let dir = layout.root().join("snapshot/issues");
        let file = walkdir::WalkDir::new(&dir)
            .into_iter()
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_string_lossy().ends_with(".yaml"))
            .unwrap()
            .into_path();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for copy in [format!("0{name}"), format!("+{name}")] {
            let to = file.with_file_name(&copy);
            std::fs::copy(&file, &to).unwrap();
            let err = Snapshot::load(&layout).unwrap_err().to_string();
            assert!(
                err.contains(&copy) && err.contains("the file name must be the issue number"),
                "{err}"
            );
            std::fs::remove_file(&to).unwrap();
        }
        assert!(Snapshot::load(&layout).is_ok());
    }

    fn age(path: &Path) {
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }

    fn issue_files(layout: &Layout) -> Vec<PathBuf> {
        walkdir::WalkDir::new(layout.snapshot_dir().join("issues"))
            .min_depth(3)
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .collect()
    }

    #[test]
    fn a_read_through_the_parsed_cache_equals_a_read_of_the_yaml_and_follows_every_change() {
        let (_tmp, layout) = state();
        let cache = layout
            .root()
            .join(".git")
            .join("commitea-parsed-issues.json");
        let parsed = Snapshot::load_for_run(&layout).unwrap();
        assert!(!cache.exists(), "a run's read must not create the cache");
        assert_eq!(Snapshot::load(&layout).unwrap(), parsed);
        assert!(cache.exists());
        // From the cache: the same snapshot.
        assert_eq!(Snapshot::load(&layout).unwrap(), parsed);
        assert_eq!(Snapshot::load_for_run(&layout).unwrap(), parsed);

        // An entry is trusted exactly while its file's size and time are unchanged: a file rewritten
        // behind the cache's back with both kept reads as cached — which shows the cache is what is read.
        let files = issue_files(&layout);
        let first = &files[0];
        let text = std::fs::read_to_string(first).unwrap();
        let title = text
            .lines()
            .find_map(|l| l.strip_prefix("title: "))
            .unwrap()
            .to_owned();
        let other: String = title.chars().rev().collect();
        let key = issue_key(&layout, first).unwrap();
        let cached_time = std::fs::metadata(first).unwrap().modified().unwrap();
        let behind = text.replacen(&title, &other, 1);
        assert_eq!(behind.len(), text.len());
        std::fs::write(first, &behind).unwrap();
        std::fs::File::options()
            .write(true)
            .open(first)
            .unwrap()
            .set_modified(cached_time)
            .unwrap();
        assert_eq!(Snapshot::load(&layout).unwrap().issues[&key].title, title);
        // A changed file (a new time) is parsed again.
        age(first);
        let changed = Snapshot::load(&layout).unwrap();
        assert_eq!(changed.issues[&key].title, other);
        assert_eq!(changed.issues.len(), parsed.issues.len());
        // A file changed this very moment is parsed, and left out of the cache: its time cannot be trusted.
        std::fs::write(first, &text).unwrap();
        assert_eq!(Snapshot::load(&layout).unwrap().issues[&key].title, title);
        let stored = std::fs::read_to_string(&cache).unwrap();
        let rel = first
            .strip_prefix(layout.snapshot_dir().join("issues"))
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        assert!(!stored.contains(&format!("\"{rel}\"")), "{rel} is cached");
        assert!(stored.contains("\"number\""));

        // A run's read keeps an existing cache current.
        std::fs::write(first, &behind).unwrap();
        age(first);
        assert_eq!(
            Snapshot::load_for_run(&layout).unwrap().issues[&key].title,
            other
        );
        assert!(std::fs::read_to_string(&cache).unwrap().contains(&other));

        // A removed file is gone, and a cache that is not JSON is ignored.
        std::fs::remove_file(&files[1]).unwrap();
        std::fs::write(&cache, b"not json").unwrap();
        let removed = Snapshot::load(&layout).unwrap();
        assert_eq!(removed.issues.len(), parsed.issues.len() - 1);
        assert!(
            !removed
                .issues
                .contains_key(&issue_key(&layout, &files[1]).unwrap())
        );
        assert_eq!(Snapshot::load(&layout).unwrap(), removed);
    }
}
