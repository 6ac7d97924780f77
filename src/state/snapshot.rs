//! `snapshot/`: what the last sync saw, one YAML file per issue.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Layout, StateError, write_if_changed};
use crate::domain::{Issue, IssueKey, Label, Milestone, RepoName};
use crate::yamlfile;

/// `snapshot/meta.yaml`: when and where the snapshot was taken, and the per-repository sync cursors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
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
    /// The meta of a snapshot that read every repository in full at `now`.
    pub fn full(now: DateTime<Utc>, server: Option<String>, repos: &[RepoName]) -> Self {
        Self {
            synced_at: now,
            server,
            repositories: repos
                .iter()
                .map(|r| RepoMeta {
                    name: r.clone(),
                    cursor: Some(now),
                    last_full_sync: Some(now),
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
    /// Reads the snapshot of the state repo at `layout`.
    pub fn load(layout: &Layout) -> Result<Self, StateError> {
        let dir = layout.snapshot_dir();
        let meta_path = dir.join("meta.yaml");
        if !meta_path.exists() {
            return Err(StateError::NoSnapshot(layout.root().to_path_buf()));
        }
        let meta: Meta = read_yaml(layout, &meta_path)?;
        let labels = read_yaml_or_default(layout, &dir.join("labels.yaml"))?;
        let milestones = read_yaml_or_default(layout, &dir.join("milestones.yaml"))?;
        let mut issues = BTreeMap::new();
        let issues_dir = dir.join("issues");
        if issues_dir.exists() {
            let mut paths = Vec::new();
            for entry in walkdir::WalkDir::new(&issues_dir).min_depth(3).max_depth(3) {
                let entry = entry.map_err(|e| StateError::Io {
                    path: e
                        .path()
                        .map_or_else(|| issues_dir.clone(), Path::to_path_buf),
                    source: e.into(),
                })?;
                if entry.file_type().is_file()
                    && entry.path().extension().is_some_and(|x| x == "yaml")
                {
                    paths.push(entry.into_path());
                }
            }
            let parsed: Vec<Result<(IssueKey, Issue), StateError>> = {
                use rayon::prelude::*;
                paths.par_iter().map(|p| read_issue(layout, p)).collect()
            };
            for r in parsed {
                let (key, issue) = r?;
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

    /// The milestone with this id, with its repository.
    pub fn milestone(&self, id: u64) -> Option<(&RepoName, &Milestone)> {
        self.milestones
            .iter()
            .find_map(|(repo, ms)| ms.iter().find(|m| m.id == id).map(|m| (repo, m)))
    }
}

/// `snapshot/issues/OWNER/REPO/N.yaml`.
pub(crate) fn issue_path(layout: &Layout, key: &IssueKey) -> PathBuf {
    layout
        .snapshot_dir()
        .join("issues")
        .join(&key.repo.owner)
        .join(&key.repo.name)
        .join(format!("{}.yaml", key.number))
}

fn read_text(path: &Path) -> Result<String, StateError> {
    std::fs::read_to_string(path).map_err(|source| StateError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn read_yaml<T: serde::de::DeserializeOwned>(
    layout: &Layout,
    path: &Path,
) -> Result<T, StateError> {
    Ok(yamlfile::parse(&read_text(path)?, layout.rel(path))?)
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

fn read_issue(layout: &Layout, path: &Path) -> Result<(IssueKey, Issue), StateError> {
    let rel = layout.rel(path).to_path_buf();
    let invalid = |message: String| StateError::Invalid {
        path: rel.clone(),
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
    let number: u64 = file
        .strip_suffix(".yaml")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| invalid("the file name must be the issue number, e.g. 12.yaml".into()))?;
    let issue: Issue = read_yaml(layout, path)?;
    if issue.number != number {
        return Err(invalid(format!(
            "number: the file says {} but is named {number}.yaml; rename the file or fix the number",
            issue.number
        )));
    }
    Ok((repo.issue(number), issue))
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
