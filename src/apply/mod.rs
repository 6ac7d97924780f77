//! The only code that writes to Gitea's issues: the apply stage, and the proposals that lead to it.
//!
//! [`apply_pending`] carries out the op files on the branch (`ops/pending/` in the commit a run starts
//! from) against a freshly synced snapshot. Each op is checked again — the world moved since it was
//! proposed — and then written, or recorded as already so, skipped with why, or failed with Gitea's status
//! and message. Nothing outside CommiTea's label namespaces and the native fields is ever touched, whatever
//! a file says; a destructive op is carried out only when the commit that brought its file to the branch
//! is a merged pull request on the state repo. It is idempotent: each op is decided from the fresh
//! snapshot, so a run killed halfway re-applies nothing. [`propose`] turns local op files and ledger
//! entries into pull requests.

pub mod propose;

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, SecondsFormat, Utc};
use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::config::Config;
use crate::domain::{IssueKey, IssueRef, Label, OpenState, RepoName};
use crate::gitea::client::{Client, ClientError};
use crate::ops::{Checker, Op, OpFile, label_scope};
use crate::state::Snapshot;

/// What became of one op.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case", deny_unknown_fields)]
pub enum Outcome {
    /// Written to Gitea.
    Applied {
        /// What someone changed on Gitea since the proposal that this write went over (`acme/api#198
        /// changed on Gitea after this was proposed (p/0 given by ann …)`): an approved op other than a
        /// destructive one is written as approved, and its record says over what (audit 135: only the
        /// run's log said it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        over: Option<String>,
    },
    /// Gitea already had it: nothing written.
    AlreadySo,
    /// A `create_issue` filed (by this run, or by a run killed before it could record it): the new issue.
    Created {
        /// Its key, `owner/repo#N`.
        issue: String,
        /// What of the op Gitea refused once the issue was filed (a dependency), in words: the issue is
        /// there all the same, and is this op's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unfinished: Option<String>,
    },
    /// Not carried out, and why.
    Skipped {
        /// Why.
        reason: String,
    },
    /// Gitea refused it.
    Failed {
        /// The HTTP status, when Gitea answered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// Gitea's message, or what went wrong.
        message: String,
    },
}

/// A destructive op of a file edited since its proposal: CommiTea records in `seen` each issue its ops
/// name, as it stood, so a file whose `seen` does not name exactly the issues of its ops — an op retargeted
/// by hand, `seen` taken out — is not the one proposed, and neither the consequence its approval saw nor
/// the check for changes made on Gitea since covers what it now does (audits 135 and 139: a close
/// retargeted on its branch, to an issue outside `seen` or inside it, closed an issue reassigned and
/// retitled "NOT done" meanwhile). Such an op is not carried out; additive ops are, as approved.
pub(crate) fn unseen(op: &Op, file: &OpFile) -> Option<Outcome> {
    let key = op.issue()?.key()?;
    if !op.is_destructive() {
        return None;
    }
    let named: BTreeSet<String> = file
        .ops
        .iter()
        .filter_map(|o| o.issue()?.key())
        .map(|k| k.to_string())
        .collect();
    let seen: BTreeSet<String> = file.seen.keys().cloned().collect();
    (named != seen).then(|| Outcome::Skipped {
        reason: format!(
            "this file's `seen` (the issues it was proposed on, as each stood) {} its ops, so it was \
             edited after the proposal: {} of {key} is not carried out where neither the consequence its \
             approval saw nor the check for changes on Gitea since covers it; propose it again \
             (`commitea tool apply_changes`)",
            if seen.is_empty() { "is missing for" } else { "does not match" },
            op.name()
        ),
    })
}

/// Where this checkout is, when it is not the branch approvals are merged into (`approvals.branch`):
/// `on commitea/C-0003`, or a detached `HEAD` at another commit than that branch's tip. An op file there
/// is approved by nothing (audit 134: a run on a proposal's branch carried out its unmerged op and pushed
/// it onto main).
pub fn off_approvals_branch(
    repo: &gix::Repository,
    head: gix::ObjectId,
    config: &Config,
) -> Option<String> {
    let branch = &config.approvals.branch;
    match crate::state::git::checked_out_branch(repo) {
        Some(b) if b == *branch => None,
        Some(b) => Some(format!("this checkout is on {b}, not {branch}")),
        None => {
            let tips = [
                format!("refs/heads/{branch}"),
                format!("refs/remotes/{}/{branch}", config.approvals.remote),
            ];
            (!tips
                .iter()
                .any(|t| crate::state::git::resolve(repo, t) == Some(head)))
            .then(|| format!("this checkout is a detached HEAD ({head}), not {branch}'s tip"))
        }
    }
}

impl Outcome {
    /// Whether it changed something on Gitea (wrote a field, filed an issue).
    pub fn wrote(&self) -> bool {
        matches!(self, Self::Applied { .. } | Self::Created { .. })
    }
}

/// What the apply stage did with one op file: `applied` in `ops/applied/ID.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyRecord {
    /// When (RFC 3339, UTC, whole seconds).
    pub at: String,
    /// The commit that brought the file to the branch.
    pub commit: String,
    /// The pull request that commit merged, if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<u64>,
    /// Who merged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_by: Option<String>,
    /// One outcome per op, in the file's order.
    pub results: Vec<Outcome>,
}

/// What the apply stage did: the files it carried out, whether it wrote to Gitea, and the approved files
/// Gitea refused whole.
#[derive(Debug, Clone, Default)]
pub struct Carried {
    /// The op files carried out, with what became of each op.
    pub applied: Vec<AppliedFile>,
    /// Whether anything was written to Gitea.
    pub wrote: bool,
    /// The approved files that stay pending because Gitea refuses to take them.
    pub refused: Vec<Refused>,
    /// Whether the stage put the approved files to Gitea at all (not: none on the branch, no token, a
    /// branch that approves nothing), so that `refused` is Gitea's answer of this run.
    pub tried: bool,
}

/// An approved op file Gitea refuses whole, for a reason of the account or the repository (the token's
/// scopes, the user's rights, an archived repository): it stays pending, and every run until the reason
/// goes meets it again (audit 134: the job stayed green on every run, the reason in a log nobody opened).
/// A run keeps what it met in `forecast/refused.json` ([`crate::state::REFUSED_FILE`]), so that a page
/// drawn later without asking Gitea (`commitea render`, `plan`) does not call the file "applied at the
/// next run" (audit 149).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refused {
    /// The op file's id.
    pub id: String,
    /// Why, in words: `Gitea refuses to set the priority of acme/web#30 to p/1: token does not have …`.
    pub why: String,
    /// When a run first met this refusal (RFC 3339): a run that meets it again keeps the day.
    pub at: String,
}

/// An applied op file: the proposal and what happened (`ops/applied/ID.yaml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppliedFile {
    /// The op file as it was proposed.
    pub proposal: OpFile,
    /// What the apply stage did.
    pub applied: ApplyRecord,
}

/// An op file waiting on the branch, with where it came from.
#[derive(Debug, Clone)]
pub struct PendingOnBranch {
    /// Its path, `ops/pending/ID.yaml`.
    pub path: String,
    /// The file, or why it cannot be read (a hand edit that breaks the format is refused whole).
    pub file: Result<OpFile, String>,
    /// The commit that brought it to the branch.
    pub commit: String,
    /// The commits after that one on the branch's first-parent line, oldest first, up to the tip: where a
    /// rebased pull request's merge commit is (see [`approval_of`]).
    pub later: Vec<String>,
    /// That commit's time: a `create_issue` done after it is this file's.
    pub committed_at: DateTime<Utc>,
}

/// The approval a commit carries: the merged pull request it is, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The pull request's number.
    pub number: u64,
    /// Who merged it.
    pub merged_by: Option<String>,
}

/// A commit of a pull request, as `GET …/pulls/{n}/commits` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PullCommit {
    /// Its id.
    pub sha: String,
    /// The files it added.
    pub added: Vec<String>,
}

/// What the apply stage is allowed to ask about approvals.
pub trait Approvals {
    /// Says that the pull requests the next lookups look for were merged after `t`: a lookup that reads
    /// a listing may stop before it.
    fn merged_after(&self, _t: DateTime<Utc>) {}
    /// The merged pull request whose merge is `commit`, if there is one.
    fn merged_pull(&self, commit: &str) -> Result<Option<Approval>, ClientError>;
    /// The commits of pull request `number`.
    fn pull_commits(&self, number: u64) -> Result<Vec<PullCommit>, ClientError>;
}

/// How many commits after the one that brought an op file are asked for the pull request that merged it.
const APPROVAL_WALK: usize = 50;

/// The approval of op file `p`: the merged pull request that brought it to the branch, if one did.
///
/// Gitea records one commit per merged pull request, the branch's tip after the merge. With the `merge`,
/// `rebase-merge` and `squash` styles that tip is the commit that brought the file. With `rebase` and
/// `fast-forward-only` the pull request's own commits land on the branch (replayed by a rebase), and the file
/// may come from one before the tip: so the commits after it are asked in turn, up to the first merged pull
/// request. That one is the file's approval only if the file was its own: the commit is one of its commits, or
/// is within as many commits of its tip as it has and one of its commits added the file. A file pushed
/// straight to the branch before someone else's rebased pull request is no approval.
pub fn approval_of(
    approvals: &dyn Approvals,
    p: &PendingOnBranch,
) -> Result<Option<Approval>, ClientError> {
    // Merged after its commit reached the branch; the commit's time is the pusher's clock.
    approvals.merged_after(p.committed_at - CLOCK_SKEW);
    if let Some(a) = approvals.merged_pull(&p.commit)? {
        return Ok(Some(a));
    }
    for (i, later) in p.later.iter().take(APPROVAL_WALK).enumerate() {
        let Some(a) = approvals.merged_pull(later)? else {
            continue;
        };
        let commits = approvals.pull_commits(a.number)?;
        let own = commits.iter().any(|c| c.sha == p.commit)
            || (i + 1 < commits.len() && commits.iter().any(|c| c.added.contains(&p.path)));
        return Ok(own.then_some(a));
    }
    Ok(None)
}

/// Approvals looked up on the state repo: `GET /repos/{o}/{r}/commits/{sha}/pull` (Gitea finds the pull
/// request whose recorded merge commit is `sha`; 404 when there is none). A Gitea older than 1.22 has no
/// such endpoint: there the closed pull requests are read, most recently updated first, until the one
/// merged as `sha` or one updated before the file could have been merged ([`Approvals::merged_after`]).
pub struct StateRepoApprovals<'a> {
    /// The client.
    client: &'a Client,
    /// The state repo on the server.
    repo: RepoName,
    /// On a server without the endpoint: what its closed pull requests said so far.
    listed: std::cell::RefCell<Option<Listed>>,
    /// The pull request looked for was merged after this (the file's commit, give or take a clock).
    after: std::cell::Cell<Option<DateTime<Utc>>>,
}

/// The closed pull requests of the state repo read so far, most recently updated first.
#[derive(Default)]
struct Listed {
    /// Merged ones' numbers by merge commit.
    by_commit: BTreeMap<String, u64>,
    /// Pages read.
    pages: usize,
    /// The last page has been read.
    done: bool,
    /// The oldest `updated_at` read: every pull request not read yet was updated before it.
    oldest: Option<DateTime<Utc>>,
}

/// A pull request as the approval lookups read it.
#[derive(Deserialize, Default)]
#[serde(default)]
struct MergedPull {
    number: u64,
    merged: bool,
    merge_commit_sha: Option<String>,
    merged_by: Option<crate::gitea::wire::GUser>,
    updated_at: Option<DateTime<Utc>>,
}

impl MergedPull {
    fn approval(self) -> Approval {
        Approval {
            number: self.number,
            merged_by: self.merged_by.map(|u| u.login).filter(|l| !l.is_empty()),
        }
    }
}

impl<'a> StateRepoApprovals<'a> {
    /// Approvals of the state repo `repo`, asked through `client`.
    pub fn new(client: &'a Client, repo: RepoName) -> Self {
        Self {
            client,
            repo,
            listed: std::cell::RefCell::new(None),
            after: std::cell::Cell::new(None),
        }
    }

    /// The merged pull request whose merge commit is `commit`, found among the closed pull requests (read a
    /// page at a time, most recently updated first, and kept for the next file), then asked for whole (a
    /// listed one's `merged_by` is not loaded). Reading stops at the last page, or at a page whose oldest
    /// pull request was updated before [`Self::after`]: one merged since is on an earlier page.
    fn merged_pull_listed(&self, commit: &str) -> Result<Option<Approval>, ClientError> {
        let mut listed = self.listed.borrow_mut();
        let listed = listed.get_or_insert_with(|| {
            tracing::debug!(
                "{}: the server has no commits/{{sha}}/pull (Gitea before 1.22); its closed pull requests are read instead",
                self.repo
            );
            Listed::default()
        });
        let number = loop {
            if let Some(n) = listed.by_commit.get(commit) {
                break *n;
            }
            let read_far_enough = listed
                .oldest
                .zip(self.after.get())
                .is_some_and(|(oldest, after)| oldest < after);
            if listed.done || read_far_enough {
                return Ok(None);
            }
            let (page, last) = self.client.get_page::<MergedPull>(
                &format!("repos/{}/pulls", self.repo),
                &[("state", "closed".into()), ("sort", "recentupdate".into())],
                listed.pages + 1,
            )?;
            listed.pages += 1;
            listed.done = last;
            for p in page {
                if let Some(u) = p.updated_at {
                    listed.oldest = Some(listed.oldest.map_or(u, |o| o.min(u)));
                }
                if p.merged
                    && let Some(sha) = p.merge_commit_sha
                {
                    listed.by_commit.insert(sha, p.number);
                }
            }
        };
        let p: MergedPull = self
            .client
            .get_json(&format!("repos/{}/pulls/{number}", self.repo), &[])?;
        Ok(p.merged.then(|| p.approval()))
    }
}

impl Approvals for StateRepoApprovals<'_> {
    fn merged_after(&self, t: DateTime<Utc>) {
        self.after.set(Some(t));
    }

    fn merged_pull(&self, commit: &str) -> Result<Option<Approval>, ClientError> {
        if self.listed.borrow().is_some() {
            return self.merged_pull_listed(commit);
        }
        match self
            .client
            .get_json::<MergedPull>(&format!("repos/{}/commits/{commit}/pull", self.repo), &[])
        {
            Ok(p) if p.merged => Ok(Some(p.approval())),
            Ok(_) => Ok(None),
            Err(ClientError::NoRoute { .. }) => self.merged_pull_listed(commit),
            // Gitea answers 404 both for "no pull request merged this commit" and for a state repo that
            // does not exist or that the token cannot see; the second must not read as "not approved"
            // (a merged proposal would be dropped), so the repository itself is asked.
            Err(ClientError::NotFound { .. }) => {
                match self
                    .client
                    .get_json::<serde_json::Value>(&format!("repos/{}", self.repo), &[])
                {
                    Ok(_) => Ok(None),
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    fn pull_commits(&self, number: u64) -> Result<Vec<PullCommit>, ClientError> {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Commit {
            sha: String,
            files: Option<Vec<File>>,
        }
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct File {
            filename: String,
            status: String,
        }
        let mut commits: Vec<Commit> = self.client.get_paged(
            &format!("repos/{}/pulls/{number}/commits", self.repo),
            &[("verification", "false".into()), ("files", "true".into())],
        )?;
        // Gitea 1.20 lists no files here whatever is asked: each commit is asked for its own.
        for c in commits.iter_mut().filter(|c| c.files.is_none()) {
            let one: Commit = self.client.get_json(
                &format!("repos/{}/git/commits/{}", self.repo, c.sha),
                &[("verification", "false".into()), ("stat", "false".into())],
            )?;
            c.files = one.files;
        }
        Ok(commits
            .into_iter()
            .map(|c| PullCommit {
                sha: c.sha,
                // Before 1.21 a file has no status: a file the commit touched counts as one it added
                // (an op file is only ever added).
                added: c
                    .files
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|f| f.status == "added" || f.status.is_empty())
                    .map(|f| f.filename)
                    .collect(),
            })
            .collect())
    }
}

/// No state repo to ask: nothing counts as approved.
pub struct NoApprovals;

impl Approvals for NoApprovals {
    fn merged_pull(&self, _commit: &str) -> Result<Option<Approval>, ClientError> {
        Ok(None)
    }

    fn pull_commits(&self, _number: u64) -> Result<Vec<PullCommit>, ClientError> {
        Ok(Vec::new())
    }
}

/// Why the apply stage stopped.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// Talking to Gitea failed in a way that is not one op's fault (the server is down).
    #[error("apply stopped")]
    Client(#[from] ClientError),
    /// Talking to Gitea failed partway through the files: what was carried out whole before it is kept
    /// (audit 152: it was lost with the error, and the next run recorded its writes as "already so").
    #[error("the apply stage stopped in {file}")]
    Stopped {
        /// The file it stopped in (its writes before the stop are found already so by the next run).
        file: String,
        /// The files carried out whole before it.
        done: Box<Carried>,
        /// What failed.
        #[source]
        source: Box<ClientError>,
    },
}

/// Why an op names a label outside CommiTea's namespaces, if it does.
///
/// Zero pollution is checked again at apply time, and before anything else: a hand-edited file may
/// name any label, and no approval makes a foreign label acceptable.
fn foreign_label(op: &Op) -> Option<Outcome> {
    let foreign = match op {
        Op::CreateIssue { labels, .. } => {
            labels.iter().find(|l| !crate::domain::in_own_namespace(l))
        }
        Op::RemoveLabel { label, .. } => (!crate::domain::in_own_namespace(label)).then_some(label),
        Op::SetEstimate { estimate: l, .. }
            if !l.starts_with(crate::domain::Estimate::LABEL_PREFIX) =>
        {
            Some(l)
        }
        Op::SetPriority { priority: l, .. }
            if !l.starts_with(crate::domain::Priority::LABEL_PREFIX) =>
        {
            Some(l)
        }
        _ => None,
    }?;
    Some(Outcome::Skipped {
        reason: format!(
            "label \"{}\" is outside CommiTea's namespaces (est/*, p/*, deadline/hard): refused",
            crate::limits::excerpt(foreign)
        ),
    })
}

/// Applies `pending` to Gitea through `client`, deciding each op from `snapshot` (synced just before);
/// returns the applied files and whether anything was written.
///
/// Each op is held to the rules `apply_changes` holds a proposal to (the estimate ladder, a milestone of
/// the issue's own repository, no dependency cycle, nothing planned on a closed issue), checked against
/// the fresh snapshot as the earlier ops (of this file and the ones before) left it: a file on the
/// branch may have been written by hand. A directive's file whose directive `branch.inactive` names
/// (withdrawn or superseded in the branch's ledger) is carried out no further: its ops are skipped, saying
/// why.
// The stage's inputs are each the pipeline's own (the server, the approvals, the state, the clock and
// where records go); bundled, they would be a struct built for this one call.
#[allow(clippy::too_many_arguments)]
pub fn apply_pending(
    client: &Client,
    approvals: &dyn Approvals,
    config: &Config,
    snapshot: &Snapshot,
    pending: &[PendingOnBranch],
    branch: &OnBranch,
    now: DateTime<Utc>,
    on_done: &mut dyn FnMut(&mut AppliedFile),
) -> Result<Carried, ApplyError> {
    let index = LedgerIndex::new(&branch.ledger);
    let mut refusals: Vec<Refused> = Vec::new();
    let configured = crate::tools::repositories(config, snapshot);
    let repo_holds = RepoHolds::new(config, snapshot);
    // One checker over the fresh snapshot for every file: the dependencies and closes it tracks carry
    // from one file to the next, as the writes do.
    let mut checker = Checker::at_apply(config, snapshot, configured.clone());
    let mut writer = Writer::new(client, snapshot);
    writer.filed.clone_from(&branch.filed);
    let mut out = Vec::new();
    // What the files held back this run change (an issue, a milestone), and which file and how it is said.
    let mut held: BTreeMap<String, (String, String)> = BTreeMap::new();
    // The last file of this run to set each field (an issue's priority, a milestone's due date): an
    // earlier file's op on it is not written first only to be written over (audit 119: est/3d then est/1w
    // on Gitea in one run, both "applied").
    let mut last_setter: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for (i, p) in pending.iter().enumerate() {
        if let Ok(f) = &p.file {
            for op in &f.ops {
                if let Some((field, _)) = field_of(op) {
                    last_setter.insert(field, (i, f.id.clone()));
                }
            }
        }
    }
    for (i, p) in pending.iter().enumerate() {
        let Ok(file) = &p.file else { continue };
        let targets = targets_of(file);
        // A later file about what a held one changes waits behind it: carried out first, it would be
        // undone by the held one when that comes through (the later decision lost to the earlier).
        let behind = targets
            .iter()
            .find_map(|(t, _)| held.get(t).map(|(id, what)| (id.clone(), what.clone())));
        let standing = index.standing(file);
        let waits = standing.waits(&file.id);
        let hold = waits
            .clone()
            .or_else(|| repo_holds.why(file))
            .or_else(|| behind.map(|(id, what)| behind_words(&id, &what)));
        if let Some(why) = hold {
            // A directive's file waiting for its ledger was said when the run read the ledger.
            if waits.is_some() {
                tracing::info!("{} {why}", p.path);
            } else {
                tracing::warn!("{} {why}", p.path);
            }
            for (t, what) in &targets {
                held.entry(t.clone())
                    .or_insert((file.id.clone(), what.clone()));
            }
            continue;
        }
        // Gitea gone partway: what was carried out whole so far goes with the error.
        let stopped =
            |e: ApplyError, out: &[AppliedFile], refusals: &[Refused], wrote: bool| match e {
                ApplyError::Client(source) => ApplyError::Stopped {
                    file: file.id.clone(),
                    done: Box::new(Carried {
                        applied: out.to_vec(),
                        wrote,
                        refused: refusals.to_vec(),
                        tried: true,
                    }),
                    source: Box::new(source),
                },
                e @ ApplyError::Stopped { .. } => e,
            };
        let approval = match approval_of(approvals, p) {
            Ok(a) => a,
            Err(e) => return Err(stopped(e.into(), &out, &refusals, writer.wrote)),
        };
        let mut results = Vec::new();
        // `dependsOnNew` names the file's own new issues by position.
        writer.created.clear();
        writer.owner = owner(file);
        checker.next_file();
        let not_in_force = match standing {
            Standing::NotInForce { status, .. } => Some(status),
            _ => None,
        }
        .map(|status| Outcome::Skipped {
                reason: format!(
                    "{} is {status} in {}: the changes of a directive no longer in force are not carried \
                     out",
                    file.id,
                    crate::state::LEDGER_FILE
                ),
            });
        for op in &file.ops {
            // What changed on Gitea since the proposal, where this op would write over it.
            let moved = moved_under(
                op,
                &file.seen,
                snapshot,
                || writer.me().ok(),
                |field| {
                    let (by, label) = branch.set_by.get(field).filter(|(id, _)| *id != file.id)?;
                    Some((by.clone(), label.clone()))
                },
            );
            let superseded = field_of(op).and_then(|(field, what)| {
                let (_, later) = last_setter.get(&field).filter(|(j, _)| *j > i)?;
                Some(Outcome::Skipped {
                    reason: format!(
                        "{later}, merged after this, sets {what} too: the later decision stands, and this \
                         one is not written first only to be written over"
                    ),
                })
            });
            let refused = not_in_force
                .clone()
                .or(superseded)
                .or_else(|| foreign_label(op))
                .or_else(|| {
                (op.is_destructive() && approval.is_none()).then(|| Outcome::Skipped {
                    reason: format!(
                        "{} is destructive and the commit that brought it ({}) is no merged pull request: \
                         an approval is a merge, not `approved: true` in a file. This file is used up: to \
                         carry it out, file the op again (`commitea tool apply_changes`, approved once its \
                         consequence is seen) and send the new file with `commitea propose`",
                        op.name(),
                        short(&p.commit)
                    ),
                })
            })
            .or_else(|| {
                // A model's file goes through a pull request whatever its ops: pushed straight to the
                // branch, one (text on Gitea can steer a model) was carried out (audit 159). Used up, as
                // a destructive op without a merge is. (A directive's file follows the ledger entry on
                // the branch, which someone who may push wrote.)
                (file.model && approval.is_none()).then(|| Outcome::Skipped {
                    reason: format!(
                        "{} was written by a model, and the commit that brought it ({}) is no merged pull \
                         request: such a file is approved only by its pull request's merge. This file is \
                         used up: to carry it out, file it again and send the new file with `commitea \
                         propose`",
                        file.id,
                        short(&p.commit)
                    ),
                })
            })
            .or_else(|| unseen(op, file));
            // A destructive op on an issue someone changed since (reassigned, retitled, reopened) is
            // not what was approved: it is not carried out (audit 119: an issue retitled "NOT done" and
            // reassigned was closed by a close proposed before). Any other op is written as approved,
            // and the change it writes over is said.
            // What Gitea already has is nothing written over: a dependency removed there meanwhile is
            // already so, not refused (audit 128: the change that moved the issue was the one asked).
            let already = moved.is_some() && op.already_so(&writer.snapshot);
            let refused = refused.or_else(|| {
                let (key, what) = moved.as_ref()?;
                (op.is_destructive() && !already).then(|| Outcome::Skipped {
                    reason: not_over_a_change(op, key, what),
                })
            });
            if let (Some((key, what)), None, false) = (&moved, &refused, already) {
                tracing::warn!(
                    "{}: {key} changed on Gitea after this was proposed ({what}); the approved change is \
                     written over it",
                    file.id
                );
            }
            let written_over = match (&moved, &refused, already) {
                (Some((key, what)), None, false) => Some(format!(
                    "{key} changed on Gitea after this was proposed ({what})"
                )),
                _ => None,
            };
            let outcome = match refused {
                Some(o) => {
                    checker.refused_before(op);
                    o
                }
                None => match checker.check(op, true) {
                    Err(reason) => Outcome::Skipped { reason },
                    Ok(checked) => {
                        let filed = writer.created.len();
                        let mut o = match writer.apply(&checked.op, p.committed_at) {
                            Ok(o) => o,
                            Err(e) => return Err(stopped(e, &out, &refusals, writer.wrote)),
                        };
                        if let Outcome::Applied { over } = &mut o {
                            over.clone_from(&written_over);
                        }
                        // Positions count the new issues the checker accepted, filed or not.
                        if matches!(op, Op::CreateIssue { .. }) && writer.created.len() == filed {
                            writer.created.push(None);
                        }
                        o
                    }
                },
            };
            // 423: the repository is archived (read-only) on Gitea. The op is not wrong, the repository
            // is shut: the file waits whole rather than be used up as failed (what it did already is
            // "already so" when it is carried out). A Gitea before 1.22 refuses such a write with 404
            // (`mustNotBeArchived`): the repository is asked whether that is why.
            // 403: the token's scopes or its user's rights refuse the write (Gitea's `tokenRequiresScopes`,
            // `EditIssue`'s and `AddIssueLabels`' non-writer check, a user the owner blocked). That is
            // the account's, not the op's: the approval is kept for when the token can write.
            let refused_here = writer.shut.take();
            let shut = match &outcome {
                Outcome::Failed { .. } if refused_here.is_some() => refused_here,
                Outcome::Failed {
                    status: Some(423), ..
                } => Some(ARCHIVED.to_owned()),
                Outcome::Failed {
                    status: Some(404), ..
                } if archive_guarded(op).is_some_and(|r| writer.archived(&r)) => {
                    Some(ARCHIVED.to_owned())
                }
                Outcome::Failed {
                    status: Some(403),
                    message,
                } => Some(message.clone()),
                _ => None,
            };
            if let Some(why) = shut {
                tracing::warn!(
                    "{}: Gitea refuses to {}: {why}; the file stays pending, whole, and is carried out \
                     once Gitea takes it",
                    p.path,
                    op.describe()
                );
                refusals.push(Refused {
                    id: file.id.clone(),
                    why: format!("Gitea refuses to {}: {why}", op.describe()),
                    at: now.to_rfc3339_opts(SecondsFormat::Secs, true),
                });
                results.clear();
                for (t, what) in &targets {
                    held.entry(t.clone())
                        .or_insert((file.id.clone(), what.clone()));
                }
                break;
            }
            // What Gitea refused, or the run did not carry out, is said where the run is read: the record
            // alone was found by no one (audit 94: a destructive op without a merge was an info line). A
            // directive no longer in force is said once for all its files by the run.
            let refused = match &outcome {
                Outcome::Failed { .. }
                | Outcome::Created {
                    unfinished: Some(_),
                    ..
                } => true,
                Outcome::Skipped { .. } => not_in_force.is_none(),
                _ => false,
            };
            if refused {
                tracing::warn!(
                    "{}: {} — {}",
                    file.id,
                    op.describe(),
                    outcome_text(&outcome)
                );
            } else {
                tracing::info!(
                    "{}: {} — {}",
                    file.id,
                    op.describe(),
                    outcome_text(&outcome)
                );
            }
            results.push(outcome);
        }
        if results.len() < file.ops.len() {
            continue;
        }
        let mut done = AppliedFile {
            proposal: file.clone(),
            applied: ApplyRecord {
                at: now.to_rfc3339_opts(SecondsFormat::Secs, true),
                commit: p.commit.clone(),
                pull_request: approval.as_ref().map(|a| a.number),
                merged_by: approval.and_then(|a| a.merged_by),
                results,
            },
        };
        // Recorded as each file is done, not when all are: a run killed between two files lost the
        // first's record (audit 156).
        on_done(&mut done);
        out.push(done);
    }
    Ok(Carried {
        applied: out,
        wrote: writer.wrote,
        refused: refusals,
        tried: true,
    })
}

/// Who filed an issue, as the records say it: the proposal's id and when it was made (an older CommiTea
/// could give one id to two proposals).
pub fn owner(file: &OpFile) -> String {
    format!("{} {}", file.id, file.created_at)
}

/// Why an approved file waits whole for its repositories, before Gitea is asked: one the config does not
/// name, or one the sync could not read this time. Its ops are not wrong (the issues are on the server),
/// only out of this run's reach: carried out half, or used up as "not on the server", the file would be
/// lost when the repository comes back. A milestone's op names its repository through the milestone (a
/// held repository's milestones are carried in the snapshot with it). Gitea ignores the case of a
/// repository's name; so does this.
pub struct RepoHolds<'a> {
    configured: Vec<RepoName>,
    milestone_repo: BTreeMap<u64, &'a RepoName>,
    unreachable: BTreeSet<&'a RepoName>,
    meta: &'a crate::state::Meta,
}

impl<'a> RepoHolds<'a> {
    /// The holds of `config`'s repositories over `snapshot`.
    pub fn new(config: &Config, snapshot: &'a Snapshot) -> Self {
        Self {
            configured: crate::tools::repositories(config, snapshot),
            milestone_repo: snapshot
                .milestones
                .iter()
                .flat_map(|(repo, ms)| ms.iter().map(move |m| (m.id, repo)))
                .collect(),
            unreachable: snapshot
                .meta
                .repositories
                .iter()
                .filter(|r| r.unreached_since.is_some())
                .map(|r| &r.name)
                .collect(),
            meta: &snapshot.meta,
        }
    }

    /// Why `file` waits, in words that follow "it": `names acme/api, which commitea.yaml does not name: …`.
    pub fn why(&self, file: &OpFile) -> Option<String> {
        let named: Vec<RepoName> = file
            .ops
            .iter()
            .flat_map(|op| {
                let mut repos = op.repositories_named();
                repos.extend(
                    op.milestone_changed()
                        .and_then(|m| self.milestone_repo.get(&m).map(|r| (*r).clone())),
                );
                repos
            })
            .collect();
        let same = |a: &RepoName, b: &RepoName| a.to_string().eq_ignore_ascii_case(&b.to_string());
        let words = |repos: Vec<&RepoName>| {
            let mut names: Vec<String> = repos.iter().map(ToString::to_string).collect();
            names.sort();
            names.dedup();
            names
        };
        let unconfigured = words(
            named
                .iter()
                .filter(|r| !self.configured.iter().any(|c| same(c, r)))
                .collect(),
        );
        let unreached = words(
            named
                .iter()
                .filter(|r| self.unreachable.iter().any(|c| same(c, r)))
                .collect(),
        );
        // Written before a rename: the issues are the new name's, and an op carried out on the old
        // key finds none ("not on the server any more", used up; audit 168).
        let mut renamed: Vec<String> = named
            .iter()
            .filter_map(|r| {
                Some(format!(
                    "{r}, which is {} on Gitea now",
                    self.meta.now_named(r)?
                ))
            })
            .collect();
        renamed.sort();
        renamed.dedup();
        if !renamed.is_empty() {
            Some(format!(
                "names {} (renamed or transferred): it stays pending, none of its ops carried out; write \
                 them again with the new name (`commitea tool apply_changes`) and remove this file",
                crate::prose::and_list(&renamed)
            ))
        } else if !unconfigured.is_empty() {
            Some(format!(
                "names {}, which commitea.yaml does not name: it stays pending, none of its ops carried \
                 out, until {} configured again (or the file is removed)",
                unconfigured.join(", "),
                if unconfigured.len() == 1 {
                    "it is"
                } else {
                    "they are"
                }
            ))
        } else if !unreached.is_empty() {
            Some(format!(
                "names {}, which the server does not show to the token now: it stays pending, none of \
                 its ops carried out, until the repository can be read again",
                unreached.join(", ")
            ))
        } else {
            None
        }
    }
}

/// Why a file that changes `what`, as the held file `id` does, waits behind it: carried out first, it
/// would be undone by the held one when that comes through (the later decision lost to the earlier).
pub(crate) fn behind_words(id: &str, what: &str) -> String {
    format!(
        "changes {what}, as {id} does, which waits: it waits behind {id}, none of its ops carried out, \
         so that the later decision is not undone by the earlier one"
    )
}

/// What a file's ops change, each with how it is said: the issues they change (`issue:KEY`) and the
/// milestones they set (`milestone:ID`); a new issue changes nothing that exists.
pub(crate) fn targets_of(file: &OpFile) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for op in &file.ops {
        if let Some(IssueRef::Key(k)) = op.issue() {
            out.push((format!("issue:{}", k.to_ascii_lowercase()), k.clone()));
        }
        if let Some(m) = op.milestone_changed() {
            out.push((format!("milestone:{m}"), format!("milestone {m}")));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The label `op` gives its issue on Gitea (`p/1`, `est/3d`), for an op that sets one.
fn label_written(op: &Op) -> Option<String> {
    let full = |prefix: &str, v: &str| {
        if v.starts_with(prefix) {
            v.to_owned()
        } else {
            format!("{prefix}{v}")
        }
    };
    match op {
        Op::SetPriority { priority, .. } => {
            Some(full(crate::domain::Priority::LABEL_PREFIX, priority))
        }
        Op::SetEstimate { estimate, .. } => {
            Some(full(crate::domain::Estimate::LABEL_PREFIX, estimate))
        }
        _ => None,
    }
}

/// The one field `op` sets, as a key shared by every op that sets it, and in words (`acme/api#3's
/// priority`); `None` for an op that adds or removes (a dependency, a label, a close, a new issue), whose
/// effects do not replace one another.
pub(crate) fn field_of(op: &Op) -> Option<(String, String)> {
    let issue = |what: &str| {
        let key = op.issue()?.key()?;
        Some((
            format!("issue:{}:{what}", key.to_string().to_ascii_lowercase()),
            format!("{key}'s {what}"),
        ))
    };
    match op {
        Op::SetPriority { .. } => issue("priority"),
        Op::SetEstimate { .. } => issue("estimate"),
        Op::SetMilestone { .. } => issue("milestone"),
        Op::SetMilestoneDue { milestone, .. } => Some((
            format!("milestone:{milestone}:due"),
            format!("milestone {milestone}'s due date"),
        )),
        Op::SetDeadlineHard { milestone, .. } => Some((
            format!("milestone:{milestone}:hard"),
            format!("whether milestone {milestone}'s deadline is hard"),
        )),
        Op::CreateIssue { .. }
        | Op::AddDep { .. }
        | Op::RemoveDep { .. }
        | Op::CloseIssue { .. }
        | Op::RemoveLabel { .. } => None,
    }
}

/// The due date a milestone answer shows, in the server's zone.
fn shown_due(answer: &[u8]) -> Option<DateTime<chrono::FixedOffset>> {
    let v: Value = serde_json::from_slice(answer).ok()?;
    DateTime::parse_from_rfc3339(v["due_on"].as_str()?).ok()
}

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// What an applied file is called when Gitea does not have every op of it: `nothing applied` or `partly
/// applied` (a new issue whose dependency was refused is filed, not whole); `None` when it has them all
/// (changed now, or already so). "Partly" needs an op that changed something: one already so beside one
/// skipped changed nothing (an audit read "partly applied" there).
pub fn shortfall(results: &[Outcome]) -> Option<&'static str> {
    let changed = results.iter().filter(|o| o.wrote()).count();
    let unfinished = results.iter().any(|o| {
        matches!(
            o,
            Outcome::Created {
                unfinished: Some(_),
                ..
            }
        )
    });
    let already = results
        .iter()
        .filter(|o| matches!(o, Outcome::AlreadySo))
        .count();
    if changed + already == results.len() && !unfinished {
        None
    } else if changed == 0 {
        Some("nothing applied")
    } else {
        Some("partly applied")
    }
}

/// Why a file waits when its repository is archived on Gitea.
const ARCHIVED: &str = "it is archived (read-only); unarchive it, or take it out of repositories in \
                        commitea.yaml and remove the file";

/// An outcome in a few words, for the log and the run summary.
pub fn outcome_text(o: &Outcome) -> String {
    match o {
        Outcome::Applied { over: None } => "applied".into(),
        Outcome::Applied { over: Some(over) } => {
            format!("applied, written over a change: {over}")
        }
        Outcome::AlreadySo => "already so".into(),
        Outcome::Created {
            issue,
            unfinished: None,
        } => format!("filed as {issue}"),
        Outcome::Created {
            issue,
            unfinished: Some(what),
        } => format!("filed as {issue}, but {what}"),
        Outcome::Skipped { reason } => format!("skipped: {reason}"),
        Outcome::Failed {
            status: Some(s),
            message,
        } => format!("failed: {s} {message}"),
        Outcome::Failed {
            status: None,
            message,
        } => format!("failed: {message}"),
    }
}

/// The colour a label CommiTea creates gets, by namespace.
fn label_colour(name: &str) -> &'static str {
    match name {
        "p/0" => "b60205",
        "p/1" => "d93f0b",
        "p/2" => "fbca04",
        "p/3" => "0e8a16",
        "deadline/hard" => "5319e7",
        _ => "c5def5",
    }
}

/// Carries ops out, one at a time, keeping its own view of what Gitea now holds.
struct Writer<'a> {
    client: &'a Client,
    snapshot: Snapshot,
    /// The token's user, asked once (who CommiTea's own new issues are by).
    me: Option<String>,
    wrote: bool,
    /// The issues the current file's `create_issue` ops filed (or found filed), in order; none for one
    /// that was not.
    created: Vec<Option<IssueKey>>,
    /// Every issue a `create_issue` is known to have filed, with the proposal that filed it ([`owner`]):
    /// the records' and this run's.
    filed: BTreeMap<IssueKey, String>,
    /// The proposal being carried out, as [`owner`] names it.
    owner: String,
    /// Why the last write was refused for the account or the repository, where its status alone does
    /// not say so (a dependency's bare 404): the file waits whole, as for a 403.
    shut: Option<String>,
}

/// What the branch says beyond its pending files.
#[derive(Debug, Clone)]
pub struct OnBranch {
    /// The branch's ledger, which says whether a directive's op file is to be carried out.
    pub ledger: crate::ledger::parse::ParsedLedger,
    /// The issues the records (`ops/applied/`, committed, or left by a run stopped before its commit) say a
    /// `create_issue` filed, with the proposal that filed each ([`owner`]): none of them is taken for
    /// another proposal's issue of the same title.
    pub filed: BTreeMap<IssueKey, String>,
    /// For each field ([`field_of`]) an applied record says CommiTea wrote, the last such file's id and
    /// the label it wrote (none for a milestone): a change on Gitea since a proposal that is CommiTea's
    /// own carrying out of another file is named as that file's, not as someone's (audit 121).
    pub set_by: BTreeMap<String, (String, Option<String>)>,
}

impl OnBranch {
    /// What the applied records say was done: the issues filed (with the proposal that filed each) and, per
    /// field, the last file that wrote it. Records are taken in the order of their `at`.
    pub fn take_records<'a>(&mut self, records: impl IntoIterator<Item = &'a AppliedFile>) {
        let mut records: Vec<&AppliedFile> = records.into_iter().collect();
        records.sort_by(|a, b| a.applied.at.cmp(&b.applied.at));
        for record in records {
            let owner = owner(&record.proposal);
            for (op, o) in record.proposal.ops.iter().zip(&record.applied.results) {
                match o {
                    Outcome::Created { issue, .. } => {
                        if let Ok(key) = issue.parse() {
                            self.filed.entry(key).or_insert_with(|| owner.clone());
                        }
                    }
                    Outcome::Applied { .. } => {
                        if let Some((field, _)) = field_of(op) {
                            self.set_by
                                .insert(field, (record.proposal.id.clone(), label_written(op)));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

impl Default for OnBranch {
    /// A branch with no ledger and no records.
    fn default() -> Self {
        Self {
            ledger: crate::ledger::parse::parse(""),
            filed: BTreeMap::new(),
            set_by: BTreeMap::new(),
        }
    }
}

/// How a directive's op file stands against the ledger it is carried out with: only the file of the
/// directive the ledger holds in force under its id is carried out. Two PMs appending at once both get
/// the next id; merged by hand, the ledger keeps one entry and the folder one file, maybe the other's
/// (audit 119: the left-out directive's change was carried out, "applied", in its place).
#[derive(Debug, Clone, PartialEq)]
pub enum Standing {
    /// Not a directive's file.
    NoDirective,
    /// The ledger's directive of its id is in force, and is the one the file was written for.
    InForce,
    /// That directive is withdrawn or superseded: its changes are not carried out (the file is used up).
    NotInForce {
        /// Its status.
        status: crate::ledger::format::Status,
        /// Its ledger line.
        line: usize,
    },
    /// The ledger has its id more than once: which directive it carries out cannot be told.
    Twice {
        /// The lines of the entries with that id.
        lines: Vec<usize>,
    },
    /// The ledger's directive of its id is another one.
    Another {
        /// The ledger's entry's line.
        line: usize,
        /// The ledger's directive, in words.
        ledger: String,
        /// The file's, in words.
        file: String,
    },
    /// The ledger has no directive of its id.
    Missing,
}

impl Standing {
    /// Why the file waits, none of it carried out, until the ledger and the file agree; `None` for a file
    /// that is carried out (or used up, not in force).
    pub fn waits(&self, id: &str) -> Option<String> {
        let ledger = crate::state::LEDGER_FILE;
        let fix = format!(
            "it stays pending, none of its ops carried out, until {ledger} holds in force under {id} the directive the file was written for (renumber the other entry, or remove the file)"
        );
        match self {
            Self::NoDirective | Self::InForce | Self::NotInForce { .. } => None,
            Self::Twice { lines } => Some(format!(
                "carries out directive {id}, which {ledger} has {} times (lines {}), so which one it is cannot be told: {fix}",
                lines.len(),
                crate::prose::and_list(&lines.iter().map(ToString::to_string).collect::<Vec<_>>())
            )),
            Self::Another {
                line,
                ledger: l,
                file,
            } => Some(format!(
                "was written for directive {id} \"{file}\", but {ledger} line {line}'s {id} is \"{l}\": {fix}"
            )),
            // No other entry to renumber (audit 173): the entry's coming, or the file is left over.
            Self::Missing => Some(format!(
                "carries out directive {id}, which {ledger} does not have: it stays pending, none of its \
                 ops carried out, until {ledger} holds {id} in force (remove the file if its entry was \
                 taken out on purpose)"
            )),
        }
    }
}

/// The branch ledger's directives by id, to tell each op file's [`Standing`] (built once: a lookup per
/// file, not a walk of the ledger).
pub struct LedgerIndex<'a> {
    by_id: std::collections::HashMap<String, &'a crate::ledger::format::DirectiveEntry>,
    twice: std::collections::HashMap<String, Vec<usize>>,
}

impl<'a> LedgerIndex<'a> {
    /// The index of `parsed`.
    pub fn new(parsed: &'a crate::ledger::parse::ParsedLedger) -> Self {
        let by_id: std::collections::HashMap<String, &crate::ledger::format::DirectiveEntry> =
            parsed
                .ledger
                .directives()
                .map(|d| (d.id.to_string(), d))
                .collect();
        let mut twice: std::collections::HashMap<String, Vec<usize>> =
            std::collections::HashMap::new();
        for p in &parsed.problems {
            if let crate::ledger::format::LedgerProblem::DuplicateId {
                line, id, first, ..
            } = p
            {
                let lines = twice.entry(id.to_string()).or_insert_with(|| vec![*first]);
                lines.push(*line);
            }
        }
        Self { by_id, twice }
    }

    /// How `file` stands against the ledger.
    pub fn standing(&self, file: &OpFile) -> Standing {
        let Some(record) = &file.directive else {
            return Standing::NoDirective;
        };
        if let Some(lines) = self.twice.get(&file.id) {
            return Standing::Twice {
                lines: lines.clone(),
            };
        }
        let Some(entry) = self.by_id.get(&file.id) else {
            return Standing::Missing;
        };
        let theirs = crate::ops::DirectiveRecord {
            kind: entry.kind.to_string(),
            quote: entry.quote.clone(),
            target: entry.target.as_ref().map(ToString::to_string),
            params: entry.params.to_inline_json(),
            rationale: entry.rationale.clone(),
        };
        if !record.same_directive(&theirs) {
            return Standing::Another {
                line: entry.line,
                ledger: theirs.words(),
                file: record.words(),
            };
        }
        if entry.status != crate::ledger::format::Status::Active {
            return Standing::NotInForce {
                status: entry.status,
                line: entry.line,
            };
        }
        Standing::InForce
    }
}

/// What happened on Gitea to the issue `op` changes after the proposal saw it (`seen`), where `op` would
/// write over it, in words (`bjorn assigned, retitled by ann`); `None` for an op file without `seen`
/// (written before it was kept) or nothing of the kind. Which events count is what the op changes: its
/// labels' namespace for a label, the milestone for a milestone, the dependency for a dependency; for a
/// close, who works on it, its title, and a reopening — none of which CommiTea writes. A change of the
/// field `op` sets that the token's user made, where the records say CommiTea carried out another file
/// setting it (`own(field)` gives that user, that file and the label it wrote), is named as that file's
/// doing where it is what the file wrote: its label given, or the namespace's other labels taken off
/// (audit 121: an approved p/1 written by CommiTea was "changed on Gitea by commitea-bot"; audit 124: a
/// p/2 added by hand with the same token was credited to the file that wrote p/0). What the token's user
/// (`me`) did toward what `op` itself writes, not carrying out another file, is no change at all: a run
/// stopped partway through the op left it, or a hand did what the op does (audit 160: a run killed between giving p/0 and taking p/3 off had the next one write "over"
/// its own p/0).
fn moved_under(
    op: &Op,
    seen: &BTreeMap<String, u64>,
    snapshot: &Snapshot,
    me: impl FnOnce() -> Option<String>,
    own: impl FnOnce(&str) -> Option<(String, Option<String>)>,
) -> Option<(String, String)> {
    let key = op.issue()?.key()?;
    let since = *seen.get(&key.to_string())?;
    let issue = snapshot.issues.get(&key)?;
    use crate::domain::EventKind as K;
    let counts = |e: &crate::domain::TimelineEvent| match op {
        Op::SetPriority { .. } | Op::SetEstimate { .. } => {
            let namespace = if matches!(op, Op::SetPriority { .. }) {
                crate::domain::Priority::LABEL_PREFIX
            } else {
                crate::domain::Estimate::LABEL_PREFIX
            };
            e.kind == K::Label && e.label.as_deref().is_some_and(|l| l.starts_with(namespace))
        }
        Op::RemoveLabel { label, .. } => e.kind == K::Label && e.label.as_deref() == Some(label),
        Op::SetMilestone { .. } => e.kind == K::Milestone,
        Op::AddDep { depends_on, .. } | Op::RemoveDep { depends_on, .. } => {
            matches!(e.kind, K::AddDependency | K::RemoveDependency)
                && e.dependency.is_some()
                && e.dependency == depends_on.key()
        }
        Op::CloseIssue { .. } => matches!(e.kind, K::Assignees | K::ChangeTitle | K::Reopen),
        Op::CreateIssue { .. } | Op::SetMilestoneDue { .. } | Op::SetDeadlineHard { .. } => false,
    };
    let mut events: Vec<&crate::domain::TimelineEvent> = issue
        .timeline
        .iter()
        .filter(|e| e.id > since && counts(e))
        .collect();
    // Toward what `op` writes: its label given or the namespace's others taken off, its label taken off,
    // its milestone set, its dependency added or removed.
    // What a file that set `label` wrote: its label given, or the namespace's other labels taken off —
    // not its own label taken off (audit 139: a hand removal of p/0 was "carrying out" the file that gave
    // it).
    let wrote = |e: &crate::domain::TimelineEvent, label: &Option<String>| {
        e.kind != K::Label || label.is_none() || (e.label == *label) != e.removed
    };
    let toward = |e: &crate::domain::TimelineEvent| match op {
        Op::SetPriority { .. } | Op::SetEstimate { .. } => wrote(e, &label_written(op)),
        Op::RemoveLabel { .. } => e.removed,
        Op::SetMilestone { milestone, .. } => e.milestone == *milestone,
        Op::AddDep { .. } => e.kind == K::AddDependency,
        Op::RemoveDep { .. } => e.kind == K::RemoveDependency,
        Op::CloseIssue { .. }
        | Op::CreateIssue { .. }
        | Op::SetMilestoneDue { .. }
        | Op::SetDeadlineHard { .. } => false,
    };
    let me = if events.is_empty() { None } else { me() };
    let own = me.as_ref().and_then(|me| {
        let (file, label) = field_of(op).and_then(|(field, _)| own(&field))?;
        Some((me.clone(), file, label))
    });
    let carrying_out = |e: &crate::domain::TimelineEvent| {
        own.as_ref()
            .filter(|(me, _, label)| *me == e.user && wrote(e, label))
            .map(|(_, file, _)| file)
    };
    if let Some(me) = &me {
        events.retain(|e| !(e.user == *me && toward(e) && carrying_out(e).is_none()));
    }
    events.sort_by_key(|e| (e.created_at, e.id));
    // Changes one hand made at one minute are said together (`p/1 given and p/3 taken off by …`).
    let mut said: Vec<(Vec<String>, String)> = Vec::new();
    for e in &events {
        let what = match (&e.kind, e.removed) {
            (K::Label, false) => format!("{} given", e.label.as_deref().unwrap_or("a label")),
            (K::Label, true) => {
                format!("{} taken off", e.label.as_deref().unwrap_or("a label"))
            }
            (K::Assignees, false) => {
                format!("{} assigned", e.assignee.as_deref().unwrap_or("someone"))
            }
            (K::Assignees, true) => {
                format!("{} unassigned", e.assignee.as_deref().unwrap_or("someone"))
            }
            (K::ChangeTitle, _) => "retitled".to_owned(),
            (K::Reopen, _) => "reopened".to_owned(),
            (K::Milestone, _) => "its milestone changed".to_owned(),
            (K::AddDependency, _) => "the dependency added".to_owned(),
            (K::RemoveDependency, _) => "the dependency removed".to_owned(),
            _ => "changed".to_owned(),
        };
        let by = match carrying_out(e) {
            Some(file) => format!("{} carrying out {file}", e.user),
            None => e.user.clone(),
        };
        let by = format!("{by} {}", e.created_at.format("%Y-%m-%d %H:%M UTC"));
        match said.last_mut() {
            Some((whats, last)) if *last == by => whats.push(what),
            _ => said.push((vec![what], by)),
        }
    }
    let words: Vec<String> = said
        .into_iter()
        .map(|(whats, by)| format!("{} by {by}", crate::prose::and_list(&whats)))
        .collect();
    (!words.is_empty()).then(|| (key.to_string(), crate::prose::and_list(&words)))
}

/// Why a destructive `op` is not carried out: `key` changed on Gitea since it was proposed (`what`).
fn not_over_a_change(op: &Op, key: &str, what: &str) -> String {
    format!(
        "{key} changed on Gitea after this was proposed ({what}): {} is not carried out over a change its \
         approval did not see; propose it again if it still holds",
        op.name()
    )
}

/// Why the apply stage will not carry out `op` of `file` on the state of `snapshot`: a destructive op on an
/// issue changed on Gitea since the proposal saw it (see [`moved_under`]), for a pull request to say before
/// its merge (audit 192: the body still promised a close the run was certain to refuse). Changes by the
/// token's own user count here, as the pull request cannot ask who that is.
pub(crate) fn refused_as_changed(op: &Op, file: &OpFile, snapshot: &Snapshot) -> Option<String> {
    if !op.is_destructive() || op.already_so(snapshot) {
        return None;
    }
    let (key, what) = moved_under(op, &file.seen, snapshot, || None, |_| None)?;
    Some(not_over_a_change(op, &key, &what))
}

/// How far ahead of the server's clock the clock of whoever committed an op file may be, and an issue the
/// server dates before the commit still be that file's: the commit's time is the pusher's clock (a
/// laptop's, set to local time as UTC in the worst case), the issue's the server's. Five minutes ahead
/// had an issue filed twice after a kill (audit 47).
const CLOCK_SKEW: chrono::TimeDelta = chrono::TimeDelta::days(1);

/// The repository a write of `op` goes to, where Gitea refuses that write to an archived repository
/// (`mustNotBeArchived`: a new issue, a dependency added or removed); `None` for the writes it lets through
/// (labels, milestones, an issue's edits).
fn archive_guarded(op: &Op) -> Option<RepoName> {
    match op {
        Op::CreateIssue { repo, .. } => repo.as_deref().and_then(|r| r.parse().ok()),
        Op::AddDep { issue, .. } | Op::RemoveDep { issue, .. } => issue.key().map(|k| k.repo),
        _ => None,
    }
}

/// The result of one op: an outcome, or a failure of the whole stage.
type OpResult = Result<Outcome, ApplyError>;

impl<'a> Writer<'a> {
    fn new(client: &'a Client, snapshot: &Snapshot) -> Self {
        Self {
            client,
            snapshot: snapshot.clone(),
            me: None,
            wrote: false,
            created: Vec::new(),
            filed: BTreeMap::new(),
            owner: String::new(),
            shut: None,
        }
    }

    /// Sends one write; a refusal of this op (4xx, a 500 Gitea gives for a bad request) is the op's
    /// failure, a server that is gone stops the stage.
    /// Whether Gitea lists `dep` among the issues `key` depends on now.
    fn holds_dependency(&self, key: &IssueKey, dep: &IssueKey) -> Result<bool, ClientError> {
        let deps: Vec<crate::gitea::wire::GIssue> = self.client.get_paged(
            &format!("repos/{}/issues/{}/dependencies", key.repo, key.number),
            &[],
        )?;
        let spelt = dep.repo.to_string();
        Ok(deps.iter().any(|d| {
            d.number == dep.number
                && d.repository.as_ref().map_or(key.repo == dep.repo, |r| {
                    r.full_name.eq_ignore_ascii_case(&spelt)
                })
        }))
    }

    fn send(
        &mut self,
        method: Method,
        path: &str,
        body: &Value,
        idempotent: bool,
    ) -> Result<Result<Vec<u8>, Outcome>, ApplyError> {
        match self.client.send(method, path, Some(body), idempotent) {
            Ok(w) => {
                self.wrote = true;
                Ok(Ok(w.body))
            }
            Err(ClientError::Status {
                status, message, ..
            }) => Ok(Err(Outcome::Failed {
                status: Some(status),
                message,
            })),
            // Said for a write: the repository-minded text of a read's 404 blamed the repository for
            // an issue or a milestone that is gone.
            Err(ClientError::NotFound {
                server, request, ..
            }) => Ok(Err(Outcome::Failed {
                status: Some(404),
                message: format!(
                    "{request} on {server}: not found (an issue, milestone or repository it names is gone, \
                     or not visible to the token)"
                ),
            })),
            // A write's bare 404 there is Gitea's for dependencies switched off, an archived repository, a
            // user who may not write the issues, or one who may not read the other issue
            // (`createIssueDependency`): the account's or the repository's, not the op's, so the file
            // waits (audit 197: "enable dependencies" where the sync had just read them, and used up).
            Err(ClientError::DependenciesDisabled { repo, request }) => {
                let message = format!(
                    "{request}: Gitea answered a bare 404, which it gives when issue dependencies are \
                     disabled on {repo}, or the token's user may not write its issues (or read the issue \
                     it would depend on): enable dependencies (repository settings → Issues), or give the \
                     user write access"
                );
                self.shut = Some(message.clone());
                Ok(Err(Outcome::Failed {
                    status: Some(404),
                    message,
                }))
            }
            Err(e @ ClientError::NoRoute { .. }) => Ok(Err(Outcome::Failed {
                status: Some(404),
                message: e.to_string(),
            })),
            Err(e @ ClientError::Forbidden { .. }) => Ok(Err(Outcome::Failed {
                status: Some(403),
                message: e.to_string(),
            })),
            Err(e) if crate::gitea::client::last_failure_is_500(&e) => Ok(Err(Outcome::Failed {
                status: Some(500),
                message: e.to_string(),
            })),
            Err(e) => Err(e.into()),
        }
    }

    fn issue(&self, r: &IssueRef) -> Result<(IssueKey, crate::domain::Issue), Outcome> {
        let key = r.key().ok_or_else(|| Outcome::Skipped {
            reason: format!("\"{r}\" is not a full issue key (owner/repo#N)"),
        })?;
        match self.snapshot.issues.get(&key) {
            Some(i) => Ok((key, i.clone())),
            None => Err(Outcome::Skipped {
                reason: format!("{key} is not on the server any more"),
            }),
        }
    }

    /// The label `name` of `repo`, created (as an exclusive scoped label) when the repository lacks it.
    fn label(&mut self, repo: &RepoName, name: &str) -> Result<Result<Label, Outcome>, ApplyError> {
        if let Some(l) = self
            .snapshot
            .labels
            .get(repo)
            .and_then(|ls| ls.iter().find(|l| l.name == name))
        {
            return Ok(Ok(l.clone()));
        }
        let body = json!({
            "name": name,
            "color": label_colour(name),
            "exclusive": label_scope(name).is_some(),
            "description": "Set by CommiTea",
        });
        let created =
            match self.send(Method::POST, &format!("repos/{repo}/labels"), &body, false)? {
                Ok(bytes) => bytes,
                Err(o) => return Ok(Err(o)),
            };
        let g: crate::gitea::wire::GLabel =
            crate::gitea::wire::decode(&created).unwrap_or_default();
        let label = Label {
            id: g.id,
            name: name.to_owned(),
            color: label_colour(name).to_owned(),
            description: g.description,
        };
        self.snapshot
            .labels
            .entry(repo.clone())
            .or_default()
            .push(label.clone());
        Ok(Ok(label))
    }

    /// Gives `key` the label `name`, taking away the others of its scope.
    fn set_scoped_label(
        &mut self,
        key: &IssueKey,
        issue: &crate::domain::Issue,
        name: &str,
    ) -> OpResult {
        let scope_of = label_scope(name);
        let others: Vec<String> = issue
            .labels
            .iter()
            .filter(|l| *l != name && label_scope(l) == scope_of)
            .cloned()
            .collect();
        if !issue.labels.iter().any(|l| l == name) {
            let path = format!("repos/{}/issues/{}/labels", key.repo, key.number);
            // Gitea drops a label id it does not know and answers 200 all the same: a label deleted
            // since the sync is made again, once, rather than reported as given.
            let mut given = false;
            for _ in 0..2 {
                let label = match self.label(&key.repo, name)? {
                    Ok(l) => l,
                    Err(o) => return Ok(o),
                };
                let answer =
                    match self.send(Method::POST, &path, &json!({ "labels": [label.id] }), true)? {
                        Ok(bytes) => bytes,
                        Err(o) => return Ok(o),
                    };
                let now: Result<Vec<crate::gitea::wire::GLabel>, _> =
                    crate::gitea::wire::decode(&answer);
                if now.is_err() || now.is_ok_and(|now| now.iter().any(|l| l.id == label.id)) {
                    given = true;
                    break;
                }
                if let Some(ls) = self.snapshot.labels.get_mut(&key.repo) {
                    ls.retain(|l| l.id != label.id);
                }
            }
            if !given {
                return Ok(Outcome::Failed {
                    status: None,
                    message: format!(
                        "Gitea did not give {key} the label {name}, made again after it was deleted"
                    ),
                });
            }
        }
        for other in others {
            if let Some(id) = self.label_id(&key.repo, &other) {
                let path = format!("repos/{}/issues/{}/labels/{id}", key.repo, key.number);
                if let Err(o) = self.send(Method::DELETE, &path, &Value::Null, true)? {
                    return Ok(o);
                }
            }
        }
        self.update(key, |i| {
            i.labels.retain(|l| label_scope(l) != scope_of);
            i.labels.push(name.to_owned());
            i.labels.sort();
        });
        Ok(Outcome::Applied { over: None })
    }

    fn label_id(&self, repo: &RepoName, name: &str) -> Option<u64> {
        self.snapshot
            .labels
            .get(repo)?
            .iter()
            .find(|l| l.name == name)
            .map(|l| l.id)
    }

    fn update(&mut self, key: &IssueKey, f: impl FnOnce(&mut crate::domain::Issue)) {
        if let Some(i) = self.snapshot.issues.get_mut(key) {
            f(i);
        }
    }

    /// Whether Gitea says `repo` is archived (asked when a write to it was refused; an answer that is no
    /// repository is "no").
    fn archived(&self, repo: &RepoName) -> bool {
        self.client
            .get_json::<crate::gitea::wire::GRepo>(&format!("repos/{repo}"), &[])
            .is_ok_and(|r| r.archived == Some(true))
    }

    /// The token's user, asked once.
    fn me(&mut self) -> Result<String, ApplyError> {
        if let Some(me) = &self.me {
            return Ok(me.clone());
        }
        let u: crate::gitea::wire::GUser = self.client.get_json("user", &[])?;
        self.me = Some(u.login.clone());
        Ok(u.login)
    }

    /// Carries out one op the checker passed, or records that Gitea already has it.
    fn apply(&mut self, op: &Op, committed_at: DateTime<Utc>) -> OpResult {
        // Gitea answers 500 to a dependency added twice or removed when absent: never ask what it has.
        if op.already_so(&self.snapshot) {
            return Ok(Outcome::AlreadySo);
        }
        match op {
            Op::SetEstimate { issue, estimate } => {
                let (key, i) = match self.issue(issue) {
                    Ok(x) => x,
                    Err(o) => return Ok(o),
                };
                self.set_scoped_label(&key, &i, estimate)
            }
            Op::SetPriority { issue, priority } => {
                let (key, i) = match self.issue(issue) {
                    Ok(x) => x,
                    Err(o) => return Ok(o),
                };
                self.set_scoped_label(&key, &i, priority)
            }
            Op::RemoveLabel { issue, label } => {
                let (key, _) = match self.issue(issue) {
                    Ok(x) => x,
                    Err(o) => return Ok(o),
                };
                let Some(id) = self.label_id(&key.repo, label) else {
                    return Ok(Outcome::Skipped {
                        reason: format!("{} has no label \"{label}\"", key.repo),
                    });
                };
                let path = format!("repos/{}/issues/{}/labels/{id}", key.repo, key.number);
                if let Err(o) = self.send(Method::DELETE, &path, &Value::Null, true)? {
                    return Ok(o);
                }
                self.update(&key, |i| i.labels.retain(|l| l != label));
                Ok(Outcome::Applied { over: None })
            }
            Op::SetMilestone { issue, milestone } => {
                let (key, _) = match self.issue(issue) {
                    Ok(x) => x,
                    Err(o) => return Ok(o),
                };
                let path = format!("repos/{}/issues/{}", key.repo, key.number);
                // Gitea reads `milestone: 0` as "none".
                let body = json!({ "milestone": milestone.unwrap_or(0) });
                let answer = match self.send(Method::PATCH, &path, &body, true)? {
                    Ok(answer) => answer,
                    Err(o) => return Ok(o),
                };
                // `EditIssue` lets the author of an issue who may not write the issues edit its title, body
                // and state, and leaves its milestone "only if allowed" with a 201: the answer tells.
                let answer: Value = serde_json::from_slice(&answer).unwrap_or_default();
                let kept = answer["milestone"]["id"].as_u64();
                if answer.is_object() && kept != *milestone {
                    return Ok(Outcome::Failed {
                        status: Some(403),
                        message: format!(
                            "Gitea answered but kept {key}'s milestone ({}): the token's user may not write the issues of {} (an issue's author who may not can change its title, body and state only)",
                            kept.map_or_else(|| "none".to_owned(), |m| m.to_string()),
                            key.repo
                        ),
                    });
                }
                self.update(&key, |i| i.milestone = *milestone);
                Ok(Outcome::Applied { over: None })
            }
            Op::SetMilestoneDue { milestone, due } => {
                let Some(repo) = self.snapshot.milestone(*milestone).map(|(r, _)| r.clone()) else {
                    return Ok(Outcome::Skipped {
                        reason: format!("milestone {milestone} is not on the server any more"),
                    });
                };
                let Ok(date) = chrono::NaiveDate::parse_from_str(due, "%Y-%m-%d") else {
                    return Ok(Outcome::Skipped {
                        reason: format!("\"{}\" is not a date", crate::limits::excerpt(due)),
                    });
                };
                let path = format!("repos/{repo}/milestones/{milestone}");
                // Gitea keeps the moment sent and shows its day in the server's zone, which nothing tells
                // before it answers: noon UTC is that day from UTC−12 to UTC+11; the answer, in the server's
                // zone, says whether it was, and noon there is sent when it was not (UTC+12 to +14).
                let mut due_on = format!("{date}T12:00:00Z");
                for _ in 0..2 {
                    let answer = match self.send(
                        Method::PATCH,
                        &path,
                        &json!({ "due_on": due_on }),
                        true,
                    )? {
                        Ok(body) => body,
                        Err(o) => return Ok(o),
                    };
                    match shown_due(&answer) {
                        Some(shown) if shown.date_naive() != date => {
                            due_on = format!("{date}T12:00:00{}", shown.offset());
                        }
                        _ => break,
                    }
                }
                self.update_milestone(*milestone, |m| {
                    m.due_on = Some(crate::domain::end_of_day(date));
                });
                Ok(Outcome::Applied { over: None })
            }
            Op::SetDeadlineHard { milestone, hard } => {
                let Some((repo, m)) = self
                    .snapshot
                    .milestone(*milestone)
                    .map(|(r, m)| (r.clone(), m.clone()))
                else {
                    return Ok(Outcome::Skipped {
                        reason: format!("milestone {milestone} is not on the server any more"),
                    });
                };
                let description = crate::ops::set_hard_marker(&m.description, *hard);
                // Only the description: Gitea keeps a due date an edit leaves out (`EditMilestone` sets it
                // only when given), and sending the snapshot's back would undo one changed since the sync.
                let body = json!({ "description": description });
                let path = format!("repos/{repo}/milestones/{milestone}");
                if let Err(o) = self.send(Method::PATCH, &path, &body, true)? {
                    return Ok(o);
                }
                self.update_milestone(*milestone, |m| m.description = description);
                Ok(Outcome::Applied { over: None })
            }
            Op::AddDep { issue, depends_on } | Op::RemoveDep { issue, depends_on } => {
                let add = matches!(op, Op::AddDep { .. });
                let (key, i) = match self.issue(issue) {
                    Ok(x) => x,
                    Err(o) => return Ok(o),
                };
                let (dep, _) = match self.issue(depends_on) {
                    Ok(x) => x,
                    Err(o) if add => return Ok(o),
                    Err(_) => match depends_on {
                        IssueRef::Key(k) => match k.parse::<IssueKey>() {
                            Ok(k) => (k, i.clone()),
                            Err(_) => return Ok(Outcome::AlreadySo),
                        },
                        IssueRef::Number(_) => return Ok(Outcome::AlreadySo),
                    },
                };
                let path = format!("repos/{}/issues/{}/dependencies", key.repo, key.number);
                let body =
                    json!({ "index": dep.number, "owner": dep.repo.owner, "repo": dep.repo.name });
                let method = if add { Method::POST } else { Method::DELETE };
                if let Err(o) = self.send(method, &path, &body, false)? {
                    // Gitea answers 500 to a dependency it holds already, or one to remove it does not
                    // (`CreateIssueDependency`, `RemoveIssueDependency`): a run beside this one, or
                    // someone on Gitea, did it since this run's sync (audit 152: recorded "failed", the
                    // file "partly applied" while whole on Gitea). Gitea is asked which.
                    let done = matches!(
                        o,
                        Outcome::Failed {
                            status: Some(500),
                            ..
                        }
                    ) && self.holds_dependency(&key, &dep).ok() == Some(add);
                    if !done {
                        return Ok(o);
                    }
                    self.update(&key, |i| {
                        i.depends_on.retain(|d| *d != dep);
                        if add {
                            i.depends_on.push(dep.clone());
                            i.depends_on.sort();
                        }
                    });
                    return Ok(Outcome::AlreadySo);
                }
                self.update(&key, |i| {
                    if add {
                        i.depends_on.push(dep.clone());
                        i.depends_on.sort();
                    } else {
                        i.depends_on.retain(|d| *d != dep);
                    }
                });
                Ok(Outcome::Applied { over: None })
            }
            Op::CloseIssue { issue } => {
                let (key, _) = match self.issue(issue) {
                    Ok(x) => x,
                    Err(o) => return Ok(o),
                };
                let path = format!("repos/{}/issues/{}", key.repo, key.number);
                if let Err(o) =
                    self.send(Method::PATCH, &path, &json!({ "state": "closed" }), true)?
                {
                    return Ok(o);
                }
                self.update(&key, |i| i.state = OpenState::Closed);
                Ok(Outcome::Applied { over: None })
            }
            Op::CreateIssue {
                title,
                body,
                labels,
                milestone,
                deps,
                repo,
                depends_on_new,
            } => {
                let new_deps: Vec<Option<IssueKey>> = depends_on_new
                    .iter()
                    .map(|k| {
                        let i = usize::try_from(*k).ok()?.checked_sub(1)?;
                        self.created.get(i).cloned().flatten()
                    })
                    .collect();
                if new_deps.iter().any(Option::is_none) {
                    return Ok(Outcome::Skipped {
                        reason: "it depends on a new issue of this file that was not filed".into(),
                    });
                }
                let mut all: Vec<IssueRef> = deps.clone();
                all.extend(
                    new_deps
                        .into_iter()
                        .flatten()
                        .map(|k| IssueRef::Key(k.to_string())),
                );
                self.create_issue(
                    title,
                    body,
                    labels,
                    *milestone,
                    &all,
                    repo.as_deref(),
                    committed_at,
                )
            }
        }
    }

    fn update_milestone(&mut self, id: u64, f: impl FnOnce(&mut crate::domain::Milestone)) {
        if let Some(m) = self
            .snapshot
            .milestones
            .values_mut()
            .flatten()
            .find(|m| m.id == id)
        {
            f(m);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn create_issue(
        &mut self,
        title: &str,
        body: &str,
        labels: &[String],
        milestone: Option<u64>,
        deps: &[IssueRef],
        repo: Option<&str>,
        committed_at: DateTime<Utc>,
    ) -> OpResult {
        let Some(repo) = repo.and_then(|r| r.parse::<RepoName>().ok()) else {
            return Ok(Outcome::Skipped {
                reason: "create_issue names no repository (owner/repo)".into(),
            });
        };
        if title.trim().is_empty() || title.contains(['\n', '\r']) {
            return Ok(Outcome::Skipped {
                reason: "the title must be one non-empty line".into(),
            });
        }
        // Done already (by a run killed before it recorded so)? Then it is on the server: the same title,
        // by the token's user, created after the file reached the branch (give or take the pusher's
        // clock), and no other file's. No marker is written to Gitea.
        let me = self.me()?;
        let after = committed_at - CLOCK_SKEW;
        let existing = self
            .snapshot
            .issues
            .iter()
            .find(|(k, i)| {
                k.repo == repo
                    && i.title == title.trim()
                    && i.author == me
                    && i.created_at >= after
                    && self.filed.get(k).is_none_or(|o| *o == self.owner)
            })
            .map(|(k, _)| k.clone());
        // The snapshot is as old as this run's sync: a run beside this one (a forge that does not queue
        // runs, such as Forgejo before v14) may have filed it since. Gitea itself is asked, for the
        // issues changed since the op reached the branch (an issue created since is among them).
        let filed_beside = match existing {
            Some(_) => None,
            None => {
                let since = after.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                let fresh: Vec<crate::gitea::wire::GIssue> = self.client.get_paged(
                    &format!("repos/{repo}/issues"),
                    &[
                        ("state", "all".into()),
                        ("type", "issues".into()),
                        ("since", since),
                    ],
                )?;
                fresh
                    .iter()
                    .find(|i| {
                        i.title == title.trim()
                            && crate::gitea::wire::login(i.user.as_ref()) == me
                            && i.created_at.is_some_and(|c| c >= after)
                            && self
                                .filed
                                .get(&repo.issue(i.number))
                                .is_none_or(|o| *o == self.owner)
                    })
                    .map(|i| repo.issue(i.number))
            }
        };
        if let Some(key) = filed_beside {
            // The run that filed it adds its dependencies; this one's snapshot does not hold it yet.
            tracing::info!("{key} was filed by another run since this one synced; not filed again");
            self.created.push(Some(key.clone()));
            self.filed.insert(key.clone(), self.owner.clone());
            return Ok(Outcome::Created {
                issue: key.to_string(),
                unfinished: None,
            });
        }
        if let Some(key) = existing {
            self.created.push(Some(key.clone()));
            self.filed.insert(key.clone(), self.owner.clone());
            // Its dependencies may be what the killed run did not get to.
            let unfinished = self.dependencies_of_new(&key, deps, committed_at)?;
            return Ok(Outcome::Created {
                issue: key.to_string(),
                unfinished,
            });
        }
        let mut ids = Vec::new();
        for l in labels {
            match self.label(&repo, l)? {
                Ok(label) => ids.push(label.id),
                Err(o) => return Ok(o),
            }
        }
        let mut payload = json!({ "title": title.trim(), "body": body, "labels": ids });
        if let Some(m) = milestone {
            payload["milestone"] = json!(m);
        }
        let created = match self.send(
            Method::POST,
            &format!("repos/{repo}/issues"),
            &payload,
            false,
        )? {
            Ok(bytes) => bytes,
            Err(o) => return Ok(o),
        };
        let g: crate::gitea::wire::GIssue =
            crate::gitea::wire::decode(&created).unwrap_or_default();
        if g.number == 0 {
            return Ok(Outcome::Failed {
                status: None,
                message: "Gitea created the issue but did not say its number".into(),
            });
        }
        let key = repo.issue(g.number);
        self.created.push(Some(key.clone()));
        self.filed.insert(key.clone(), self.owner.clone());
        // Gitea files an issue for a user who may not write the issues and drops its labels and
        // milestone without a word (`CreateIssue`): read what it kept.
        let kept: Vec<String> = labels
            .iter()
            .filter(|l| g.labels.iter().any(|x| x.name == **l))
            .cloned()
            .collect();
        let kept_milestone = milestone.filter(|m| g.milestone.as_ref().is_some_and(|x| x.id == *m));
        let mut dropped: Vec<String> = labels
            .iter()
            .filter(|l| !kept.contains(l))
            .map(|l| format!("label {l}"))
            .collect();
        if let Some(m) = milestone.filter(|_| kept_milestone.is_none()) {
            dropped.push(format!("milestone {m}"));
        }
        let now = g.created_at.unwrap_or(committed_at);
        self.snapshot.issues.insert(
            key.clone(),
            crate::domain::Issue {
                number: g.number,
                title: title.trim().to_owned(),
                state: OpenState::Open,
                author: me,
                created_at: now,
                updated_at: now,
                closed_at: None,
                assignees: Vec::new(),
                labels: kept,
                milestone: kept_milestone,
                time_estimate: 0,
                depends_on: Vec::new(),
                body: body.to_owned(),
                comments: Vec::new(),
                timeline: Vec::new(),
                tracked_times: Vec::new(),
                outside_blockers: Vec::new(),
                hidden_blockers: 0,
                pull_requests: Vec::new(),
            },
        );
        let mut unfinished: Vec<String> = self
            .dependencies_of_new(&key, deps, committed_at)?
            .into_iter()
            .collect();
        if !dropped.is_empty() {
            unfinished.insert(
                0,
                format!(
                    "Gitea dropped its {} (it does so when the token's user may not write the issues of \
                     {repo}: give it write access, then set them)",
                    dropped.join(", ")
                ),
            );
        }
        Ok(Outcome::Created {
            issue: key.to_string(),
            unfinished: (!unfinished.is_empty()).then(|| unfinished.join("; ")),
        })
    }

    /// Gives a filed issue its dependencies, each tried: what Gitea refused, in words (`None`: all
    /// given). The issue stays filed either way, so the op is `created`, never `failed`: a record
    /// saying "failed" left the issue no proposal's own, to be filed again.
    fn dependencies_of_new(
        &mut self,
        key: &IssueKey,
        deps: &[IssueRef],
        committed_at: DateTime<Utc>,
    ) -> Result<Option<String>, ApplyError> {
        let mut refused = Vec::new();
        for d in deps {
            let op = Op::AddDep {
                issue: IssueRef::Key(key.to_string()),
                depends_on: d.clone(),
            };
            if let o @ (Outcome::Failed { .. } | Outcome::Skipped { .. }) =
                self.apply(&op, committed_at)?
            {
                refused.push(format!("its dependency on {d} {}", outcome_text(&o)));
            }
        }
        Ok((!refused.is_empty()).then(|| refused.join("; ")))
    }
}

/// The op files in `ops/pending/` of `commit` (the branch a run starts from), each with the commit that
/// brought it there.
pub fn pending_on_branch(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    layout: &crate::state::Layout,
) -> Result<Vec<PendingOnBranch>, crate::state::git::GitError> {
    let mut out = Vec::new();
    for name in crate::state::git::list_dir(repo, commit, crate::ops::PENDING_PATH)? {
        if !name.ends_with(".yaml") {
            continue;
        }
        let path = format!("{}/{name}", crate::ops::PENDING_PATH);
        let Some(bytes) = crate::state::git::read_at(repo, commit, &path)? else {
            continue;
        };
        let file = OpFile::parse(
            &String::from_utf8_lossy(&bytes),
            std::path::Path::new(&path),
        )
        .map_err(|e| e.to_string())
        .and_then(|f| match crate::ops::id_problem(&name, &f.id) {
            Some(problem) => Err(format!("{path}: {problem}")),
            None => Ok(f),
        });
        let (introduced, mut later) =
            crate::state::git::introduced(repo, commit, &path)?.unwrap_or((commit, Vec::new()));
        later.reverse();
        let committed_at = crate::state::git::commit_time(repo, introduced)?;
        out.push(PendingOnBranch {
            path,
            file,
            commit: introduced.to_string(),
            later: later.iter().map(ToString::to_string).collect(),
            committed_at,
        });
    }
    let _ = layout;
    // In the order they reached the branch, so that of two files changing one thing the one merged last
    // stands (audit 94: name order let an earlier merge win); files of one commit in name order. The
    // first to arrive has the most commits after it.
    out.sort_by_key(|p| std::cmp::Reverse(p.later.len()));
    Ok(out)
}

/// The applied files as `ops/applied/ID.yaml` text, in their order.
pub fn applied_texts(applied: &[AppliedFile]) -> Result<Vec<String>, crate::yamlfile::YamlError> {
    applied
        .iter()
        .map(|a| {
            let rel = format!("{}/{}.yaml", crate::ops::APPLIED_PATH, a.proposal.id);
            crate::yamlfile::to_string(a, std::path::Path::new(&rel))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// A destructive op is carried out only from a file whose `seen` names exactly the issues of its ops
    /// (audit 139: a close retargeted to another issue the file named, or with `seen` taken out, was).
    #[test]
    fn a_destructive_op_of_a_file_edited_since_its_proposal_is_held() {
        let text = |ops: &str, seen: &str| {
            format!(
                "id: C-0001\nsource: apply_changes\ncreated_at: 2026-11-29T09:00:00Z\napproved: true\n\
                 destructive: true\n{seen}ops:\n{ops}summary: x\nconsequence: []\n"
            )
        };
        let file = |ops: &str, seen: &str| {
            super::OpFile::parse(&text(ops, seen), std::path::Path::new("C-0001.yaml")).unwrap()
        };
        let both = "seen:\n  acme/m#104: 7\n  acme/m#110: 9\n";
        let proposed = "- op: close_issue\n  issue: acme/m#104\n- op: set_priority\n  issue: acme/m#110\n  priority: p/1\n";
        let retargeted = "- op: close_issue\n  issue: acme/m#110\n- op: set_priority\n  issue: acme/m#110\n  priority: p/1\n";
        let held = |f: &super::OpFile| {
            f.ops
                .iter()
                .map(|op| super::unseen(op, f).is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(held(&file(proposed, both)), [false, false]);
        assert_eq!(held(&file(retargeted, both)), [true, false]);
        assert_eq!(held(&file(proposed, "")), [true, false]);
        let only = "seen:\n  acme/m#110: 9\n";
        assert_eq!(
            held(&file("- op: close_issue\n  issue: acme/m#104\n", only)),
            [true]
        );
    }

    #[test]
    fn a_file_is_partly_applied_only_where_an_op_changed_something() {
        use super::Outcome::AlreadySo;
        const APPLIED: super::Outcome = super::Outcome::Applied { over: None };
        let skipped = || super::Outcome::Skipped {
            reason: "no merged pull request".into(),
        };
        assert_eq!(super::shortfall(&[APPLIED, AlreadySo]), None);
        assert_eq!(
            super::shortfall(&[AlreadySo, skipped()]),
            Some("nothing applied")
        );
        assert_eq!(
            super::shortfall(&[APPLIED, skipped()]),
            Some("partly applied")
        );
        assert_eq!(super::shortfall(&[skipped()]), Some("nothing applied"));
    }
}
