//! The emulator's data: CommiTea's snapshot turned back into Gitea's records, mutable between requests.
//!
//! Records are kept in CommiTea's normalised types ([`Issue`], [`Label`], [`Milestone`]) plus a few
//! emulator-only facts (repository ids, milestone `updated_at`, pull requests); `render_*` functions turn them
//! into the JSON shapes of Gitea's OpenAPI spec at request time, so a change made through a method shows up in
//! every endpoint at once.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde_json::{Value, json};

use commitea::domain::{Issue, IssueKey, Label, Milestone, OpenState, RepoName};
use commitea::state::Snapshot;

/// A pull request of the emulated server (its number shares the repository's issue number space).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pull {
    /// The number.
    pub number: u64,
    /// The title.
    pub title: String,
    /// The description; carries `Closes #N` for each linked issue.
    pub body: String,
    /// Open or closed.
    pub state: OpenState,
    /// Whether it was merged.
    pub merged: bool,
    /// Who opened it.
    pub author: String,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// When it was closed or merged.
    pub closed_at: Option<DateTime<Utc>>,
}

/// What the `PullRequest` JSON says about one pull request, whichever kind it is.
#[derive(Debug, Clone)]
pub(crate) struct PullShape<'a> {
    pub number: u64,
    pub author: &'a str,
    pub title: &'a str,
    pub body: &'a str,
    pub state: OpenState,
    pub merged: bool,
    pub merged_at: Option<DateTime<Utc>>,
    pub merged_by: Option<&'a str>,
    pub merge_commit_sha: Option<String>,
    /// Branch name and commit.
    pub head: (String, String),
    /// The owner of the fork the head branch is in, if it is in one.
    pub head_fork: Option<&'a str>,
    /// The head branch is deleted: `ref` is then `refs/pull/N/head` (`services/convert/pull.go`
    /// `ToAPIPullRequest`), while `label` keeps the branch's name.
    pub head_gone: bool,
    /// Branch name and commit.
    pub base: (String, String),
    pub merge_base: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
}

/// One repository's records.
#[derive(Debug, Clone, Default)]
struct RepoData {
    id: u64,
    labels: Vec<Label>,
    /// The ids of the exclusive (scoped) labels.
    exclusive: BTreeSet<u64>,
    milestones: Vec<Milestone>,
    milestone_updated: BTreeMap<u64, DateTime<Utc>>,
    issues: BTreeMap<u64, Issue>,
    pulls: BTreeMap<u64, Pull>,
}

/// Everything the emulator serves: repositories with their labels, milestones, issues and pull requests.
#[derive(Debug, Clone)]
pub struct Dataset {
    repos: BTreeMap<RepoName, RepoData>,
    /// Organisations with labels of their own, by name: their labels and the exclusive ones' ids. An
    /// owner not here is a user (`/orgs/{name}` is 404).
    orgs: BTreeMap<String, (Vec<Label>, BTreeSet<u64>)>,
    /// The last time stamped on a change.
    clock: DateTime<Utc>,
    /// The server's time when `started` was taken: its clock runs on in real time from there, as a
    /// server's does (the `Date` header of every answer reads it).
    epoch: DateTime<Utc>,
    started: std::time::Instant,
    /// Open and closed issues per milestone: counted when first asked for, forgotten on any change.
    counts: std::sync::OnceLock<BTreeMap<u64, (u64, u64)>>,
    /// Old names of renamed repositories, with their new ones (Gitea's `repo_redirect`).
    redirects: BTreeMap<RepoName, RepoName>,
    /// Archived repositories: read-only, some writes answered 423.
    archived: BTreeSet<RepoName>,
    /// Repositories the token may no longer see: every path of them answers 404.
    hidden: BTreeSet<RepoName>,
    /// Tracked times deleted, per issue: gone from `/times`, while the timeline keeps the entry that
    /// added each and shows its deletion.
    deleted_times: BTreeMap<IssueKey, Vec<DeletedTime>>,
}

/// A tracked time someone deleted (`DeleteTime`): its add entry stays on the timeline, with its
/// `tracked_time`, and a `delete_time_manual` entry by `by` at `at` says `|<seconds>` (Gitea 1.21+).
#[derive(Debug, Clone)]
pub struct DeletedTime {
    /// The time as it was.
    pub time: commitea::domain::TrackedTime,
    /// Who deleted it.
    pub by: String,
    /// When.
    pub at: DateTime<Utc>,
}

impl Default for Dataset {
    fn default() -> Self {
        Self {
            repos: BTreeMap::new(),
            orgs: BTreeMap::new(),
            clock: DateTime::default(),
            epoch: DateTime::default(),
            started: std::time::Instant::now(),
            counts: std::sync::OnceLock::new(),
            redirects: BTreeMap::new(),
            archived: BTreeSet::new(),
            hidden: BTreeSet::new(),
            deleted_times: BTreeMap::new(),
        }
    }
}

fn state_str(s: OpenState) -> &'static str {
    match s {
        OpenState::Open => "open",
        OpenState::Closed => "closed",
    }
}

/// A new open issue with nothing but a number, a title, an author and a time.
pub(crate) fn blank_issue(number: u64, title: &str, author: &str, at: DateTime<Utc>) -> Issue {
    Issue {
        number,
        title: title.to_owned(),
        state: OpenState::Open,
        author: author.to_owned(),
        created_at: at,
        updated_at: at,
        closed_at: None,
        assignees: Vec::new(),
        labels: Vec::new(),
        milestone: None,
        time_estimate: 0,
        depends_on: Vec::new(),
        body: String::new(),
        comments: Vec::new(),
        timeline: Vec::new(),
        tracked_times: Vec::new(),
        outside_blockers: Vec::new(),
        hidden_blockers: 0,
        pull_requests: Vec::new(),
    }
}

/// A stable synthetic user id: FNV-1a of the login, folded into 1..=999_999.
pub(crate) fn user_id(login: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in login.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h % 999_999 + 1
}

impl Dataset {
    /// Maps a snapshot back to Gitea's records: every repository named in the snapshot (meta, labels,
    /// milestones or issues), and one pull request for each distinct linked pull whose number is free.
    pub fn from_snapshot(snapshot: &Snapshot) -> Self {
        let mut ds = Dataset {
            clock: snapshot.meta.synced_at,
            ..Dataset::default()
        };
        let names = snapshot
            .meta
            .repositories
            .iter()
            .map(|r| r.name.clone())
            .chain(snapshot.labels.keys().cloned())
            .chain(snapshot.milestones.keys().cloned())
            .chain(snapshot.issues.keys().map(|k| k.repo.clone()))
            .collect::<std::collections::BTreeSet<_>>();
        for name in names {
            ds.repo_entry(&name);
        }
        for (repo, labels) in &snapshot.labels {
            ds.repo_entry(repo).labels = labels.clone();
        }
        for (repo, ms) in &snapshot.milestones {
            let data = ds.repo_entry(repo);
            data.milestones = ms.clone();
            for m in ms {
                data.milestone_updated
                    .insert(m.id, m.closed_at.unwrap_or(m.created_at));
            }
        }
        for (key, issue) in &snapshot.issues {
            ds.repo_entry(&key.repo)
                .issues
                .insert(issue.number, issue.clone());
            if issue.updated_at > ds.clock {
                ds.clock = issue.updated_at;
            }
        }
        // Pull requests: one per (repository, number), linked to every issue that names it.
        let mut pulls: BTreeMap<(RepoName, u64), (Pull, Vec<IssueKey>)> = BTreeMap::new();
        for (key, issue) in &snapshot.issues {
            for lp in &issue.pull_requests {
                let repo = lp.repository.clone().unwrap_or_else(|| key.repo.clone());
                let author = issue
                    .timeline
                    .iter()
                    .find(|e| {
                        e.kind == commitea::domain::EventKind::PullRef
                            && e.pull.as_ref().is_some_and(|p| p.number == lp.number)
                    })
                    .map_or_else(|| issue.author.clone(), |e| e.user.clone());
                let entry = pulls.entry((repo, lp.number)).or_insert_with(|| {
                    (
                        Pull {
                            number: lp.number,
                            title: lp.title.clone(),
                            body: String::new(),
                            state: lp.state,
                            merged: lp.merged,
                            author,
                            created_at: lp.created_at,
                            updated_at: lp.closed_at.unwrap_or(lp.created_at),
                            closed_at: lp.closed_at,
                        },
                        Vec::new(),
                    )
                });
                entry.1.push(key.clone());
            }
        }
        ds.set_clock(ds.clock);
        for ((repo, number), (mut pull, linked)) in pulls {
            let lines: Vec<String> = linked
                .iter()
                .map(|k| {
                    if k.repo == repo {
                        format!("Closes #{}", k.number)
                    } else {
                        format!("Closes {k}")
                    }
                })
                .collect();
            pull.body = lines.join("\n");
            let data = ds.repo_entry(&repo);
            if !data.issues.contains_key(&number) {
                data.pulls.insert(number, pull);
            }
        }
        ds
    }

    /// Open and closed issues of each milestone (Gitea keeps these counts in the milestone's row).
    pub(crate) fn milestone_counts(&self) -> &BTreeMap<u64, (u64, u64)> {
        self.counts.get_or_init(|| {
            let mut counts: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
            for i in self.repos.values().flat_map(|d| d.issues.values()) {
                if let Some(id) = i.milestone {
                    let c = counts.entry(id).or_default();
                    match i.state {
                        OpenState::Open => c.0 += 1,
                        OpenState::Closed => c.1 += 1,
                    }
                }
            }
            counts
        })
    }

    fn repo_entry(&mut self, repo: &RepoName) -> &mut RepoData {
        self.counts = std::sync::OnceLock::new();
        let next_id = self.repos.len() as u64 + 1;
        self.repos.entry(repo.clone()).or_insert_with(|| RepoData {
            id: next_id,
            ..RepoData::default()
        })
    }

    /// Renames repository `old` to `new`, as Gitea's `ChangeRepositoryName` (or a transfer) does: its issues
    /// answer under the new name, every reference to them names it (Gitea stores ids, not names), none is
    /// marked changed, and the old name redirects (`repo_redirect`, a 307 to the same path under the new
    /// name).
    pub fn rename_repository(&mut self, old: &RepoName, new: &RepoName) {
        let Some(data) = self.repos.remove(old) else {
            return;
        };
        self.repos.insert(new.clone(), data);
        self.redirects.insert(old.clone(), new.clone());
        let moved = |key: &mut IssueKey| {
            if key.repo == *old {
                key.repo = new.clone();
            }
        };
        for data in self.repos.values_mut() {
            for issue in data.issues.values_mut() {
                issue.depends_on.iter_mut().for_each(moved);
                for e in &mut issue.timeline {
                    e.pull.iter_mut().for_each(moved);
                    e.dependency.iter_mut().for_each(moved);
                }
                for p in &mut issue.pull_requests {
                    if p.repository.as_ref() == Some(old) {
                        p.repository = Some(new.clone());
                    }
                }
            }
        }
    }

    /// Where a renamed repository's old name leads now.
    pub(crate) fn redirect(&self, repo: &RepoName) -> Option<&RepoName> {
        self.redirects.get(repo)
    }

    /// Archives `repo`, as its settings' "Archive this repository" does: served as `archived`, and the
    /// writes Gitea guards with `mustNotBeArchived` (creating an issue or a comment, changing a
    /// dependency) are answered 423.
    pub fn archive(&mut self, repo: &RepoName) {
        self.archived.insert(repo.clone());
    }

    /// Unarchives `repo`, as "Unarchive this repository" does: written to again.
    pub fn unarchive(&mut self, repo: &RepoName) {
        self.archived.remove(repo);
    }

    /// Hides `repo` from the token, as making it private or taking the token's access away does: every
    /// path under it answers 404, as Gitea's `repoAssignment` does for a repository the user may not see;
    /// [`Dataset::show_repository`] undoes it.
    pub fn hide_repository(&mut self, repo: &RepoName) {
        self.hidden.insert(repo.clone());
    }

    /// Shows a hidden repository again.
    pub fn show_repository(&mut self, repo: &RepoName) {
        self.hidden.remove(repo);
    }

    /// Whether `repo` is hidden from the token.
    pub fn is_hidden(&self, repo: &RepoName) -> bool {
        self.hidden.contains(repo)
    }

    /// Whether `repo` is archived.
    pub fn is_archived(&self, repo: &RepoName) -> bool {
        self.archived.contains(repo)
    }

    /// Registers `repo` as an empty repository (with an id) if it is not served yet.
    pub fn add_repository(&mut self, repo: &RepoName) {
        self.repo_entry(repo);
    }

    /// The repositories served, sorted.
    pub fn repositories(&self) -> Vec<RepoName> {
        self.repos.keys().cloned().collect()
    }

    /// The emulated server's clock now: it starts at the newest change of the snapshot it was built from
    /// (or where [`Dataset::set_clock`] put it) and runs on in real time; never before the last change.
    pub fn clock(&self) -> DateTime<Utc> {
        let running = self.epoch
            + Duration::from_std(self.started.elapsed()).unwrap_or_else(|_| Duration::zero());
        running.max(self.clock)
    }

    /// Sets the server's clock to `at`; it runs on from there.
    pub fn set_clock(&mut self, at: DateTime<Utc>) {
        self.clock = at;
        self.epoch = at;
        self.started = std::time::Instant::now();
    }

    /// The time of the next change: the server's clock, at least one second after the last change (every
    /// change gets a distinct second), in whole seconds as Gitea stores them.
    pub fn tick(&mut self) -> DateTime<Utc> {
        let now = self.clock();
        let next = (self.clock + Duration::seconds(1)).max(now);
        self.clock = DateTime::from_timestamp(next.timestamp(), 0).unwrap_or(next);
        self.clock
    }

    /// The issue `key`, if it exists.
    pub fn issue(&self, key: &IssueKey) -> Option<&Issue> {
        self.repos.get(&key.repo)?.issues.get(&key.number)
    }

    /// The issues of `repo`, by number.
    pub fn issues(&self, repo: &RepoName) -> Vec<&Issue> {
        self.repos
            .get(repo)
            .map(|r| r.issues.values().collect())
            .unwrap_or_default()
    }

    /// The pull request `number` of `repo`.
    pub fn pull(&self, repo: &RepoName, number: u64) -> Option<&Pull> {
        self.repos.get(repo)?.pulls.get(&number)
    }

    /// The pull requests of `repo`, by number.
    pub fn pulls(&self, repo: &RepoName) -> Vec<&Pull> {
        self.repos
            .get(repo)
            .map(|r| r.pulls.values().collect())
            .unwrap_or_default()
    }

    /// The labels of `repo`.
    pub fn labels(&self, repo: &RepoName) -> &[Label] {
        self.repos.get(repo).map_or(&[], |r| r.labels.as_slice())
    }

    /// The labels the organisation `org` defines; `None` when `org` is not an organisation.
    pub fn org_labels(&self, org: &str) -> Option<&[Label]> {
        self.orgs.get(org).map(|(ls, _)| ls.as_slice())
    }

    /// The labels an issue of `repo` may carry: the repository's, then its organisation's (Gitea's
    /// `label.RepoID == repo.ID || label.OrgID == repo.OwnerID`).
    pub(crate) fn issue_labels(&self, repo: &RepoName) -> Vec<Label> {
        let mut all = self.labels(repo).to_vec();
        all.extend(
            self.org_labels(&repo.owner)
                .unwrap_or_default()
                .iter()
                .cloned(),
        );
        all
    }

    /// A label with the next free id, in no repository or organisation yet.
    fn new_label(&self, name: &str, color: &str, description: &str) -> Label {
        Label {
            id: self.next_label_id(),
            name: name.to_owned(),
            color: color.to_owned(),
            description: description.to_owned(),
        }
    }

    fn next_label_id(&self) -> u64 {
        self.repos
            .values()
            .flat_map(|r| r.labels.iter().map(|l| l.id))
            .chain(
                self.orgs
                    .values()
                    .flat_map(|(ls, _)| ls.iter().map(|l| l.id)),
            )
            .max()
            .unwrap_or(0)
            + 1
    }

    /// Adds a label to the organisation `org` (making `org` an organisation) and returns it.
    pub fn create_org_label(
        &mut self,
        org: &str,
        name: &str,
        color: &str,
        exclusive: bool,
    ) -> Label {
        let label = self.new_label(name, color, "");
        let (ls, ex) = self.orgs.entry(org.to_owned()).or_default();
        ls.push(label.clone());
        if exclusive {
            ex.insert(label.id);
        }
        label
    }

    /// Adds a label to `repo` with a new id (one more than the highest label id of the dataset) and returns it.
    /// `exclusive` makes it a scoped label: its scope is its name before the last `/`.
    pub fn create_label(
        &mut self,
        repo: &RepoName,
        name: &str,
        color: &str,
        description: &str,
        exclusive: bool,
    ) -> Label {
        let label = self.new_label(name, color, description);
        let data = self.repo_entry(repo);
        data.labels.push(label.clone());
        if exclusive {
            data.exclusive.insert(label.id);
        }
        label
    }

    /// Moves every milestone's due date to the end of its day in `zone`: where Gitea stores a deadline set in
    /// its web UI (`ParseDeadlineDateToEndOfDay`, in the server's zone). The snapshot's due dates end their day
    /// in UTC.
    pub fn anchor_due_dates(&mut self, zone: chrono::FixedOffset) {
        for data in self.repos.values_mut() {
            for m in &mut data.milestones {
                m.due_on = m.due_on.and_then(|d| {
                    d.date_naive()
                        .and_hms_opt(23, 59, 59)?
                        .and_local_timezone(zone)
                        .single()
                        .map(|t| t.to_utc())
                });
            }
        }
    }

    /// Deletes label `id` of `repo`, and takes it off every issue that has it (as Gitea's `DeleteLabel`
    /// does: an admin deleting a label on the web, between a sync and a run).
    pub fn delete_label(&mut self, repo: &RepoName, id: u64) {
        let Some(data) = self.repos.get_mut(repo) else {
            return;
        };
        let Some(name) = data
            .labels
            .iter()
            .find(|l| l.id == id)
            .map(|l| l.name.clone())
        else {
            return;
        };
        data.labels.retain(|l| l.id != id);
        data.exclusive.remove(&id);
        // Its events go too: `DeleteLabel` runs `sess.Where("label_id = ?", labelID).Delete(&Comment{})`
        // (models/issues/label.go), and no issue is marked changed.
        for issue in data.issues.values_mut() {
            issue.labels.retain(|l| *l != name);
            issue.timeline.retain(|e| {
                !(e.kind == commitea::domain::EventKind::Label && e.label.as_ref() == Some(&name))
            });
        }
    }

    /// Renames label `id` of `repo`, as Gitea's `UpdateLabel` does: the issues that carry it show the new name,
    /// and none of them is marked changed (`updated_unix` stays).
    pub fn rename_label(&mut self, repo: &RepoName, id: u64, name: &str) {
        let Some(data) = self.repos.get_mut(repo) else {
            return;
        };
        let Some(label) = data.labels.iter_mut().find(|l| l.id == id) else {
            return;
        };
        let old = std::mem::replace(&mut label.name, name.to_owned());
        for issue in data.issues.values_mut() {
            for l in &mut issue.labels {
                if *l == old {
                    name.clone_into(l);
                }
            }
            issue.labels.sort();
            // A label event loads its label by id (`LoadLabel`, then `ToLabel`): the old events read the
            // new name.
            for e in &mut issue.timeline {
                if e.kind == commitea::domain::EventKind::Label && e.label.as_ref() == Some(&old) {
                    e.label = Some(name.to_owned());
                }
            }
        }
    }

    /// Deletes milestone `id` of `repo`, as Gitea does (`DeleteMilestoneByRepoID`: `UPDATE issue SET
    /// milestone_id = 0`): its issues have no milestone, and none of them is marked changed.
    pub fn delete_milestone(&mut self, repo: &RepoName, id: u64) {
        self.counts = std::sync::OnceLock::new();
        let Some(data) = self.repos.get_mut(repo) else {
            return;
        };
        data.milestones.retain(|m| m.id != id);
        for issue in data.issues.values_mut() {
            if issue.milestone == Some(id) {
                issue.milestone = None;
            }
        }
    }

    /// Whether label `id` of `repo` is exclusive (scoped).
    pub fn label_exclusive(&self, repo: &RepoName, id: u64) -> bool {
        self.repos
            .get(repo)
            .is_some_and(|r| r.exclusive.contains(&id))
            || self
                .orgs
                .get(&repo.owner)
                .is_some_and(|(_, ex)| ex.contains(&id))
    }

    /// Makes label `id` of `repo` exclusive (scoped) or not.
    pub fn set_label_exclusive(&mut self, repo: &RepoName, id: u64, exclusive: bool) {
        let data = self.repo_entry(repo);
        if exclusive {
            data.exclusive.insert(id);
        } else {
            data.exclusive.remove(&id);
        }
    }

    /// The exclusive scope of the label of `repo` called `name` (Gitea's `Label.ExclusiveScope`): the name before
    /// its last `/` when the label is exclusive and that `/` is neither first nor last; `None` otherwise.
    pub(crate) fn label_scope(&self, repo: &RepoName, name: &str) -> Option<String> {
        let label = self
            .issue_labels(repo)
            .into_iter()
            .find(|l| l.name == name)?;
        if !self.label_exclusive(repo, label.id) {
            return None;
        }
        match name.rfind('/') {
            Some(k) if k > 0 && k + 1 < name.len() => Some(name[..k].to_owned()),
            _ => None,
        }
    }

    /// The milestones of `repo`.
    pub fn milestones(&self, repo: &RepoName) -> &[Milestone] {
        self.repos
            .get(repo)
            .map_or(&[], |r| r.milestones.as_slice())
    }

    /// Changes issue `key` through `f`, then bumps its `updated_at` to the next clock tick.
    ///
    /// Returns false when there is no such issue.
    pub fn update_issue(&mut self, key: &IssueKey, f: impl FnOnce(&mut Issue)) -> bool {
        let at = self.tick();
        self.counts = std::sync::OnceLock::new();
        match self
            .repos
            .get_mut(&key.repo)
            .and_then(|r| r.issues.get_mut(&key.number))
        {
            Some(issue) => {
                f(issue);
                issue.updated_at = at;
                true
            }
            None => false,
        }
    }

    /// Deletes an issue, as an admin does in Gitea (`DeleteIssue`): its number answers as missing from
    /// then on. Whether it was there.
    pub fn delete_issue(&mut self, key: &IssueKey) -> bool {
        self.counts = std::sync::OnceLock::new();
        self.repos
            .get_mut(&key.repo)
            .and_then(|r| r.issues.remove(&key.number))
            .is_some()
    }

    /// Deletes tracked time `id` of `key` as `by` does on the web, now: `/times` lists it no more, the
    /// timeline keeps its add entry and shows the deletion, and the issue is updated (a new comment).
    /// False when there is no such time.
    pub fn delete_tracked_time(&mut self, key: &IssueKey, id: u64, by: &str) -> bool {
        let at = self.clock;
        let Some(issue) = self
            .repos
            .get_mut(&key.repo)
            .and_then(|r| r.issues.get_mut(&key.number))
        else {
            return false;
        };
        let Some(k) = issue.tracked_times.iter().position(|t| t.id == id) else {
            return false;
        };
        let time = issue.tracked_times.remove(k);
        issue.updated_at = at;
        self.deleted_times
            .entry(key.clone())
            .or_default()
            .push(DeletedTime {
                time,
                by: by.to_owned(),
                at,
            });
        true
    }

    /// The tracked times of `key` deleted so far.
    pub fn deleted_times(&self, key: &IssueKey) -> &[DeletedTime] {
        self.deleted_times.get(key).map_or(&[], Vec::as_slice)
    }

    /// Whether `login` is a user here: someone an issue, comment, event or tracked time names (the
    /// emulator keeps no user table; Gitea's `GetUserByName` finds them).
    pub fn knows_user(&self, login: &str) -> bool {
        self.repos
            .values()
            .flat_map(|r| r.issues.values())
            .any(|i| {
                i.author == login
                    || i.assignees.iter().any(|a| a == login)
                    || i.comments.iter().any(|c| c.user == login)
                    || i.timeline
                        .iter()
                        .any(|e| e.user == login || e.assignee.as_deref() == Some(login))
                    || i.tracked_times.iter().any(|t| t.user == login)
            })
    }

    /// Adds (or replaces) an issue of `repo`, creating the repository if it is new.
    pub fn insert_issue(&mut self, repo: &RepoName, issue: Issue) {
        self.repo_entry(repo).issues.insert(issue.number, issue);
    }

    /// Adds (or replaces) a pull request of `repo`, creating the repository if it is new.
    pub fn insert_pull(&mut self, repo: &RepoName, pull: Pull) {
        self.repo_entry(repo).pulls.insert(pull.number, pull);
    }

    /// The next free number in `repo` (issues and pull requests share the space).
    pub fn next_number(&self, repo: &RepoName) -> u64 {
        self.repos.get(repo).map_or(1, |r| {
            let i = r.issues.keys().next_back().copied().unwrap_or(0);
            let p = r.pulls.keys().next_back().copied().unwrap_or(0);
            i.max(p) + 1
        })
    }

    /// Creates a new open issue in `repo` at the next clock tick, by `author`, and returns its key.
    pub fn create_issue(&mut self, repo: &RepoName, title: &str, author: &str) -> IssueKey {
        let number = self.next_number(repo);
        let at = self.tick();
        self.insert_issue(repo, blank_issue(number, title, author, at));
        repo.issue(number)
    }

    /// Changes milestone `id` (of any repository) through `f` and bumps its `updated_at`.
    ///
    /// Returns false when there is no such milestone.
    pub fn update_milestone(&mut self, id: u64, f: impl FnOnce(&mut Milestone)) -> bool {
        self.update_milestone_at(id, |m, _| f(m))
    }

    /// [`Dataset::update_milestone`], handing `f` the time of the change.
    pub(crate) fn update_milestone_at(
        &mut self,
        id: u64,
        f: impl FnOnce(&mut Milestone, DateTime<Utc>),
    ) -> bool {
        let at = self.tick();
        for data in self.repos.values_mut() {
            if let Some(m) = data.milestones.iter_mut().find(|m| m.id == id) {
                f(m, at);
                data.milestone_updated.insert(id, at);
                return true;
            }
        }
        false
    }

    /// The milestone with this id in any repository.
    pub fn milestone(&self, id: u64) -> Option<&Milestone> {
        self.repos
            .values()
            .find_map(|r| r.milestones.iter().find(|m| m.id == id))
    }

    /// `repo` as the server spells it: Gitea finds owners and repositories by their lower-cased names
    /// (`GetUserByName`, `GetRepositoryByName` match `lower_name`), so `Acme/API` is `acme/api`, and
    /// every answer spells it the server's way. A renamed repository's old name is found so too
    /// (`LookupRedirect`). `repo` itself where nothing matches.
    pub(crate) fn canonical(&self, repo: RepoName) -> RepoName {
        let same = |r: &&RepoName| {
            r.owner.eq_ignore_ascii_case(&repo.owner) && r.name.eq_ignore_ascii_case(&repo.name)
        };
        self.repos
            .keys()
            .find(same)
            .or_else(|| self.redirects.keys().find(same))
            .cloned()
            .unwrap_or(repo)
    }

    pub(crate) fn repo_id(&self, repo: &RepoName) -> Option<u64> {
        self.repos.get(repo).map(|r| r.id)
    }

    /// A stable synthetic issue id, unique across repositories.
    pub(crate) fn issue_id(&self, repo: &RepoName, number: u64) -> u64 {
        self.repo_id(repo).unwrap_or(0) * 100_000 + number
    }

    /// The label of `repo` called `name`, or a stand-in with id 0 when labels.yaml no longer has it.
    pub(crate) fn label_by_name(&self, repo: &RepoName, name: &str) -> Label {
        self.issue_labels(repo)
            .into_iter()
            .find(|l| l.name == name)
            .unwrap_or_else(|| Label {
                id: 0,
                name: name.to_owned(),
                color: "000000".into(),
                description: String::new(),
            })
    }

    /// The issues that depend on `key` (it blocks them).
    pub(crate) fn blocked_by(&self, key: &IssueKey) -> Vec<IssueKey> {
        let mut out = Vec::new();
        for (repo, data) in &self.repos {
            for issue in data.issues.values() {
                if issue.depends_on.contains(key) {
                    out.push(repo.issue(issue.number));
                }
            }
        }
        out
    }

    /// An issue to change in place, as a test sets up what Gitea holds (its author, say).
    pub fn issue_mut(&mut self, key: &IssueKey) -> Option<&mut Issue> {
        self.counts = std::sync::OnceLock::new();
        self.repos.get_mut(&key.repo)?.issues.get_mut(&key.number)
    }
}

/// Renders records as Gitea JSON; `base` is the server's root URL (`http://127.0.0.1:PORT`).
pub(crate) struct Render<'a> {
    pub ds: &'a Dataset,
    pub base: &'a str,
    /// Add [`FUTURE_FIELD`] to every object, as a newer Gitea adds fields.
    pub future: bool,
    /// Whether the repositories are public (what an anonymous request may read).
    pub public: bool,
    /// Repositories with the pull requests unit switched off.
    pub pulls_disabled: &'a std::collections::BTreeSet<RepoName>,
    /// Repositories with the Issues unit switched off.
    pub issues_disabled: &'a std::collections::BTreeSet<RepoName>,
    /// The token's user may only read.
    pub read_only: bool,
    /// The server's zone, which every time is written in.
    pub zone: chrono::FixedOffset,
    /// Issues carry no `time_estimate`: a Forgejo (its `api.Issue` has no such field), or a Gitea
    /// before 1.23, which brought it (audit 161: the emulator's 1.21 sent it).
    pub no_time_estimate: bool,
}

/// A field no Gitea 1.27 sends, added to every object the emulator renders (unless switched off), so the
/// tests prove that CommiTea ignores the fields a newer Gitea adds.
pub const FUTURE_FIELD: &str = "x_newer_gitea";

impl<'a> Render<'a> {
    /// A renderer for the emulator's dataset and options.
    pub fn new(ds: &'a Dataset, shared: &'a super::Shared) -> Self {
        Self {
            ds,
            base: &shared.base,
            future: shared.options.future_fields,
            public: shared.options.anonymous == super::Anonymous::Public,
            pulls_disabled: &shared.options.pulls_disabled,
            issues_disabled: &shared.options.issues_disabled,
            read_only: shared.options.read_only,
            zone: shared.options.zone,
            no_time_estimate: shared.options.forgejo() || shared.options.gitea_before(23),
        }
    }

    /// A time as Gitea writes it: RFC 3339 in the server's zone.
    pub fn time(&self, t: DateTime<Utc>) -> String {
        t.with_timezone(&self.zone)
            .to_rfc3339_opts(SecondsFormat::Secs, true)
    }

    fn opt_time(&self, t: Option<DateTime<Utc>>) -> Value {
        t.map_or(Value::Null, |t| Value::String(self.time(t)))
    }

    /// `v` with [`FUTURE_FIELD`] when `future` is on.
    fn newer(&self, mut v: Value) -> Value {
        if self.no_time_estimate
            && let Some(o) = v.as_object_mut()
        {
            o.remove("time_estimate");
        }
        if self.future
            && let Some(o) = v.as_object_mut()
        {
            o.insert(
                FUTURE_FIELD.to_owned(),
                json!({"nested": [null, 1, {"deep": null}], "note": "a field Gitea 1.27 does not send"}),
            );
        }
        v
    }

    pub fn user(&self, login: &str) -> Value {
        let base = self.base;
        self.newer(json!({
            "id": user_id(login),
            "login": login,
            "login_name": "",
            "source_id": 0,
            "full_name": "",
            "email": format!("{login}@noreply.localhost"),
            "avatar_url": format!("{base}/avatars/{}", user_id(login)),
            "html_url": format!("{base}/{login}"),
            "language": "",
            "is_admin": false,
            "last_login": "1970-01-01T00:00:00Z",
            "created": "2026-01-01T00:00:00Z",
            "restricted": false,
            "active": true,
            "prohibit_login": false,
            "location": "",
            "website": "",
            "description": "",
            "visibility": "public",
            "followers_count": 0,
            "following_count": 0,
            "starred_repos_count": 0,
        }))
    }

    pub fn label(&self, repo: &RepoName, l: &Label) -> Value {
        self.newer(json!({
            "id": l.id,
            "name": l.name,
            "exclusive": self.ds.label_exclusive(repo, l.id),
            "is_archived": false,
            "color": l.color,
            "description": l.description,
            "url": format!("{}/api/v1/repos/{repo}/labels/{}", self.base, l.id),
        }))
    }

    pub fn milestone(&self, m: &Milestone) -> Value {
        let mut updated = m.closed_at.unwrap_or(m.created_at);
        for data in self.ds.repos.values() {
            if let Some(u) = data.milestone_updated.get(&m.id) {
                updated = *u;
            }
        }
        let counts = self.ds.milestone_counts();
        let (open, closed) = counts.get(&m.id).copied().unwrap_or_default();
        self.newer(json!({
            "id": m.id,
            "title": m.title,
            "description": m.description,
            "state": state_str(m.state),
            "open_issues": open,
            "closed_issues": closed,
            "created_at": self.time(m.created_at),
            "updated_at": self.time(updated),
            "closed_at": self.opt_time(m.closed_at),
            "due_on": self.opt_time(m.due_on),
        }))
    }

    fn milestone_by_id(&self, id: Option<u64>) -> Value {
        id.and_then(|id| self.ds.milestone(id))
            .map_or(Value::Null, |m| self.milestone(m))
    }

    fn repo_meta(&self, repo: &RepoName) -> Value {
        json!({
            "id": self.ds.repo_id(repo).unwrap_or(0),
            "name": repo.name,
            "owner": repo.owner,
            "full_name": repo.to_string(),
        })
    }

    fn users(&self, logins: &[String]) -> Value {
        // Gitea builds the list by appending to a nil slice: no assignees is `null`, not `[]`.
        if logins.is_empty() {
            Value::Null
        } else {
            Value::Array(logins.iter().map(|l| self.user(l)).collect())
        }
    }

    pub fn issue(&self, repo: &RepoName, i: &Issue) -> Value {
        let base = self.base;
        let n = i.number;
        self.newer(json!({
            "id": self.ds.issue_id(repo, n),
            "url": format!("{base}/api/v1/repos/{repo}/issues/{n}"),
            "html_url": format!("{base}/{repo}/issues/{n}"),
            "number": n,
            "user": self.user(&i.author),
            "original_author": "",
            "original_author_id": 0,
            "title": i.title,
            "body": i.body,
            "ref": "",
            "assets": [],
            "labels": i.labels.iter().map(|l| self.label(repo, &self.ds.label_by_name(repo, l))).collect::<Vec<_>>(),
            "milestone": self.milestone_by_id(i.milestone),
            "assignee": i.assignees.first().map_or(Value::Null, |a| self.user(a)),
            "assignees": self.users(&i.assignees),
            "state": state_str(i.state),
            "is_locked": false,
            "comments": i.comments.len(),
            "created_at": self.time(i.created_at),
            "updated_at": self.time(i.updated_at),
            "closed_at": self.opt_time(i.closed_at),
            "due_date": null,
            "time_estimate": i.time_estimate,
            "pull_request": null,
            "repository": self.repo_meta(repo),
            "pin_order": 0,
            "content_version": 0,
            // `Projects []*Project`, filled only when there are any (services/convert/issue.go).
            "projects": null,
        }))
    }

    /// A pull request in the issue shape (as the issues listing and `ref_issue` give it).
    pub fn pull_as_issue(&self, repo: &RepoName, p: &Pull) -> Value {
        let base = self.base;
        let n = p.number;
        let merged_at = if p.merged { p.closed_at } else { None };
        self.newer(json!({
            "id": self.ds.issue_id(repo, n),
            "url": format!("{base}/api/v1/repos/{repo}/issues/{n}"),
            "html_url": format!("{base}/{repo}/pulls/{n}"),
            "number": n,
            "user": self.user(&p.author),
            "original_author": "",
            "original_author_id": 0,
            "title": p.title,
            "body": p.body,
            "ref": "",
            "assets": [],
            "labels": [],
            "milestone": null,
            "assignee": null,
            "assignees": null,
            "state": state_str(p.state),
            "is_locked": false,
            "comments": 0,
            "created_at": self.time(p.created_at),
            "updated_at": self.time(p.updated_at),
            "closed_at": self.opt_time(p.closed_at),
            "due_date": null,
            "time_estimate": 0,
            "pull_request": {
                "merged": p.merged,
                "merged_at": self.opt_time(merged_at),
                "draft": false,
                "html_url": format!("{base}/{repo}/pulls/{n}"),
            },
            "repository": self.repo_meta(repo),
            "pin_order": 0,
            "content_version": 0,
            "projects": null,
        }))
    }

    /// Gitea's stand-in for a blocker the caller may not see: only `title: "HIDDEN"`, number 0, no
    /// repository, labels `null`, the Ghost user, times at the Unix epoch.
    pub fn hidden_issue(&self) -> Value {
        self.newer(json!({
            "id": 0, "url": "", "html_url": "", "number": 0,
            "user": self.user("Ghost"),
            "original_author": "", "original_author_id": 0,
            "title": "HIDDEN", "body": "", "ref": "", "assets": [], "labels": null, "milestone": null,
            "assignee": null, "assignees": null, "state": "open", "is_locked": false, "comments": 0,
            "created_at": "1970-01-01T00:00:00Z", "updated_at": "1970-01-01T00:00:00Z",
            "closed_at": null, "due_date": null, "time_estimate": 0, "pull_request": null,
            "repository": null, "pin_order": 0, "content_version": 0, "projects": null,
        }))
    }

    /// Gitea's "confidential" blocker: what a caller who may write the blocked issue (but not read the
    /// blocker's repository) is sent (`GetIssueDependencies`: a `DependencyInfo` with only the repository's
    /// id, owner and name, and the issue's index, title and closed state): as [`Render::hidden_issue`], with
    /// the number, title, state, URLs, repository and an empty label list (the repository being known,
    /// `ToLabelList` runs over no labels).
    pub fn confidential_issue(&self, key: &IssueKey, i: &Issue) -> Value {
        let base = self.base;
        let (repo, n) = (&key.repo, key.number);
        let mut v = self.hidden_issue();
        v["url"] = json!(format!("{base}/api/v1/repos/{repo}/issues/{n}"));
        v["html_url"] = json!(format!("{base}/{repo}/issues/{n}"));
        v["number"] = json!(n);
        v["title"] = json!(i.title);
        v["state"] = json!(state_str(i.state));
        v["labels"] = json!([]);
        v["repository"] = self.repo_meta(repo);
        v
    }

    /// The issue or pull request `key` in the issue shape, or null.
    pub fn issue_or_pull(&self, key: &IssueKey) -> Value {
        if let Some(i) = self.ds.issue(key) {
            self.issue(&key.repo, i)
        } else if let Some(p) = self.ds.pull(&key.repo, key.number) {
            self.pull_as_issue(&key.repo, p)
        } else {
            Value::Null
        }
    }

    pub fn repository(&self, repo: &RepoName, dependencies: bool, time_tracking: bool) -> Value {
        let base = self.base;
        let data = self.ds.repos.get(repo);
        let open_issues = data.map_or(0, |d| {
            d.issues
                .values()
                .filter(|i| i.state == OpenState::Open)
                .count()
        });
        let open_prs = data.map_or(0, |d| {
            d.pulls
                .values()
                .filter(|p| p.state == OpenState::Open)
                .count()
        });
        let mut v = json!({
            "id": self.ds.repo_id(repo).unwrap_or(0),
            "owner": self.user(&repo.owner),
            "name": repo.name,
            "full_name": repo.to_string(),
            "description": "",
            "empty": false,
            "private": !self.public,
            "fork": false,
            "template": false,
            "parent": null,
            "mirror": false,
            "size": 0,
            "language": "",
            "languages_url": format!("{base}/api/v1/repos/{repo}/languages"),
            "html_url": format!("{base}/{repo}"),
            "url": format!("{base}/api/v1/repos/{repo}"),
            "link": "",
            "ssh_url": format!("git@127.0.0.1:{repo}.git"),
            "clone_url": format!("{base}/{repo}.git"),
            "original_url": "",
            "website": "",
            "stars_count": 0,
            "forks_count": 0,
            "watchers_count": 0,
            "open_issues_count": open_issues,
            "open_pr_counter": open_prs,
            "release_counter": 0,
            "default_branch": "main",
            "default_target_branch": "main",
            "archived": self.ds.is_archived(repo),
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": self.time(self.ds.clock),
            "archived_at": if self.ds.is_archived(repo) {
                self.time(self.ds.clock)
            } else {
                "1970-01-01T00:00:00Z".to_owned()
            },
            "permissions": {"admin": !self.read_only, "push": !self.read_only, "pull": true},
            "has_code": true,
            "has_issues": !self.issues_disabled.contains(repo),
            "internal_tracker": {
                "enable_time_tracker": time_tracking,
                "allow_only_contributors_to_track_time": true,
                "enable_issue_dependencies": dependencies,
            },
        });
        let more = json!({
            "has_wiki": false,
            "has_pull_requests": !self.pulls_disabled.contains(repo),
            "has_projects": false,
            "projects_mode": "all",
            "has_releases": false,
            "has_packages": false,
            "has_actions": true,
            "ignore_whitespace_conflicts": false,
            "allow_merge_commits": true,
            "allow_merge_update": true,
            "allow_rebase": true,
            "allow_rebase_explicit": true,
            "allow_squash_merge": true,
            "allow_fast_forward_only_merge": true,
            "allow_rebase_update": true,
            "allow_manual_merge": false,
            "autodetect_manual_merge": false,
            "default_allow_maintainer_edit": false,
            "default_delete_branch_after_merge": false,
            "default_merge_style": "merge",
            "default_update_style": "merge",
            "avatar_url": "",
            "internal": false,
            "mirror_interval": "",
            "object_format_name": "sha1",
            "mirror_updated": "1970-01-01T00:00:00Z",
            "mirror_last_sync_at": "1970-01-01T00:00:00Z",
            "repo_transfer": null,
            "topics": [],
            "licenses": [],
            "branch_count": 1,
            "external_tracker": null,
            "external_wiki": null,
        });
        if let (Some(o), Value::Object(m)) = (v.as_object_mut(), more) {
            o.extend(m);
        }
        self.newer(v)
    }

    /// A pull request; `listed` is the list endpoint's shape, which Gitea builds differently from the single
    /// answer (services/convert/pull.go `ToAPIPullRequests` vs `ToAPIPullRequest`): nil slices stay `null`,
    /// `merged_by` is not loaded, and the diff counts are left out.
    pub fn pull(&self, repo: &RepoName, p: &Pull, dependencies: bool, listed: bool) -> Value {
        let n = p.number;
        let sha = format!("{:040x}", self.ds.issue_id(repo, n));
        let shape = PullShape {
            number: n,
            author: &p.author,
            title: &p.title,
            body: &p.body,
            state: p.state,
            merged: p.merged,
            merged_at: if p.merged { p.closed_at } else { None },
            merged_by: p.merged.then_some(p.author.as_str()),
            merge_commit_sha: p.merged.then(|| format!("{n:040x}")),
            head: (format!("pr-{n}"), sha.clone()),
            head_fork: None,
            head_gone: false,
            base: ("main".into(), sha),
            merge_base: format!("{:040x}", 0),
            created_at: p.created_at,
            updated_at: p.updated_at,
            closed_at: p.closed_at,
        };
        self.pull_shape(repo, &shape, dependencies, listed)
    }

    /// A pull request from its facts; see [`Render::pull`] for `listed`.
    pub fn pull_shape(
        &self,
        repo: &RepoName,
        p: &PullShape<'_>,
        dependencies: bool,
        listed: bool,
    ) -> Value {
        let base = self.base;
        let n = p.number;
        let repo_json = self.repository(repo, dependencies, true);
        let branch = |(r, sha): &(String, String)| {
            json!({
                "label": r,
                "ref": r,
                "sha": sha,
                "repo_id": self.ds.repo_id(repo).unwrap_or(0),
                "repo": repo_json,
            })
        };
        // services/convert/pull.go: a fork's branch is named as it is in the fork (`label` and `ref`, no
        // owner), with the fork as its repository.
        let head = match p.head_fork {
            None if p.head_gone => {
                let mut head = branch(&p.head);
                head["ref"] = json!(format!("refs/pull/{n}/head"));
                head
            }
            None => branch(&p.head),
            Some(owner) => {
                let fork = RepoName {
                    owner: owner.to_owned(),
                    name: repo.name.clone(),
                };
                let id = self.ds.repo_id(repo).unwrap_or(0) + 1_000_000;
                let mut fork_json = self.repository(&fork, dependencies, true);
                if let Some(o) = fork_json.as_object_mut() {
                    o.insert("id".into(), json!(id));
                    o.insert("fork".into(), json!(true));
                }
                json!({
                    "label": p.head.0,
                    "ref": p.head.0,
                    "sha": p.head.1,
                    "repo_id": id,
                    "repo": fork_json,
                })
            }
        };
        let empty_list = if listed { Value::Null } else { json!([]) };
        let mut v = json!({
            "id": self.ds.issue_id(repo, n),
            "url": format!("{base}/{repo}/pulls/{n}"),
            "number": n,
            "user": self.user(p.author),
            "title": p.title,
            "body": p.body,
            "labels": [],
            "milestone": null,
            "assignee": null,
            "assignees": empty_list,
            "requested_reviewers": empty_list,
            "requested_reviewers_teams": empty_list,
            "state": state_str(p.state),
            "draft": false,
            "is_locked": false,
            "comments": 0,
            // `int ,omitempty`: present as 0 in Gitea 1.27's jsonv2 builds.
            "review_comments": 0,
            "html_url": format!("{base}/{repo}/pulls/{n}"),
            "diff_url": format!("{base}/{repo}/pulls/{n}.diff"),
            "patch_url": format!("{base}/{repo}/pulls/{n}.patch"),
            "mergeable": p.state == OpenState::Open,
            "merged": p.merged,
            "merged_at": self.opt_time(p.merged_at),
            "merge_commit_sha": p.merge_commit_sha.clone().map_or(Value::Null, Value::String),
            "merged_by": match p.merged_by {
                Some(u) if !listed => self.user(u),
                _ => Value::Null,
            },
            "allow_maintainer_edit": false,
            "base": branch(&p.base),
            "head": head,
            "merge_base": p.merge_base,
            "due_date": null,
            "created_at": self.time(p.created_at),
            "updated_at": self.time(p.updated_at),
            "closed_at": self.opt_time(p.closed_at),
            "pin_order": 0,
            "content_version": 0,
        });
        // `*int ,omitempty`: left out of the list on purpose, sent in a single answer.
        if !listed && let Some(o) = v.as_object_mut() {
            o.insert("additions".into(), json!(0));
            o.insert("deletions".into(), json!(0));
            o.insert("changed_files".into(), json!(0));
        }
        self.newer(v)
    }

    pub fn comment(&self, repo: &RepoName, number: u64, c: &commitea::domain::Comment) -> Value {
        let base = self.base;
        self.newer(json!({
            "id": c.id,
            "html_url": format!("{base}/{repo}/issues/{number}#issuecomment-{}", c.id),
            "pull_request_url": "",
            "issue_url": format!("{base}/{repo}/issues/{number}"),
            "user": self.user(&c.user),
            "original_author": "",
            "original_author_id": 0,
            "body": c.body,
            "assets": [],
            "created_at": self.time(c.created_at),
            "updated_at": self.time(c.updated_at),
        }))
    }

    pub fn tracked_time(
        &self,
        repo: &RepoName,
        i: &Issue,
        t: &commitea::domain::TrackedTime,
    ) -> Value {
        self.newer(json!({
            "id": t.id,
            "created": self.time(t.created),
            "time": t.time,
            "user_id": user_id(&t.user),
            "user_name": t.user,
            "issue_id": self.ds.issue_id(repo, i.number),
            "issue": self.issue(repo, i),
        }))
    }

    /// One timeline entry; `entry` is a comment or an event of issue `i`.
    pub fn timeline(&self, repo: &RepoName, i: &Issue, entry: &TimelineEntry<'_>) -> Value {
        let base = self.base;
        let n = i.number;
        let mut v = json!({
            "id": 0,
            "type": "",
            "html_url": "",
            "pull_request_url": "",
            "issue_url": format!("{base}/{repo}/issues/{n}"),
            "user": null,
            "body": "",
            "created_at": "",
            "updated_at": "",
            "old_project_id": 0,
            "project_id": 0,
            "old_title": "",
            "new_title": "",
            "old_ref": "",
            "new_ref": "",
            "ref_issue": null,
            "ref_comment": null,
            "ref_action": "",
            "ref_commit_sha": "",
            "review_id": 0,
            "label": null,
            "assignee": null,
            "assignee_team": null,
            "removed_assignee": false,
            "resolve_doer": null,
            "dependent_issue": null,
            "milestone": null,
            "old_milestone": null,
            "tracked_time": null,
        });
        let set = |v: &mut Value, k: &str, x: Value| {
            if let Some(o) = v.as_object_mut() {
                o.insert(k.to_owned(), x);
            }
        };
        match entry {
            TimelineEntry::Comment(c) => {
                set(&mut v, "id", json!(c.id));
                set(&mut v, "type", json!("comment"));
                set(
                    &mut v,
                    "html_url",
                    json!(format!("{base}/{repo}/issues/{n}#issuecomment-{}", c.id)),
                );
                set(&mut v, "user", self.user(&c.user));
                set(&mut v, "body", json!(c.body));
                set(&mut v, "created_at", json!(self.time(c.created_at)));
                set(&mut v, "updated_at", json!(self.time(c.updated_at)));
            }
            TimelineEntry::Event(e) => {
                set(&mut v, "id", json!(e.id));
                set(&mut v, "type", json!(e.kind));
                set(
                    &mut v,
                    "html_url",
                    json!(format!("{base}/{repo}/issues/{n}#issuecomment-{}", e.id)),
                );
                set(&mut v, "user", self.user(&e.user));
                set(&mut v, "created_at", json!(self.time(e.created_at)));
                set(&mut v, "updated_at", json!(self.time(e.created_at)));
                match &e.kind {
                    commitea::domain::EventKind::Label => {
                        if let Some(l) = &e.label {
                            let label = self.ds.label_by_name(repo, l);
                            set(&mut v, "label", self.label(repo, &label));
                        }
                        // Gitea's quirk: the body says whether the label was added ("1") or removed ("").
                        set(&mut v, "body", json!(if e.removed { "" } else { "1" }));
                    }
                    commitea::domain::EventKind::Milestone => {
                        set(&mut v, "milestone", self.milestone_by_id(e.milestone));
                        set(
                            &mut v,
                            "old_milestone",
                            self.milestone_by_id(e.old_milestone),
                        );
                    }
                    commitea::domain::EventKind::Assignees => {
                        if let Some(a) = &e.assignee {
                            set(&mut v, "assignee", self.user(a));
                        }
                        set(&mut v, "removed_assignee", json!(e.removed));
                    }
                    // services/convert/issue_comment.go `ToTimelineComment` returns nil — a `null` element
                    // — when the issue an entry refers to cannot be loaded.
                    commitea::domain::EventKind::PullRef => {
                        if let Some(p) = &e.pull {
                            let ref_issue = self.issue_or_pull(p);
                            if ref_issue.is_null() {
                                return Value::Null;
                            }
                            set(&mut v, "ref_issue", ref_issue);
                            set(&mut v, "ref_action", json!("references"));
                        }
                    }
                    commitea::domain::EventKind::AddDependency
                    | commitea::domain::EventKind::RemoveDependency => {
                        if let Some(d) = &e.dependency {
                            let dep = self.issue_or_pull(d);
                            if dep.is_null() {
                                return Value::Null;
                            }
                            set(&mut v, "dependent_issue", dep);
                        }
                    }
                    commitea::domain::EventKind::ChangeTitle => {
                        set(
                            &mut v,
                            "old_title",
                            json!(e.old_title.clone().unwrap_or_default()),
                        );
                        set(
                            &mut v,
                            "new_title",
                            json!(e.new_title.clone().unwrap_or_default()),
                        );
                    }
                    _ => {}
                }
            }
            TimelineEntry::Time(t) => {
                set(&mut v, "id", json!(TIME_EVENT_IDS + t.id));
                set(&mut v, "type", json!("add_time_manual"));
                set(
                    &mut v,
                    "html_url",
                    json!(format!(
                        "{base}/{repo}/issues/{n}#issuecomment-{}",
                        TIME_EVENT_IDS + t.id
                    )),
                );
                set(&mut v, "user", self.user(&t.user));
                // Gitea rewrites the stored seconds into words (`ToTimelineComment`).
                set(&mut v, "body", json!(sec_to_hours(t.time)));
                set(&mut v, "created_at", json!(self.time(t.created)));
                set(&mut v, "updated_at", json!(self.time(t.created)));
                set(&mut v, "tracked_time", self.tracked_time(repo, i, t));
            }
            TimelineEntry::TimeDeleted(d) => {
                let id = DELETED_TIME_EVENT_IDS + d.time.id;
                set(&mut v, "id", json!(id));
                set(&mut v, "type", json!("delete_time_manual"));
                set(
                    &mut v,
                    "html_url",
                    json!(format!("{base}/{repo}/issues/{n}#issuecomment-{id}")),
                );
                set(&mut v, "user", self.user(&d.by));
                // `DeleteTime` stores "|" and the seconds (since 1.21), which `ToTimelineComment`
                // writes in words for the API, as it does an added time's.
                set(&mut v, "body", json!(sec_to_hours(d.time.time)));
                set(&mut v, "created_at", json!(self.time(d.at)));
                set(&mut v, "updated_at", json!(self.time(d.at)));
            }
            TimelineEntry::Hidden(_) => {}
        }
        self.newer(v)
    }
}

/// Where the ids of the emulator's time-tracking timeline entries start (Gitea writes one comment per
/// tracked time; the snapshot keeps the time itself, not the comment).
const TIME_EVENT_IDS: u64 = 1_000_000_000;
/// Where the ids of the `delete_time_manual` entries start.
const DELETED_TIME_EVENT_IDS: u64 = 2_000_000_000;

/// One entry of an issue's timeline as Gitea stores it, before it filters out what the caller may not see.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TimelineEntry<'a> {
    /// A comment (`type: comment`).
    Comment(&'a commitea::domain::Comment),
    /// An event.
    Event(&'a commitea::domain::TimelineEvent),
    /// The `add_time_manual` entry Gitea writes for a tracked time.
    Time(&'a commitea::domain::TrackedTime),
    /// The `delete_time_manual` entry Gitea writes when a tracked time is deleted.
    TimeDeleted(&'a DeletedTime),
    /// An entry Gitea drops after paging (a comment the caller cannot see); carries its time.
    Hidden(DateTime<Utc>),
}

impl TimelineEntry<'_> {
    pub fn updated(&self) -> DateTime<Utc> {
        match self {
            TimelineEntry::Comment(c) => c.updated_at,
            TimelineEntry::Event(e) => e.created_at,
            TimelineEntry::Time(t) => t.created,
            TimelineEntry::TimeDeleted(d) => d.at,
            TimelineEntry::Hidden(t) => *t,
        }
    }
}

/// After this many visible entries the stored timeline holds one hidden entry, so pages come back short.
pub(crate) const HIDDEN_EVERY: usize = 3;

/// Issue `i`'s stored timeline: comments and events by (time, id), with a hidden entry after every
/// [`HIDDEN_EVERY`] visible ones; `deleted` are its deleted tracked times (their add entries and their
/// deletions).
pub(crate) fn timeline_entries<'a>(
    i: &'a Issue,
    deleted: &'a [DeletedTime],
) -> Vec<TimelineEntry<'a>> {
    let mut visible: Vec<(DateTime<Utc>, u64, TimelineEntry<'_>)> = i
        .comments
        .iter()
        .map(|c| (c.created_at, c.id, TimelineEntry::Comment(c)))
        .chain(
            i.timeline
                .iter()
                .map(|e| (e.created_at, e.id, TimelineEntry::Event(e))),
        )
        .chain(
            i.tracked_times
                .iter()
                .map(|t| (t.created, TIME_EVENT_IDS + t.id, TimelineEntry::Time(t))),
        )
        .chain(deleted.iter().flat_map(|d| {
            [
                (
                    d.time.created,
                    TIME_EVENT_IDS + d.time.id,
                    TimelineEntry::Time(&d.time),
                ),
                (
                    d.at,
                    DELETED_TIME_EVENT_IDS + d.time.id,
                    TimelineEntry::TimeDeleted(d),
                ),
            ]
        }))
        .collect();
    visible.sort_by_key(|(t, id, _)| (*t, *id));
    let mut out = Vec::with_capacity(visible.len() + visible.len() / HIDDEN_EVERY);
    for (k, (t, _, e)) in visible.into_iter().enumerate() {
        out.push(e);
        if (k + 1) % HIDDEN_EVERY == 0 {
            out.push(TimelineEntry::Hidden(t));
        }
    }
    out
}

/// Seconds in words as Gitea's `util.SecToHours` writes them (modules/util/sec_to_time.go): whole hours
/// and minutes, each left out when 0, seconds only under a minute (`14 hours 33 minutes`, `1 hour`).
fn sec_to_hours(seconds: u64) -> String {
    let unit = |n: u64, name: &str| match n {
        0 => None,
        1 => Some(format!("1 {name}")),
        n => Some(format!("{n} {name}s")),
    };
    let words: Vec<String> = [
        unit(seconds / 3600, "hour"),
        unit(seconds / 60 % 60, "minute"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if words.is_empty() {
        unit(seconds, "second").unwrap_or_default()
    } else {
        words.join(" ")
    }
}
