//! Pull requests of state repositories: repositories whose git data is a real bare repository on disk
//! ([`super::EmulatorOptions::state_repos`]). Branches are read and merges written with the `git` CLI, so a test
//! sees the merge commit in the bare repository as a clone would.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

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
    /// Fast-forward only, and the base is not under the head.
    Diverging,
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
            MergeError::Diverging => {
                f.write_str("the base is not an ancestor of the head: no fast-forward")
            }
            MergeError::Git(m) => f.write_str(m),
        }
    }
}

/// How a pull request is merged: the API's `Do` (`models/repo/pull_request.go` `MergeStyle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeStyle {
    /// A merge commit whose parents are the base and the head (`git merge --no-ff`).
    Merge,
    /// The head's commits replayed on the base, which moves to the last of them (`git rebase` then
    /// `git merge --ff-only`): no merge commit, and the commits are new unless the base was under them already.
    Rebase,
    /// The head's commits replayed on the base, then a merge commit of the two.
    RebaseMerge,
    /// One new commit on the base with the head's changes.
    Squash,
    /// The base moves to the head; refused when the base is not an ancestor of the head (Gitea 1.22+).
    FastForwardOnly,
}

impl MergeStyle {
    /// The style a `Do` value names; `None` for `manually-merged` and anything else.
    pub fn from_do(value: &str) -> Option<Self> {
        Some(match value {
            "merge" => Self::Merge,
            "rebase" => Self::Rebase,
            "rebase-merge" => Self::RebaseMerge,
            "squash" => Self::Squash,
            "fast-forward-only" => Self::FastForwardOnly,
            _ => return None,
        })
    }
}

/// Merges pull request `number` of state repository `repo` as `merger` in `style`, writing the commits in the
/// bare repository as Gitea's `doMergeAndPush` does; returns the commit Gitea records as `merge_commit_sha`
/// (the base branch's new tip).
///
/// `title` and `message` are the API's `MergeTitleField` and `MergeMessageField` (empty: Gitea's default title).
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge(
    shared: &Shared,
    ds: &mut Dataset,
    repo: &RepoName,
    number: u64,
    merger: &str,
    style: MergeStyle,
    title: &str,
    message: &str,
) -> Result<String, MergeError> {
    let bare = shared
        .options
        .state_repos
        .get(repo)
        .ok_or(MergeError::NotFound)?;
    let mut pulls = lock(&shared.state_pulls);
    if let Some(all) = pulls.get_mut(repo) {
        close_branch_pulls(bare, ds, all);
    }
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
    if pr.fork.is_some() {
        // Gitea merges the fork's branch; the emulator has no fork's git data, and must not merge the
        // repository's own branch of the same name in its place.
        return Err(MergeError::Git(
            "the emulator holds no fork's commits: a fork's pull request cannot be merged".into(),
        ));
    }
    let base_sha = branch_sha(bare, &pr.base)
        .ok_or_else(|| MergeError::Git(format!("base branch {} does not exist", pr.base)))?;
    let head_sha = branch_sha(bare, &pr.head)
        .ok_or_else(|| MergeError::Git(format!("head branch {} does not exist", pr.head)))?;
    let at = ds.tick();
    let email = format!("{merger}@noreply.localhost");
    let date = format!("{} +0000", at.timestamp());
    let committer = [
        ("GIT_COMMITTER_NAME", merger.to_owned()),
        ("GIT_COMMITTER_EMAIL", email.clone()),
        ("GIT_COMMITTER_DATE", date.clone()),
    ];
    let as_merger = [
        ("GIT_AUTHOR_NAME", merger.to_owned()),
        ("GIT_AUTHOR_EMAIL", email),
        ("GIT_AUTHOR_DATE", date),
    ];
    let both: Vec<(&str, String)> = committer.iter().chain(&as_merger).cloned().collect();
    // services/pull/merge.go `getMergeMessage`: the default titles.
    let default_title = match style {
        MergeStyle::Squash => format!("{} (#{})", pr.title, pr.number),
        _ => format!(
            "Merge pull request '{}' (#{}) from {} into {}",
            pr.title, pr.number, pr.head, pr.base
        ),
    };
    let mut text = title.trim().to_owned();
    if text.is_empty() {
        text = default_title;
    }
    let message = message.trim();
    if !message.is_empty() {
        text = format!("{text}\n\n{message}");
    }
    let tip = match style {
        MergeStyle::Merge => {
            let tree = merged_tree(bare, &base_sha, &head_sha, None)?;
            commit_tree(bare, &tree, &[&base_sha, &head_sha], &text, &both)?
        }
        MergeStyle::Squash => {
            let tree = merged_tree(bare, &base_sha, &head_sha, None)?;
            commit_tree(bare, &tree, &[&base_sha], &text, &both)?
        }
        MergeStyle::FastForwardOnly => {
            if !is_ancestor(bare, &base_sha, &head_sha) {
                return Err(MergeError::Diverging);
            }
            head_sha.clone()
        }
        MergeStyle::Rebase => rebased(bare, &base_sha, &head_sha, &committer)?,
        MergeStyle::RebaseMerge => {
            let rebased = rebased(bare, &base_sha, &head_sha, &committer)?;
            let tree = git_ok(bare, &["rev-parse", &format!("{rebased}^{{tree}}")], &[])
                .map_err(MergeError::Git)?;
            commit_tree(bare, &tree, &[&base_sha, &rebased], &text, &both)?
        }
    };
    let base_ref = format!("refs/heads/{}", pr.base);
    git_ok(bare, &["update-ref", &base_ref, &tip, &base_sha], &[]).map_err(MergeError::Git)?;
    // Gitea keeps the merge base it computed when it last tested the pull request.
    pr.merge_base = git_ok(bare, &["merge-base", &base_sha, &head_sha], &[]).unwrap_or_default();
    pr.merged = true;
    pr.merged_at = Some(at);
    pr.merged_by = Some(merger.to_owned());
    pr.merge_commit_sha = Some(tip.clone());
    pr.head_sha = head_sha;
    pr.state = OpenState::Closed;
    pr.closed_at = Some(at);
    pr.updated_at = at;
    // The merge resolves the references its title and body make with a closing or reopening keyword
    // (`references.go`, `issue_xref.go`, `services/pull/merge.go`): those issues are closed or
    // reopened, in any repository the merger may write (here, every one served).
    let text = format!("{}\n{}", pr.title, pr.body);
    for (key, close) in keyword_refs(&text, repo) {
        if let Some(i) = ds.issue_mut(&key) {
            let want = if close {
                OpenState::Closed
            } else {
                OpenState::Open
            };
            if i.state != want {
                let kind = if close { "close" } else { "reopen" };
                let e = commitea::domain::TimelineEvent::new(
                    super::routes::next_event_id(i),
                    kind.into(),
                    at,
                    merger,
                );
                i.state = want;
                i.closed_at = close.then_some(at);
                i.timeline.push(e);
                i.updated_at = at;
            }
        }
    }
    Ok(tip)
}

/// The characters an issue's or pull request's title column holds (`Title string xorm:"name"`, a
/// VARCHAR(255)). The API checks no length: a server on PostgreSQL or MySQL fails the insert, which the
/// emulator answers as such a server does (audit 161).
const TITLE_COLUMN: usize = 255;

fn too_long_title(shared: &super::Shared) -> Response {
    error(
        shared,
        500,
        "pq: value too long for type character varying(255)",
    )
}

/// The issues `text` (a pull request's title, then its Markdown body) references after a closing (true)
/// or reopening (false) keyword, as Gitea reads them: a keyword, an optional colon and one space right
/// before `owner/repo#N` or `#N` (`#N` is `own`'s), each bounded as `references.go`'s patterns are. The
/// body's Markdown is read as `mdstripper` leaves it: backslash escapes dropped, indented code skipped.
pub(crate) fn keyword_refs(text: &str, own: &RepoName) -> Vec<(commitea::domain::IssueKey, bool)> {
    const CLOSE: [&str; 9] = [
        "close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved",
    ];
    const REOPEN: [&str; 3] = ["reopen", "reopens", "reopened"];
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("    ") || line.starts_with('\t') {
            continue;
        }
        let mut plain = String::with_capacity(line.len());
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\' && chars.peek().is_some_and(char::is_ascii_punctuation) {
                continue;
            }
            plain.push(c);
        }
        for (start, _) in plain.match_indices(['#', '!']) {
            // The reference: `owner/repo` (or nothing) right before the `#`, digits after it.
            let before = &plain[..start];
            let path_start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')))
                .map_or(0, |i| {
                    i + before[i..].chars().next().map_or(1, char::len_utf8)
                });
            let path = &before[path_start..];
            let digits: String = plain[start + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let Ok(number) = digits.parse::<u64>() else {
                continue;
            };
            let end = start + 1 + digits.len();
            let after_ok = plain[end..].chars().next().is_none_or(|c| {
                c.is_whitespace() || matches!(c, ')' | ']' | ':' | ';' | ',' | '.' | '?' | '!')
            });
            let repo = match path.split_once('/') {
                Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/') => {
                    RepoName::new(o, n)
                }
                None if path.is_empty() => own.clone(),
                _ => continue,
            };
            let lead = &plain[..path_start];
            let bounded = lead.is_empty()
                || lead.ends_with(|c: char| c.is_whitespace() || c == '(' || c == '[');
            // `(?:\s|^|\(|\[)(keyword):? $`: one ASCII space, right before the reference.
            let Some(words) = lead.strip_suffix(' ') else {
                continue;
            };
            if !(after_ok && bounded) {
                continue;
            }
            let words = words.strip_suffix(':').unwrap_or(words);
            let word = words
                .rsplit(|c: char| c.is_whitespace() || c == '(' || c == '[')
                .next()
                .unwrap_or_default();
            // Go's `(?i)` folds `ſ` into s and the Kelvin sign into k.
            let folded: String = word
                .chars()
                .map(|c| match c {
                    'ſ' => 's',
                    '\u{212A}' => 'k',
                    c => c.to_ascii_lowercase(),
                })
                .collect();
            let close = CLOSE.contains(&folded.as_str());
            let reopen = REOPEN.contains(&folded.as_str());
            if close || reopen {
                out.push((repo.issue(number), close));
            }
        }
    }
    out
}

/// The tree of merging `theirs` into `ours` (`merge_base`: the base to merge from, when not theirs and ours'
/// own), or the conflict.
fn merged_tree(
    bare: &Path,
    ours: &str,
    theirs: &str,
    merge_base: Option<&str>,
) -> Result<String, MergeError> {
    let base_arg = merge_base.map(|b| format!("--merge-base={b}"));
    let mut args = vec!["merge-tree", "--write-tree"];
    args.extend(base_arg.as_deref());
    args.extend([ours, theirs]);
    match git(bare, &args, &[]).map_err(MergeError::Git)? {
        (0, out, _) => Ok(out.lines().next().unwrap_or_default().to_owned()),
        (1, out, _) => Err(MergeError::Conflict(out)),
        (_, out, err) => Err(MergeError::Git(format!("git merge-tree: {err}{out}"))),
    }
}

/// A new commit of `tree` with `parents`.
fn commit_tree(
    bare: &Path,
    tree: &str,
    parents: &[&str],
    message: &str,
    env: &[(&str, String)],
) -> Result<String, MergeError> {
    let mut args = vec!["commit-tree", tree];
    for p in parents {
        args.extend(["-p", p]);
    }
    args.extend(["-m", message]);
    git_ok(bare, &args, env).map_err(MergeError::Git)
}

/// Whether `ancestor` is `descendant` or one of its ancestors.
fn is_ancestor(bare: &Path, ancestor: &str, descendant: &str) -> bool {
    matches!(
        git(
            bare,
            &["merge-base", "--is-ancestor", ancestor, descendant],
            &[]
        ),
        Ok((0, _, _))
    )
}

/// The head's commits replayed onto `base` as `git rebase base` does (merge commits dropped, commits whose
/// changes the base has already dropped, author kept, `committer` the merger); the last one. Nothing is
/// rewritten when the base is under a linear head already (git's "is up to date").
fn rebased(
    bare: &Path,
    base: &str,
    head: &str,
    committer: &[(&str, String)],
) -> Result<String, MergeError> {
    let range = format!("{base}..{head}");
    let merges = git_ok(bare, &["rev-list", "--merges", &range], &[]).map_err(MergeError::Git)?;
    if is_ancestor(bare, base, head) && merges.is_empty() {
        return Ok(head.to_owned());
    }
    let commits = git_ok(bare, &["rev-list", "--reverse", "--no-merges", &range], &[])
        .map_err(MergeError::Git)?;
    let mut tip = base.to_owned();
    for c in commits.lines() {
        let tree = merged_tree(bare, &tip, c, Some(&format!("{c}^")))?;
        let tip_tree = git_ok(bare, &["rev-parse", &format!("{tip}^{{tree}}")], &[])
            .map_err(MergeError::Git)?;
        if tree == tip_tree {
            continue;
        }
        let fields = git_ok(
            bare,
            &[
                "show",
                "-s",
                "--date=raw",
                "--format=%an%x00%ae%x00%ad%x00%B",
                c,
            ],
            &[],
        )
        .map_err(MergeError::Git)?;
        let mut fields = fields.splitn(4, '\0').map(str::to_owned);
        let mut env = committer.to_vec();
        for var in ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE"] {
            env.push((var, fields.next().unwrap_or_default()));
        }
        let message = fields.next().unwrap_or_default();
        tip = commit_tree(bare, &tree, &[&tip], &message, &env)?;
    }
    Ok(tip)
}

/// Gitea's `CloseBranchPulls`, run when a branch is deleted (`services/repository/push.go`): every open pull
/// request whose head or base branch is gone is closed, not merged. The emulator sees a deletion only when it
/// next looks, so this runs before any pull request is read or changed; an open pull request's head commit
/// follows its branch meanwhile, as `refs/pull/N/head` does.
pub(crate) fn close_branch_pulls(
    bare: &Path,
    ds: &mut Dataset,
    pulls: &mut BTreeMap<u64, StatePull>,
) {
    for p in pulls.values_mut() {
        if p.state != OpenState::Open || p.fork.is_some() {
            continue;
        }
        match (branch_sha(bare, &p.head), branch_sha(bare, &p.base)) {
            (Some(head), Some(_)) => p.head_sha = head,
            _ => {
                let at = ds.tick();
                p.state = OpenState::Closed;
                p.closed_at = Some(at);
                p.updated_at = at;
            }
        }
    }
}

/// The file in the bare repository that lists its protected branch patterns, one per line.
const PROTECTED_FILE: &str = "commitea-emulator-protected";

/// The `pre-receive` hook that answers pushes as Gitea's `HookPreReceive` does
/// (`routers/private/hook_pre_receive.go`, printed by `cmd/serv.go` `fail`): the default branch is never
/// deleted; a branch matching a protected pattern (a glob, as Gitea's rule names are) is neither deleted nor
/// pushed to, since nobody is on the rule's push allowlist.
const PRE_RECEIVE: &str = r#"#!/bin/sh
zero=0000000000000000000000000000000000000000
default=$(git symbolic-ref --short HEAD 2>/dev/null)
while read -r old new ref; do
  branch=${ref#refs/heads/}
  [ "$branch" = "$ref" ] && continue
  if [ "$new" = "$zero" ] && [ "$branch" = "$default" ]; then
    echo; echo "Gitea: branch $branch is the default branch and cannot be deleted" >&2; exit 1
  fi
  [ -f "$GIT_DIR/commitea-emulator-protected" ] || continue
  while IFS= read -r pattern; do
    [ -n "$pattern" ] || continue
    case "$branch" in
      $pattern)
        if [ "$new" = "$zero" ]; then
          echo; echo "Gitea: branch $branch is protected from deletion" >&2; exit 1
        fi
        echo; echo "Gitea: Not allowed to push to protected branch $branch" >&2; exit 1
        ;;
    esac
  done < "$GIT_DIR/commitea-emulator-protected"
done
exit 0
"#;

/// Protects the branches of bare repository `bare` that match `pattern` (`main`, `commitea/*`): pushes to them
/// and their deletion are refused as Gitea refuses them; merges through the API still land, as they do for a
/// user allowed to merge.
pub(crate) fn protect(bare: &Path, pattern: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let hooks = bare.join("hooks");
    std::fs::create_dir_all(&hooks)?;
    let hook = hooks.join("pre-receive");
    std::fs::write(&hook, PRE_RECEIVE)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))?;
    }
    let mut rules = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(bare.join(PROTECTED_FILE))?;
    writeln!(rules, "{pattern}")
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
    if matches!(tail, ["pulls", ..] | ["commits", _, "pull"])
        && let Some(all) = lock(&shared.state_pulls).get_mut(repo)
    {
        close_branch_pulls(bare, ds, all);
    }
    Some(match (method, tail) {
        ("GET", ["pulls"]) => Ok(list(req, shared, ds, repo, bare, deps_enabled)),
        ("GET", ["pulls", n, "commits"]) => {
            let n = match number(n, shared) {
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            let pulls = lock(&shared.state_pulls);
            let p = pulls.get(repo).and_then(|m| m.get(&n))?.clone();
            drop(pulls);
            commits(req, shared, ds, repo, bare, &p)
        }
        // `IsPullRequestMerged`: 204 when merged, 404 otherwise.
        ("GET", ["pulls", n, "merge"]) => {
            let n = match number(n, shared) {
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            let pulls = lock(&shared.state_pulls);
            let p = pulls.get(repo).and_then(|m| m.get(&n))?;
            if p.merged {
                Ok(Response::empty(204))
            } else {
                Err(not_found(shared))
            }
        }
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
        // `GetSingleCommit`: one commit of the state repository, as `convert.ToCommit` writes it.
        ("GET", ["git", "commits", sha]) => {
            let log = git_ok(bare, &["log", "-1", LOG_FORMAT, sha], &[]).ok()?;
            let row = log.trim_start_matches('\n').trim_end_matches('\x1e');
            let r = Render::new(ds, shared);
            Ok(Response::json(
                200,
                &commit_value(req, shared, &r, repo, bare, row),
            ))
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

/// `GET /pulls/{n}/commits` (`GetPullRequestCommits`): what `git log` lists from the base branch (once merged,
/// the merge base Gitea kept) to the head, newest first, paged, each as `convert.ToCommit` writes it.
fn commits(
    req: &Request,
    shared: &Shared,
    ds: &Dataset,
    repo: &RepoName,
    bare: &Path,
    p: &StatePull,
) -> Answer {
    if p.fork.is_some() {
        return Err(error(
            shared,
            500,
            "the emulator holds no fork's commits: a fork's pull request lists none",
        ));
    }
    let from = if p.merged {
        p.merge_base.clone()
    } else {
        branch_sha(bare, &p.base).unwrap_or_default()
    };
    let range = format!("{from}..{}", p.head_sha);
    let log =
        git_ok(bare, &["log", LOG_FORMAT, &range], &[]).map_err(|e| error(shared, 500, &e))?;
    let rows: Vec<&str> = log
        .split('\x1e')
        .map(|r| r.trim_start_matches('\n'))
        .filter(|r| !r.is_empty())
        .collect();
    let r = Render::new(ds, shared);
    let paging = Paging::of(req, shared);
    let items = paging
        .slice(&rows)
        .iter()
        .map(|row| {
            let mut c = commit_value(req, shared, &r, repo, bare, row);
            // Gitea 1.20 lists a pull request's commits with `ToCommitOptions{Stat: true}`: no files,
            // whatever `files` says (1.21 reads the parameter).
            if shared.options.gitea_before(21) {
                c["files"] = Value::Null;
            }
            c
        })
        .collect();
    Ok(listed(shared, req, paging, rows.len(), items))
}

/// The `git log` format [`commit_value`] reads: one commit per record.
const LOG_FORMAT: &str =
    "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%T%x00%B%x1e";

/// One commit (a record of [`LOG_FORMAT`]) as `convert.ToCommit` writes it; `verification` and `files` as
/// the request asks (on unless given as false). Before Gitea 1.21 a file is its name only, no status.
fn commit_value(
    req: &Request,
    shared: &Shared,
    r: &Render<'_>,
    repo: &RepoName,
    bare: &Path,
    row: &str,
) -> Value {
    let base = &shared.base;
    let api = format!("{base}/api/v1/repos/{repo}/git");
    let when = |t: &str| {
        DateTime::parse_from_rfc3339(t).map_or_else(|_| t.to_owned(), |t| r.time(t.to_utc()))
    };
    // Gitea finds the user by the commit's email; the emulator's users are `LOGIN@noreply.localhost`.
    let user_of = |email: &str| {
        email
            .strip_suffix("@noreply.localhost")
            .map_or(Value::Null, |login| r.user(login))
    };
    // `verification` and `files` are on unless given as false (`ctx.FormBool`).
    let wants = |name: &str| {
        req.param(name)
            .is_none_or(|v| v.is_empty() || v == "true" || v == "1")
    };
    let f: Vec<&str> = row.splitn(10, '\0').collect();
    let field = |i: usize| f.get(i).copied().unwrap_or_default();
    let sha = field(0);
    let diff = |how: &str| {
        git_ok(
            bare,
            &["diff-tree", "--no-commit-id", "--root", "-r", how, sha],
            &[],
        )
        .unwrap_or_default()
    };
    let files: Vec<Value> = diff("--name-status")
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(status, name)| {
            let status = match status {
                "A" => "added",
                "D" => "removed",
                _ => "modified",
            };
            if shared.options.gitea_before(21) {
                json!({ "filename": name })
            } else {
                json!({ "filename": name, "status": status })
            }
        })
        .collect();
    let (mut additions, mut deletions) = (0u64, 0u64);
    for l in diff("--numstat").lines() {
        let mut n = l.split('\t').map(|n| n.parse::<u64>().unwrap_or(0));
        additions += n.next().unwrap_or(0);
        deletions += n.next().unwrap_or(0);
    }
    let verification = if wants("verification") {
        json!({
            "verified": false,
            "reason": "gpg.error.not_signed_commit",
            "signature": "",
            "signer": null,
            "payload": "",
        })
    } else {
        Value::Null
    };
    json!({
        "url": format!("{api}/commits/{sha}"),
        "sha": sha,
        "created": when(field(7)),
        "html_url": format!("{base}/{repo}/commit/{sha}"),
        "commit": {
            "url": format!("{api}/commits/{sha}"),
            "author": { "name": field(2), "email": field(3), "date": when(field(4)) },
            "committer": { "name": field(5), "email": field(6), "date": when(field(7)) },
            "message": field(9).trim_end_matches('\n'),
            "tree": { "url": format!("{api}/trees/{}", field(8)), "sha": field(8), "created": when(field(7)) },
            "verification": verification,
        },
        "author": user_of(field(3)),
        "committer": user_of(field(6)),
        "parents": field(1)
            .split_whitespace()
            .map(|p| json!({ "url": format!("{api}/commits/{p}"), "sha": p, "created": when(field(7)) }))
            .collect::<Vec<_>>(),
        "files": if wants("files") { json!(files) } else { Value::Null },
        "stats": { "total": additions + deletions, "additions": additions, "deletions": deletions },
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
    // (created, updated, number, from the state pulls)
    let mut rows: Vec<(DateTime<Utc>, DateTime<Utc>, u64, bool)> = pulls
        .get(repo)
        .into_iter()
        .flat_map(|m| m.values())
        .filter(|p| state_matches(want, p.state))
        .map(|p| (p.created_at, p.updated_at, p.number, true))
        .chain(
            ds.pulls(repo)
                .into_iter()
                .filter(|p| state_matches(want, p.state))
                .map(|p| (p.created_at, p.updated_at, p.number, false)),
        )
        .collect();
    // `ListPullRequests`' `sort` (models/issues/issue_search.go `applySorts`): newest created first by
    // default; `oldest`, `recentupdate`, `leastupdate`, each then by creation and number.
    match req.param("sort") {
        Some("oldest") => rows.sort_by(|a, b| a.0.cmp(&b.0).then(a.2.cmp(&b.2))),
        Some("recentupdate") => {
            rows.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)).then(b.2.cmp(&a.2)));
        }
        Some("leastupdate") => {
            rows.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)).then(a.2.cmp(&b.2)));
        }
        _ => rows.sort_by(|a, b| b.0.cmp(&a.0).then(b.2.cmp(&a.2))),
    }
    let r = Render::new(ds, shared);
    let paging = Paging::of(req, shared);
    let items = paging
        .slice(&rows)
        .iter()
        .map(|&(_, _, n, state)| {
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
    if title.chars().count() > TITLE_COLUMN {
        return Err(too_long_title(shared));
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
        if t.chars().count() > TITLE_COLUMN {
            return Err(too_long_title(shared));
        }
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
        // `closeOrReopenIssue`: only these two; reopening through the API checks for no other open pull
        // request of the same branches (only the web UI does).
        let state = match s {
            "closed" => OpenState::Closed,
            "open" => OpenState::Open,
            // Forgejo's `EditPullRequest`: anything but `closed` opens it.
            _ if shared.options.forgejo() => OpenState::Open,
            _ => return Err(error(shared, 412, &format!("unknown state: {s}"))),
        };
        p.state = state;
    }
    if p != current {
        let at = ds.tick();
        if p.state != current.state {
            p.closed_at = (p.state == OpenState::Closed).then_some(at);
            if p.state == OpenState::Closed && p.fork.is_none() {
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

/// `POST /pulls/{n}/merge` (`MergePullRequestForm`): every style but `manually-merged`; 200 with an empty body.
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
    // `manually-merged` needs a repository setting that is off by default.
    let Some(style) = MergeStyle::from_do(style) else {
        return Err(error(
            shared,
            405,
            &format!("{style} is not allowed an allowed merge style for this repository"),
        ));
    };
    let title = field("MergeTitleField").unwrap_or_default().to_owned();
    let message = field("MergeMessageField").unwrap_or_default().to_owned();
    let user = shared.options.user.clone();
    match merge(shared, ds, repo, n, &user, style, &title, &message) {
        Ok(_) => Ok(Response::empty(200)),
        Err(MergeError::NotFound | MergeError::Closed) => Err(not_found(shared)),
        Err(MergeError::Merged) => Err(error(shared, 405, "")),
        Err(MergeError::Conflict(m)) => {
            Err(error(shared, 409, &format!("Merge Conflict Error: {m}")))
        }
        // Not among the errors `MergePullRequest` tells apart: its 500.
        Err(MergeError::Diverging) => Err(error(
            shared,
            500,
            "Merge: the base branch is not an ancestor of the head: a fast-forward-only merge is not possible",
        )),
        Err(MergeError::Git(m)) => Err(error(shared, 500, &m)),
    }
}

#[cfg(test)]
mod keyword_tests {
    use super::keyword_refs;
    use commitea::domain::RepoName;

    #[test]
    fn references_after_a_keyword_are_read_as_gitea_reads_them() {
        let own = RepoName::new("acme", "state");
        let keys = |text: &str| -> Vec<(String, bool)> {
            keyword_refs(text, &own)
                .into_iter()
                .map(|(k, c)| (k.to_string(), c))
                .collect()
        };
        assert_eq!(
            keys("- close acme/api#114 (destructive)\nCrash, Fixes: acme/web#3. Reopens #5"),
            vec![
                ("acme/api#114".to_owned(), true),
                ("acme/web#3".to_owned(), true),
                ("acme/state#5".to_owned(), false),
            ]
        );
        // A tab, two spaces, no keyword, a word ending in one, indented code: nothing.
        assert!(
            keys("close\tacme/api#1 and close  acme/api#2, of acme/api#3, hotfix acme/api#4")
                .is_empty()
        );
        assert!(keys("    - close acme/api#9").is_empty());
        assert_eq!(
            keys("cloſes acme/api#8"),
            vec![("acme/api#8".to_owned(), true)]
        );
        // Markdown escapes are dropped first, as the stripper does.
        assert_eq!(
            keys("fixes acme/api#7\\!"),
            vec![("acme/api#7".to_owned(), true)]
        );
    }
}
