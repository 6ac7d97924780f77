//! One writer at a time: the lock a run, a directive, a tool write or an MCP write takes on a state repo.
//!
//! The lock is an advisory lock held by the kernel on `.git/commitea.lock` (or `.commitea.lock` in a state
//! folder that is not a git repository), so a process that dies — even by SIGKILL — releases it; the next
//! writer finds the file unlocked, reads who held it, says that it takes over, and goes on. While held, the
//! file names the holder (pid, host, command, since when), so a second writer that gives up after its
//! bounded wait can say who it waited for.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// The lock file's name inside `.git/` (or at the state repo's root when it has no `.git/` folder).
pub(crate) const LOCK_FILE: &str = "commitea.lock";

/// How often a waiting writer tries again.
const POLL: Duration = Duration::from_millis(100);

/// Who holds (or last held) the lock, as written into the lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The holder's process id.
    pub pid: u32,
    /// The holder's host name.
    pub host: String,
    /// What it runs, e.g. `commitea run`.
    pub command: String,
    /// Since when it holds the lock (RFC 3339).
    pub since: String,
}

impl Holder {
    /// Whether the holder was a run or a sync, the writers of `snapshot/`: read from `command` as
    /// [`current_command`] writes it (`PROGRAM SUBCOMMAND`).
    pub(crate) fn writes_snapshot(&self) -> bool {
        matches!(self.command.rsplit(' ').next(), Some("run" | "sync"))
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on {} (`{}`) since {}",
            self.pid, self.host, self.command, self.since
        )
    }
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another writer held the lock for the whole wait.
    #[error(
        "the state repo {state} is busy: another CommiTea writer holds {path} ({holder}); waited {waited_secs} s. \
         Run again when it has finished (or raise lock.wait_seconds)"
    )]
    Busy {
        /// The state repo.
        state: PathBuf,
        /// The lock file.
        path: PathBuf,
        /// Who holds it, as its file says (or "unknown" when the file could not be read).
        holder: String,
        /// How long this writer waited.
        waited_secs: u64,
    },
    /// The folder given as the state repo does not exist.
    #[error(transparent)]
    NoFolder(super::StateError),
    /// The folder given as the state repo has no `commitea.yaml`: a mistyped path, most likely.
    #[error(
        "{state} is not a CommiTea state repo: it has no commitea.yaml. Give the state repo's folder with -s/--state \
         (or COMMITEA_STATE), or start one there with `commitea init` (`commitea demo DIR` makes one to try)"
    )]
    NotAState {
        /// The folder given.
        state: PathBuf,
    },
    /// The lock file could not be opened or written.
    #[error("cannot use the lock file {path}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// A held lock on a state repo; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct StateLock {
    file: File,
    path: PathBuf,
    /// The holder a killed process left in the file, when this lock took it over.
    pub took_over: Option<Holder>,
}

impl StateLock {
    /// Where the lock file of the state repo at `root` lives.
    pub(crate) fn path_for(root: &Path) -> PathBuf {
        let git = root.join(".git");
        if git.is_dir() {
            git.join(LOCK_FILE)
        } else {
            root.join(format!(".{LOCK_FILE}"))
        }
    }

    /// Takes the lock of the state repo at `root` for `command`, waiting at most `wait` for another holder.
    pub fn acquire(
        root: &Path,
        command: &str,
        wait: Duration,
        now: DateTime<Utc>,
    ) -> Result<Self, LockError> {
        let path = Self::path_for(root);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let started = Instant::now();
        let mut announced = false;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    if !announced {
                        let holder = read_holder(&mut file)
                            .map_or_else(|| "unknown".to_owned(), |h| h.to_string());
                        tracing::info!(
                            "waiting up to {} s for another CommiTea writer: {holder}",
                            wait.as_secs()
                        );
                        announced = true;
                    }
                    if started.elapsed() >= wait {
                        let holder = read_holder(&mut file)
                            .map_or_else(|| "unknown".to_owned(), |h| h.to_string());
                        return Err(LockError::Busy {
                            state: root.to_path_buf(),
                            path: path.clone(),
                            holder,
                            waited_secs: started.elapsed().as_secs(),
                        });
                    }
                    std::thread::sleep(POLL.min(wait.saturating_sub(started.elapsed())));
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        // The file still names the last holder: if it is not empty, that holder died without cleaning up.
        let took_over = read_holder(&mut file);
        if let Some(h) = &took_over {
            tracing::warn!("taking over the lock left by a CommiTea writer that stopped: {h}");
        }
        let me = Holder {
            pid: std::process::id(),
            host: host_name(),
            command: command.to_owned(),
            since: now.to_rfc3339_opts(SecondsFormat::Secs, true),
        };
        let text = serde_json::to_string(&me).unwrap_or_default();
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(Self {
            file,
            path,
            took_over,
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StateLock {
    fn drop(&mut self) {
        // Empty the file before unlocking, so the next holder knows the last one finished cleanly.
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

fn read_holder(file: &mut File) -> Option<Holder> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(text.trim()).ok()
}

/// What this process runs, for the lock file: `commitea` and its subcommand (never the rest of the
/// command line, which may hold a directive's words).
pub(crate) fn current_command() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .map(|p| {
            Path::new(&p)
                .file_name()
                .map_or_else(|| p.clone(), |n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "commitea".to_owned());
    match args.find(|a| !a.starts_with('-')) {
        Some(sub) => format!("{program} {sub}"),
        None => program,
    }
}

/// Whether `root` is a state repo: a folder with `commitea.yaml` (a mistyped `-s` is said as such).
pub(crate) fn is_state(root: &Path) -> Result<(), LockError> {
    if !root.is_dir() {
        return Err(LockError::NoFolder(super::StateError::NoFolder(
            root.to_path_buf(),
        )));
    }
    if !root.join(crate::config::FILE_NAME).is_file() {
        return Err(LockError::NotAState {
            state: root.to_path_buf(),
        });
    }
    Ok(())
}

/// Takes the writer lock of the state repo at `root` for this process, waiting as `config` allows; when
/// it takes over from a writer that was killed, it also clears what that writer may have left half done
/// (temporary files, git's own lock files).
///
/// The lock file says since when on the wall clock, not the run's `--now`: an operator deciding whether a
/// holder is stuck reads it (an audit saw "since 2026-11-28" on a lock taken that minute).
pub(crate) fn lock_state(
    root: &Path,
    config: &crate::config::Config,
) -> Result<StateLock, LockError> {
    let now = Utc::now();
    // A writer never creates its state repo: a mistyped `-s` must not leave a lock file in a new folder.
    is_state(root)?;
    let wait = Duration::from_secs(u64::from(config.lock.wait_seconds.0));
    let lock = StateLock::acquire(root, &current_command(), wait, now)?;
    let layout = super::Layout::new(root);
    match super::remove_leftovers(&layout) {
        Ok(0) => {}
        Ok(n) => tracing::info!("removed {n} temporary files an interrupted run left"),
        Err(e) => tracing::warn!("could not remove an interrupted run's temporary files: {e}"),
    }
    if lock.took_over.is_some() {
        // git's locks are ours to clear only when the writer that held them is known to be gone.
        for name in ["index.lock", "HEAD.lock"] {
            remove_git_lock(&root.join(".git").join(name));
        }
        remove_temporaries(&root.join(".git"));
        let heads = root.join(".git").join("refs").join("heads");
        for entry in walkdir::WalkDir::new(&heads)
            .into_iter()
            .filter_map(Result::ok)
        {
            if entry.file_name().to_string_lossy().ends_with(".lock") {
                remove_git_lock(entry.path());
            }
        }
    }
    Ok(lock)
}

fn remove_git_lock(path: &Path) {
    if path.exists() {
        match std::fs::remove_file(path) {
            Ok(()) => tracing::warn!("removed {} that an interrupted run left", path.display()),
            Err(e) => tracing::warn!("cannot remove {}: {e}", path.display()),
        }
    }
}

/// Removes what a killed writer left in `.git`: the cache of parsed issues it was writing
/// (`commitea-parsed-issues.PID.tmp`, as large as the snapshot) and the loose objects gix was writing
/// (`objects/.tmp*`, which `git gc` does not prune), those older than a minute (a git command run beside
/// CommiTea may be writing its own).
fn remove_temporaries(git_dir: &Path) {
    let old = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(60))
    };
    let mut removed = 0;
    let mut remove = |path: &Path| {
        if std::fs::remove_file(path).is_ok() {
            removed += 1;
        }
    };
    for (dir, ours) in [
        (git_dir.to_path_buf(), true),
        (git_dir.join("objects"), false),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let leftover = if ours {
                name.starts_with("commitea-parsed-issues.") && name.ends_with(".tmp")
            } else {
                name.starts_with(".tmp") && old(&path)
            };
            if leftover && path.is_file() {
                remove(&path);
            }
        }
    }
    if removed > 0 {
        tracing::info!("removed {removed} temporary files an interrupted run left in .git");
    }
}

/// This machine's name, for the lock file (`HOSTNAME`, else `/etc/hostname`, else `unknown`).
fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_writers_temporaries_in_git_go_and_a_fresh_one_of_another_stays() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        std::fs::create_dir_all(git.join("objects")).unwrap();
        let cache = git.join("commitea-parsed-issues.4242.tmp");
        let stale = git.join("objects/.tmpAbC123");
        let fresh = git.join("objects/.tmpXyZ789");
        for f in [&cache, &stale, &fresh] {
            std::fs::write(f, "half").unwrap();
        }
        let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&stale)
            .and_then(|f| f.set_modified(hour_ago))
            .unwrap();
        let kept = git.join("commitea-parsed-issues.json");
        std::fs::write(&kept, "{}").unwrap();
        remove_temporaries(&git);
        assert!(!cache.exists() && !stale.exists());
        assert!(fresh.exists() && kept.exists());
    }

    #[test]
    fn the_lock_says_since_when_on_the_wall_clock() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(crate::config::FILE_NAME), "").unwrap();
        let _lock = lock_state(dir.path(), &crate::config::Config::default()).unwrap();
        let text = [
            dir.path().join(".git").join(LOCK_FILE),
            dir.path().join(format!(".{LOCK_FILE}")),
        ]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .unwrap();
        let today = Utc::now().format("%Y-%m-%dT").to_string();
        assert!(text.contains(&today), "{text}");
    }

    #[test]
    fn a_second_writer_waits_then_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let now = Utc::now();
        let first = StateLock::acquire(dir.path(), "commitea run", Duration::ZERO, now).unwrap();
        assert!(first.took_over.is_none());
        let err = StateLock::acquire(
            dir.path(),
            "commitea directive",
            Duration::from_millis(300),
            now,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("busy"), "{err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert!(err.contains("`commitea run`"), "{err}");
        drop(first);
        let again =
            StateLock::acquire(dir.path(), "commitea directive", Duration::ZERO, now).unwrap();
        assert!(
            again.took_over.is_none(),
            "a clean release leaves no holder"
        );
    }

    #[test]
    fn a_lock_left_behind_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        // What a killed holder leaves: its record in a file nobody locks.
        let dead = Holder {
            pid: 999_999,
            host: "ci".into(),
            command: "commitea run".into(),
            since: "2026-12-01T00:00:00Z".into(),
        };
        std::fs::write(
            StateLock::path_for(dir.path()),
            serde_json::to_string(&dead).unwrap(),
        )
        .unwrap();
        let lock =
            StateLock::acquire(dir.path(), "commitea run", Duration::ZERO, Utc::now()).unwrap();
        assert_eq!(lock.took_over, Some(dead));
    }
}
