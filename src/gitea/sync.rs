//! Full sync: reads every label, milestone and issue (with its comments, timeline, dependencies, tracked
//! times and linked pull requests) of a list of repositories and maps Gitea's JSON back to a [`Snapshot`],
//! exactly as `docs/state-format.md` describes the files.
//!
//! Pull requests are kept out of the issues. A pull request is linked to an issue by a `pull_ref` event in the
//! issue's timeline (its `ref_issue`, whose `pull_request` part carries the merged state; `/pulls/{n}` is read
//! only when it does not) and by a closing keyword (`close[sd]?`, `fix(e[sd])?`, `resolve[sd]?` followed by
//! `#N` or `owner/repo#N`) in the body of an open pull request.

mod incremental;
mod keywords;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use super::client::{Client, ClientError};
use super::wire::{GIssue, GLabel, GMilestone, GPull, GRepo, GTime, GTimeline, login};
use crate::domain::{
    Comment, Issue, IssueKey, Label, LinkedPull, Milestone, OpenState, RepoName, TimelineEvent,
    TrackedTime,
};
use crate::state::Snapshot;
use chrono::{DateTime, Utc};

pub use incremental::{SyncOptions, SyncOutcome, sync};
pub use keywords::closing_references;

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// A request failed (the message names the request, the repository and what to do).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Gitea's answer lacks a field CommiTea needs.
    #[error(
        "{what} of {repo}: Gitea's answer has no {field}; the server may be too old or not a Gitea (CommiTea needs 1.20 or newer)"
    )]
    Missing {
        /// The repository.
        repo: RepoName,
        /// The record, e.g. `issue #4`.
        what: String,
        /// The missing field.
        field: &'static str,
    },
    /// A full read found most of the issues the previous snapshot holds gone; nothing is committed.
    #[error(
        "{repo}: a full read of its issues found {found} of the {held} the last snapshot holds; more than sync.max_vanished_share ({max_share}) of them gone at once is not how issues leave Gitea, but how a server answers when the token lost access to the issues or a proxy answers for it. Nothing was committed, and the next run tries again; if the issues are really gone, run once with COMMITEA_SYNC_MAX_VANISHED_SHARE=1"
    )]
    Vanished {
        /// The repository.
        repo: RepoName,
        /// Its issues in the previous snapshot.
        held: usize,
        /// How many of them the full read found.
        found: usize,
        /// The setting it went past.
        max_share: f64,
    },
    /// The repository's Issues unit is switched off: Gitea answers its issue list with a 404.
    #[error(
        "{repo} has its issues switched off on the server (its settings → Issues): switch them on, or take \
         it out of repositories in commitea.yaml"
    )]
    IssuesOff {
        /// The repository.
        repo: RepoName,
    },
    /// A `state` other than `open` or `closed`.
    #[error("{what} of {repo}: unknown state {state:?} (expected open or closed)")]
    State {
        /// The repository.
        repo: RepoName,
        /// The record.
        what: String,
        /// The state received.
        state: String,
    },
}

// ---- mapping ----

fn need<T>(v: Option<T>, repo: &RepoName, what: &str, field: &'static str) -> Result<T, SyncError> {
    v.ok_or_else(|| SyncError::Missing {
        repo: repo.clone(),
        what: what.to_owned(),
        field,
    })
}

fn state(s: &str, repo: &RepoName, what: &str) -> Result<OpenState, SyncError> {
    match s {
        "open" => Ok(OpenState::Open),
        "closed" => Ok(OpenState::Closed),
        other => Err(SyncError::State {
            repo: repo.clone(),
            what: what.to_owned(),
            state: other.to_owned(),
        }),
    }
}

/// The key of an issue or pull request in Gitea's issue shape (its own repository, else `fallback`).
fn key_of(i: &GIssue, fallback: &RepoName) -> IssueKey {
    let repo = i
        .repository
        .as_ref()
        .and_then(|r| r.full_name.parse::<RepoName>().ok())
        .unwrap_or_else(|| fallback.clone());
    repo.issue(i.number)
}

fn label(l: GLabel) -> Label {
    Label {
        id: l.id,
        name: l.name,
        color: l.color.trim_start_matches('#').to_owned(),
        description: l.description,
    }
}

fn milestone(m: GMilestone, repo: &RepoName) -> Result<Milestone, SyncError> {
    let what = format!("milestone {}", m.id);
    Ok(Milestone {
        id: m.id,
        state: state(&m.state, repo, &what)?,
        created_at: need(m.created_at, repo, &what, "created_at")?,
        title: m.title,
        description: m.description,
        due_on: m.due_on,
        closed_at: m.closed_at,
    })
}

fn event(t: GTimeline, repo: &RepoName, what: &str) -> Result<TimelineEvent, SyncError> {
    let created_at = need(t.created_at, repo, what, "timeline created_at")?;
    let mut e = TimelineEvent::new(
        t.id,
        crate::domain::EventKind::from(t.kind.as_str()),
        created_at,
        &login(t.user.as_ref()),
    );
    match t.kind.as_str() {
        "label" => {
            e.label = t.label.map(|l| l.name);
            // Gitea's quirk: the body is "1" when the label was added and "" when it was removed.
            e.removed = t.body.is_empty();
        }
        "milestone" => {
            e.milestone = t.milestone.map(|m| m.id).filter(|id| *id != 0);
            e.old_milestone = t.old_milestone.map(|m| m.id).filter(|id| *id != 0);
        }
        "assignees" => {
            e.assignee = t.assignee.map(|u| u.login);
            e.removed = t.removed_assignee;
        }
        "pull_ref" => e.pull = t.ref_issue.as_ref().map(|i| key_of(i, repo)),
        "add_dependency" | "remove_dependency" => {
            e.dependency = t.dependent_issue.as_ref().map(|i| key_of(i, repo));
        }
        "change_title" => {
            e.old_title = Some(t.old_title);
            e.new_title = Some(t.new_title);
        }
        _ => {}
    }
    Ok(e)
}

/// A pull request's linked-pull record, without the `repository` (set per issue).
#[derive(Debug, Clone)]
struct PullInfo {
    title: String,
    state: OpenState,
    merged: bool,
    created_at: DateTime<Utc>,
    closed_at: Option<DateTime<Utc>>,
}

impl PullInfo {
    fn from_pull(p: &GPull, repo: &RepoName) -> Result<Self, SyncError> {
        let what = format!("pull request #{}", p.number);
        Ok(Self {
            title: p.title.clone(),
            state: state(&p.state, repo, &what)?,
            merged: p.merged,
            created_at: need(p.created_at, repo, &what, "created_at")?,
            closed_at: p.closed_at,
        })
    }

    /// From the issue shape, when it carries the pull request part (`None` otherwise).
    fn from_issue_shape(i: &GIssue, repo: &RepoName) -> Result<Option<Self>, SyncError> {
        let Some(meta) = &i.pull_request else {
            return Ok(None);
        };
        let what = format!("pull request #{}", i.number);
        Ok(Some(Self {
            title: i.title.clone(),
            state: state(&i.state, repo, &what)?,
            merged: meta.merged,
            created_at: need(i.created_at, repo, &what, "created_at")?,
            closed_at: i.closed_at,
        }))
    }

    fn linked(&self, pull: &IssueKey, issue_repo: &RepoName) -> LinkedPull {
        LinkedPull {
            number: pull.number,
            repository: (pull.repo != *issue_repo).then(|| pull.repo.clone()),
            title: self.title.clone(),
            state: self.state,
            merged: self.merged,
            created_at: self.created_at,
            closed_at: self.closed_at,
        }
    }
}

/// What one run learns across repositories.
#[derive(Default)]
struct Run {
    pulls: HashMap<IssueKey, Option<PullInfo>>,
    deps_disabled: BTreeSet<RepoName>,
    /// Repositories whose tracked time cannot be read (time tracking off, or no token).
    times_off: BTreeSet<RepoName>,
    /// Per repository, whether `/times` lists everyone's entries to this token (asked once, when needed).
    every_time: HashMap<RepoName, bool>,
    /// Repositories whose `/times` was found to list only the token user's own entries (said once).
    own_times_only: BTreeSet<RepoName>,
    /// Per owner, the labels its organisation defines (none for a user, or when the token may not read
    /// them), asked once.
    org_labels: HashMap<String, Vec<Label>>,
    /// The configured repositories: a blocker elsewhere keeps its state in the issue that waits on it.
    pub(super) configured: BTreeSet<RepoName>,
    /// Configured repositories the server now names otherwise (renamed or transferred: Gitea redirects the
    /// old name), by the server's name.
    renamed: BTreeMap<RepoName, RepoName>,
    /// Configured repositories the server answers as another configured one (the old name kept beside
    /// the new after a rename), with that one: read once, as the new one's.
    doubled: BTreeMap<RepoName, RepoName>,
}

impl Run {
    /// Notes that the server names `repo` `full_name` (from the repository, or an issue it lists), saying
    /// once when that is another name: the issues' references then name the new one, and are read back as
    /// `repo`'s until the config names it.
    pub(super) fn note_name(&mut self, repo: &RepoName, full_name: &str) {
        let Ok(now) = full_name.parse::<RepoName>() else {
            return;
        };
        if now == *repo {
            return;
        }
        let same = |a: &RepoName, b: &RepoName| a.to_string().eq_ignore_ascii_case(&b.to_string());
        // Both names configured (audit 170: the new one added, the old kept): one repository, read
        // once as the new name's, or every issue of it was planned twice. Asked first: the new name
        // spelt in another case than the server's is in `renamed` already (audit 173).
        if !same(&now, repo)
            && let Some(also) = self.configured.iter().find(|c| same(c, &now))
        {
            if !self.doubled.contains_key(repo) {
                tracing::warn!(
                    "{repo} is {also} on the server now (renamed or transferred), and commitea.yaml names \
                     both: its issues are read once, as {also}'s; take {repo} out of `repositories`"
                );
                self.doubled.insert(repo.clone(), also.clone());
            }
            return;
        }
        if self.renamed.contains_key(&now) {
            return;
        }
        // Spelt in another case: the same repository (Gitea finds names by their lower case), whose
        // references the server spells its way: read back as the config spells it, or every blocker in
        // it was "outside" the configured repositories and left out of the forecast (audit 154).
        if same(&now, repo) {
            self.renamed.insert(now, repo.clone());
            return;
        }
        tracing::warn!(
            "{repo} is {now} on the server now (renamed or transferred; Gitea answers the old name through a \
             redirect): put {now} in `repositories` in commitea.yaml. Until then its issues are kept as {repo}'s, \
             and references to {now} are read as {repo}"
        );
        self.renamed.insert(now, repo.clone());
    }

    /// The name the server gives the configured `repo` now, where another (not only in case).
    pub(super) fn renamed_to(&self, repo: &RepoName) -> Option<RepoName> {
        self.renamed
            .iter()
            .find(|(now, was)| {
                *was == repo && !now.to_string().eq_ignore_ascii_case(&repo.to_string())
            })
            .map(|(now, _)| now.clone())
            .or_else(|| self.doubled.get(repo).cloned())
    }

    /// The former names of the configured `repo` ([`RepoMeta::formerly`](crate::state::RepoMeta)): those
    /// the last snapshot kept, a configured one found renamed to it then, and one answered as it now;
    /// less any configured name read as itself (Gitea drops a redirect once a repository takes the name).
    pub(super) fn formerly(
        &self,
        repo: &RepoName,
        previous: &[crate::state::RepoMeta],
    ) -> Vec<RepoName> {
        let same = |a: &RepoName, b: &RepoName| a.to_string().eq_ignore_ascii_case(&b.to_string());
        let mut names: Vec<RepoName> = previous
            .iter()
            .filter(|m| same(&m.name, repo))
            .flat_map(|m| m.formerly.iter().cloned())
            .chain(
                previous
                    .iter()
                    .filter(|m| m.renamed_to.as_ref().is_some_and(|n| same(n, repo)))
                    .map(|m| m.name.clone()),
            )
            .chain(
                self.doubled
                    .iter()
                    .filter(|(_, now)| same(now, repo))
                    .map(|(old, _)| old.clone()),
            )
            .filter(|n| !same(n, repo))
            .filter(|n| {
                !self.configured.iter().any(|c| {
                    same(c, n) && !self.doubled.contains_key(c) && self.renamed_to(c).is_none()
                })
            })
            .collect();
        names.sort();
        names.dedup_by(|a, b| same(a, b));
        names
    }

    /// Leaves out of `acc` what was read under a configured name the server answers as another configured
    /// one ([`Run::doubled`]): those issues are the other's.
    pub(super) fn drop_doubled(&self, acc: &mut Acc) {
        for old in self.doubled.keys() {
            acc.labels.remove(old);
            acc.milestones.remove(old);
            acc.issues.retain(|k, _| &k.repo != old);
            acc.keyword_links.retain(|k, _| &k.repo != old);
        }
    }

    /// Notes the repositories `client` was redirected from to another name: renamed or transferred, said
    /// even when nothing in them changed (audit 168: only an issue's changed reference told, so a quiet
    /// renamed repository went unsaid).
    pub(super) fn note_redirects(&mut self, client: &Client, repos: &[RepoName]) {
        for (asked, answered) in client.redirected_repositories() {
            if let Some(repo) = repos
                .iter()
                .find(|r| r.to_string().eq_ignore_ascii_case(&asked))
            {
                self.note_name(repo, &answered);
            }
        }
    }

    /// Whether `/times` of `repo` lists everyone's tracked time to this token ([`GRepo::lists_every_time`]),
    /// from the repository read by a full sync, else asked once.
    fn lists_every_time(&mut self, client: &Client, repo: &RepoName) -> Result<bool, SyncError> {
        if let Some(every) = self.every_time.get(repo) {
            return Ok(*every);
        }
        let info: GRepo = client.get_json(&format!("repos/{repo}"), &[])?;
        let every = info.lists_every_time();
        self.note_every_time(repo, every);
        Ok(every)
    }

    /// Records whether `/times` of `repo` lists everyone's entries, saying so when it does not.
    fn note_every_time(&mut self, repo: &RepoName, every: bool) {
        if !every && !self.every_time.contains_key(repo) {
            tracing::warn!(
                "the token's user may not write the issues of {repo}, and Gitea then lists only that user's own tracked \
                 time: where a time was deleted, the times the timeline shows are kept (the deleted one with them) \
                 instead of a list missing everyone else's; give the token's user write access to the issues"
            );
        }
        self.every_time.insert(repo.clone(), every);
    }

    /// The pull request `key`, from the cache, the given issue shape, or `/pulls/{n}`; `None` if it is not one.
    fn pull(
        &mut self,
        client: &Client,
        key: &IssueKey,
        shape: Option<&GIssue>,
    ) -> Result<Option<PullInfo>, SyncError> {
        if let Some(p) = self.pulls.get(key) {
            return Ok(p.clone());
        }
        let from_shape = match shape {
            Some(i) => PullInfo::from_issue_shape(i, &key.repo)?,
            None => None,
        };
        let info = match from_shape {
            Some(p) => Some(p),
            None => {
                let path = format!("repos/{}/pulls/{}", key.repo, key.number);
                match client.get_json::<GPull>(&path, &[]) {
                    Ok(p) => Some(PullInfo::from_pull(&p, &key.repo)?),
                    Err(ClientError::NotFound { .. }) => {
                        tracing::warn!("{key} is referenced as a pull request but is not one");
                        None
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        };
        self.pulls.insert(key.clone(), info.clone());
        Ok(info)
    }
}

/// What a sync gathers before it becomes a [`Snapshot`].
#[derive(Default)]
pub(super) struct Acc {
    labels: BTreeMap<RepoName, Vec<Label>>,
    milestones: BTreeMap<RepoName, Vec<Milestone>>,
    issues: BTreeMap<IssueKey, Issue>,
    /// Issue key → pull requests that close it by keyword.
    keyword_links: BTreeMap<IssueKey, BTreeSet<IssueKey>>,
}

/// The labels an issue of `repo` can have, by id: the repository's, then those its organisation defines
/// under another name. Gitea lists only the repository's at `/labels`, but an issue may carry the
/// organisation's (`p/1` defined once for every repository), and a write must use their ids rather
/// than make a repository label of the same name.
fn read_labels(client: &Client, run: &mut Run, repo: &RepoName) -> Result<Vec<Label>, SyncError> {
    let mut ls: Vec<Label> = client
        .get_paged::<GLabel>(&format!("repos/{repo}/labels"), &[])?
        .into_iter()
        .map(label)
        .collect();
    let owner = repo.owner.clone();
    if !run.org_labels.contains_key(&owner) {
        let org = match client.get_paged::<GLabel>(&format!("orgs/{owner}/labels"), &[]) {
            Ok(org) => org.into_iter().map(label).collect(),
            // A user owns the repository: no organisation, no labels of its own.
            Err(ClientError::NotFound { .. }) => Vec::new(),
            Err(ClientError::Forbidden { .. }) => {
                tracing::warn!(
                    "the token may not read the labels of the organisation {owner} (scope read:organization); \
                     an organisation's p/* or est/* labels on its issues are read, but a write makes a \
                     repository label of the same name"
                );
                Vec::new()
            }
            Err(e) => return Err(e.into()),
        };
        run.org_labels.insert(owner.clone(), org);
    }
    let own: BTreeSet<String> = ls.iter().map(|l| l.name.clone()).collect();
    ls.extend(
        run.org_labels
            .get(&owner)
            .into_iter()
            .flatten()
            .filter(|l| !own.contains(&l.name))
            .cloned(),
    );
    ls.sort_by_key(|l| l.id);
    ls.dedup_by_key(|l| l.id);
    Ok(ls)
}

/// The milestones of `repo` (open and closed), by id.
fn read_milestones(client: &Client, repo: &RepoName) -> Result<Vec<Milestone>, SyncError> {
    let mut ms = client
        .get_paged::<GMilestone>(
            &format!("repos/{repo}/milestones"),
            &[("state", "all".into())],
        )?
        .into_iter()
        .map(|m| milestone(m, repo))
        .collect::<Result<Vec<_>, _>>()?;
    ms.sort_by_key(|m| m.id);
    ms.dedup_by_key(|m| m.id);
    Ok(ms)
}

/// What of an open pull request tells which issues it closes by keyword: its title, description and web
/// address.
pub(crate) struct PullText {
    /// The title.
    pub title: String,
    /// The description.
    pub body: String,
    /// `ROOT/owner/repo/pulls/N`.
    pub html_url: String,
}

/// Records the keyword links of the open pull request `pull_key`.
fn note_keyword_links(acc: &mut Acc, pull_key: &IssueKey, text: &PullText) -> Vec<IssueKey> {
    let refs = closing_references(
        &text.title,
        &text.body,
        &pull_key.repo,
        keywords::web_root(&text.html_url, pull_key),
    );
    for target in &refs {
        acc.keyword_links
            .entry(target.clone())
            .or_default()
            .insert(pull_key.clone());
    }
    refs
}

/// The entries the timeline shows (`shown`) that `/times` (`listed`) withheld: Gitea lists only the
/// token user's own to a user who may not write the Issues unit, which `permissions.push` (the Code
/// unit's) does not tell. Withheld when `/times` names one user at most while the timeline shows others'
/// entries of more seconds than the deletions (`deletions`: who deleted, and how many seconds, `None` where
/// the entry does not say) could have removed — leaving out the listed user's own, since one who may not
/// write the issues deletes only their own time; empty otherwise, and then `/times` is taken as it is.
fn others_withheld(
    listed: &[TrackedTime],
    shown: &[TrackedTime],
    deletions: &[(String, Option<u64>)],
) -> Vec<TrackedTime> {
    let users: BTreeSet<&str> = listed.iter().map(|t| t.user.as_str()).collect();
    if users.len() > 1 {
        return Vec::new();
    }
    let deleted: Option<u64> = deletions
        .iter()
        .filter(|(by, _)| !users.contains(by.as_str()))
        .try_fold(0u64, |sum, (_, n)| n.map(|n| sum.saturating_add(n)));
    let others: Vec<TrackedTime> = shown
        .iter()
        .filter(|t| !users.contains(t.user.as_str()) && !listed.iter().any(|l| l.id == t.id))
        .cloned()
        .collect();
    let seconds: u64 = others.iter().map(|t| t.time).sum();
    if deleted.is_some_and(|d| seconds > d) {
        others
    } else {
        Vec::new()
    }
}

/// At most how many seconds a `delete_time_manual` entry's body says were deleted; `None` where it does not
/// say. Gitea stores `|N` since 1.21 and its API writes it in words: `util.SecToHours` in Gitea (`14 hours 33
/// minutes`: whole hours and minutes), `util.SecToTime` in Forgejo (`2 weeks 4 days`: the two largest
/// units), both dropping what is below the smaller unit shown, so the unit below the largest is added
/// short of one second (a minute at the least, unless seconds are written). Entries older than 1.21 wrote
/// `- 1h 2min 3s` or `- 1d 2h 3m 4s` in full.
fn deleted_seconds(body: &str) -> Option<u64> {
    const UNITS: [(&str, u64); 7] = [
        ("year", 365 * 86_400),
        ("month", 365 * 86_400 / 12),
        ("week", 7 * 86_400),
        ("day", 86_400),
        ("hour", 3_600),
        ("minute", 60),
        ("second", 1),
    ];
    const SHORT: [(&str, u64); 5] = [
        ("d", 86_400),
        ("h", 3_600),
        ("min", 60),
        ("m", 60),
        ("s", 1),
    ];
    let text = body.trim();
    let text = text.strip_prefix('-').unwrap_or(text).trim();
    if let Some(n) = text.strip_prefix('|') {
        return n.trim().parse().ok();
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    let (mut total, mut largest, mut seconds_said, mut in_words) =
        (0u64, None::<usize>, false, false);
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        let digits = word.chars().take_while(char::is_ascii_digit).count();
        let n: u64 = word[..digits].parse().ok()?;
        let (unit, next) = if digits < word.len() {
            (&word[digits..], i + 1)
        } else {
            (*words.get(i + 1)?, i + 2)
        };
        if let Some(k) = UNITS
            .iter()
            .position(|(name, _)| unit == *name || unit.strip_suffix('s') == Some(name))
        {
            in_words = true;
            largest = Some(largest.map_or(k, |l: usize| l.min(k)));
            seconds_said |= k == UNITS.len() - 1;
            total = total.saturating_add(n.saturating_mul(UNITS[k].1));
        } else {
            let (_, size) = SHORT.iter().find(|(name, _)| unit == *name)?;
            total = total.saturating_add(n.saturating_mul(*size));
        }
        i = next;
    }
    let largest = largest.filter(|_| in_words && !seconds_said);
    let below = largest.map_or(1, |k| UNITS.get(k + 1).map_or(1, |u| u.1).max(60));
    (i > 0).then(|| total.saturating_add(below - 1))
}

/// Reads everything of one repository into `acc` (keyword links are applied later, by [`finish_links`]).
fn full_repo(
    client: &Client,
    run: &mut Run,
    repo: &RepoName,
    acc: &mut Acc,
) -> Result<(), SyncError> {
    let info: GRepo = client.get_json(&format!("repos/{repo}"), &[])?;
    run.note_name(repo, &info.full_name);
    // Gitea answers the issue list of such a repository with a 404, which read as the repository gone.
    if info.has_issues == Some(false) {
        return Err(SyncError::IssuesOff { repo: repo.clone() });
    }
    if info.archived == Some(true) {
        tracing::warn!(
            "{repo} is archived on Gitea (read-only): its open issues still count in the plan and nothing \
             can be written there; take it out of repositories in commitea.yaml, or unarchive it"
        );
    }
    let serves_pulls = info.serves_pulls();
    run.note_every_time(repo, info.lists_every_time());
    let tracker = info.internal_tracker.unwrap_or_default();
    if tracker.enable_time_tracker == Some(false) {
        run.times_off.insert(repo.clone());
    }
    if tracker.enable_issue_dependencies == Some(false) {
        tracing::warn!(
            "issue dependencies are disabled on {repo} (repository settings → Issues → enable dependencies); its issues are synced without dependencies"
        );
        run.deps_disabled.insert(repo.clone());
    }

    acc.labels
        .insert(repo.clone(), read_labels(client, run, repo)?);
    acc.milestones
        .insert(repo.clone(), read_milestones(client, repo)?);

    // Where Gitea serves no pull request list, no pull request can close an issue by keyword; a 404
    // all the same (a token that may not read pull requests) means the same.
    let open_pulls: Vec<GPull> = if serves_pulls {
        match client.get_paged(&format!("repos/{repo}/pulls"), &[("state", "open".into())]) {
            Ok(p) => p,
            Err(ClientError::NotFound { .. }) => {
                tracing::info!(
                    "{repo} serves no pull request list to this token; open pull requests that close an issue by keyword are not seen"
                );
                Vec::new()
            }
            Err(e) => return Err(e.into()),
        }
    } else {
        Vec::new()
    };
    for p in &open_pulls {
        let pull_key = repo.issue(p.number);
        let text = PullText {
            title: p.title.clone(),
            body: p.body.clone(),
            html_url: p.html_url.clone(),
        };
        if !note_keyword_links(acc, &pull_key, &text).is_empty() {
            run.pulls
                .insert(pull_key.clone(), Some(PullInfo::from_pull(p, repo)?));
        }
    }

    let listed: Vec<GIssue> = client.get_listing(
        &format!("repos/{repo}/issues"),
        &[("state", "all".into()), ("type", "issues".into())],
    )?;
    let mut seen = BTreeSet::new();
    let todo: Vec<GIssue> = listed
        .into_iter()
        .filter(|gi| gi.pull_request.is_none() && seen.insert(gi.number))
        .collect();
    for issue in read_issues(client, run, repo, todo)?.into_iter().flatten() {
        acc.issues.insert(repo.issue(issue.number), issue);
    }
    Ok(())
}

/// Reads `todo`'s issues of `repo` in parallel: as many at once as the client's throttle allows (it grows
/// while the server answers well). The first failure stops the rest. An issue deleted meanwhile is `None`.
fn read_issues(
    client: &Client,
    run: &mut Run,
    repo: &RepoName,
    todo: Vec<GIssue>,
) -> Result<Vec<Option<Issue>>, SyncError> {
    let shared = Mutex::new(std::mem::take(run));
    let total = todo.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let read = |gi: GIssue| {
        let issue = sync_issue(client, &shared, repo, gi);
        progress(
            repo,
            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            total,
        );
        issue
    };
    let results = in_parallel(client, todo, read);
    *run = shared
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    results
}

/// `f` of each of `items`, in their order, as many at once as the client allows (`max_parallel` threads;
/// one by one where no pool can be made); the first failure stops the rest.
pub(crate) fn in_parallel<T: Send, R: Send, E: Send>(
    client: &Client,
    items: Vec<T>,
    f: impl Fn(T) -> Result<R, E> + Sync + Send,
) -> Result<Vec<R>, E> {
    let threads = client.options().max_parallel.max(1);
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => {
            use rayon::prelude::*;
            pool.install(|| items.into_par_iter().map(f).collect())
        }
        Err(_) => items.into_iter().map(f).collect(),
    }
}

/// Reports progress through a long read: on a terminal a person watches a line that updates in place,
/// elsewhere (a CI job's log too) a plain log line at every tenth.
pub(crate) fn progress(repo: &RepoName, done: usize, total: usize) {
    use std::io::Write;
    if total < 20 {
        return;
    }
    if crate::terminal::watched() {
        // The readers run in parallel and report out of order: the line only goes forward, and is drawn
        // at most about 200 times (audit 196: it went back 544 times in one sync, 656 KB of updates).
        static SHOWN: Mutex<Option<(String, usize)>> = Mutex::new(None);
        let step = (total / 200).max(1);
        if done != total && !done.is_multiple_of(step) {
            return;
        }
        let mut shown = SHOWN
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let name = repo.to_string();
        if shown
            .as_ref()
            .is_some_and(|(r, n)| *r == name && *n >= done)
        {
            return;
        }
        *shown = Some((name, done));
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\rsync {repo}: {done}/{total} issues");
        if done == total {
            let _ = writeln!(e);
        }
    } else if done * 10 / total != (done - 1) * 10 / total {
        tracing::info!("sync {repo}: {done}/{total} issues");
    }
}

fn lock(run: &Mutex<Run>) -> std::sync::MutexGuard<'_, Run> {
    run.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The pull request a linked-pull entry of an issue of `own` names.
fn pull_key(p: &LinkedPull, own: &RepoName) -> IssueKey {
    p.repository.as_ref().unwrap_or(own).issue(p.number)
}

/// Reads the server's new names of renamed repositories back as the configured ones, in every reference an
/// issue holds (its dependencies, its timeline, its linked pull requests); before [`finish_links`], whose
/// dedup then folds a pull request linked under both names into one.
fn rename_back(run: &Run, acc: &mut Acc) {
    if run.renamed.is_empty() {
        return;
    }
    let back = |key: &mut IssueKey| {
        if let Some(repo) = run.renamed.get(&key.repo) {
            key.repo = repo.clone();
        }
    };
    for (key, issue) in &mut acc.issues {
        issue.depends_on.iter_mut().for_each(back);
        // A blocker under a configured repository's new name is that repository's, not outside it.
        issue
            .outside_blockers
            .retain(|b| !run.renamed.contains_key(&b.issue.repo));
        for e in &mut issue.timeline {
            e.pull.iter_mut().for_each(back);
            e.dependency.iter_mut().for_each(back);
        }
        for p in &mut issue.pull_requests {
            if let Some(repo) = p.repository.as_ref().and_then(|r| run.renamed.get(r)) {
                p.repository = (*repo != key.repo).then(|| repo.clone());
            }
        }
    }
}

/// Adds the keyword links (where the issue has no entry for that pull request yet), then puts every issue's
/// pull requests in order, without duplicates (the first entry of a pull request wins).
fn finish_links(run: &Run, acc: &mut Acc) {
    for (target, pulls) in &acc.keyword_links {
        let Some(issue) = acc.issues.get_mut(target) else {
            continue;
        };
        for pull in pulls {
            if let Some(Some(info)) = run.pulls.get(pull) {
                issue.pull_requests.push(info.linked(pull, &target.repo));
            }
        }
    }
    for (key, issue) in &mut acc.issues {
        let own = &key.repo;
        issue.pull_requests.sort_by_key(|p| pull_key(p, own));
        issue
            .pull_requests
            .dedup_by(|a, b| a.number == b.number && a.repository == b.repository);
    }
}

/// Reads everything CommiTea keeps about `repos` in full and returns it as a snapshot taken at `now`
/// (an incremental [`sync`] with no previous snapshot).
pub fn full_sync(
    client: &Client,
    repos: &[RepoName],
    now: DateTime<Utc>,
) -> Result<Snapshot, SyncError> {
    let options = SyncOptions {
        force_full: true,
        ..SyncOptions::default()
    };
    sync(client, repos, None, now, &options).map(|o| o.snapshot)
}

/// Timeline types that record tracked time; their entries are in `tracked_times`, read from `/times`.
const TIME_EVENTS: [&str; 5] = [
    "start_tracking",
    "stop_tracking",
    "add_time_manual",
    "cancel_tracking",
    "delete_time_manual",
];

/// Timeline types that record a dependency change (Gitea writes one in each of the two issues).
const DEPENDENCY_EVENTS: [&str; 2] = ["add_dependency", "remove_dependency"];

/// Timeline types whose entry carries the tracked time it added (`models/issues/tracked_time.go` `AddTime`,
/// `stopwatch.go` `FinishIssueStopwatch`: the comment's `TimeID`).
const TIME_ADDED: [&str; 2] = ["add_time_manual", "stop_tracking"];

/// One issue with its comments, timeline, dependencies, tracked times and `pull_ref`-linked pull requests.
///
/// Whether the issue at `base` (`repos/o/r/issues/N`) is gone, asked after a read of one of its parts
/// failed: an issue deleted while the sync reads the repository is left out, said in the log.
fn deleted(client: &Client, repo: &RepoName, base: &str) -> bool {
    let gone = matches!(
        client.get_json::<GIssue>(base, &[]),
        Err(ClientError::NotFound { .. })
    );
    if gone {
        tracing::info!(
            "{repo}#{} was deleted while the sync read it; left out",
            base.rsplit('/').next().unwrap_or_default()
        );
    }
    gone
}

/// The timeline carries nearly everything: comments are its `comment` entries, every tracked time is the
/// `tracked_time` of the entry that added it, and Gitea writes a dependency event for every dependency
/// change (`models/issues/dependency.go`). So an issue costs its timeline (read until an empty page),
/// plus `/dependencies` only when the timeline shows a dependency event — the events are written in both
/// issues and do not say which way the dependency points — and `/times` only when a time was deleted
/// (the deletion does not say which entry it removed) or an entry lacks its time.
fn sync_issue(
    client: &Client,
    run: &Mutex<Run>,
    repo: &RepoName,
    gi: GIssue,
) -> Result<Option<Issue>, SyncError> {
    let n = gi.number;
    let what = format!("issue #{n}");
    let base = format!("repos/{repo}/issues/{n}");

    let raw: Vec<GTimeline> = match client.get_until_empty(&format!("{base}/timeline"), &[]) {
        Ok(raw) => raw,
        // Gitea answers 500, not 404, for the timeline of an issue that no longer exists
        // (routers/api/v1/repo/issue_comment.go), Forgejo 404: ask for the issue itself to tell a deleted
        // issue from a failing server.
        Err(e)
            if crate::gitea::client::last_failure_is_500(&e)
                || matches!(e, ClientError::NotFound { .. }) =>
        {
            return if deleted(client, repo, &base) {
                Ok(None)
            } else {
                Err(e.into())
            };
        }
        Err(e) => return Err(e.into()),
    };
    let mut comments = Vec::new();
    let mut timeline = Vec::new();
    let mut pull_requests = Vec::new();
    let mut seen_events = BTreeSet::new();
    let mut has_dependency_events = false;
    // The tracked times the timeline shows, and whether they can be trusted to be complete.
    let mut shown: Vec<TrackedTime> = Vec::new();
    let mut complete = true;
    // The deletions the timeline shows: who deleted, and at most how many seconds, where it says.
    let mut deletions: Vec<(String, Option<u64>)> = Vec::new();
    for t in raw {
        if !seen_events.insert(t.id) {
            continue;
        }
        if t.kind == "comment" {
            let created_at = need(t.created_at, repo, &what, "comment created_at")?;
            comments.push(Comment {
                id: t.id,
                user: login(t.user.as_ref()),
                created_at,
                updated_at: t.updated_at.unwrap_or(created_at),
                body: t.body,
            });
            continue;
        }
        if TIME_EVENTS.contains(&t.kind.as_str()) {
            let added = TIME_ADDED.contains(&t.kind.as_str());
            match t.tracked_time {
                Some(tt) if added => shown.push(TrackedTime {
                    id: tt.id,
                    user: tt.user_name,
                    created: need(tt.created, repo, &what, "tracked time created")?,
                    time: u64::try_from(tt.time).unwrap_or(0),
                }),
                _ if added => complete = false,
                _ if t.kind == "delete_time_manual" => {
                    complete = false;
                    deletions.push((login(t.user.as_ref()), deleted_seconds(&t.body)));
                }
                _ => {}
            }
            continue;
        }
        has_dependency_events |= DEPENDENCY_EVENTS.contains(&t.kind.as_str());
        if t.kind == "pull_ref"
            && let Some(ri) = &t.ref_issue
        {
            let key = key_of(ri, repo);
            let info = lock(run).pull(client, &key, Some(ri))?;
            if let Some(info) = info {
                pull_requests.push(info.linked(&key, repo));
            }
        }
        timeline.push(event(t, repo, &what)?);
    }
    comments.sort_by_key(|c| (c.created_at, c.id));
    timeline.sort_by_key(|e| (e.created_at, e.id));

    let mut depends_on = Vec::new();
    let mut outside_blockers = Vec::new();
    let mut hidden_blockers = 0;
    let deps_disabled = lock(run).deps_disabled.contains(repo);
    if has_dependency_events && !deps_disabled {
        match client.get_paged::<GIssue>(&format!("{base}/dependencies"), &[]) {
            // A blocker the token may not read comes back as a placeholder numbered 0: counted, never
            // dropped without a word (it still holds this issue up). One in a repository the config
            // does not name, or a pull request, keeps the state Gitea gave it, since no file of the
            // snapshot will.
            Ok(deps) => {
                let configured = lock(run).configured.clone();
                for d in &deps {
                    if d.number == 0 {
                        hidden_blockers += 1;
                        continue;
                    }
                    let key = key_of(d, repo);
                    // A pull request is no issue file of the snapshot either: its state is kept here,
                    // for Gitea refuses to close an issue while one it waits on is open (audit 116).
                    if d.pull_request.is_some()
                        || (!configured.is_empty() && !configured.contains(&key.repo))
                    {
                        outside_blockers.push(crate::domain::OutsideBlocker {
                            issue: key.clone(),
                            state: state(&d.state, repo, &what)?,
                        });
                    }
                    depends_on.push(key);
                }
            }
            // A bare 404 is also what some Gitea versions answer for an issue deleted a moment ago
            // (the newest sends only "not found", whichever it is): the issue itself says which.
            Err(ClientError::DependenciesDisabled { .. }) if deleted(client, repo, &base) => {
                return Ok(None);
            }
            Err(ClientError::DependenciesDisabled { .. }) => {
                tracing::warn!(
                    "issue dependencies are disabled on {repo} (repository settings → Issues → enable dependencies); its issues are synced without dependencies"
                );
                lock(run).deps_disabled.insert(repo.clone());
            }
            Err(e @ ClientError::NotFound { .. }) => {
                return if deleted(client, repo, &base) {
                    Ok(None)
                } else {
                    Err(e.into())
                };
            }
            Err(e) => return Err(e.into()),
        }
    }
    depends_on.sort();
    depends_on.dedup();
    outside_blockers.sort_by(|a, b| a.issue.cmp(&b.issue));
    outside_blockers.dedup();

    let times_off = lock(run).times_off.contains(repo);
    // Where `/times` would list only the token user's own entries, the timeline's are nearer the truth.
    let ask_times = !complete && !times_off && lock(run).lists_every_time(client, repo)?;
    let mut tracked_times = if complete || !ask_times {
        std::mem::take(&mut shown)
    } else {
        Vec::new()
    };
    if ask_times {
        match client.get_paged::<GTime>(&format!("{base}/times"), &[]) {
            Ok(times) => {
                for t in times {
                    tracked_times.push(TrackedTime {
                        id: t.id,
                        user: t.user_name,
                        created: need(t.created, repo, &what, "tracked time created")?,
                        time: u64::try_from(t.time).unwrap_or(0),
                    });
                }
                let others = others_withheld(&tracked_times, &shown, &deletions);
                if !others.is_empty() {
                    if lock(run).own_times_only.insert(repo.clone()) {
                        tracing::warn!(
                            "{repo}: /times lists only the token user's own tracked time (Gitea lists \
                             everyone's only to a user who may write the issues, whatever the code allows): \
                             others' time is taken from the timeline, where a deleted entry still shows; \
                             give the token's user write access to the issues for the exact figures"
                        );
                    }
                    tracked_times.extend(others);
                }
            }
            Err(
                e @ (ClientError::TimeTrackingDisabled { .. } | ClientError::Unauthorized { .. }),
            ) => {
                tracing::warn!(
                    "cannot read tracked time on {repo} ({e}); its issues are synced without it, and calibration uses the time they spent in progress"
                );
                lock(run).times_off.insert(repo.clone());
            }
            Err(e @ ClientError::NotFound { .. }) => {
                return if deleted(client, repo, &base) {
                    Ok(None)
                } else {
                    Err(e.into())
                };
            }
            Err(e) => return Err(e.into()),
        }
    }
    tracked_times.sort_by_key(|t| (t.created, t.id));
    tracked_times.dedup_by_key(|t| t.id);

    let mut assignees: Vec<String> = gi.assignees.into_iter().map(|u| u.login).collect();
    assignees.sort();
    assignees.dedup();
    let mut labels: Vec<String> = gi.labels.into_iter().map(|l| l.name).collect();
    labels.sort();
    labels.dedup();

    Ok(Some(Issue {
        number: n,
        state: state(&gi.state, repo, &what)?,
        author: login(gi.user.as_ref()),
        created_at: need(gi.created_at, repo, &what, "created_at")?,
        updated_at: need(gi.updated_at, repo, &what, "updated_at")?,
        closed_at: gi.closed_at,
        title: gi.title,
        assignees,
        labels,
        milestone: gi.milestone.map(|m| m.id).filter(|id| *id != 0),
        time_estimate: gi.time_estimate,
        depends_on,
        body: gi.body,
        comments,
        timeline,
        tracked_times,
        outside_blockers,
        hidden_blockers,
        pull_requests,
    }))
}

#[cfg(test)]
mod tests {
    use super::{TrackedTime, deleted_seconds, others_withheld};

    #[test]
    fn a_deleted_times_words_are_read_as_at_most_so_many_seconds() {
        // Gitea 1.21+ (`SecToHours`): whole hours and minutes, the seconds dropped.
        assert_eq!(
            deleted_seconds("14 hours 33 minutes"),
            Some(14 * 3600 + 33 * 60 + 59)
        );
        assert_eq!(deleted_seconds("1 hour"), Some(3600 + 59));
        assert_eq!(deleted_seconds("45 seconds"), Some(45));
        // Forgejo (`SecToTime`): the two largest units.
        assert_eq!(
            deleted_seconds("2 weeks 4 days"),
            Some(18 * 86_400 + 86_399)
        );
        assert_eq!(deleted_seconds("5 minutes 3 seconds"), Some(303));
        // Stored before 1.21, and the raw form.
        assert_eq!(deleted_seconds("- 1h 2min 3s"), Some(3723));
        assert_eq!(deleted_seconds("- 1d 2h 3m 4s"), Some(93_784));
        assert_eq!(deleted_seconds("|5400"), Some(5400));
        // Words it cannot read say nothing.
        for odd in ["", "a while", "3 fortnights", "1 hour and more"] {
            assert_eq!(deleted_seconds(odd), None, "{odd}");
        }
    }

    fn time(id: u64, user: &str, hours: u64) -> TrackedTime {
        TrackedTime {
            id,
            user: user.to_owned(),
            created: chrono::DateTime::UNIX_EPOCH,
            time: hours * 3600,
        }
    }

    /// `/times` listed the token user's own only: the others' entries come from the timeline, unless the
    /// deletions by others could account for them; the listed user's own deletions are of their own time.
    #[test]
    fn others_withheld_weighs_only_the_deletions_others_made() {
        let listed = [time(1, "bot", 1)];
        let shown = [time(1, "bot", 1), time(2, "ola", 1), time(3, "bot", 3)];
        let own = [("bot".to_owned(), Some(3 * 3600))];
        assert_eq!(others_withheld(&listed, &shown, &own), [time(2, "ola", 1)]);
        let theirs = [("ola".to_owned(), Some(3600))];
        assert!(others_withheld(&listed, &shown, &theirs).is_empty());
        let unsaid = [("ola".to_owned(), None)];
        assert!(others_withheld(&listed, &shown, &unsaid).is_empty());
        // Two users listed: /times lists everyone's, taken as it is.
        let both = [time(1, "bot", 1), time(2, "ola", 1)];
        assert!(others_withheld(&both, &shown, &[]).is_empty());
    }
}
