//! The five lifecycle columns and the rules that put an issue in one, now and over its history.
//!
//! The rules, in order (the first that holds wins), are documented in `docs/lifecycle.md`:
//!
//! 1. `done`: the issue is closed.
//! 2. `in_review`: an open pull request references it.
//! 3. `diagnosis`: it carries one of the configured diagnosis labels (default `needs-info`,
//!    `needs-diagnosis`), or nobody has decided anything yet: no estimate, no priority label, no milestone
//!    and no assignee.
//! 4. `steeping`: it has an estimate, a priority label and a milestone: decided and in the pipe.
//! 5. `triage`: everything else: understood, waiting for a decision (estimate, priority or milestone missing).

use std::collections::BTreeSet;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::issue::{Issue, OpenState};
use super::{Estimate, Priority};

/// One of the five board columns.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Lifecycle {
    /// Not yet understood.
    Diagnosis,
    /// Understood, waiting for a decision: estimate, priority or milestone missing.
    Triage,
    /// Decided and in the pipe.
    Steeping,
    /// An open pull request references it.
    InReview,
    /// Closed.
    Done,
}

impl Lifecycle {
    /// All columns in board order.
    pub const ALL: [Lifecycle; 5] = [
        Self::Diagnosis,
        Self::Triage,
        Self::Steeping,
        Self::InReview,
        Self::Done,
    ];

    /// The snake_case name used in files and views.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Diagnosis => "diagnosis",
            Self::Triage => "triage",
            Self::Steeping => "steeping",
            Self::InReview => "in_review",
            Self::Done => "done",
        }
    }

    /// A human title for the column.
    pub fn title(self) -> &'static str {
        match self {
            Self::Diagnosis => "Diagnosis",
            Self::Triage => "Triage",
            Self::Steeping => "Steeping",
            Self::InReview => "In review",
            Self::Done => "Done",
        }
    }
}

impl fmt::Display for Lifecycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stretch of time an issue spent in one column; `until` is `None` for the current one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LifecycleSpan {
    /// The column.
    pub column: Lifecycle,
    /// When the issue entered it.
    pub since: DateTime<Utc>,
    /// When it left, if it has.
    pub until: Option<DateTime<Utc>>,
}

/// The facts the rules look at, at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Facts {
    /// Closed at this moment.
    pub closed: bool,
    /// Label names.
    pub labels: BTreeSet<String>,
    /// Milestone id.
    pub milestone: Option<u64>,
    /// Assignees.
    pub assignees: BTreeSet<String>,
    /// How many referencing pull requests are open.
    pub open_pulls: usize,
    /// Gitea's native estimate is set (it has no history, so it counts from creation).
    pub native_estimate: bool,
}

impl Facts {
    /// The issue's facts as last synced, without pull requests (the timeline adds those as they open).
    pub(crate) fn final_of(issue: &Issue) -> Self {
        Self {
            closed: issue.state == OpenState::Closed,
            labels: issue.labels.iter().cloned().collect(),
            milestone: issue.milestone,
            assignees: issue.assignees.iter().cloned().collect(),
            open_pulls: 0,
            native_estimate: issue.time_estimate > 0,
        }
    }
}

/// The lifecycle rules with their one setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Labels that put an open issue without an open pull request in `diagnosis`.
    pub diagnosis_labels: Vec<String>,
}

impl Default for Rules {
    fn default() -> Self {
        Self {
            diagnosis_labels: vec!["needs-info".into(), "needs-diagnosis".into()],
        }
    }
}

impl Rules {
    /// The column for these facts.
    pub(crate) fn classify(&self, f: &Facts) -> Lifecycle {
        if f.closed {
            return Lifecycle::Done;
        }
        if f.open_pulls > 0 {
            return Lifecycle::InReview;
        }
        // A label that reads, as the plan reads it: `est/banana` decides nothing.
        let has_est = f.native_estimate
            || f.labels
                .iter()
                .any(|l| matches!(Estimate::from_label(l), Some(Ok(_))));
        let has_prio = f
            .labels
            .iter()
            .any(|l| matches!(Priority::from_label(l), Some(Ok(_))));
        let has_ms = f.milestone.is_some();
        let flagged = self.diagnosis_labels.iter().any(|d| f.labels.contains(d));
        if flagged || (!has_est && !has_prio && !has_ms && f.assignees.is_empty()) {
            Lifecycle::Diagnosis
        } else if has_est && has_prio && has_ms {
            Lifecycle::Steeping
        } else {
            Lifecycle::Triage
        }
    }

    /// The column an issue is in now.
    pub fn current(&self, issue: &Issue) -> Lifecycle {
        self.classify(&Facts {
            closed: issue.state == OpenState::Closed,
            labels: issue.labels.iter().cloned().collect(),
            milestone: issue.milestone,
            assignees: issue.assignees.iter().cloned().collect(),
            open_pulls: issue
                .pull_requests
                .iter()
                .filter(|p| p.state == OpenState::Open)
                .count(),
            native_estimate: issue.time_estimate > 0,
        })
    }

    /// When the issue entered each column, from creation to now, derived from its timeline events.
    ///
    /// The state at creation is found by undoing the events from the current state backwards, so labels
    /// set at creation without an event are seen from the start. Pull requests count as open from when
    /// they were opened (or referenced, if later) until they were closed or merged.
    pub fn timeline(&self, issue: &Issue) -> Vec<LifecycleSpan> {
        let mut f = Facts::final_of(issue);
        let mut events: Vec<_> = issue.timeline.iter().collect();
        events.sort_by_key(|e| (e.created_at, e.id));
        for e in events.iter().rev() {
            undo(&mut f, e);
        }
        // Undoing close/reopen from the final state gives the state at creation; an issue is open then.
        f.closed = false;

        // Moments at which something may change: events, and pull requests opening or closing.
        #[derive(Clone, Copy)]
        enum Change<'a> {
            Event(&'a super::issue::TimelineEvent),
            PullOpen,
            PullClose,
        }
        let mut changes: Vec<(DateTime<Utc>, u8, u64, Change<'_>)> = events
            .iter()
            .map(|e| (e.created_at, 1, e.id, Change::Event(e)))
            .collect();
        for p in &issue.pull_requests {
            let linked = issue
                .timeline
                .iter()
                .filter(|e| {
                    e.kind == crate::domain::EventKind::PullRef
                        && e.pull.as_ref().is_some_and(|k| k.number == p.number)
                })
                .map(|e| e.created_at)
                .min()
                .map_or(p.created_at, |t| t.max(p.created_at));
            let closed = if p.state == OpenState::Closed {
                p.closed_at
            } else {
                None
            };
            if closed.is_none_or(|c| c > linked) {
                changes.push((linked, 0, p.number, Change::PullOpen));
                if let Some(c) = closed {
                    changes.push((c, 0, p.number, Change::PullClose));
                }
            }
        }
        changes.sort_by_key(|(t, order, id, _)| (*t, *order, *id));

        let mut spans = vec![LifecycleSpan {
            column: self.classify(&f),
            since: issue.created_at,
            until: None,
        }];
        for (at, _, _, change) in changes {
            match change {
                Change::Event(e) => redo(&mut f, e),
                Change::PullOpen => f.open_pulls += 1,
                Change::PullClose => f.open_pulls = f.open_pulls.saturating_sub(1),
            }
            let col = self.classify(&f);
            let at = at.max(issue.created_at);
            if let Some(last) = spans.last_mut()
                && last.column != col
            {
                if last.since == at {
                    // Several changes at one instant: only the column after all of them counts.
                    last.column = col;
                } else {
                    last.until = Some(at);
                    spans.push(LifecycleSpan {
                        column: col,
                        since: at,
                        until: None,
                    });
                }
            }
        }
        // Collapse neighbours that became equal after a same-instant replacement.
        let mut out: Vec<LifecycleSpan> = Vec::with_capacity(spans.len());
        for s in spans {
            match out.last_mut() {
                Some(prev) if prev.column == s.column => prev.until = s.until,
                _ => out.push(s),
            }
        }
        out
    }
}

/// Reverts one timeline event on `f` (labels, milestone, assignees, open/closed); other kinds are ignored.
///
/// Shared with the backtest's rewind, which undoes the events after a cut the same way.
pub(crate) fn undo(f: &mut Facts, e: &super::issue::TimelineEvent) {
    match &e.kind {
        crate::domain::EventKind::Label => {
            if let Some(l) = &e.label {
                if e.removed {
                    f.labels.insert(l.clone());
                } else {
                    f.labels.remove(l);
                }
            }
        }
        crate::domain::EventKind::Milestone => f.milestone = e.old_milestone,
        crate::domain::EventKind::Assignees => {
            if let Some(a) = &e.assignee {
                if e.removed {
                    f.assignees.insert(a.clone());
                } else {
                    f.assignees.remove(a);
                }
            }
        }
        crate::domain::EventKind::Close => f.closed = false,
        crate::domain::EventKind::Reopen => f.closed = true,
        _ => {}
    }
}

fn redo(f: &mut Facts, e: &super::issue::TimelineEvent) {
    match &e.kind {
        crate::domain::EventKind::Label => {
            if let Some(l) = &e.label {
                if e.removed {
                    f.labels.remove(l);
                } else {
                    f.labels.insert(l.clone());
                }
            }
        }
        crate::domain::EventKind::Milestone => f.milestone = e.milestone,
        crate::domain::EventKind::Assignees => {
            if let Some(a) = &e.assignee {
                if e.removed {
                    f.assignees.remove(a);
                } else {
                    f.assignees.insert(a.clone());
                }
            }
        }
        crate::domain::EventKind::Close => f.closed = true,
        crate::domain::EventKind::Reopen => f.closed = false,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::issue::{LinkedPull, TimelineEvent};
    use super::*;
    use chrono::TimeZone;

    fn t(day: u32, hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, day, hour, 0, 0)
            .single()
            .unwrap_or_default()
    }

    fn facts(labels: &[&str], ms: Option<u64>, assignee: bool) -> Facts {
        Facts {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            milestone: ms,
            assignees: if assignee {
                ["ann".to_string()].into()
            } else {
                BTreeSet::new()
            },
            ..Facts::default()
        }
    }

    #[test]
    fn rule_1_closed_is_done_whatever_else() {
        let mut f = facts(&["needs-info"], None, false);
        f.closed = true;
        f.open_pulls = 1;
        assert_eq!(Rules::default().classify(&f), Lifecycle::Done);
    }

    #[test]
    fn rule_2_open_pull_is_in_review_even_untriaged() {
        let mut f = facts(&[], None, false);
        f.open_pulls = 1;
        assert_eq!(Rules::default().classify(&f), Lifecycle::InReview);
    }

    #[test]
    fn rule_3_untouched_or_flagged_is_diagnosis() {
        let r = Rules::default();
        assert_eq!(
            r.classify(&facts(&["bug"], None, false)),
            Lifecycle::Diagnosis
        );
        assert_eq!(
            r.classify(&facts(&["needs-info", "est/2d", "p/1"], Some(3), true)),
            Lifecycle::Diagnosis
        );
        let custom = Rules {
            diagnosis_labels: vec!["huh".into()],
        };
        assert_eq!(
            custom.classify(&facts(&["huh", "est/1d"], None, false)),
            Lifecycle::Diagnosis
        );
        assert_eq!(
            custom.classify(&facts(&["needs-info", "est/1d"], None, false)),
            Lifecycle::Triage
        );
    }

    #[test]
    fn rule_4_all_three_decisions_is_steeping() {
        let r = Rules::default();
        assert_eq!(
            r.classify(&facts(&["est/2d", "p/1"], Some(1), false)),
            Lifecycle::Steeping
        );
        let mut f = facts(&["p/1"], Some(1), false);
        f.native_estimate = true;
        assert_eq!(r.classify(&f), Lifecycle::Steeping);
        // An invalid priority label is no decision.
        assert_eq!(
            r.classify(&facts(&["est/2d", "p/9"], Some(1), false)),
            Lifecycle::Triage
        );
    }

    #[test]
    fn rule_5_partial_decisions_are_triage() {
        let r = Rules::default();
        assert_eq!(
            r.classify(&facts(&["est/2d"], None, false)),
            Lifecycle::Triage
        );
        assert_eq!(r.classify(&facts(&["p/0"], None, false)), Lifecycle::Triage);
        assert_eq!(r.classify(&facts(&[], Some(2), false)), Lifecycle::Triage);
        assert_eq!(r.classify(&facts(&[], None, true)), Lifecycle::Triage);
        assert_eq!(
            r.classify(&facts(&["est/2d", "p/1"], None, true)),
            Lifecycle::Triage
        );
    }

    fn issue() -> Issue {
        Issue {
            title: "t".into(),
            state: OpenState::Closed,
            updated_at: t(9, 9),
            closed_at: Some(t(9, 9)),
            assignees: vec!["bob".into()],
            labels: vec!["bug".into(), "est/1d".into(), "p/1".into()],
            milestone: Some(5),
            ..Issue::bare(7, t(2, 9))
        }
    }

    fn ev(id: u64, kind: &str, at: DateTime<Utc>) -> TimelineEvent {
        TimelineEvent::new(id, kind.into(), at, "ann")
    }

    #[test]
    fn timeline_walks_every_column_in_order() {
        let mut i = issue();
        let mut l1 = ev(1, "label", t(3, 9));
        l1.label = Some("est/1d".into());
        let mut a = ev(2, "assignees", t(3, 9));
        a.assignee = Some("bob".into());
        let mut l2 = ev(3, "label", t(4, 9));
        l2.label = Some("p/1".into());
        let mut m = ev(4, "milestone", t(5, 9));
        m.milestone = Some(5);
        let mut pr = ev(5, "pull_ref", t(7, 9));
        pr.pull = Some("o/r#8".parse().unwrap_or_else(|_| unreachable!()));
        let close = ev(6, "close", t(9, 9));
        i.timeline = vec![l1, a, l2, m, pr, close];
        i.pull_requests = vec![LinkedPull {
            number: 8,
            repository: None,
            title: "fix".into(),
            state: OpenState::Closed,
            merged: true,
            created_at: t(6, 9),
            closed_at: Some(t(9, 9)),
        }];
        let spans = Rules::default().timeline(&i);
        let cols: Vec<_> = spans.iter().map(|s| (s.column, s.since)).collect();
        assert_eq!(
            cols,
            vec![
                (Lifecycle::Diagnosis, t(2, 9)),
                (Lifecycle::Triage, t(3, 9)),
                (Lifecycle::Steeping, t(5, 9)),
                (Lifecycle::InReview, t(7, 9)),
                (Lifecycle::Done, t(9, 9)),
            ]
        );
        assert_eq!(spans[0].until, Some(t(3, 9)));
        assert_eq!(spans.last().map(|s| s.until), Some(None));
    }

    #[test]
    fn labels_present_at_creation_without_events_count_from_the_start() {
        let mut i = issue();
        i.timeline = vec![ev(1, "close", t(4, 9))];
        let spans = Rules::default().timeline(&i);
        assert_eq!(spans[0].column, Lifecycle::Steeping);
        assert_eq!(spans[1].column, Lifecycle::Done);
    }

    #[test]
    fn reopen_and_removed_labels_are_replayed() {
        let mut i = issue();
        i.state = OpenState::Open;
        i.closed_at = None;
        i.labels = vec!["p/1".into()];
        i.milestone = None;
        i.assignees = vec![];
        let mut add = ev(1, "label", t(3, 9));
        add.label = Some("est/2d".into());
        let mut rm = ev(2, "label", t(4, 9));
        rm.label = Some("est/2d".into());
        rm.removed = true;
        i.timeline = vec![add, rm, ev(3, "close", t(5, 9)), ev(4, "reopen", t(6, 9))];
        let cols: Vec<_> = Rules::default()
            .timeline(&i)
            .iter()
            .map(|s| s.column)
            .collect();
        assert_eq!(
            cols,
            vec![Lifecycle::Triage, Lifecycle::Done, Lifecycle::Triage]
        );
        assert_eq!(Rules::default().current(&i), Lifecycle::Triage);
    }
}
