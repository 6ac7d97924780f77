//! Rewinding a snapshot to a past moment, and what became of each issue after it.
//!
//! [`as_of`] answers "what would a sync at `cut` have seen?" using only information dated at or before
//! the cut, so that a forecast made from it cannot peek at the future:
//!
//! - issues, milestones and linked pull requests created after the cut do not exist;
//! - timeline events, comments and tracked times after the cut are dropped;
//! - labels, assignees, milestone, title and open/closed are reverted by undoing the timeline events after
//!   the cut, newest first (the same undo the lifecycle uses); an issue is closed at the cut only if a close
//!   at or before the cut is on record (its last such close is its `closed_at`);
//! - `add_dependency` events after the cut are undone by removing that dependency, and a dependency on an
//!   issue created after the cut is removed whatever the timeline says;
//! - a pull request is linked from the later of its creation and its first `pull_ref` event; one closed or
//!   merged after the cut is shown open and unmerged; a milestone closed after the cut is shown open;
//! - `updated_at` is the last activity on record at or before the cut (creation, timeline events, comments,
//!   tracked times, the close), not the stored value capped at the cut: whether the stored value is before
//!   or after the cut would itself tell whether anything happened later;
//! - `meta.synced_at` is the cut and every repository reads as fully synced at the cut.
//!
//! What Gitea keeps no history of is shown as last synced, and is the one way the future can leak in:
//! issue and comment bodies, comment edits, Gitea's native `time_estimate`, milestone titles, descriptions
//! and due dates, pull request titles, label definitions, and `remove_dependency` events (the event does
//! not say which side depended on which, so a removed dependency is not restored). Of these, the engine
//! reads the native estimate and milestone due dates; CommiTea's own `est/*` labels have full history.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, NaiveTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Outcome, days_between};
use crate::domain::lifecycle::{Facts, undo};
use crate::domain::{Issue, IssueKey, LinkedPull, Milestone, OpenState, TimelineEvent};
use crate::state::{Meta, RepoMeta, Snapshot};

/// The last cut is at least this many days before the snapshot was synced, so every cut has a fortnight
/// of outcomes to be scored on.
pub(crate) const END_MARGIN_DAYS: u32 = 14;

/// The snapshot as a sync at `cut` would have seen it, using only information dated at or before `cut`.
///
/// See the module documentation for the exact rules and the fields Gitea keeps no history of.
pub fn as_of(snapshot: &Snapshot, cut: DateTime<Utc>) -> Snapshot {
    let later_issues: BTreeSet<&IssueKey> = snapshot
        .issues
        .iter()
        .filter(|(_, i)| i.created_at > cut)
        .map(|(k, _)| k)
        .collect();
    let later_milestones: BTreeSet<u64> = snapshot
        .milestones
        .values()
        .flatten()
        .filter(|m| m.created_at > cut)
        .map(|m| m.id)
        .collect();
    let issues = snapshot
        .issues
        .iter()
        .filter(|(_, i)| i.created_at <= cut)
        .map(|(k, i)| {
            let mut issue = rewind_issue(k, i, cut);
            issue.depends_on.retain(|d| !later_issues.contains(d));
            if issue
                .milestone
                .is_some_and(|m| later_milestones.contains(&m))
            {
                issue.milestone = None;
            }
            (k.clone(), issue)
        })
        .collect();
    let milestones = snapshot
        .milestones
        .iter()
        .map(|(repo, ms)| {
            let kept = ms
                .iter()
                .filter(|m| m.created_at <= cut)
                .map(|m| rewind_milestone(m, cut))
                .collect();
            (repo.clone(), kept)
        })
        .collect();
    Snapshot {
        meta: Meta {
            format: snapshot.meta.format,
            synced_at: cut,
            server: snapshot.meta.server.clone(),
            repositories: snapshot
                .meta
                .repositories
                .iter()
                .map(|r| RepoMeta {
                    name: r.name.clone(),
                    cursor: Some(cut),
                    last_full_sync: Some(cut),
                    unreached_since: None,
                    renamed_to: None,
                    formerly: r.formerly.clone(),
                })
                .collect(),
        },
        labels: snapshot.labels.clone(),
        milestones,
        issues,
    }
}

fn rewind_milestone(m: &Milestone, cut: DateTime<Utc>) -> Milestone {
    let mut m = m.clone();
    if m.closed_at.is_some_and(|c| c > cut) {
        m.state = OpenState::Open;
        m.closed_at = None;
    }
    m
}

/// The timeline in the order it happened (time, then Gitea's id for events at the same instant).
fn sorted_events(issue: &Issue) -> Vec<&TimelineEvent> {
    let mut events: Vec<&TimelineEvent> = issue.timeline.iter().collect();
    events.sort_by_key(|e| (e.created_at, e.id));
    events
}

/// One issue as it stood at `cut` (it must have been created by then). Dependencies on issues and
/// milestones created after the cut are the caller's to remove: they need the whole snapshot.
fn rewind_issue(key: &IssueKey, issue: &Issue, cut: DateTime<Utc>) -> Issue {
    let events = sorted_events(issue);
    let (before, after): (Vec<&TimelineEvent>, Vec<&TimelineEvent>) =
        events.into_iter().partition(|e| e.created_at <= cut);

    let mut facts = Facts::final_of(issue);
    let mut title = issue.title.clone();
    let mut depends_on: BTreeSet<IssueKey> = issue.depends_on.iter().cloned().collect();
    for e in after.iter().rev() {
        undo(&mut facts, e);
        match &e.kind {
            crate::domain::EventKind::ChangeTitle => {
                if let Some(old) = &e.old_title {
                    title.clone_from(old);
                }
            }
            crate::domain::EventKind::AddDependency => {
                if let Some(d) = &e.dependency {
                    depends_on.remove(d);
                }
            }
            _ => {}
        }
    }

    // Closed at the cut only with a close on record at or before it: a close event, else Gitea's
    // closed_at (issues closed without a timeline entry, e.g. by an older sync).
    let closed_at = if facts.closed {
        before
            .iter()
            .rev()
            .find(|e| e.kind == crate::domain::EventKind::Close)
            .map(|e| e.created_at)
            .or(issue.closed_at.filter(|c| *c <= cut))
    } else {
        None
    };

    let comments: Vec<_> = issue
        .comments
        .iter()
        .filter(|c| c.created_at <= cut)
        .map(|c| {
            let mut c = c.clone();
            c.updated_at = c.updated_at.min(cut);
            c
        })
        .collect();
    let tracked_times: Vec<_> = issue
        .tracked_times
        .iter()
        .filter(|t| t.created <= cut)
        .cloned()
        .collect();
    let pull_requests: Vec<_> = issue
        .pull_requests
        .iter()
        .filter_map(|p| rewind_pull(key, issue, p, cut))
        .collect();

    let updated_at = std::iter::once(issue.created_at)
        .chain(before.iter().map(|e| e.created_at))
        .chain(comments.iter().flat_map(|c| [c.created_at, c.updated_at]))
        .chain(tracked_times.iter().map(|t| t.created))
        .chain(closed_at)
        .max()
        .unwrap_or(issue.created_at);

    Issue {
        number: issue.number,
        title,
        state: if closed_at.is_some() {
            OpenState::Closed
        } else {
            OpenState::Open
        },
        author: issue.author.clone(),
        created_at: issue.created_at,
        updated_at,
        closed_at,
        assignees: facts.assignees.into_iter().collect(),
        labels: facts.labels.into_iter().collect(),
        milestone: facts.milestone,
        time_estimate: issue.time_estimate,
        depends_on: depends_on.into_iter().collect(),
        body: issue.body.clone(),
        comments,
        timeline: before.into_iter().cloned().collect(),
        tracked_times,
        outside_blockers: issue.outside_blockers.clone(),
        hidden_blockers: issue.hidden_blockers,
        pull_requests,
    }
}

/// A linked pull request as it stood at `cut`, or `None` if it was not yet linked.
fn rewind_pull(
    key: &IssueKey,
    issue: &Issue,
    p: &LinkedPull,
    cut: DateTime<Utc>,
) -> Option<LinkedPull> {
    let repo = p.repository.as_ref().unwrap_or(&key.repo);
    // Linked from its first reference, or from its creation if it references the issue itself.
    let referenced = issue
        .timeline
        .iter()
        .filter(|e| {
            e.kind == crate::domain::EventKind::PullRef
                && e.pull
                    .as_ref()
                    .is_some_and(|k| k.number == p.number && &k.repo == repo)
        })
        .map(|e| e.created_at)
        .min();
    let linked = referenced.map_or(p.created_at, |r| r.max(p.created_at));
    if linked > cut {
        return None;
    }
    let mut p = p.clone();
    if p.closed_at.is_some_and(|c| c > cut) {
        p.state = OpenState::Open;
        p.merged = false;
        p.closed_at = None;
    }
    Some(p)
}

/// What became of `key` after `cut`, as far as `snapshot` (the latest data) tells.
///
/// `None` when the issue did not exist at the cut or was already closed then (nothing to forecast), or
/// when it is closed now without a recorded close time. Otherwise [`Outcome::Resolved`] with the days
/// from the cut to its final close (`closed_at`: work that was closed and reopened was not done at the
/// first close), or [`Outcome::Open`] with the days from the cut to the end of the data (`synced_at`).
pub fn outcome(snapshot: &Snapshot, key: &IssueKey, cut: DateTime<Utc>) -> Option<Outcome> {
    let issue = snapshot.issues.get(key)?;
    if issue.created_at > cut || rewind_issue(key, issue, cut).state == OpenState::Closed {
        return None;
    }
    if issue.state == OpenState::Closed {
        let closed = issue.closed_at.or_else(|| {
            sorted_events(issue)
                .into_iter()
                .rev()
                .find(|e| e.kind == crate::domain::EventKind::Close)
                .map(|e| e.created_at)
        })?;
        Some(Outcome::Resolved(days_between(cut, closed).max(0.0)))
    } else {
        Some(Outcome::Open(
            days_between(cut, snapshot.meta.synced_at).max(0.0),
        ))
    }
}

/// The share of the span before's pace below which the team's pace after a cut counts as fallen.
pub const PACE_FELL_BELOW: f64 = 0.75;

/// What the team did after a cut: kept its pace on new work or slowed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum Pace {
    /// The pace after the cut was at least [`PACE_FELL_BELOW`] of the pace before.
    Held,
    /// It fell under that.
    Fell,
}

impl Pace {
    /// The word for it, as reports print it: `held` or `fell`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Held => "held",
            Self::Fell => "fell",
        }
    }

    /// What the team did, in the Calibration page's words: `kept its pace` or `slowed`.
    pub fn words(self) -> &'static str {
        match self {
            Self::Held => "kept its pace",
            Self::Fell => "slowed",
        }
    }
}

/// The team's pace on new work after `cut` against before it: issues opened in the `span_days` after the
/// cut and closed within them, against the same count for the `span_days` before (one more on each side,
/// so that two quiet spans compare as equal). New work only, so the backlog open at the cut — whose
/// forecasts a backtest scores — does not decide its own side. Needs the span after the cut on record.
pub fn pace_after(snapshot: &Snapshot, cut: DateTime<Utc>, span_days: u32) -> Pace {
    let span = Duration::days(i64::from(span_days));
    let done_in = |from: DateTime<Utc>| {
        let to = from + span;
        snapshot
            .issues
            .values()
            .filter(|i| i.created_at > from && i.created_at <= to)
            .filter(|i| i.state == OpenState::Closed && i.closed_at.is_some_and(|c| c <= to))
            .count() as f64
            + 1.0
    };
    if done_in(cut) < PACE_FELL_BELOW * done_in(cut - span) {
        Pace::Fell
    } else {
        Pace::Held
    }
}

/// The first cut [`cut_dates`] may make: the first midnight (UTC) at least `min_history_days` after the
/// oldest issue was created; `None` without issues. It is made once [`END_MARGIN_DAYS`] have passed after it.
pub fn first_cut(snapshot: &Snapshot, min_history_days: u32) -> Option<DateTime<Utc>> {
    let first = snapshot.issues.values().map(|i| i.created_at).min()?;
    let earliest = first + Duration::days(i64::from(min_history_days));
    let midnight = earliest.date_naive().and_time(NaiveTime::MIN).and_utc();
    Some(if midnight < earliest {
        midnight + Duration::days(1)
    } else {
        midnight
    })
}

/// The cuts a backtest forecasts from, oldest first.
///
/// The rule: the first cut is the first midnight (UTC) at least `min_history_days` after the oldest
/// issue was created, so every forecast has that much history to learn from; then one every `every_days`
/// days (at least 1); the last is at least [`END_MARGIN_DAYS`] before `meta.synced_at`, so its outcomes
/// have had time to happen. The cuts are anchored at the start of the data, not its end, so a later sync
/// scores the same cuts again (with more outcomes known) rather than shifting them. Empty when the history
/// is too short or there are no issues.
pub fn cut_dates(
    snapshot: &Snapshot,
    every_days: u32,
    min_history_days: u32,
) -> Vec<DateTime<Utc>> {
    let Some(start) = first_cut(snapshot, min_history_days) else {
        return Vec::new();
    };
    let last = snapshot.meta.synced_at - Duration::days(i64::from(END_MARGIN_DAYS));
    let step = Duration::days(i64::from(every_days.max(1)));
    std::iter::successors(Some(start), |c| Some(*c + step))
        .take_while(|c| *c <= last)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Comment, Label, RepoName, TrackedTime};
    use chrono::TimeZone;
    use std::collections::BTreeMap;

    fn t(day: u32, hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, day, hour, 0, 0).unwrap()
    }

    fn repo() -> RepoName {
        "acme/api".parse().unwrap()
    }

    fn key(n: u64) -> IssueKey {
        repo().issue(n)
    }

    fn ev(id: u64, kind: &str, at: DateTime<Utc>) -> TimelineEvent {
        TimelineEvent::new(id, kind.into(), at, "ann")
    }

    fn label_ev(id: u64, at: DateTime<Utc>, label: &str, removed: bool) -> TimelineEvent {
        let mut e = ev(id, "label", at);
        e.label = Some(label.into());
        e.removed = removed;
        e
    }

    fn issue(n: u64, created: DateTime<Utc>) -> Issue {
        Issue {
            body: "text".into(),
            ..Issue::bare(n, created)
        }
    }

    fn milestone(id: u64, created: DateTime<Utc>) -> Milestone {
        Milestone {
            id,
            title: format!("m{id}"),
            description: String::new(),
            state: OpenState::Open,
            due_on: Some(t(28, 0)),
            created_at: created,
            closed_at: None,
        }
    }

    fn snapshot(synced: DateTime<Utc>, issues: Vec<Issue>, ms: Vec<Milestone>) -> Snapshot {
        Snapshot {
            meta: Meta::full(synced, Some("https://git.example".into()), &[repo()]),
            labels: BTreeMap::from([(
                repo(),
                vec![Label {
                    id: 1,
                    name: "bug".into(),
                    color: "ff0000".into(),
                    description: String::new(),
                }],
            )]),
            milestones: BTreeMap::from([(repo(), ms)]),
            issues: issues.into_iter().map(|i| (key(i.number), i)).collect(),
        }
    }

    fn json(s: &Snapshot) -> String {
        serde_json::to_string_pretty(&(&s.meta, &s.labels, &s.milestones, &s.issues)).unwrap()
    }

    /// Issue 1 is labelled, assigned and milestoned before the cut (day 10) and has a pull request open.
    fn base() -> Snapshot {
        let mut i1 = issue(1, t(2, 9));
        i1.labels = vec!["est/1d".into(), "p/1".into()];
        i1.assignees = vec!["bob".into()];
        i1.milestone = Some(7);
        let mut a = ev(3, "assignees", t(4, 9));
        a.assignee = Some("bob".into());
        let mut m = ev(4, "milestone", t(5, 9));
        m.milestone = Some(7);
        let mut pr = ev(5, "pull_ref", t(6, 9));
        pr.pull = Some(key(9));
        i1.timeline = vec![
            label_ev(1, t(3, 9), "est/1d", false),
            label_ev(2, t(3, 10), "p/1", false),
            a,
            m,
            pr,
        ];
        i1.comments = vec![Comment {
            id: 20,
            user: "bob".into(),
            created_at: t(6, 10),
            updated_at: t(6, 11),
            body: "on it".into(),
        }];
        i1.tracked_times = vec![TrackedTime {
            id: 30,
            user: "bob".into(),
            created: t(7, 9),
            time: 3600,
        }];
        i1.pull_requests = vec![LinkedPull {
            number: 9,
            repository: None,
            title: "fix".into(),
            state: OpenState::Open,
            merged: false,
            created_at: t(6, 8),
            closed_at: None,
        }];
        i1.updated_at = t(7, 9);
        let mut i2 = issue(2, t(3, 9));
        i2.depends_on = vec![key(1)];
        let mut dep = ev(40, "add_dependency", t(3, 12));
        dep.dependency = Some(key(1));
        i2.timeline = vec![dep];
        i2.updated_at = t(3, 12);
        snapshot(t(10, 0), vec![i1, i2], vec![milestone(7, t(1, 0))])
    }

    /// `base()` and then everything that happened between the cut (day 10) and the sync (day 25).
    fn planted() -> Snapshot {
        let mut s = base();
        s.meta = Meta::full(t(25, 0), Some("https://git.example".into()), &[repo()]);
        let cut_later = |d: u32| t(d, 9);
        let i1 = s.issues.get_mut(&key(1)).unwrap();
        // A re-estimate, a new label, a reassignment, a milestone move, a rename, a merge and a close.
        i1.labels = vec!["bug".into(), "est/3d".into(), "p/1".into()];
        i1.timeline
            .push(label_ev(50, cut_later(11), "est/1d", true));
        i1.timeline
            .push(label_ev(51, cut_later(11), "est/3d", false));
        i1.timeline.push(label_ev(52, cut_later(12), "bug", false));
        let mut un = ev(53, "assignees", cut_later(12));
        un.assignee = Some("bob".into());
        un.removed = true;
        let mut re = ev(54, "assignees", cut_later(12));
        re.assignee = Some("cy".into());
        i1.assignees = vec!["cy".into()];
        let mut mv = ev(55, "milestone", cut_later(13));
        mv.milestone = Some(8);
        mv.old_milestone = Some(7);
        i1.milestone = Some(8);
        let mut rn = ev(56, "change_title", cut_later(13));
        rn.old_title = Some("issue 1".into());
        rn.new_title = Some("renamed".into());
        i1.title = "renamed".into();
        let mut pr2 = ev(57, "pull_ref", cut_later(14));
        pr2.pull = Some(key(12));
        i1.timeline
            .extend([un, re, mv, rn, pr2, ev(58, "close", cut_later(15))]);
        i1.state = OpenState::Closed;
        i1.closed_at = Some(cut_later(15));
        i1.updated_at = cut_later(15);
        i1.pull_requests[0].state = OpenState::Closed;
        i1.pull_requests[0].merged = true;
        i1.pull_requests[0].closed_at = Some(cut_later(15));
        i1.pull_requests.push(LinkedPull {
            number: 12,
            repository: None,
            title: "more".into(),
            state: OpenState::Open,
            merged: false,
            created_at: cut_later(14),
            closed_at: None,
        });
        i1.comments.push(Comment {
            id: 60,
            user: "cy".into(),
            created_at: cut_later(16),
            updated_at: cut_later(16),
            body: "done in 3 days".into(),
        });
        i1.tracked_times.push(TrackedTime {
            id: 61,
            user: "cy".into(),
            created: cut_later(15),
            time: 7200,
        });
        // Issue 2 gains a dependency on a new issue, and is closed and reopened.
        let i2 = s.issues.get_mut(&key(2)).unwrap();
        let mut dep = ev(70, "add_dependency", cut_later(17));
        dep.dependency = Some(key(3));
        i2.depends_on = vec![key(1), key(3)];
        i2.timeline.extend([
            dep,
            ev(71, "close", cut_later(18)),
            ev(72, "reopen", cut_later(19)),
        ]);
        i2.updated_at = cut_later(19);
        // A new issue and a new milestone; the old milestone closes.
        let mut i3 = issue(3, cut_later(16));
        i3.labels = vec!["est/2d".into()];
        s.issues.insert(key(3), i3);
        let ms = s.milestones.get_mut(&repo()).unwrap();
        ms[0].state = OpenState::Closed;
        ms[0].closed_at = Some(cut_later(20));
        ms.push(milestone(8, cut_later(12)));
        s
    }

    #[test]
    fn rewinding_to_the_sync_changes_nothing_but_the_bookkeeping() {
        let s = base();
        let r = as_of(&s, s.meta.synced_at);
        assert_eq!(r.issues, s.issues);
        assert_eq!(r.milestones, s.milestones);
    }

    #[test]
    fn future_information_does_not_leak() {
        let cut = t(10, 0);
        let original = as_of(&base(), cut);
        let planted = planted();
        // The plant really changed what the latest state says…
        assert_ne!(json(&base()), json(&planted));
        // …and none of it survives the rewind, byte for byte.
        assert_eq!(json(&as_of(&planted, cut)), json(&original));
    }

    #[test]
    fn undoes_each_kind_of_change() {
        let cut = t(10, 0);
        let r = as_of(&planted(), cut);
        let i1 = &r.issues[&key(1)];
        assert_eq!(i1.labels, vec!["est/1d", "p/1"]);
        assert_eq!(i1.assignees, vec!["bob"]);
        assert_eq!(i1.milestone, Some(7));
        assert_eq!(i1.title, "issue 1");
        assert_eq!((i1.state, i1.closed_at), (OpenState::Open, None));
        assert_eq!(i1.updated_at, t(7, 9));
        assert_eq!(i1.pull_requests.len(), 1);
        assert_eq!(i1.pull_requests[0].state, OpenState::Open);
        assert!(!i1.pull_requests[0].merged);
        assert_eq!((i1.comments.len(), i1.tracked_times.len()), (1, 1));
        assert_eq!(i1.timeline.len(), 5);
        assert_eq!(r.issues[&key(2)].depends_on, vec![key(1)]);
        assert!(!r.issues.contains_key(&key(3)));
        let ms = &r.milestones[&repo()];
        assert_eq!(ms.len(), 1);
        assert_eq!((ms[0].state, ms[0].closed_at), (OpenState::Open, None));
        assert_eq!(r.meta.synced_at, cut);
        assert_eq!(r.meta.repositories[0].cursor, Some(cut));
    }

    #[test]
    fn a_close_before_the_cut_stays_and_a_close_after_it_opens() {
        let mut i = issue(1, t(1, 9));
        i.timeline = vec![
            ev(1, "close", t(3, 9)),
            ev(2, "reopen", t(4, 9)),
            ev(3, "close", t(12, 9)),
        ];
        i.state = OpenState::Closed;
        i.closed_at = Some(t(12, 9));
        let s = snapshot(t(20, 0), vec![i], vec![]);
        let at = |d: u32| {
            let r = as_of(&s, t(d, 0));
            let i = &r.issues[&key(1)];
            (i.state, i.closed_at)
        };
        assert_eq!(at(2), (OpenState::Open, None));
        assert_eq!(at(4), (OpenState::Closed, Some(t(3, 9))));
        assert_eq!(at(5), (OpenState::Open, None));
        assert_eq!(at(13), (OpenState::Closed, Some(t(12, 9))));
        // Without a timeline, Gitea's closed_at decides.
        let mut bare = s.clone();
        bare.issues.get_mut(&key(1)).unwrap().timeline.clear();
        let r = as_of(&bare, t(5, 0));
        assert_eq!(r.issues[&key(1)].state, OpenState::Open);
        let r = as_of(&bare, t(13, 0));
        assert_eq!(r.issues[&key(1)].closed_at, Some(t(12, 9)));
    }

    #[test]
    fn pulls_count_from_their_first_reference() {
        let mut s = base();
        // The pull request existed before the cut but referenced the issue only after it.
        let i1 = s.issues.get_mut(&key(1)).unwrap();
        i1.timeline
            .iter_mut()
            .find(|e| e.kind == crate::domain::EventKind::PullRef)
            .unwrap()
            .created_at = t(11, 0);
        assert!(as_of(&s, t(10, 0)).issues[&key(1)].pull_requests.is_empty());
        assert_eq!(as_of(&s, t(12, 0)).issues[&key(1)].pull_requests.len(), 1);
    }

    #[test]
    fn outcomes() {
        let s = planted();
        let cut = t(10, 0);
        assert_eq!(outcome(&s, &key(1), cut), Some(Outcome::Resolved(5.375)));
        assert_eq!(outcome(&s, &key(2), cut), Some(Outcome::Open(15.0)));
        assert_eq!(outcome(&s, &key(3), cut), None, "created after the cut");
        assert_eq!(
            outcome(&s, &key(1), t(20, 0)),
            None,
            "closed before the cut"
        );
        assert_eq!(outcome(&s, &key(99), cut), None);
    }

    #[test]
    fn cuts_start_after_the_history_and_stop_before_the_end() {
        let s = planted(); // first issue 2026-03-02 09:00, synced 2026-03-25
        assert_eq!(cut_dates(&s, 3, 2), vec![t(5, 0), t(8, 0), t(11, 0)]);
        assert_eq!(
            cut_dates(&s, 0, 2).len(),
            7,
            "every day from the 5th to the 11th"
        );
        assert!(cut_dates(&s, 7, 30).is_empty());
        let mut midnight = s.clone();
        midnight.issues.get_mut(&key(1)).unwrap().created_at = t(2, 0);
        assert_eq!(cut_dates(&midnight, 7, 2)[0], t(4, 0));
    }

    #[test]
    fn the_pace_after_a_cut_counts_only_new_work_done_within_its_span() {
        let cut = Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap();
        let day = Duration::days(1);
        // `before` issues opened and closed in the 10 days before the cut, `after` in the 10 after; a
        // backlog of 40 issues opened long before and closed after the cut does not count.
        let history = |before: u64, after: u64| {
            let mut issues = Vec::new();
            let mut closed = |n: u64, opened: DateTime<Utc>, shut: DateTime<Utc>| {
                let mut i = issue(n, opened);
                i.state = OpenState::Closed;
                i.closed_at = Some(shut);
                issues.push(i);
            };
            for n in 0..before {
                closed(n + 1, cut - day * 9, cut - day);
            }
            for n in 0..after {
                closed(100 + n, cut + day, cut + day * 9);
            }
            for n in 0..40 {
                closed(200 + n, cut - day * 90, cut + day * 2);
            }
            // Opened after the cut but closed after its span: not done within it.
            closed(300, cut + day, cut + day * 11);
            snapshot(cut + day * 30, issues, vec![])
        };
        // 3/4 of (11 + 1) = 9: 8 + 1 holds, 7 + 1 falls.
        assert_eq!(pace_after(&history(11, 8), cut, 10), Pace::Held);
        assert_eq!(pace_after(&history(11, 7), cut, 10), Pace::Fell);
        // Two quiet spans are the same pace, and a rise is held.
        assert_eq!(pace_after(&history(0, 0), cut, 10), Pace::Held);
        assert_eq!(pace_after(&history(2, 30), cut, 10), Pace::Held);
    }
}
