//! Pull requests of state repositories: repositories whose git data is a real bare repository on disk
//! ([`super::EmulatorOptions::state_repos`]). Branches are read and merges written with the `git` CLI, so a test
//! sees the merge commit in the bare repository as a clone would.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::dataset::{Dataset, PullShape, Render};
use super::http::{Request, Response};
use super::routes::{Answer, Paging, body_json, error, listed, not_found, number, state_matches};
use super::{Shared, lock};
use commitea::domain::{OpenState, RepoName};

/// A pull request of a state repository, kept by the emulator (not in the [`Dataset`]); its number shares the
/// repository's issue number space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatePull {
    /// The number.
    pub number: u64,
    /// The title.
    pub title: String,
    /// The description.
    pub body: String,
    /// Who opened it (the token's user).
    pub author: String,
    /// The head branch.
    pub head: String,
    /// The owner of the fork the head branch is in; `None`: the repository's own branch.
    pub fork: Option<String>,
    /// The base branch.
    pub base: String,
    /// The head branch's commit when it was opened (when it was merged, once merged).
    pub head_sha: String,
    /// The merge base of head and base when it was opened.
    pub merge_base: String,
    /// Open or closed (merged ones are closed).
    pub state: OpenState,
    /// Whether it was merged.
    pub merged: bool,
    /// When it was merged.
    pub merged_at: Option<DateTime<Utc>>,
    /// Who merged it.
    pub merged_by: Option<String>,
    /// The merge commit.
    pub merge_commit_sha: Option<String>,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// When it was closed or merged.
    pub closed_at: Option<DateTime<Utc>>,
}

impl StatePull {
    /// A pull request opened at `at`, from `head` (in `fork`'s fork of the repository, if given) onto `base`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn opened(
        number: u64,
        title: String,
        body: String,
        author: String,
        (head, fork, head_sha): (String, Option<String>, String),
        base: String,
        merge_base: String,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            number,
            title,
            body,
            author,
            head,
            fork,
            base,
            head_sha,
            merge_base,
            state: OpenState::Open,
            merged: false,
            merged_at: None,
            merged_by: None,
            merge_commit_sha: None,
            created_at: at,
            updated_at: at,
            closed_at: None,
        }
    }
}

/// The state repositories' pull requests.
pub(crate) type StatePulls = BTreeMap<RepoName, BTreeMap<u64, StatePull>>;

/// Runs `git -C bare args` with `env`; `(exit code, stdout, stderr)`.
fn git(
    bare: &Path,
    args: &[&str],
    env: &[(&str, String)],
) -> Result<(i32, String, String), String> {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(bare).args(args);
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run git {}: {e}", args.join(" ")))?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        String::from_utf8_lossy(&out.stderr).trim().to_owned(),
    ))
}

/// `git … args` that must succeed; its stdout.
fn git_ok(bare: &Path, args: &[&str], env: &[(&str, String)]) -> Result<String, String> {
    match git(bare, args, env)? {
        (0, out, _) => Ok(out),
        (_, out, err) => Err(format!("git {} failed: {err}{out}", args.join(" "))),
    }
}

/// The commit of branch `name` in the bare repository, if the branch exists.
fn branch_sha(bare: &Path, name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let spec = format!("refs/heads/{name}");
    match git(bare, &["rev-parse", "--verify", "--quiet", &spec], &[]) {
        Ok((0, sha, _)) if !sha.is_empty() => Some(sha),
        _ => None,
    }
}

/// The next free number of `repo`: issues, dataset pull requests and state pull requests share the space.
pub(crate) fn next_number(ds: &Dataset, pulls: &StatePulls, repo: &RepoName) -> u64 {
    let state = pulls
        .get(repo)
        .and_then(|m| m.keys().next_back().copied())
        .unwrap_or(0);
    ds.next_number(repo).max(state + 1)
}

/// Why a merge did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MergeError {
    /// No such pull request (or not a state repository).
    NotFound,
    /// Closed without being merged.
    Closed,
    /// Already merged.
    Merged,
    /// Head and base conflict.
    Conflict(String),
    /// git failed.
    Git(String),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::NotFound => f.write_str("pull request not found"),
            MergeError::Closed => f.write_str("pull request is closed"),
            MergeError::Merged => f.write_str("pull request is already merged"),
            MergeError::Conflict(m) => write!(f, "merge conflict: {m}"),
            MergeError::Git(m) => f.write_str(m),
        }
    }
}

/// Merges pull request `number` of state repository `repo` as `merger` with a real merge commit in the bare
/// repository (Gitea's `merge` style: always a merge commit); returns the merge commit.
///
/// `title` and `message` are the API's `MergeTitleField` and `MergeMessageField` (empty: Gitea's default title).
pub(crate) fn merge(
    shared: &Shared,
    ds: &mut Dataset,
    repo: &RepoName,
    number: u64,
    merger: &str,
    title: &str,
    message: &str,
) -> Result<String, MergeError> {
    let bare = shared
        .options
        .state_repos
        .get(repo)
        .ok_or(MergeError::NotFound)?;
    let mut pulls = lock(&shared.state_pulls);
    let pr = pulls
        .get_mut(repo)
        .and_then(|m| m.get_mut(&number))
        .ok_or(MergeError::NotFound)?;
    // services/pull/check.go `CheckPullMergeable`: merged is checked before closed.
    if pr.merged {
        return Err(MergeError::Merged);
    }
    if pr.state == OpenState::Closed {
        return Err(MergeError::Closed);
    }
    let base_sha = branch_sha(bare, &pr.base)
        .ok_or_else(|| MergeError::Git(format!("base branch {} does not exist", pr.base)))?;
    let head_sha = branch_sha(bare, &pr.head)
        .ok_or_else(|| MergeError::Git(format!("head branch {} does not exist", pr.head)))?;
    let tree = match git(
        bare,
        &["merge-tree", "--write-tree", &base_sha, &head_sha],
        &[],
    )
    .map_err(MergeError::Git)?
    {
        (0, out, _) => out.lines().next().unwrap_or_default().to_owned(),
        (1, out, _) => return Err(MergeError::Conflict(out)),
        (_, out, err) => return Err(MergeError::Git(format!("git merge-tree: {err}{out}"))),
    };
    let mut text = title.trim().to_owned();
    if text.is_empty() {
        text = format!(
            "Merge pull request '{}' (#{}) from {} into {}",
            pr.title, pr.number, pr.head, pr.base
        );
    }
    let message = message.trim();
    if !message.is_empty() {
        text = format!("{text}\n\n{message}");
    }
    let at = ds.tick();
    let date = format!("{} +0000", at.timestamp());
    let email = format!("{merger}@noreply.localhost");
    let env = [
        ("GIT_AUTHOR_NAME", merger.to_owned()),
        ("GIT_AUTHOR_EMAIL", email.clone()),
        ("GIT_AUTHOR_DATE", date.clone()),
        ("GIT_COMMITTER_NAME", merger.to_owned()),
        ("GIT_COMMITTER_EMAIL", email),
        ("GIT_COMMITTER_DATE", date),
    ];
    let commit = git_ok(
        bare,
        &[
            "commit-tree",
            &tree,
            "-p",
            &base_sha,
            "-p",
            &head_sha,
            "-m",
            &text,
        ],
        &env,
    )
    .map_err(MergeError::Git)?;
    let base_ref = format!("refs/heads/{}", pr.base);
    git_ok(bare, &["update-ref", &base_ref, &commit, &base_sha], &[]).map_err(MergeError::Git)?;
    pr.merged = true;
    pr.merged_at = Some(at);
    pr.merged_by = Some(merger.to_owned());
    pr.merge_commit_sha = Some(commit.clone());
    pr.head_sha = head_sha;
    pr.state = OpenState::Closed;
    pr.closed_at = Some(at);
    pr.updated_at = at;
    Ok(commit)
}

/// The JSON facts of a state pull request; head and base commits are read from the bare repository while it is
/// open (Gitea reads the branches when it renders one).
fn shape<'a>(bare: &Path, p: &'a StatePull) -> PullShape<'a> {
    let live = if p.fork.is_none() {
        branch_sha(bare, &p.head)
    } else {
        None
    };
    let head_gone = p.fork.is_none() && live.is_none();
    let head_sha = match live {
        Some(sha) if p.state == OpenState::Open => sha,
        _ => p.head_sha.clone(),
    };
    let base_sha = branch_sha(bare, &p.base).unwrap_or_default();
    PullShape {
        number: p.number,
        author: &p.author,
        title: &p.title,
        body: &p.body,
        state: p.state,
        merged: p.merged,
        merged_at: p.merged_at,
        merged_by: p.merged_by.as_deref(),
        merge_commit_sha: p.merge_commit_sha.clone(),
        head: (p.head.clone(), head_sha),
        head_fork: p.fork.as_deref(),
        head_gone,
        base: (p.base.clone(), base_sha),
        merge_base: p.merge_base.clone(),
        created_at: p.created_at,
        updated_at: p.updated_at,
        closed_at: p.closed_at,
    }
}

/// Gitea's `ErrPullRequestAlreadyExists` text.
fn already_exists(repo_id: u64, p: &StatePull, ds_issue_id: u64) -> String {
    format!(
        "pull request already exists for these targets [id: {ds_issue_id}, issue_id: {ds_issue_id}, head_repo_id: {repo_id}, base_repo_id: {repo_id}, head_branch: {}, base_branch: {}]",
        p.head, p.base
    )
}

/// The pull request routes of state repository `repo` (whose bare repository is `bare`); `None` when `tail` is
/// not one of them.
pub(crate) fn route(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    repo: &RepoName,
    bare: &Path,
    tail: &[&str],
    deps_enabled: bool,
) -> Option<Answer> {
    let method = req.method.as_str();
    Some(match (method, tail) {
        ("GET", ["pulls"]) => Ok(list(req, shared, ds, repo, bare, deps_enabled)),
        ("POST", ["pulls"]) => create(req, shared, ds, repo, bare, deps_enabled),
        ("GET", ["pulls", n]) => {
            let n = match number(n, shared) {
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            let pulls = lock(&shared.state_pulls);
            let p = pulls.get(repo).and_then(|m| m.get(&n))?;
            let r = Render::new(ds, shared);
            Ok(Response::json(
                200,
                &r.pull_shape(repo, &shape(bare, p), deps_enabled, false),
            ))
        }
        ("PATCH", ["pulls", n]) => {
            let n = match number(n, shared) {
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            edit(req, shared, ds, repo, bare, n, deps_enabled)
        }
        ("POST", ["pulls", n, "merge"]) => {
            let n = match number(n, shared) {
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            merge_route(req, shared, ds, repo, n)
        }
        ("GET", ["commits", sha, "pull"]) => {
            let pulls = lock(&shared.state_pulls);
            let found = pulls.get(repo).and_then(|m| {
                m.values()
                    .find(|p| p.merged && p.merge_commit_sha.as_deref() == Some(*sha))
            });
            // Not one of these: the dataset's pull requests are tried next.
            let p = found?;
            let r = Render::new(ds, shared);
            Ok(Response::json(
                200,
                &r.pull_shape(repo, &shape(bare, p), deps_enabled, false),
            ))
        }
        _ => return None,
    })
}

/// `GET /pulls`: state pull requests and any of the dataset's, newest first.
fn list(
    req: &Request,
    shared: &Shared,
    ds: &Dataset,
    repo: &RepoName,
    bare: &Path,
    deps_enabled: bool,
) -> Response {
    let want = req.param("state").unwrap_or("open");
    let pulls = lock(&shared.state_pulls);
    // (created, number, from the state pulls)
    let mut rows: Vec<(DateTime<Utc>, u64, bool)> = pulls
        .get(repo)
        .into_iter()
        .flat_map(|m| m.values())
        .filter(|p| state_matches(want, p.state))
        .map(|p| (p.created_at, p.number, true))
        .chain(
            ds.pulls(repo)
                .into_iter()
                .filter(|p| state_matches(want, p.state))
                .map(|p| (p.created_at, p.number, false)),
        )
        .collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let r = Render::new(ds, shared);
    let paging = Paging::of(req, shared);
    let items = paging
        .slice(&rows)
        .iter()
        .map(|&(_, n, state)| {
            if state {
                pulls
                    .get(repo)
                    .and_then(|m| m.get(&n))
                    .map_or(Value::Null, |p| {
                        r.pull_shape(repo, &shape(bare, p), deps_enabled, true)
                    })
            } else {
                ds.pull(repo, n)
                    .map_or(Value::Null, |p| r.pull(repo, p, deps_enabled, true))
            }
        })
        .collect();
    listed(shared, req, paging, rows.len(), items)
}

/// `POST /pulls` (`CreatePullRequestOption`).
fn create(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    repo: &RepoName,
    bare: &Path,
    deps_enabled: bool,
) -> Answer {
    let body = body_json(req, shared)?;
    let text = |k: &str| match &body[k] {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        v => Err(error(
            shared,
            422,
            &format!(
                "json: cannot unmarshal {v} into Go struct field CreatePullRequestOption.{k} of type string"
            ),
        )),
    };
    let title = text("title")?;
    let description = text("body")?;
    // `owner:branch` names a branch of a fork; only this repository's owner is served.
    let branch_of = |s: String| match s.split_once(':') {
        Some((owner, b)) if owner == repo.owner => Some(b.to_owned()),
        Some(_) => None,
        None => Some(s),
    };
    let head = text("head")?;
    let base = text("base")?;
    if title.trim().is_empty() || head.is_empty() || base.is_empty() {
        return Err(error(shared, 422, "[Head Base Title]: Required"));
    }
    let (Some(head), Some(base)) = (branch_of(head), branch_of(base)) else {
        return Err(not_found(shared));
    };
    let Some(base_sha) = branch_sha(bare, &base) else {
        return Err(not_found(shared));
    };
    let Some(head_sha) = branch_sha(bare, &head) else {
        return Err(not_found(shared));
    };
    if head == base {
        return Err(error(
            shared,
            422,
            "Invalid PullRequest: There are no changes between the head and the base",
        ));
    }
    let mut pulls = lock(&shared.state_pulls);
    if let Some(p) = pulls.get(repo).and_then(|m| {
        m.values().find(|p| {
            p.state == OpenState::Open && p.fork.is_none() && p.head == head && p.base == base
        })
    }) {
        let repo_id = ds.repo_id(repo).unwrap_or(0);
        let msg = already_exists(repo_id, p, ds.issue_id(repo, p.number));
        return Err(error(shared, 409, &msg));
    }
    let merge_base = git_ok(bare, &["merge-base", &base_sha, &head_sha], &[]).unwrap_or_default();
    let number = next_number(ds, &pulls, repo);
    let at = ds.tick();
    let pr = StatePull::opened(
        number,
        title,
        description,
        shared.options.user.clone(),
        (head, None, head_sha),
        base,
        merge_base,
        at,
    );
    let r = Render::new(ds, shared);
    let v = r.pull_shape(repo, &shape(bare, &pr), deps_enabled, false);
    pulls.entry(repo.clone()).or_default().insert(number, pr);
    Ok(Response::json(201, &v))
}

/// `PATCH /pulls/{n}` (`EditPullRequestOption`): title (when not empty), body (when given), state.
fn edit(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    repo: &RepoName,
    bare: &Path,
    n: u64,
    deps_enabled: bool,
) -> Answer {
    let body = body_json(req, shared)?;
    let mut pulls = lock(&shared.state_pulls);
    let Some(current) = pulls.get(repo).and_then(|m| m.get(&n)).cloned() else {
        return Err(not_found(shared));
    };
    let mut p = current.clone();
    if let Some(t) = body["title"].as_str().filter(|t| !t.is_empty()) {
        t.clone_into(&mut p.title);
    }
    if let Some(b) = body["body"].as_str() {
        b.clone_into(&mut p.body);
    }
    if let Some(s) = body["state"].as_str() {
        if p.merged {
            return Err(error(
                shared,
                412,
                "cannot change state of this pull request, it was already merged",
            ));
        }
        let state = if s == "closed" {
            OpenState::Closed
        } else {
            OpenState::Open
        };
        if state == OpenState::Open
            && p.state == OpenState::Closed
            && let Some(other) = pulls.get(repo).and_then(|m| {
                m.values().find(|o| {
                    o.number != n
                        && o.state == OpenState::Open
                        && o.head == p.head
                        && o.base == p.base
                })
            })
        {
            let repo_id = ds.repo_id(repo).unwrap_or(0);
            let msg = already_exists(repo_id, other, ds.issue_id(repo, other.number));
            return Err(error(shared, 409, &msg));
        }
        p.state = state;
    }
    if p != current {
        let at = ds.tick();
        if p.state != current.state {
            p.closed_at = (p.state == OpenState::Closed).then_some(at);
            if p.state == OpenState::Closed {
                p.head_sha = branch_sha(bare, &p.head).unwrap_or(p.head_sha);
            }
        }
        p.updated_at = at;
    }
    let r = Render::new(ds, shared);
    let v = r.pull_shape(repo, &shape(bare, &p), deps_enabled, false);
    pulls.entry(repo.clone()).or_default().insert(n, p);
    Ok(Response::json(201, &v))
}

/// `POST /pulls/{n}/merge` (`MergePullRequestForm`): only the `merge` style; 200 with an empty body.
fn merge_route(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    repo: &RepoName,
    n: u64,
) -> Answer {
    let body = body_json(req, shared)?;
    // Go decodes JSON keys into struct fields case-insensitively: `Do`, `do`, `DO`.
    let field = |name: &str| {
        body.as_object().and_then(|o| {
            o.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .and_then(|(_, v)| v.as_str())
        })
    };
    let style = field("Do").unwrap_or_default();
    const STYLES: [&str; 6] = [
        "merge",
        "rebase",
        "rebase-merge",
        "squash",
        "fast-forward-only",
        "manually-merged",
    ];
    if style.is_empty() {
        return Err(error(shared, 422, "[Do]: Required"));
    }
    if !STYLES.contains(&style) {
        return Err(error(shared, 422, "[Do]: In"));
    }
    if style != "merge" {
        return Err(error(
            shared,
            405,
            &format!("merge style {style} is not supported by the emulator"),
        ));
    }
    let title = field("MergeTitleField").unwrap_or_default().to_owned();
    let message = field("MergeMessageField").unwrap_or_default().to_owned();
    let user = shared.options.user.clone();
    match merge(shared, ds, repo, n, &user, &title, &message) {
        Ok(_) => Ok(Response::empty(200)),
        Err(MergeError::NotFound | MergeError::Closed) => Err(not_found(shared)),
        Err(MergeError::Merged) => Err(error(shared, 405, "")),
        Err(MergeError::Conflict(m)) => {
            Err(error(shared, 409, &format!("Merge Conflict Error: {m}")))
        }
        Err(MergeError::Git(m)) => Err(error(shared, 500, &m)),
    }
}
