//! The state repo: where each file lives, reading and writing the snapshot, and committing through gix.
//!
//! The layout is documented in `docs/state-format.md`. Files are written only when their bytes change,
//! through a temporary file and a rename, so a re-run with no change touches nothing and a crash never
//! leaves half a file.

pub mod git;
pub mod lock;
mod parsed_cache;
pub mod remote;
mod snapshot;

use std::path::{Path, PathBuf};

pub(crate) use snapshot::is_snapshot_file;
pub use snapshot::{
    Format, Meta, RepoMeta, Snapshot, SnapshotFiles, check_format, require, synced_repositories,
};

/// What to do about an I/O error, where its kind tells (audit 88: "No space left on device" said
/// nothing of what to do).
pub(crate) fn io_hint(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::StorageFull | K::QuotaExceeded => "; free some space, then run again",
        K::PermissionDenied | K::ReadOnlyFilesystem => {
            "; let this user write it (or the folder it is in), then run again"
        }
        K::NotADirectory => {
            "; a file stands where a folder should be: move it away, then run again"
        }
        K::IsADirectory => "; a folder stands where a file should be: move it away, then run again",
        K::InvalidData => "; it is not UTF-8 text: save it as UTF-8",
        _ => "",
    }
}

/// Why the state repo could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A file could not be read or written.
    #[error("{path}: {source}{}", io_hint(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A YAML file is malformed.
    #[error(transparent)]
    Yaml(#[from] crate::yamlfile::YamlError),
    /// A JSON file is malformed or cannot be written.
    #[error("{path}: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file is well-formed but its content contradicts its place.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// The state repo was written by a newer CommiTea, in a format this one does not read.
    #[error(
        "{path}: the state repo is in format {found}, written by a newer CommiTea; this one ({version}) reads \
         format {current} and older and leaves the state as it is: upgrade commitea (in the Gitea workflow, \
         the repository variable COMMITEA_VERSION)",
        version = env!("CARGO_PKG_VERSION"),
        current = crate::state::Format::CURRENT.0
    )]
    NewerFormat {
        /// `snapshot/meta.yaml`.
        path: PathBuf,
        /// The format it records.
        found: u32,
    },
    /// The snapshot is missing: in a state repo not synced yet, or in a folder that is none.
    #[error("{}", if *.configured {
        format!("{} has no snapshot/meta.yaml: run `commitea sync` first", .path.display())
    } else {
        format!(
            "{} is no CommiTea state repo (no commitea.yaml, no snapshot): make one with `commitea init`, \
             or try the bundled demo with `commitea demo DIR`; or give the state repo's folder with \
             -s/--state (or COMMITEA_STATE)",
            .path.display()
        )
    })]
    NoSnapshot {
        /// The folder.
        path: PathBuf,
        /// Whether it has a `commitea.yaml` (a state repo `init` made and no sync has filled yet).
        configured: bool,
    },
    /// The folder given as the state repo is not there.
    #[error(
        "there is no folder {0}: give the state repo's folder with -s/--state (or COMMITEA_STATE), or make one with \
         `commitea init` (or `commitea demo DIR` to try the bundled demo)"
    )]
    NoFolder(PathBuf),
}

/// The PM's directive ledger, relative to the state repo (also its path in git history).
pub(crate) const LEDGER_FILE: &str = "pm-state.md";

/// The folder of the snapshot, at the state repo's top.
pub(crate) const SNAPSHOT_DIR: &str = "snapshot";
/// The forecast report, relative to the state repo (also its path in git history).
pub(crate) const FORECAST_FILE: &str = "forecast/forecast.json";
/// The last backtest report, relative to the state repo.
pub(crate) const BACKTEST_FILE: &str = "forecast/backtest.json";
/// The approved op files Gitea refused whole at the last run that put them to it, relative to the state
/// repo: absent when it refused none.
pub(crate) const REFUSED_FILE: &str = "forecast/refused.json";

/// The path of the view payload `name`, relative to the state repo: `forecast/views/NAME.json`.
pub(crate) fn view_path(name: &str) -> String {
    format!("forecast/views/{name}.json")
}

/// The paths of a state repo.
#[derive(Debug, Clone)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    /// The layout of the state repo at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
    /// The state repo's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `snapshot/`.
    pub(crate) fn snapshot_dir(&self) -> PathBuf {
        self.root.join(SNAPSHOT_DIR)
    }
    /// `pm-state.md`.
    pub fn ledger(&self) -> PathBuf {
        self.root.join(LEDGER_FILE)
    }
    /// `forecast/`.
    pub(crate) fn forecast_dir(&self) -> PathBuf {
        self.root.join("forecast")
    }
    /// `forecast/forecast.json`: the committed forecast.
    pub fn forecast_file(&self) -> PathBuf {
        self.root.join(FORECAST_FILE)
    }
    /// `ops/`.
    pub fn ops_dir(&self) -> PathBuf {
        self.root.join("ops")
    }
    /// `site-templates/`: the state repo's own template overrides.
    pub(crate) fn templates_dir(&self) -> PathBuf {
        self.root.join("site-templates")
    }
    /// `forecast/backtest.json`, written by `commitea backtest --write`.
    pub(crate) fn backtest_file(&self) -> PathBuf {
        self.root.join(BACKTEST_FILE)
    }
    /// A path relative to the root, for messages.
    pub fn rel<'a>(&self, path: &'a Path) -> &'a Path {
        path.strip_prefix(&self.root).unwrap_or(path)
    }
}

/// A writer's word that its caller no longer wants the write (an MCP client cancelled the call): checked
/// before the first file is written, so a cancelled call leaves the state as it was. Cheap to clone; the
/// clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    /// Says the write is no longer wanted.
    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether it was said.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The suffix of a temporary file a write goes through before its rename; one left behind by a killed
/// run is never committed and is removed by the next run ([`remove_leftovers`]).
pub const TMP_SUFFIX: &str = ".tmp-commitea";

/// The `.gitignore` every new state repo gets (init, demo, import): what a run rebuilds or leaves only while
/// it runs, so `git status` shows none of it — the rendered site, the lock of a repo without `.git/`, and
/// a file or folder a killed run left half-written (an audit saw `.public.tmp-commitea/` in `git status`).
pub const GITIGNORE: &str = "\
# Rebuilt by every run: the rendered site, the run's lock, and what a killed run left half-written.
public/
.commitea.lock
*.tmp-commitea
";

/// Whether `path` is a symbolic link (not followed).
pub(crate) fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The first symbolic link at `path` or in a folder between `root` and it (`root` itself is the user's
/// choice and not looked at). A linked folder arrives through a pull request as easily as a linked file,
/// and an `ops/pending` linked elsewhere had op files written outside the repo (an audit's finding).
pub(crate) fn link_below(root: &Path, path: &Path) -> Option<PathBuf> {
    let Ok(rel) = path.strip_prefix(root) else {
        return is_link(path).then(|| path.to_path_buf());
    };
    let mut at = root.to_path_buf();
    rel.components().find_map(|c| {
        at.push(c);
        is_link(&at).then(|| at.clone())
    })
}

/// The state repo `path` is in, when it can tell: the nearest folder above it that holds `commitea.yaml`
/// or `.git`.
pub(crate) fn root_of(path: &Path) -> Option<&Path> {
    path.ancestors().skip(1).find_map(|dir| {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        (std::fs::symlink_metadata(crate::config::Config::path_in(dir)).is_ok()
            || std::fs::symlink_metadata(dir.join(".git")).is_ok())
        .then_some(dir)
    })
}

/// The error for a symbolic link where a file or folder of the state repo belongs.
pub(crate) fn link_refused() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "it is a symbolic link, and CommiTea follows none in the state repo: replace it with the file \
         or folder itself",
    )
}

/// Reads a file of the state repo, refusing a symbolic link. The repo's files arrive through pull
/// requests, and a link is easy to miss in one: a link to `/proc/self/environ` or to a file outside the
/// repo would bring what it points to into the site, an error message or the logs (a security audit
/// published the job's token through a linked `site-templates/style.css`).
pub(crate) fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    if is_link(path) {
        return Err(link_refused());
    }
    std::fs::read(path)
}

/// [`read_file`] as text.
pub(crate) fn read_text_file(path: &Path) -> std::io::Result<String> {
    if is_link(path) {
        return Err(link_refused());
    }
    std::fs::read_to_string(path)
}

/// A text with its CRLF line endings as LF: what `git add` stores of a file a checkout converts
/// (`core.autocrlf`, `eol=crlf`), and so what the checkout's text is once committed.
pub(crate) fn as_lf(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains("\r\n") {
        std::borrow::Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Whether a checkout's file holds the committed bytes but for line endings the checkout converted
/// (audits 167, 169: with `core.autocrlf` every ledger entry read as edited, and `propose` opened a pull
/// request for each).
pub(crate) fn same_text(checkout: &[u8], committed: &[u8]) -> bool {
    checkout == committed
        || as_lf(&String::from_utf8_lossy(checkout)) == as_lf(&String::from_utf8_lossy(committed))
}

/// `entry` in the line endings of `text` (CRLF if it has any), so that an entry written into it does
/// not mix the two.
pub(crate) fn in_endings_of(entry: &str, text: &str) -> String {
    let lf = as_lf(entry);
    if text.contains("\r\n") {
        lf.replace('\n', "\r\n")
    } else {
        lf.into_owned()
    }
}

/// Removes the temporary files a killed run left in the folders a run writes (`snapshot/`, `forecast/`,
/// `ops/` and the state repo's top level); returns how many.
pub(crate) fn remove_leftovers(layout: &Layout) -> Result<usize, StateError> {
    let mut removed = 0;
    for dir in [
        layout.root().to_path_buf(),
        layout.snapshot_dir(),
        layout.forecast_dir(),
        layout.ops_dir(),
    ] {
        let depth = if dir == layout.root() { 1 } else { usize::MAX };
        for entry in walkdir::WalkDir::new(&dir)
            .max_depth(depth)
            .into_iter()
            .filter_map(Result::ok)
        {
            if entry.file_type().is_file()
                && entry.file_name().to_string_lossy().ends_with(TMP_SUFFIX)
            {
                std::fs::remove_file(entry.path()).map_err(|source| StateError::Io {
                    path: entry.path().to_path_buf(),
                    source,
                })?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// Writes `bytes` to `path` unless the file already holds exactly them; returns whether it wrote.
///
/// The write goes through a temporary file in the same folder and a rename, so readers never see half a file.
pub(crate) fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool, StateError> {
    let io = |source| StateError::Io {
        path: path.to_path_buf(),
        source,
    };
    let link = match root_of(path) {
        Some(root) => link_below(root, path),
        None => is_link(path).then(|| path.to_path_buf()),
    };
    if let Some(link) = link {
        return Err(StateError::Io {
            path: link,
            source: link_refused(),
        });
    }
    match std::fs::read(path) {
        Ok(old) if old == bytes => return Ok(false),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = path.with_extension(format!(
        "{}{TMP_SUFFIX}",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    replace_through(&tmp, path, bytes).map_err(io)?;
    Ok(true)
}

/// Writes `bytes` to `tmp`, then renames it to `path`: a reader (or a crash) never meets half a file. A
/// write that fails (a full disk) takes its half-written `tmp` away with it, rather than leave it holding
/// the last free space until the next run.
pub(crate) fn replace_through(tmp: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let done = std::fs::write(tmp, bytes).and_then(|()| std::fs::rename(tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    done
}

/// Serialises `value` as pretty JSON with a final newline (the form of every JSON file CommiTea writes).
pub(crate) fn to_json<T: serde::Serialize>(value: &T, path: &Path) -> Result<Vec<u8>, StateError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| StateError::Json {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_says_what_to_do_where_its_kind_tells() {
        let said = |kind| {
            StateError::Io {
                path: "forecast/forecast.json".into(),
                source: std::io::Error::from(kind),
            }
            .to_string()
        };
        assert!(
            said(std::io::ErrorKind::StorageFull).ends_with("; free some space, then run again")
        );
        assert!(
            said(std::io::ErrorKind::NotADirectory)
                .contains("a file stands where a folder should be")
        );
        assert!(said(std::io::ErrorKind::Interrupted).starts_with("forecast/forecast.json: "));
    }

    #[test]
    fn a_write_that_fails_takes_its_temporary_file_with_it() {
        let dir = tempfile::tempdir().unwrap();
        // A folder with a file in it where the file should go: the rename fails.
        let path = dir.path().join("forecast.json");
        std::fs::create_dir_all(path.join("in-the-way")).unwrap();
        let tmp = dir.path().join("forecast.json.tmp-commitea");
        assert!(replace_through(&tmp, &path, b"{}").is_err());
        assert!(!tmp.exists());
        // And one that works leaves only the file.
        let other = dir.path().join("runway.json");
        let tmp = dir.path().join("runway.json.tmp-commitea");
        replace_through(&tmp, &other, b"{}").unwrap();
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(&other).unwrap(), b"{}");
    }
}
