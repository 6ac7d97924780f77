//! Proposals: the op files and ledger entries written here but not yet on the branch become pull requests
//! on the state repo (or, for additive ops where the config allows, commits on the branch itself).
//!
//! Each proposal is one commit on top of the branch's tip, built without touching the checkout, pushed to
//! `commitea/<id>` with the `git` CLI (the token only in git's environment), and opened as a pull request
//! through the API: its title the consequence's one line, its body the consequence, the changes in words,
//! who asked and, for a directive, the PM's words verbatim. [`refresh`] keeps open proposals current.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use reqwest::Method;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::config::Config;
use crate::consequence::Consequence;
use crate::domain::RepoName;
use crate::gitea::client::{Client, ClientError};
use crate::ops::{Checked, OpFile, Source};
use crate::state::git::{GitError, Signature};
use crate::state::remote::{Pushed, Remote, RemoteError};
use crate::state::{Layout, Snapshot, StateError};

/// The branch prefix of proposals.
pub const BRANCH_PREFIX: &str = "commitea/";

/// What to do when the server refuses a push to a proposal's branch.
const PROTECTED_PROPOSALS: &str = "CommiTea pushes each proposal to its own branch under commitea/: leave \
     those branches out of the state repository's branch protection (Settings → Branches), or let the \
     token's account push to them";

/// The most moved issues a pull request body lists.
const BODY_ISSUES: usize = 25;

/// Why proposing failed.
#[derive(Debug, thiserror::Error)]
pub enum ProposeError {
    /// The state repo could not be read.
    #[error(transparent)]
    State(#[from] StateError),
    /// Git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The remote failed.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// Gitea failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A file could not be written as YAML.
    #[error(transparent)]
    Yaml(#[from] crate::yamlfile::YamlError),
    /// Something the configuration must say is missing.
    #[error("{0}")]
    Setup(String),
}

/// One thing to propose: an op file, a ledger entry, or a directive's entry with its op file.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// `C-0007` or `D-0009`.
    pub id: String,
    /// The op file, if there is one.
    pub file: Option<OpFile>,
    /// The ledger entry's text, for a directive.
    pub ledger_entry: Option<String>,
    /// Whether the entry replaces the branch's entry of the same id (an edit of it, such as its status
    /// line: `withdrawn`) instead of being appended.
    pub replaces: bool,
}

/// The branch prefix (after [`BRANCH_PREFIX`]) of a proposed edit of a ledger entry.
const EDIT_PREFIX: &str = "edit-";

impl Proposal {
    /// The branch it goes on: `commitea/D-0009`, or `commitea/edit-D-0003` for an edit of an entry.
    pub fn branch(&self) -> String {
        if self.replaces {
            format!("{BRANCH_PREFIX}{EDIT_PREFIX}{}", self.id)
        } else {
            format!("{BRANCH_PREFIX}{}", self.id)
        }
    }

    /// Its pull request's title: the id (and whether it edits an entry) and the consequence in one line.
    fn title(&self, c: &Consequence) -> String {
        let summary = crate::gitea::inert_refs(&crate::prose::one_line(&c.summary));
        let title = if self.replaces {
            format!("{} (edit): {summary}", self.id)
        } else {
            format!("{}: {summary}", self.id)
        };
        // Gitea keeps a title in 255 characters and its API does not check: longer, opening the pull
        // request fails on PostgreSQL and MySQL (audit 161: 4 of 11 titles were 410-476). The body has
        // the whole consequence.
        crate::prose::clip(&title, crate::limits::TITLE_CHARS)
    }

    /// The ledger once it is merged: `base_ledger` with its entry appended, or in place of the entry of
    /// its id.
    fn ledger_after(&self, base_ledger: &str) -> String {
        match &self.ledger_entry {
            Some(e) if self.replaces => replace_entry(base_ledger, &self.id, e),
            Some(e) => append_raw(base_ledger, e),
            None => base_ledger.to_owned(),
        }
    }

    /// Whether `other` is this proposal: the same op file but for its consequence (recomputed as the
    /// state moves), and the same ledger entry. Two proposals made in the same second differ in what
    /// they ask; an edited proposal counts as another one, and is not pushed over the first.
    fn same_as(&self, other: &Proposal) -> bool {
        let asks = |f: &OpFile| {
            let mut f = f.clone();
            f.summary.clear();
            f.consequence.clear();
            f
        };
        let files = match (&self.file, &other.file) {
            (Some(a), Some(b)) => asks(a) == asks(b),
            (None, None) => true,
            _ => false,
        };
        let entries = match (&self.ledger_entry, &other.ledger_entry) {
            (Some(a), Some(b)) => {
                crate::state::as_lf(a.trim_end()) == crate::state::as_lf(b.trim_end())
            }
            (None, None) => true,
            _ => false,
        };
        files && entries
    }

    /// The proposal under another id: its op file's and its ledger entry's.
    fn renumbered(mut self, id: &str) -> Self {
        if let Some(f) = &mut self.file {
            f.id = id.to_owned();
        }
        if let Some(e) = &mut self.ledger_entry {
            *e = e.replacen(&self.id, id, 1);
        }
        self.id = id.to_owned();
        self
    }

    /// Whether it may go straight to the branch: only an `apply_changes` file of additive ops. The ops
    /// decide, not the file's `destructive` flag, which a hand edit may have set wrong.
    pub fn additive(&self) -> bool {
        self.ledger_entry.is_none()
            && self.file.as_ref().is_some_and(|f| {
                f.source != Source::Directive
                    && !f.model
                    && !f.destructive
                    && !f.ops.iter().any(crate::ops::Op::is_destructive)
            })
    }

    /// The files it changes on top of `base`: its op file, and the ledger with its entry appended.
    fn edits(&self, base_ledger: &str) -> Result<Vec<crate::state::git::Edit>, ProposeError> {
        let mut edits = Vec::new();
        if let Some(f) = &self.file {
            let rel = format!("{}/{}.yaml", crate::ops::PENDING_PATH, f.id);
            edits.push((rel.clone(), Some(f.render(Path::new(&rel))?.into_bytes())));
        }
        if self.ledger_entry.is_some() {
            edits.push((
                crate::state::LEDGER_FILE.into(),
                Some(self.ledger_after(base_ledger).into_bytes()),
            ));
        }
        Ok(edits)
    }
}

/// `ledger` with the entry of `id` replaced by `entry` (the ledger unchanged when it has no such entry).
fn replace_entry(ledger: &str, id: &str, entry: &str) -> String {
    let parsed = crate::ledger::parse::parse(ledger);
    let Some(old) = parsed
        .ledger
        .directives()
        .find(|d| d.id.to_string() == id)
        .map(|d| d.raw.clone())
    else {
        return ledger.to_owned();
    };
    // Keep the blank lines that separated the old entry from the next, and the ledger's line endings.
    let kept = &old[old.trim_end().len()..];
    let entry = crate::state::in_endings_of(entry, ledger);
    ledger.replacen(&old, &format!("{}{kept}", entry.trim_end()), 1)
}

/// `entry` after every byte of `ledger`, separated by a blank line, in the ledger's line endings.
fn append_raw(ledger: &str, entry: &str) -> String {
    let newline = if ledger.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut out = ledger.to_owned();
    if !out.is_empty() {
        if !out.ends_with('\n') {
            out.push_str(newline);
        }
        if !out.ends_with("\n\n") && !out.ends_with("\n\r\n") {
            out.push_str(newline);
        }
    }
    out.push_str(&crate::state::in_endings_of(entry, ledger));
    if !out.ends_with('\n') {
        out.push_str(newline);
    }
    out
}

/// The proposals in the checkout that are not on `base`: op files under `ops/pending/` the base lacks (or
/// has otherwise), and ledger entries whose ids the base's ledger lacks.
pub fn local_proposals(
    layout: &Layout,
    repo: &gix::Repository,
    base: Option<gix::ObjectId>,
) -> Result<Vec<Proposal>, ProposeError> {
    let on_base = |path: &str| -> Result<Option<Vec<u8>>, GitError> {
        match base {
            Some(b) => crate::state::git::read_at(repo, b, path),
            None => Ok(None),
        }
    };
    let mut out: BTreeMap<String, Proposal> = BTreeMap::new();
    for f in crate::ops::pending(layout)? {
        let rel = format!("{}/{}.yaml", crate::ops::PENDING_PATH, f.id);
        let disk = std::fs::read(layout.root().join(&rel)).unwrap_or_default();
        if on_base(&rel)?.is_some_and(|b| crate::state::same_text(&disk, &b)) {
            continue;
        }
        out.insert(
            f.id.clone(),
            Proposal {
                id: f.id.clone(),
                file: Some(f),
                ledger_entry: None,
                replaces: false,
            },
        );
    }
    let disk_ledger = crate::ledger::read_exact(&layout.ledger())?.unwrap_or_default();
    let base_ledger = on_base(crate::state::LEDGER_FILE)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let base_entries: BTreeMap<String, String> = crate::ledger::parse::parse(&base_ledger)
        .ledger
        .directives()
        .map(|d| (d.id.to_string(), d.raw.clone()))
        .collect();
    let mut edits = Vec::new();
    for d in crate::ledger::parse::parse(&disk_ledger)
        .ledger
        .directives()
    {
        let id = d.id.to_string();
        match base_entries.get(&id) {
            // An entry the branch has, changed here (its status line): proposed as an edit of it.
            Some(raw)
                if crate::state::as_lf(raw.trim_end()) != crate::state::as_lf(d.raw.trim_end()) =>
            {
                edits.push(Proposal {
                    id,
                    file: None,
                    ledger_entry: Some(d.raw.clone()),
                    replaces: true,
                });
            }
            Some(_) => {}
            None => {
                out.entry(id.clone())
                    .or_insert_with(|| Proposal {
                        id,
                        file: None,
                        ledger_entry: None,
                        replaces: false,
                    })
                    .ledger_entry = Some(d.raw.clone());
            }
        }
    }
    Ok(out.into_values().chain(edits).collect())
}

/// What became of a proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proposed {
    /// Committed straight to the branch (additive ops, as the config allows).
    Direct {
        /// The id.
        id: String,
        /// The commit.
        commit: String,
    },
    /// Opened (or updated) as a pull request.
    PullRequest {
        /// The id.
        id: String,
        /// The pull request's number.
        number: u64,
        /// Its branch.
        branch: String,
    },
    /// Not proposed, and taken out of the checkout: another proposal (`of`) asks exactly the same.
    Duplicate {
        /// The id.
        id: String,
        /// The proposal that asks it already.
        of: String,
    },
    /// Not proposed, and taken out of the checkout: the branch records it as carried out already.
    AppliedAlready {
        /// The id.
        id: String,
    },
}

impl Proposed {
    /// The proposal's id.
    pub fn id(&self) -> &str {
        match self {
            Self::Direct { id, .. }
            | Self::PullRequest { id, .. }
            | Self::Duplicate { id, .. }
            | Self::AppliedAlready { id } => id,
        }
    }

    /// The line `propose` prints for it on stdout, and a tool's answer lists under `proposed`:
    /// `C-0007 direct COMMIT`, `C-0007 pull-request 12 commitea/C-0007`, `C-0008 duplicate-of C-0007`,
    /// `C-0007 applied-already`.
    pub fn line(&self) -> String {
        match self {
            Self::Direct { id, commit } => format!("{id} direct {commit}"),
            Self::PullRequest { id, number, branch } => {
                format!("{id} pull-request {number} {branch}")
            }
            Self::Duplicate { id, of } => format!("{id} duplicate-of {of}"),
            Self::AppliedAlready { id } => format!("{id} applied-already"),
        }
    }

    /// Where it went, in words: `pull request #3 (commitea/D-0008)`, `commit 1a2b3c4d5e on the branch`.
    pub fn words(&self) -> String {
        match self {
            Self::Direct { commit, .. } => {
                format!(
                    "commit {} on the branch",
                    commit.get(..10).unwrap_or(commit)
                )
            }
            Self::PullRequest { number, branch, .. } => {
                format!("pull request #{number} ({branch})")
            }
            Self::Duplicate { of, .. } => format!("not proposed: {of} asks the same"),
            Self::AppliedAlready { .. } => "not proposed: carried out already".to_owned(),
        }
    }
}

/// Everything a proposal needs to reach the server.
pub struct Context<'a> {
    /// The state repo's layout.
    pub layout: &'a Layout,
    /// The resolved config.
    pub config: &'a Config,
    /// The client on the server (for pull requests).
    pub client: &'a Client,
    /// The state repo on the server.
    pub state_repo: RepoName,
    /// The remote of the checkout.
    pub remote: &'a Remote,
    /// Who commits.
    pub sig: Signature,
    /// The forecast's day zero for consequences.
    pub now: DateTime<Utc>,
}

/// Proposing without a token: what to set; `detail` (the git failure it caused, if any) goes after it.
fn no_token(cx: &Context<'_>, detail: &str) -> ProposeError {
    ProposeError::Setup(format!(
        "no Gitea token is set, and proposing pushes branches and opens pull requests on {}: set {} to \
         an access token of that server that may write to {} (scope write:repository); nothing was \
         pushed{detail}",
        cx.client.server(),
        crate::gitea::client::token_vars_said(),
        cx.state_repo
    ))
}

/// Proposes everything local: pushes each proposal and opens its pull request (or commits additive ops
/// to the branch where `approvals.additive_direct` allows), then takes the proposals out of the checkout
/// (they live on their branches now).
pub fn propose(cx: &Context<'_>) -> Result<Vec<Proposed>, ProposeError> {
    let repo = crate::state::git::open_or_init(cx.layout.root())?;
    let branch = cx.config.approvals.branch.clone();
    if let Err(e) = cx.remote.fetch(&branch) {
        // Without a token a state repo on the server is not read either: that is what to fix, not git's
        // "repository not found" (audit 109).
        return Err(if cx.client.has_token() {
            e.into()
        } else {
            no_token(cx, &format!(" ({e})"))
        });
    }
    let mut base = crate::state::git::resolve(
        &repo,
        &format!("refs/remotes/{}/{branch}", cx.remote.name()),
    )
    .ok_or_else(|| {
        ProposeError::Setup(format!(
            "the remote {} has no branch {branch} to propose onto",
            cx.remote.name()
        ))
    })?;
    let proposals = local_proposals(cx.layout, &repo, Some(base))?;
    let strays = warn_strays(cx.layout, &ledger_at(&repo, base)?)?;
    if proposals.is_empty() {
        return Ok(Vec::new());
    }
    // The consequence is computed on the checkout's snapshot with the branch's ledger: a checkout behind
    // the branch's last run gives numbers of an older world (audit 119: +29 working days where the
    // branch gave +113), until the next run rebuilds the pull request. Said, with the way to the branch's.
    // A checkout ahead of the branch (a run committed here and not pushed) has the newer snapshot: its
    // numbers are not older, and a pull would change nothing (audit 121).
    let ahead = crate::state::git::head(&repo)
        .is_some_and(|head| crate::state::git::is_ancestor(&repo, base, head));
    let older = if ahead {
        Vec::new()
    } else {
        crate::state::git::differences(
            &repo,
            base,
            crate::state::SNAPSHOT_DIR,
            crate::state::is_snapshot_file,
        )?
    };
    if !older.is_empty() {
        tracing::warn!(
            "the checkout's snapshot is not {}'s ({} {}): the pull requests' consequences are \
             computed on it until the next run rebuilds them; {} first for the branch's numbers",
            cx.config.approvals.branch,
            crate::prose::count(older.len(), "file", "files"),
            if older.len() == 1 {
                "differs"
            } else {
                "differ"
            },
            pull_hint(cx.config)
        );
    }
    // Nothing is pushed before the pull requests are known to have a home: a state repo the server does
    // not have would otherwise fail after a branch (or the branch itself) had been pushed.
    if !cx.client.has_token() {
        return Err(no_token(cx, ""));
    }
    check_state_repo(cx)?;
    // The ids each proposal has in the checkout, before any is renumbered away from a taken one.
    let (kept, dropped) = unclash(cx, &repo, base, proposals)?;
    let (checkout_ids, proposals): (Vec<String>, Vec<Proposal>) = kept.into_iter().unzip();
    let mut out = Vec::new();
    let each = propose_each(cx, &repo, &branch, &mut base, &proposals, &mut out);
    // What went through lives on its branch (or the branch) now and leaves the checkout. After a failure,
    // a directive's op file stays with its ledger entry, so that a retry proposes the two together again.
    let done = |p: &Proposal| out.iter().any(|o| o.id() == p.id);
    for (p, checkout_id) in proposals.iter().zip(&checkout_ids).filter(|(p, _)| done(p)) {
        if each.is_err() && p.ledger_entry.is_some() {
            continue;
        }
        if p.file.is_some() {
            let _ = std::fs::remove_file(crate::ops::pending_path(cx.layout, checkout_id));
        }
    }
    if let Err(e) = each {
        for o in &out {
            tracing::warn!("{} went through before the failure: {}", o.id(), o.words());
        }
        return Err(e);
    }
    out.extend(dropped);
    if proposals.iter().any(|p| p.ledger_entry.is_some()) {
        // The branch's ledger, and after it what `propose` does not send (notes, malformed entries).
        let text = strays
            .iter()
            .fold(ledger_at(&repo, base)?, |t, s| append_raw(&t, &s.text));
        crate::state::write_if_changed(&cx.layout.ledger(), text.as_bytes())?;
        // A checkout behind the branch now holds a ledger its own commit lacks, and a plain `git pull
        // --rebase` refuses a changed file ("cannot pull with rebase: You have unstaged changes").
        let head_ledger = match crate::state::git::head(&repo) {
            Some(head) => ledger_at(&repo, head)?,
            None => String::new(),
        };
        let direct = out.iter().any(|p| matches!(p, Proposed::Direct { .. }));
        if head_ledger != text && !direct {
            tracing::info!(
                "{} now holds {}'s ledger, which this checkout's commit lacks: {} brings the checkout up to date",
                crate::state::LEDGER_FILE,
                cx.config.approvals.branch,
                pull_hint(cx.config)
            );
        }
    }
    Ok(out)
}

/// The command that brings a checkout up to date with the branch after a proposal: `git fetch origin &&
/// git rebase --autostash origin/main` (the autostash carries the ledger `propose` rewrote, and anything
/// else uncommitted, across it). The whole remote is fetched: the proposals' branches tell the next
/// directive or op file which ids are taken (audit 119: a pull of `main` alone left them stale, and a
/// rejected proposal's id was given again).
pub fn pull_hint(config: &crate::config::Config) -> String {
    format!(
        "`git fetch {remote} && git rebase --autostash {remote}/{}`",
        config.approvals.branch,
        remote = config.approvals.remote,
    )
}

/// Says what of the checkout's ledger `propose` does not send — text that is no well-formed directive
/// entry and that the branch's ledger lacks — and why; returns it, so that it stays in the checkout.
fn warn_strays(
    layout: &Layout,
    base_ledger: &str,
) -> Result<Vec<crate::ledger::parse::Stray>, ProposeError> {
    let disk = crate::ledger::read_exact(&layout.ledger())?.unwrap_or_default();
    let strays = crate::ledger::parse::strays(&disk, base_ledger);
    let file = crate::state::LEDGER_FILE;
    for s in &strays {
        let lines = s.lines();
        if s.problems.is_empty() {
            tracing::warn!(
                "{file} {lines} (\"{}\") is no directive entry and not on the branch: `commitea propose` \
                 sends directive entries only, so it stays in the checkout; commit it for the branch to keep it",
                crate::limits::excerpt(s.text.lines().next().unwrap_or_default())
            );
        } else {
            tracing::warn!(
                "{file} {lines} is a directive entry that does not read, so it is not proposed and stays in \
                 the checkout: {}; fix it and run `commitea propose` again",
                s.problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
    }
    Ok(strays)
}

/// What [`unclash`] leaves: each proposal to send with its id in the checkout, and those not sent.
type Unclashed = (Vec<(String, Proposal)>, Vec<Proposed>);

/// The proposals, each with its id in the checkout and renumbered to the next free id where its own is
/// taken by another proposal (one the branch records as carried out already is dropped): the
/// branch `commitea/ID` of an open (or merged) pull request that is not this proposal, or an op file the
/// branch already has under that id. Ids are counted from what the checkout knows, and a proposal
/// leaves the checkout when it is pushed: a clone that never fetched the others' branches gives the
/// same id again, which pushed as it is would replace another proposal's pull request.
fn unclash(
    cx: &Context<'_>,
    repo: &gix::Repository,
    base: gix::ObjectId,
    proposals: Vec<Proposal>,
) -> Result<Unclashed, ProposeError> {
    let live: Vec<String> = cx.remote.branches(BRANCH_PREFIX)?;
    let base_ledger = ledger_at(repo, base)?;
    let on_base = |dir: &str| -> Result<Vec<String>, GitError> {
        Ok(crate::state::git::list_dir(repo, base, dir)?
            .into_iter()
            .filter_map(|n| n.strip_suffix(".yaml").map(str::to_owned))
            .collect())
    };
    let applied = on_base(crate::ops::APPLIED_PATH)?;
    let mut taken: Vec<String> = live
        .iter()
        .filter_map(|b| b.strip_prefix(BRANCH_PREFIX).map(str::to_owned))
        .chain(applied.iter().cloned())
        .chain(on_base(crate::ops::PENDING_PATH)?)
        .chain(crate::ops::ids_taken_in_git(cx.layout.root()))
        .chain(
            crate::ledger::parse::parse(&base_ledger)
                .ledger
                .directives()
                .map(|d| d.id.to_string()),
        )
        .chain(proposals.iter().map(|p| p.id.clone()))
        .collect();
    // What the other proposals ask: those on open branches and those pending on the branch. A call retried
    // after its first answer was proposed asks the same again (audit 135: two pull requests for one
    // change, one of them doing nothing once the other was merged).
    // Asked of the server only where a new op file could be another's duplicate.
    let others = if proposals
        .iter()
        .any(|p| !p.replaces && p.file.is_some() && p.ledger_entry.is_none())
    {
        proposals_elsewhere(cx, repo, base, &base_ledger)
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    let mut dropped = Vec::new();
    let mut renumber_why: BTreeMap<String, &str> = BTreeMap::new();
    for p in proposals {
        // An edit is of an entry the branch has: its id is that entry's, and its branch its own.
        if p.replaces {
            out.push((p.id.clone(), p));
            continue;
        }
        if let Some(file) = p.file.as_ref().filter(|_| p.ledger_entry.is_none())
            && let Some((other, open)) = others
                .iter()
                .find(|(o, _)| o.id != p.id && same_ops(&o.ops, &file.ops))
        {
            tracing::warn!(
                "{} asks exactly what {} asks already ({}): not proposed again, and taken out of this \
                 checkout",
                p.id,
                other.id,
                if *open {
                    format!("its open pull request from {BRANCH_PREFIX}{}", other.id)
                } else {
                    format!("pending on {}", cx.config.approvals.branch)
                }
            );
            take_out(cx, repo, &p.id);
            dropped.push(Proposed::Duplicate {
                id: p.id.clone(),
                of: other.id.clone(),
            });
            continue;
        }
        let clash = if applied.contains(&p.id) {
            // A checkout cloned while the file was pending still holds it after a run carried it out
            // (audit 141: renumbered, it was proposed again and filed its issue a second time).
            if carried_out_already(repo, base, &base_ledger, &p)? {
                tracing::warn!(
                    "{} was carried out already ({}/{}.yaml on {}): not proposed again; {} brings the \
                     checkout up to date",
                    p.id,
                    crate::ops::APPLIED_PATH,
                    p.id,
                    cx.config.approvals.branch,
                    pull_hint(cx.config)
                );
                take_out(cx, repo, &p.id);
                dropped.push(Proposed::AppliedAlready { id: p.id.clone() });
                continue;
            }
            // Edited since: a directive's file carries out a decision the ledger holds, which was
            // carried out; what it asks now is no decision anyone recorded (audit 144: it went out
            // again under its own id, its pull request quoting "Mobile ships Jan 22" over Jan 29).
            if p.ledger_entry.is_none() && !p.id.starts_with(crate::ops::ID_PREFIX) {
                tracing::warn!(
                    "{} was carried out already ({}/{}.yaml on {}), and this checkout's copy of its op \
                     file asks otherwise (edited since?): not proposed; a new decision is a new \
                     directive (`commitea directive`); delete {}/{}.yaml here",
                    p.id,
                    crate::ops::APPLIED_PATH,
                    p.id,
                    cx.config.approvals.branch,
                    crate::ops::PENDING_PATH,
                    p.id
                );
                dropped.push(Proposed::AppliedAlready { id: p.id.clone() });
                continue;
            }
            renumber_why.insert(
                p.id.clone(),
                "was carried out already, and this checkout's copy asks otherwise (edited since?)",
            );
            true
        } else if live.contains(&p.branch()) {
            cx.remote.fetch(&p.branch())?;
            match crate::state::git::resolve(
                repo,
                &format!("refs/remotes/{}/{}", cx.remote.name(), p.branch()),
            ) {
                Some(tip) => !p.same_as(&branch_proposal(repo, tip, &p.id, &base_ledger)?.0),
                None => true,
            }
        } else {
            // A file the branch already has under this id is another proposal unless it asks the same.
            match crate::state::git::read_at(
                repo,
                base,
                &format!("{}/{}.yaml", crate::ops::PENDING_PATH, p.id),
            )? {
                Some(bytes) => {
                    p.file.is_some() && {
                        let theirs =
                            OpFile::parse(&String::from_utf8_lossy(&bytes), Path::new("op file"))
                                .ok();
                        !p.same_as(&Proposal {
                            id: p.id.clone(),
                            file: theirs,
                            ledger_entry: p.ledger_entry.clone(),
                            replaces: p.replaces,
                        })
                    }
                }
                None => false,
            }
        };
        // A directive's op file without its entry (the entry is on the branch already) keeps its id.
        let renumberable = p.id.starts_with(crate::ops::ID_PREFIX) || p.ledger_entry.is_some();
        if !(clash && renumberable) {
            out.push((p.id.clone(), p));
            continue;
        }
        let prefix = if p.id.starts_with(crate::ops::ID_PREFIX) {
            crate::ops::ID_PREFIX
        } else {
            "D-"
        };
        let next = taken
            .iter()
            .filter_map(|id| crate::ops::id_number(id, prefix))
            .max()
            .unwrap_or(0)
            + 1;
        let new_id = format!("{prefix}{next:04}");
        tracing::info!(
            "{} {}: this one is proposed as {new_id}",
            p.id,
            renumber_why
                .get(&p.id)
                .copied()
                .unwrap_or("is another proposal's on the server already")
        );
        taken.push(new_id.clone());
        out.push((p.id.clone(), p.renumbered(&new_id)));
    }
    Ok((out, dropped))
}

/// The op files proposed elsewhere, each with whether it is an open pull request's: pending on the branch
/// at `base`, and on the branches of the proposals' open pull requests (fetched in one go). A merged or
/// closed pull request's branch is no proposal (audit 147: a new close was dropped as a duplicate of one
/// merged long before, whose branch was still there); where the server does not say which are open, or the
/// fetch fails, only the branch's pending files count.
fn proposals_elsewhere(
    cx: &Context<'_>,
    repo: &gix::Repository,
    base: gix::ObjectId,
    base_ledger: &str,
) -> Vec<(OpFile, bool)> {
    let read = |tip: gix::ObjectId, rel: &str| {
        crate::state::git::read_at(repo, tip, rel)
            .ok()
            .flatten()
            .and_then(|b| OpFile::parse(&String::from_utf8_lossy(&b), Path::new(rel)).ok())
    };
    let mut out: Vec<(OpFile, bool)> =
        crate::state::git::list_dir(repo, base, crate::ops::PENDING_PATH)
            .unwrap_or_default()
            .iter()
            .filter_map(|f| read(base, &format!("{}/{f}", crate::ops::PENDING_PATH)))
            .map(|f| (f, false))
            .collect();
    let Ok(open) = open_proposals(cx.client, &cx.state_repo) else {
        return out;
    };
    if open.is_empty() || cx.remote.fetch(&format!("{BRANCH_PREFIX}*")).is_err() {
        return out;
    }
    for p in &open {
        let branch = format!("{BRANCH_PREFIX}{}", p.id);
        if let Some(tip) =
            crate::state::git::resolve(repo, &format!("refs/remotes/{}/{branch}", cx.remote.name()))
            && let Ok((proposal, _)) = branch_proposal(repo, tip, &p.id, base_ledger)
        {
            out.extend(proposal.file.map(|f| (f, true)));
        }
    }
    out
}

/// Whether two op lists ask the same, whatever their order (audit 147: the same two ops the other way
/// round went out as a second proposal; audit 149: two new issues the other way round were filed twice).
/// A list where a new issue waits on another of the list keeps its order: `dependsOnNew` counts positions.
fn same_ops(a: &[crate::ops::Op], b: &[crate::ops::Op]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let positional = |ops: &[crate::ops::Op]| {
        ops.iter().any(|o| {
            matches!(o, crate::ops::Op::CreateIssue { depends_on_new, .. } if !depends_on_new.is_empty())
        })
    };
    if positional(a) || positional(b) {
        return a == b;
    }
    let sorted = |ops: &[crate::ops::Op]| {
        let mut v: Vec<String> = ops
            .iter()
            .map(|o| serde_json::to_string(o).unwrap_or_default())
            .collect();
        v.sort();
        v
    };
    sorted(a) == sorted(b)
}

/// Takes a proposal not sent out of the checkout: deleted where it is new here, left where the checkout's
/// commit holds it as it is (a pull takes it out; deleted, it left an unstaged deletion that git's rename
/// detection paired with another proposal's new file, and the advised rebase stopped in a conflict:
/// audit 144).
fn take_out(cx: &Context<'_>, repo: &gix::Repository, id: &str) {
    let path = crate::ops::pending_path(cx.layout, id);
    let rel = format!("{}/{id}.yaml", crate::ops::PENDING_PATH);
    let committed = crate::state::git::head(repo)
        .and_then(|head| crate::state::git::read_at(repo, head, &rel).ok().flatten());
    if committed
        .is_none_or(|c| std::fs::read(&path).is_ok_and(|now| !crate::state::same_text(&now, &c)))
    {
        let _ = std::fs::remove_file(path);
    }
}

/// Whether the branch at `base` (its ledger `base_ledger`) recorded `p`'s op file as carried out, as it
/// asks (its summary and consequence aside), with its ledger entry, if any, on the branch too.
fn carried_out_already(
    repo: &gix::Repository,
    base: gix::ObjectId,
    base_ledger: &str,
    p: &Proposal,
) -> Result<bool, ProposeError> {
    let Some(file) = &p.file else {
        return Ok(false);
    };
    let rel = format!("{}/{}.yaml", crate::ops::APPLIED_PATH, p.id);
    let Some(bytes) = crate::state::git::read_at(repo, base, &rel)? else {
        return Ok(false);
    };
    let Ok(record) = crate::yamlfile::parse::<crate::apply::AppliedFile>(
        &String::from_utf8_lossy(&bytes),
        Path::new(&rel),
    ) else {
        return Ok(false);
    };
    let entry_on_base = match &p.ledger_entry {
        None => true,
        Some(_) => crate::ledger::parse::parse(base_ledger)
            .ledger
            .directives()
            .any(|d| d.id.to_string() == p.id),
    };
    let theirs = Proposal {
        id: p.id.clone(),
        file: Some(record.proposal),
        ledger_entry: p.ledger_entry.clone(),
        replaces: p.replaces,
    };
    Ok(entry_on_base && file.id == p.id && p.same_as(&theirs))
}

/// The proposal `id` as the commit `tip` of its branch holds it: its op file and its ledger entry (when
/// `base_ledger` lacks that entry), and why its op file does not read, where it does not.
fn branch_proposal(
    repo: &gix::Repository,
    tip: gix::ObjectId,
    id: &str,
    base_ledger: &str,
) -> Result<(Proposal, Option<String>), ProposeError> {
    if let Some(edited) = id.strip_prefix(EDIT_PREFIX) {
        let entry =
            crate::state::git::read_at(repo, tip, crate::state::LEDGER_FILE)?.and_then(|b| {
                crate::ledger::parse::parse(&String::from_utf8_lossy(&b))
                    .ledger
                    .directives()
                    .find(|d| d.id.to_string() == edited)
                    .map(|d| d.raw.clone())
            });
        return Ok((
            Proposal {
                id: edited.to_owned(),
                file: None,
                ledger_entry: entry,
                replaces: true,
            },
            None,
        ));
    }
    let rel = format!("{}/{id}.yaml", crate::ops::PENDING_PATH);
    let (file, unreadable) = match crate::state::git::read_at(repo, tip, &rel)? {
        None => (None, None),
        Some(b) => match OpFile::parse(&String::from_utf8_lossy(&b), Path::new(&rel)) {
            Ok(f) => (Some(f), None),
            Err(e) => (None, Some(e.to_string())),
        },
    };
    let entry = crate::state::git::read_at(repo, tip, crate::state::LEDGER_FILE)?.and_then(|b| {
        crate::ledger::parse::parse(&String::from_utf8_lossy(&b))
            .ledger
            .directives()
            .find(|d| d.id.to_string() == id)
            .filter(|_| !base_ledger.contains(&format!("## {id} ")))
            .map(|d| d.raw.clone())
    });
    Ok((
        Proposal {
            id: id.to_owned(),
            file,
            ledger_entry: entry,
            replaces: false,
        },
        unreadable,
    ))
}

/// Fails unless the server has the state repo the pull requests go to (and the token sees it).
fn check_state_repo(cx: &Context<'_>) -> Result<(), ProposeError> {
    match cx
        .client
        .get_json::<serde_json::Value>(&format!("repos/{}", cx.state_repo), &[])
    {
        Ok(_) => Ok(()),
        Err(ClientError::NotFound { .. }) => Err(ProposeError::Setup(format!(
            "the state repository {} is not on the server, or the token cannot see it (404): check \
             approvals.state_repository in commitea.yaml (in Gitea Actions, the job's GITHUB_REPOSITORY); \
             nothing was pushed",
            cx.state_repo
        ))),
        // Proposing writes: the token needs more than a sync's read access, and a run's advice (`run
        // --offline`) does not apply here.
        Err(ClientError::Unauthorized {
            server, token_sent, ..
        }) => Err(ProposeError::Setup(format!(
            "{server} answered 401 Unauthorized ({}): set {} to an access token of this server that can \
             write to {} (the write:repository scope); nothing was pushed",
            if token_sent {
                "it refused the token: expired, revoked, or another server's?"
            } else {
                "no token is set"
            },
            crate::gitea::client::token_vars_said(),
            cx.state_repo
        ))),
        Err(ClientError::Forbidden { server, .. }) => Err(ProposeError::Setup(format!(
            "{server} answered 403 Forbidden: the token's user may not write to {}; give it write access \
             there (and a token with the write:repository scope); nothing was pushed",
            cx.state_repo
        ))),
        Err(ClientError::GaveUp { last: why, .. } | ClientError::ServerDown { first: why, .. }) => {
            Err(ProposeError::Setup(format!(
                "the server did not answer ({why}): check that it is up and reachable, then run `commitea \
                 propose` again; nothing was pushed"
            )))
        }
        Err(e) => Err(ProposeError::Setup(format!("{e}; nothing was pushed"))),
    }
}

/// Pushes each proposal (see [`propose`]), adding what went through to `out` as it goes; `base` follows
/// the branch as direct commits move it.
fn propose_each(
    cx: &Context<'_>,
    repo: &gix::Repository,
    branch: &str,
    base: &mut gix::ObjectId,
    proposals: &[Proposal],
    out: &mut Vec<Proposed>,
) -> Result<(), ProposeError> {
    // Once the server refuses a direct push (a protected branch), the rest go as pull requests too.
    let mut refused = false;
    for p in proposals {
        if p.additive() && cx.config.approvals.additive_direct && !refused {
            let (p, _) = &with_consequence(cx, p, &ledger_at(repo, *base)?)?;
            match push_direct(cx, repo, branch, base, p)? {
                Some(commit) => {
                    out.push(Proposed::Direct {
                        id: p.id.clone(),
                        commit,
                    });
                    continue;
                }
                None => refused = true,
            }
        }
        let number = open_pull(cx, repo, *base, p)?;
        out.push(Proposed::PullRequest {
            id: p.id.clone(),
            number,
            branch: p.branch(),
        });
    }
    Ok(())
}

/// Pushes additive proposal `p` straight onto `branch` over `base` (moved to the new commit); the commit, or
/// `None` when the server refuses pushes to the branch (said once, as a warning: the proposal then goes through
/// a pull request).
fn push_direct(
    cx: &Context<'_>,
    repo: &gix::Repository,
    branch: &str,
    base: &mut gix::ObjectId,
    p: &Proposal,
) -> Result<Option<String>, ProposeError> {
    for _ in 0..=3 {
        let base_ledger = ledger_at(repo, *base)?;
        let commit = crate::state::git::commit_onto(
            repo,
            *base,
            &p.edits(&base_ledger)?,
            &format!(
                "commitea: {} (additive ops, straight to the branch; applied at the next run)\n",
                p.id
            ),
            &cx.sig,
        )?;
        match cx.remote.push(&commit.to_string(), branch, false)? {
            Pushed::Done => {
                *base = commit;
                return Ok(Some(commit.to_string()));
            }
            Pushed::Rejected => {
                cx.remote.fetch(branch)?;
                *base = crate::state::git::resolve(
                    repo,
                    &format!("refs/remotes/{}/{branch}", cx.remote.name()),
                )
                .unwrap_or(*base);
            }
            Pushed::Refused { reason } => {
                tracing::warn!(
                    "the server refuses pushes to {branch} ({reason}): {} and the proposals after it go \
                     through pull requests; set approvals.additive_direct: false in commitea.yaml to stop \
                     trying, or let the token's account push to {branch}",
                    p.id
                );
                return Ok(None);
            }
        }
    }
    Err(ProposeError::Setup(format!(
        "{branch} kept moving while {} was pushed; run `commitea propose` again",
        p.id
    )))
}

fn ledger_at(repo: &gix::Repository, commit: gix::ObjectId) -> Result<String, GitError> {
    Ok(
        crate::state::git::read_at(repo, commit, crate::state::LEDGER_FILE)?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default(),
    )
}

/// A pull request as the sync of proposals reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct GPullRequest {
    number: u64,
    state: String,
    merged: bool,
    body: String,
    title: String,
    html_url: String,
    head: Option<GBranch>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct GBranch {
    /// The branch's name. Gitea keeps it here when the branch is deleted (`services/convert/pull.go`),
    /// while `ref` then becomes `refs/pull/N/head`.
    label: String,
    #[serde(rename = "ref")]
    git_ref: String,
    /// The repository the branch is in: the state repo's own, or a fork's (absent when the fork is gone).
    repo: Option<GBranchRepo>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct GBranchRepo {
    full_name: String,
}

impl GBranch {
    /// The branch's name: `label`, else `ref` (a server that sends no label).
    fn name(&self) -> &str {
        if self.label.is_empty() {
            &self.git_ref
        } else {
            &self.label
        }
    }

    /// Whether this is a proposal's branch: named as one, and in `state_repo` itself. Anyone who can fork
    /// the state repo can name a branch `commitea/C-0002`; taken for the proposal's, a fork's pull request
    /// was given the proposal's title and description (and approving it merged the fork's changes), and
    /// closing one deleted the real proposal's branch.
    fn is_proposal_of(&self, state_repo: &RepoName) -> bool {
        self.name().starts_with(BRANCH_PREFIX)
            && self
                .repo
                .as_ref()
                .is_some_and(|r| r.full_name.eq_ignore_ascii_case(&state_repo.to_string()))
    }
}

/// Every pull request of the state repo whose branch is a proposal's (never a fork's).
fn proposal_pulls(cx: &Context<'_>, state: &str) -> Result<Vec<GPullRequest>, ClientError> {
    pulls_of(cx.client, &cx.state_repo, state)
}

fn pulls_of(
    client: &Client,
    state_repo: &RepoName,
    state: &str,
) -> Result<Vec<GPullRequest>, ClientError> {
    let pulls: Vec<GPullRequest> = client.get_paged(
        &format!("repos/{state_repo}/pulls"),
        &[("state", state.to_owned())],
    )?;
    Ok(pulls
        .into_iter()
        .filter(|p| {
            p.head
                .as_ref()
                .is_some_and(|h| h.is_proposal_of(state_repo))
        })
        .collect())
}

/// A proposal's open pull request, as the site lists it: what awaits approval is on its branch, which a
/// site drawn from the branch does not see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenProposal {
    /// The proposal's id, `D-0009`.
    pub id: String,
    /// The pull request's number.
    pub number: u64,
    /// Its title: the id and the consequence in one line.
    pub title: String,
    /// Its page on Gitea.
    pub url: String,
}

/// The open pull requests of proposals on `state_repo`, by number.
pub fn open_proposals(
    client: &Client,
    state_repo: &RepoName,
) -> Result<Vec<OpenProposal>, ClientError> {
    let mut out: Vec<OpenProposal> = pulls_of(client, state_repo, "open")?
        .into_iter()
        .filter_map(|p| {
            let id = p.head?.name().strip_prefix(BRANCH_PREFIX)?.to_owned();
            Some(OpenProposal {
                id,
                number: p.number,
                title: p.title,
                url: p.html_url,
            })
        })
        .collect();
    out.sort_by_key(|p| p.number);
    Ok(out)
}

/// Pushes `p` onto its branch over `base` and opens its pull request, or updates the open one.
fn open_pull(
    cx: &Context<'_>,
    repo: &gix::Repository,
    base: gix::ObjectId,
    p: &Proposal,
) -> Result<u64, ProposeError> {
    let base_ledger = ledger_at(repo, base)?;
    let (p, c) = &with_consequence(cx, p, &base_ledger)?;
    let commit = crate::state::git::commit_onto(
        repo,
        base,
        &p.edits(&base_ledger)?,
        &format!("commitea: propose {}\n", p.id),
        &cx.sig,
    )?;
    cx.remote
        .force_push(&commit.to_string(), &p.branch(), PROTECTED_PROPOSALS)?;
    let (title, body) = (p.title(c), body(p, c));
    let existing = proposal_pulls(cx, "open")?
        .into_iter()
        .find(|pr| pr.head.as_ref().is_some_and(|h| h.name() == p.branch()));
    if let Some(pr) = existing {
        if pr.body != body || pr.title != title {
            cx.client.send(
                Method::PATCH,
                &format!("repos/{}/pulls/{}", cx.state_repo, pr.number),
                Some(&json!({ "title": title, "body": body })),
                true,
            )?;
        }
        tracing::info!(
            "{} is pull request #{} (kept current): {}",
            p.id,
            pr.number,
            pr.html_url
        );
        return Ok(pr.number);
    }
    let created: GPullRequest = cx.client.send_json(
        Method::POST,
        &format!("repos/{}/pulls", cx.state_repo),
        Some(&json!({
            "title": title,
            "body": body,
            "head": p.branch(),
            "base": cx.config.approvals.branch,
        })),
        false,
    )?;
    tracing::info!(
        "proposed {} as pull request #{}: {}",
        p.id,
        created.number,
        created.html_url
    );
    Ok(created.number)
}

/// The consequence of a proposal on the state as it is now.
pub(crate) fn consequence(
    config: &Config,
    snapshot: &Snapshot,
    ledger: &str,
    p: &Proposal,
    now: DateTime<Utc>,
    layout: &Layout,
    committed: &crate::pipeline::Committed,
) -> Consequence {
    let after_snapshot = match &p.file {
        Some(f) => {
            let checked: Vec<Checked> = f.ops.iter().map(|op| Checked { op: op.clone() }).collect();
            crate::ops::simulate(snapshot, &checked, now)
        }
        None => snapshot.clone(),
    };
    let after_ledger = p.ledger_after(ledger);
    let about: Vec<u64> = p
        .file
        .iter()
        .flat_map(|f| &f.ops)
        .flat_map(|op| op.milestones_about(snapshot))
        .collect();
    crate::consequence::of_change(
        config,
        (snapshot, Some(ledger)),
        (&after_snapshot, Some(&after_ledger)),
        now,
        // Kept as the run keeps them, so the pull request's consequence is the one the agent previewed
        // and the run commits once merged (audit 177).
        &|plan, ledger| committed.keeps(layout, config, plan, ledger),
        committed.report(),
    )
    .0
    .about(&about)
}

/// The pull request's title and body for `p`, with its consequence on the state as it is now.
/// `p` with its op file's consequence recomputed on the branch's ledger, and that consequence. The file
/// was written with the checkout's ledger, which may hold directives not approved (or never proposed):
/// what is merged says what merging it does.
fn with_consequence(
    cx: &Context<'_>,
    p: &Proposal,
    base_ledger: &str,
) -> Result<(Proposal, Consequence), ProposeError> {
    let snapshot = Snapshot::load(cx.layout)?;
    let committed = crate::pipeline::Committed::read(cx.layout);
    let c = consequence(
        cx.config,
        &snapshot,
        base_ledger,
        p,
        cx.now,
        cx.layout,
        &committed,
    );
    let mut p = p.clone();
    if let Some(f) = &mut p.file {
        f.summary.clone_from(&c.summary);
        f.consequence = crate::ledger::record::pairs(&c);
    }
    Ok((p, c))
}

/// `text` as literal markdown on one line: every character markdown could read as syntax escaped.
/// Titles, labels and a directive's words come from anyone who can write on Gitea or talk to an agent,
/// and an approver reads the pull request as Gitea renders it: `![](https://…)` in a title would fetch
/// a tracking image when the approver opens it, and `**Approved, no change**` would read as the body's
/// own words.
fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::gitea::inert_refs(&crate::prose::one_line(text)).chars() {
        // What CommonMark and Gitea's extensions read as syntax mid-line (the text never starts a line
        // here): emphasis, code, links and images, tables, strikethrough, HTML and entities.
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '!' | '|' | '<' | '>' | '~' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The lines of a new issue's body a pull request quotes.
const BODY_LINES: usize = 8;

/// The body of a proposal's pull request: the consequence, the changes in words, who asked, the quote.
pub fn body(p: &Proposal, c: &Consequence) -> String {
    let mut b = String::new();
    b.push_str(&format!("**Consequence:** {}\n\n", md_text(&c.summary)));
    if !c.milestones.is_empty() {
        b.push_str("| milestone | p80 before | p80 after | moved | P(on time) before → after |\n");
        b.push_str("|---|---|---|---|---|\n");
        let pct = |p: Option<f64>| p.map_or_else(|| "—".to_owned(), crate::prose::percent);
        for m in &c.milestones {
            let before = m.before.as_ref();
            let after = m.after.as_ref();
            let (b80, a80) = (
                before.map_or("—", |s| s.p80.as_str()),
                after.map_or("—", |s| s.p80.as_str()),
            );
            b.push_str(&format!(
                "| {} | {b80} | {a80} | {} | {} → {} |\n",
                md_text(&m.title),
                crate::prose::p80_moved(b80, a80, m.moved_working_days),
                pct(before.and_then(|s| s.probability_on_time)),
                pct(after.and_then(|s| s.probability_on_time)),
            ));
        }
        b.push('\n');
    }
    if !c.issues.is_empty() {
        // The title counts them apart (moved, new, closed); the list holds them all.
        b.push_str(&format!(
            "**Issues that move, join or leave the plan** ({}):\n\n",
            c.issues.len()
        ));
        for i in c.issues.iter().take(BODY_ISSUES) {
            let line = match (&i.before, &i.after) {
                (Some(b), Some(a)) => format!(
                    "p80 {} → {} ({}) — {}",
                    b.p80,
                    a.p80,
                    crate::prose::p80_moved(&b.p80, &a.p80, i.moved_working_days),
                    md_text(&i.why)
                ),
                (None, Some(a)) => format!("new, p80 {}", a.p80),
                // Closed, or gone from the plan: the reason says which.
                (Some(b), None) => format!("{} (its p80 was {})", md_text(&i.why), b.p80),
                (None, None) => md_text(&i.why),
            };
            b.push_str(&format!("- {} {}: {line}\n", i.issue, md_text(&i.title)));
        }
        if c.issues.len() > BODY_ISSUES {
            b.push_str(&format!("- and {} more\n", c.issues.len() - BODY_ISSUES));
        }
        b.push('\n');
    }
    if let Some(f) = &p.file {
        b.push_str("**Changes to Gitea** (carried out by the next run after the merge):\n\n");
        for op in &f.ops {
            b.push_str(&format!(
                "- {}{}\n",
                md_text(&op.describe()),
                if op.is_destructive() {
                    " (destructive)"
                } else {
                    ""
                }
            ));
            // What will be filed on Gitea, not only its title: a model may write the body.
            if let crate::ops::Op::CreateIssue { body, .. } = op
                && !body.trim().is_empty()
            {
                let lines: Vec<&str> = body.lines().collect();
                for line in lines.iter().take(BODY_LINES) {
                    b.push_str(&format!("  > {}\n", md_text(line)));
                }
                if lines.len() > BODY_LINES {
                    b.push_str(&format!(
                        "  > … and {} more lines (in the op file)\n",
                        lines.len() - BODY_LINES
                    ));
                }
            }
        }
        b.push('\n');
        if let Some(by) = &f.by {
            b.push_str(&format!("**Asked by:** {}\n\n", md_text(by)));
        }
        if f.model {
            // Routing alone (never straight to the branch) does not tell the approver why to look twice.
            b.push_str(
                "**Written by a model** (`commitea ask`, an agent over `commitea mcp`, or a directive \
                 drafted from the PM's words): text on Gitea can steer a model, so check each change \
                 against what was asked.\n\n",
            );
        }
        if let Some(d) = &f.directive {
            b.push_str(&format!("**Directive {}** ({}):\n\n", f.id, d.kind));
            for line in d.quote.lines() {
                b.push_str(&format!("> {}\n", md_text(line)));
            }
            b.push('\n');
        }
    } else if let Some(entry) = &p.ledger_entry {
        b.push_str(&format!(
            "**Directive {}{}** (the ledger entry, verbatim):\n\n",
            p.id,
            if p.replaces { ", edited" } else { "" }
        ));
        for line in entry.lines() {
            b.push_str(&format!("    {line}\n"));
        }
        b.push('\n');
        b.push_str(
            "**No change to Gitea:** it lives in the ledger only, and changes the plan.\n\n",
        );
    }
    if p.ledger_entry.is_some() && !p.replaces {
        // Two directives append to the ledger: the second conflicts once the first is merged (audit 104:
        // the PM met "409 Merge Conflict" with nothing to say why or what to do).
        b.push_str(
            "Another directive merged first makes this one conflict on `pm-state.md` (both append to \
             it) until the run that merge starts rebuilds it, a few minutes later: merge it after that \
             run.\n\n",
        );
    }
    b.push_str("Merging this pull request is the approval.\n");
    b
}

/// What makes the op file of proposal `p` one a run would not carry out as it is: it does not read
/// (`unreadable`, as [`branch_proposal`] found), or an op of it fails the check the apply stage holds every
/// file to. `None` when sound, or when the proposal has no op file.
fn branch_problem(
    p: &Proposal,
    unreadable: Option<String>,
    config: &Config,
    snapshot: &Snapshot,
) -> Option<String> {
    if unreadable.is_some() {
        return unreadable;
    }
    let file = p.file.as_ref()?;
    let mut checker = crate::ops::Checker::at_apply(
        config,
        snapshot,
        crate::tools::repositories(config, snapshot),
    );
    let refused: Vec<String> = file
        .ops
        .iter()
        .enumerate()
        .filter_map(|(n, op)| {
            let why = match crate::apply::unseen(op, file) {
                Some(crate::apply::Outcome::Skipped { reason }) => Some(reason),
                _ => match crate::apply::refused_as_changed(op, file, snapshot) {
                    Some(reason) => {
                        checker.refused_before(op);
                        Some(reason)
                    }
                    None => checker.check(op, true).err(),
                },
            };
            why.map(|why| format!("op {} ({}): {why}", n + 1, op.describe()))
        })
        .collect();
    (!refused.is_empty()).then(|| {
        format!(
            "{}/{}.yaml would be skipped{}: {}",
            crate::ops::PENDING_PATH,
            p.id,
            if refused.len() < file.ops.len() {
                " in part"
            } else {
                " whole"
            },
            refused.join("; ")
        )
    })
}

/// `body` led by a line that says `problem`.
fn warned(problem: &str, body: &str) -> String {
    format!(
        "> **Not carried out as it is:** {}\n\n{body}",
        md_text(problem)
    )
}

/// Keeps open proposals current: each open `commitea/*` pull request's branch is rebuilt on the
/// branch's tip when that moved (so it stays mergeable) and its body recomputed on the state as it is
/// now, updated when it changed; the branch of a proposal closed without merging is deleted. Returns
/// how many pull requests were updated. A file a run would not carry out as it is (it does not read, or
/// an op fails the apply stage's check) is said in the run's log and leads its pull request's body.
pub fn refresh(cx: &Context<'_>) -> Result<usize, ProposeError> {
    let repo = crate::state::git::open_or_init(cx.layout.root())?;
    let branch = cx.config.approvals.branch.clone();
    let Some(base) = crate::state::git::resolve(
        &repo,
        &format!("refs/remotes/{}/{branch}", cx.remote.name()),
    )
    .or_else(|| crate::state::git::head(&repo)) else {
        return Ok(0);
    };
    let base_ledger = ledger_at(&repo, base)?;
    let snapshot = Snapshot::load(cx.layout)?;
    let mut updated = 0;
    // Asked once: a closed proposal's branch is deleted only while it is still there.
    let live = cx.remote.branches(BRANCH_PREFIX)?;
    let committed = crate::pipeline::Committed::read(cx.layout);
    for pr in proposal_pulls(cx, "all")? {
        let Some(head) = pr.head.as_ref().map(|h| h.name().to_owned()) else {
            continue;
        };
        if pr.state == "closed" {
            if !pr.merged && live.contains(&head) {
                // Closed without merging: nothing of it stays. A branch the server keeps (protected from
                // deletion) is only untidy: the other proposals are still kept current.
                match cx.remote.delete_branch(&head) {
                    Ok(()) => tracing::info!(
                        "{head}: its pull request #{} was closed without merging; branch deleted",
                        pr.number
                    ),
                    Err(e @ RemoteError::Refused { .. }) => tracing::warn!("{e}"),
                    Err(e) => return Err(e.into()),
                }
            }
            continue;
        }
        if !live.contains(&head) {
            tracing::warn!(
                "pull request #{} is open but its branch {head} is gone: left as it is",
                pr.number
            );
            continue;
        }
        cx.remote.fetch(&head)?;
        let Some(tip) =
            crate::state::git::resolve(&repo, &format!("refs/remotes/{}/{head}", cx.remote.name()))
        else {
            continue;
        };
        let id = head.trim_start_matches(BRANCH_PREFIX).to_owned();
        let (p, unreadable) = branch_proposal(&repo, tip, &id, &base_ledger)?;
        // Edited on its branch so that a run would refuse it, it is said before anyone approves it
        // (audit 135: a renamed field and a mistyped priority read as a sound proposal until merged).
        let problem = branch_problem(&p, unreadable, cx.config, &snapshot);
        if let Some(problem) = &problem {
            tracing::warn!(
                "pull request #{} ({head}): {problem}; merged as it is, a run does not carry it out: fix \
                 the file on its branch, or close the pull request",
                pr.number
            );
        }
        if p.file.is_none() && p.ledger_entry.is_none() {
            if let Some(problem) = &problem {
                // Its consequence cannot be computed from a file that does not read: said for the file
                // as it is, in place of the description of the file as it was.
                let body = warned(
                    problem,
                    "Its consequence is computed again once its file reads; merged as it is, a run refuses it \
                     whole.\n",
                );
                if pr.body != body {
                    cx.client.send(
                        Method::PATCH,
                        &format!("repos/{}/pulls/{}", cx.state_repo, pr.number),
                        Some(&json!({ "body": body })),
                        true,
                    )?;
                    updated += 1;
                }
            }
            continue;
        }
        // Who edited the branch by hand: the rebuilt commit credits them (audit 135: the PM's edit was
        // folded into one commit of CommiTea's, and the pull request still named only who asked).
        let editors = crate::state::git::other_authors(&repo, base, tip, &cx.sig)?;
        if !crate::state::git::is_ancestor(&repo, base, tip) {
            let credit: String = editors
                .iter()
                .map(|e| format!("Co-authored-by: {e}\n"))
                .collect();
            let message = if credit.is_empty() {
                format!("commitea: propose {id}\n")
            } else {
                format!("commitea: propose {id}\n\n{credit}")
            };
            let commit = crate::state::git::commit_onto(
                &repo,
                base,
                &p.edits(&base_ledger)?,
                &message,
                &cx.sig,
            )?;
            cx.remote
                .force_push(&commit.to_string(), &head, PROTECTED_PROPOSALS)?;
        }
        let c = consequence(
            cx.config,
            &snapshot,
            &base_ledger,
            &p,
            cx.now,
            cx.layout,
            &committed,
        );
        let title = p.title(&c);
        let mut text = body(&p, &c);
        if !editors.is_empty() {
            let names: Vec<String> = editors.iter().map(|e| e.name.clone()).collect();
            text = format!(
                "**Edited on its branch by:** {} (what is merged is the file as it is on this branch)\n\n{text}",
                md_text(&crate::prose::and_list(&names))
            );
        }
        let body = match &problem {
            Some(problem) => warned(problem, &text),
            None => text,
        };
        if pr.body != body || pr.title != title {
            cx.client.send(
                Method::PATCH,
                &format!("repos/{}/pulls/{}", cx.state_repo, pr.number),
                Some(&json!({ "title": title, "body": body })),
                true,
            )?;
            updated += 1;
        }
    }
    Ok(updated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pull_requests_title_fits_giteas_column() {
        let p = Proposal {
            id: "C-0001".into(),
            file: None,
            ledger_entry: None,
            replaces: false,
        };
        let mut c = Consequence::default();
        c.summary = "Public API v2 p80 +3 working days (May 13 2027 → May 18 2027); ".repeat(10);
        let title = p.title(&c);
        assert_eq!(title.chars().count(), crate::limits::TITLE_CHARS, "{title}");
        assert!(
            title.starts_with("C-0001: Public API v2") && title.ends_with('…'),
            "{title}"
        );
    }

    #[test]
    fn what_a_model_wrote_goes_through_a_pull_request_whatever_its_ops() {
        let op: crate::ops::Op = serde_json::from_value(serde_json::json!(
            {"op": "set_priority", "issue": "acme/api#3", "priority": "p/0"}
        ))
        .unwrap();
        let proposal = |model: bool| Proposal {
            id: "C-0001".into(),
            file: Some(OpFile {
                id: "C-0001".into(),
                source: Source::ApplyChanges,
                created_at: "2026-12-05T09:00:00Z".into(),
                by: None,
                model,
                approved: false,
                destructive: false,
                directive: None,
                seen: Default::default(),
                ops: vec![op.clone()],
                summary: String::new(),
                consequence: Vec::new(),
            }),
            ledger_entry: None,
            replaces: false,
        };
        assert!(proposal(false).additive());
        // A model can be steered by the issue text it reads: its additive ops are reviewed too, and
        // the approver is told why.
        assert!(!proposal(true).additive());
        let said = |model: bool| body(&proposal(model), &Consequence::default());
        assert!(
            said(true).contains("**Written by a model**"),
            "{}",
            said(true)
        );
        assert!(!said(false).contains("model"), "{}", said(false));
        // A new issue's body is quoted, as it will be filed, cut after a few lines.
        let mut filed = proposal(true);
        let text: String = (1..=12).map(|n| format!("line {n} **bold**\n")).collect();
        filed.file.as_mut().unwrap().ops = vec![
            serde_json::from_value(serde_json::json!(
                {"op": "create_issue", "repo": "acme/api", "title": "New", "body": text}
            ))
            .unwrap(),
        ];
        let shown = body(&filed, &Consequence::default());
        assert!(shown.contains("  > line 1 \\*\\*bold\\*\\*\n"), "{shown}");
        assert!(shown.contains("  > line 8 "), "{shown}");
        assert!(!shown.contains("line 9 "), "{shown}");
        assert!(
            shown.contains("… and 4 more lines (in the op file)"),
            "{shown}"
        );
        // P(on time) in the table is rounded as every other page rounds it (audit 110: "0% → 0%" beside
        // a title's "<1%").
        let side = |p: f64| crate::consequence::MilestoneSide {
            p50: "2027-03-01".into(),
            p80: "2027-03-10".into(),
            probability_on_time: Some(p),
            due: None,
            slack_working_days: None,
        };
        let mut c = Consequence::default();
        c.milestones = vec![crate::consequence::MilestoneChange {
            milestone: 1,
            title: "Billing".into(),
            repo: "acme/api".into(),
            before: Some(side(0.003)),
            after: Some(side(0.996)),
            moved_working_days: 0,
            closed: false,
            emptied: false,
        }];
        let shown = body(&proposal(false), &c);
        assert!(shown.contains("| <1% → >99% |"), "{shown}");
    }

    #[test]
    fn text_in_a_pull_request_body_is_literal_markdown_on_one_line() {
        let hostile = "Fix it ![](https://attacker.example/pixel) **Approved: no change** <img src=x>\n- [x] ok `c` |a|";
        let shown = md_text(hostile);
        assert!(!shown.contains('\n'), "{shown}");
        // Rendered, it reads as the text it was (pulldown-cmark follows CommonMark, as Gitea's goldmark does).
        let mut html = String::new();
        let all =
            pulldown_cmark::Options::ENABLE_TABLES | pulldown_cmark::Options::ENABLE_STRIKETHROUGH;
        pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new_ext(&shown, all));
        for tag in ["<img", "<strong>", "<a ", "<code>", "<li>", "<table"] {
            assert!(!html.contains(tag), "{tag} in {html}");
        }
        assert!(
            html.contains("![](https://attacker.example/pixel)"),
            "{html}"
        );
        // Plain words, dates and keys stay readable.
        assert_eq!(
            md_text("Web beta p80 Nov 15 2027, 3 issues moved"),
            "Web beta p80 Nov 15 2027, 3 issues moved"
        );
    }
}
