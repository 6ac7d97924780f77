//! The snapshot's records: issues with their history, milestones and labels, normalised from Gitea's shapes.
//!
//! Field names follow Gitea's API where one exists (`created_at`, `due_on`, `time_estimate`, …). Every list is
//! kept in a stable order (by time, then id) so that the YAML files diff cleanly.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use super::{Estimate, IssueKey, ParseEstimateError, Priority, RepoName};

/// Whether an issue or milestone is open or closed, as Gitea says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpenState {
    /// Open.
    Open,
    /// Closed.
    Closed,
}

impl OpenState {
    /// The state as Gitea spells it (`open`, `closed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Closed => "closed",
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One issue of one repository, with everything the engine and the views need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Issue {
    /// The issue's number within its repository (the file name repeats it).
    pub number: u64,
    /// The title.
    pub title: String,
    /// Open or closed.
    pub state: OpenState,
    /// Who opened it.
    pub author: String,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When Gitea last changed it (comment edits do not bump this).
    pub updated_at: DateTime<Utc>,
    /// When it was closed, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<DateTime<Utc>>,
    /// Assignees' usernames, sorted.
    #[serde(default)]
    pub assignees: Vec<String>,
    /// Label names, sorted.
    #[serde(default)]
    pub labels: Vec<String>,
    /// The milestone's id (Gitea milestone ids are unique across repositories).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone: Option<u64>,
    /// Gitea's native estimate in seconds; used only when no `est/*` label is present.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub time_estimate: u64,
    /// Issues this one depends on (is blocked by), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<IssueKey>,
    /// Of `depends_on`, those in repositories the config does not name, with the state Gitea gave them
    /// (the snapshot holds no file for them), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside_blockers: Vec<OutsideBlocker>,
    /// Blockers the token may not read at all: Gitea lists each as a placeholder (`HIDDEN`, number 0), so
    /// only their number is known.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hidden_blockers: u64,
    /// The description, Markdown as written.
    #[serde(default)]
    pub body: String,
    /// Comments in order of creation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<Comment>,
    /// Timeline events in order of creation (comments themselves are in `comments`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineEvent>,
    /// Tracked time entries in order of creation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tracked_times: Vec<TrackedTime>,
    /// Pull requests that reference this issue, by number.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pull_requests: Vec<LinkedPull>,
}

/// A blocker no issue file of the snapshot holds, as Gitea's dependency list gave it: an issue in a
/// repository the config does not name, or a pull request (one in a repository the config names is one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutsideBlocker {
    /// Its key.
    pub issue: IssueKey,
    /// Open or closed when the issue that waits on it was last read.
    pub state: OpenState,
}

/// A comment on an issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comment {
    /// Gitea's comment id.
    pub id: u64,
    /// Who wrote it.
    pub user: String,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// When it was last edited.
    pub updated_at: DateTime<Utc>,
    /// The text, Markdown.
    pub body: String,
}

/// The type of a timeline event: the kinds CommiTea reads, and every other kind Gitea writes (kept by
/// name, so a kind a later Gitea adds passes through).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// `label`: a label added or removed.
    Label,
    /// `milestone`: the milestone set, changed or removed.
    Milestone,
    /// `assignees`: someone assigned or unassigned.
    Assignees,
    /// `close`.
    Close,
    /// `reopen`.
    Reopen,
    /// `pull_ref`: a pull request referenced the issue.
    PullRef,
    /// `add_dependency`.
    AddDependency,
    /// `remove_dependency`.
    RemoveDependency,
    /// `change_title`.
    ChangeTitle,
    /// Any other kind, by Gitea's name.
    Other(String),
}

impl EventKind {
    const NAMED: [(&'static str, EventKind); 9] = [
        ("label", EventKind::Label),
        ("milestone", EventKind::Milestone),
        ("assignees", EventKind::Assignees),
        ("close", EventKind::Close),
        ("reopen", EventKind::Reopen),
        ("pull_ref", EventKind::PullRef),
        ("add_dependency", EventKind::AddDependency),
        ("remove_dependency", EventKind::RemoveDependency),
        ("change_title", EventKind::ChangeTitle),
    ];

    /// Gitea's name of the kind.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Other(name) => name,
            known => Self::NAMED
                .iter()
                .find(|(_, k)| k == known)
                .map_or("", |(n, _)| n),
        }
    }

    /// Whether it is one of the two dependency kinds.
    pub fn is_dependency(&self) -> bool {
        matches!(self, Self::AddDependency | Self::RemoveDependency)
    }
}

impl From<&str> for EventKind {
    fn from(name: &str) -> Self {
        Self::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map_or_else(|| Self::Other(name.to_owned()), |(_, k)| k.clone())
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EventKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::from(String::deserialize(d)?.as_str()))
    }
}

/// One timeline event, flattened from Gitea's `TimelineComment`: which fields are set depends on `type`.
///
/// The kinds CommiTea reads are `label`, `milestone`, `assignees`, `close`, `reopen`, `pull_ref`,
/// `add_dependency`, `remove_dependency` and `change_title`; any other kind is kept with its time and actor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineEvent {
    /// Gitea's comment id for the event.
    pub id: u64,
    /// Gitea's event type.
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// When it happened.
    pub created_at: DateTime<Utc>,
    /// Who did it.
    pub user: String,
    /// `label`: the label's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `milestone`: the new milestone id (none when removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone: Option<u64>,
    /// `milestone`: the previous milestone id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_milestone: Option<u64>,
    /// `assignees`: whose assignment changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    /// `label` and `assignees`: true when removed rather than added.
    #[serde(default, skip_serializing_if = "is_false")]
    pub removed: bool,
    /// `pull_ref`: the pull request that references the issue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull: Option<IssueKey>,
    /// `add_dependency`/`remove_dependency`: the other issue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency: Option<IssueKey>,
    /// `change_title`: the old title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_title: Option<String>,
    /// `change_title`: the new title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_title: Option<String>,
}

impl TimelineEvent {
    /// A bare event of `kind` at `created_at` by `user`, every optional field empty.
    pub fn new(id: u64, kind: EventKind, created_at: DateTime<Utc>, user: &str) -> Self {
        Self {
            id,
            kind,
            created_at,
            user: user.to_owned(),
            label: None,
            milestone: None,
            old_milestone: None,
            assignee: None,
            removed: false,
            pull: None,
            dependency: None,
            old_title: None,
            new_title: None,
        }
    }
}

/// Time somebody logged on an issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrackedTime {
    /// Gitea's tracked-time id.
    pub id: u64,
    /// Who logged it.
    pub user: String,
    /// When it was logged.
    pub created: DateTime<Utc>,
    /// Seconds worked.
    pub time: u64,
}

/// A pull request linked to an issue (by a `pull_ref` event or a closing keyword).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkedPull {
    /// The pull request's number in its repository.
    pub number: u64,
    /// The pull request's repository when it is not the issue's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<RepoName>,
    /// Its title.
    pub title: String,
    /// Open or closed.
    pub state: OpenState,
    /// Whether it was merged.
    #[serde(default, skip_serializing_if = "is_false")]
    pub merged: bool,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When it was closed or merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<DateTime<Utc>>,
}

impl LinkedPull {
    /// Its state in a word: `merged`, else `open` or `closed`.
    pub fn state_word(&self) -> &'static str {
        if self.merged {
            "merged"
        } else {
            self.state.as_str()
        }
    }
}

/// A milestone of one repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Milestone {
    /// Gitea's milestone id.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// The description, which carries the `deadline/hard` marker.
    #[serde(default)]
    pub description: String,
    /// Open or closed.
    pub state: OpenState,
    /// The due date, if set: the end of its day in UTC (a time written with another offset is the end of the
    /// day it names, as Gitea shows a due date in its own zone).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "due_day"
    )]
    pub due_on: Option<DateTime<Utc>>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<DateTime<Utc>>,
}

impl Milestone {
    /// The text in a milestone description that marks its due date as a hard deadline.
    pub(crate) const HARD_MARKER: &'static str = "deadline/hard";

    /// Whether the due date cannot move: the description holds `deadline/hard` on a line of its own or as a word.
    pub fn is_hard(&self) -> bool {
        self.description
            .split(|c: char| c.is_whitespace() || c == ',' || c == '`')
            .any(|w| {
                w.trim_matches(|c: char| c == '[' || c == ']' || c == '(' || c == ')')
                    == Self::HARD_MARKER
            })
    }

    /// The due day, if any (Gitea stores a time; CommiTea plans in days).
    pub fn due_date(&self) -> Option<NaiveDate> {
        self.due_on.map(|d| d.date_naive())
    }
}

/// Reads a due date as the day it names: `2026-12-18T00:00:00+09:00` is due on the 18th (turned into UTC
/// first it would be the 17th), kept as the end of that day in UTC.
fn due_day<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    Option::<DateTime<chrono::FixedOffset>>::deserialize(d)
        .map(|t| t.map(|t| super::end_of_day(t.date_naive())))
}

/// A label of one repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    /// Gitea's label id.
    pub id: u64,
    /// The name, e.g. `est/2d`.
    pub name: String,
    /// Colour as six hex digits.
    pub color: String,
    /// The description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

#[cfg(test)]
impl Issue {
    /// An open issue with nothing on it but its number and when it was opened, for a test to fill in.
    pub(crate) fn bare(number: u64, created_at: DateTime<Utc>) -> Self {
        Self {
            number,
            title: format!("issue {number}"),
            state: OpenState::Open,
            author: "ann".into(),
            created_at,
            updated_at: created_at,
            closed_at: None,
            assignees: vec![],
            labels: vec![],
            milestone: None,
            time_estimate: 0,
            depends_on: vec![],
            body: String::new(),
            comments: vec![],
            timeline: vec![],
            tracked_times: vec![],
            outside_blockers: Vec::new(),
            hidden_blockers: 0,
            pull_requests: vec![],
        }
    }
}

impl Issue {
    /// The `est/*` labels that read, in label order: more than one where the scope was not exclusive.
    pub fn estimate_labels(&self) -> Vec<Estimate> {
        self.labels
            .iter()
            .filter_map(|l| Estimate::from_label(l)?.ok())
            .collect()
    }

    /// The estimate of the `est/*` labels: the largest that reads (in hours of a `workday_hours` day), else
    /// the error of one that does not.
    pub fn estimate_label(
        &self,
        workday_hours: f64,
    ) -> Option<Result<Estimate, ParseEstimateError>> {
        self.estimate_labels()
            .into_iter()
            .max_by(|a, b| a.hours(workday_hours).total_cmp(&b.hours(workday_hours)))
            .map(Ok)
            .or_else(|| self.labels.iter().find_map(|l| Estimate::from_label(l)))
    }

    /// The estimate: the `est/*` label (the largest, where several read), else Gitea's `time_estimate`;
    /// an unparsable label is an error.
    pub fn estimate_hours(&self, workday_hours: f64) -> Option<Result<f64, ParseEstimateError>> {
        let from_label = self
            .estimate_label(workday_hours)
            .map(|r| r.map(|e| e.hours(workday_hours)));
        from_label.or_else(|| {
            (self.time_estimate > 0).then(|| {
                let hours = self.time_estimate as f64 / 3600.0;
                if hours > Estimate::MAX_NATIVE_HOURS {
                    Err(ParseEstimateError::NativeTooLarge(
                        self.time_estimate / 3600,
                    ))
                } else {
                    Ok(hours)
                }
            })
        })
    }

    /// Whether an estimate is present (a label that reads, or native): an `est/banana` decides nothing.
    pub fn has_estimate(&self) -> bool {
        self.time_estimate > 0 || !self.estimate_labels().is_empty()
    }

    /// The `p/*` labels that read, in label order.
    pub(crate) fn priority_labels(&self) -> Vec<Priority> {
        self.labels
            .iter()
            .filter_map(|l| Priority::from_label(l)?.ok())
            .collect()
    }

    /// The explicit priority: the highest of the `p/*` labels that read; none when none does.
    pub(crate) fn priority_label(&self) -> Option<Priority> {
        self.priority_labels().into_iter().min_by_key(|p| p.level())
    }

    /// The priority used for planning: the label, else `p/2`.
    pub fn priority(&self) -> Priority {
        self.priority_label().unwrap_or(Priority::DEFAULT)
    }

    /// Seconds of tracked time in all.
    pub fn tracked_seconds(&self) -> u64 {
        self.tracked_times.iter().map(|t| t.time).sum()
    }

    /// Whether an open pull request references the issue.
    pub fn has_open_pull(&self) -> bool {
        self.pull_requests
            .iter()
            .any(|p| p.state == OpenState::Open)
    }

    /// Whether the issue is closed.
    pub fn is_closed(&self) -> bool {
        self.state == OpenState::Closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_due_date_written_with_an_offset_is_the_day_it_names() {
        let read = |due: &str| {
            let m: Milestone = yaml_serde::from_str(&format!(
                "id: 1\ntitle: v1\nstate: open\ndue_on: {due}\ncreated_at: 2026-10-01T09:00:00Z\n"
            ))
            .unwrap();
            m.due_on.map(|d| d.to_rfc3339())
        };
        // In UTC the first would be the 17th and the second the 19th.
        assert_eq!(
            read("2026-12-18T00:30:00+09:00").as_deref(),
            Some("2026-12-18T23:59:59+00:00")
        );
        assert_eq!(
            read("2026-12-18T23:59:59-08:00").as_deref(),
            Some("2026-12-18T23:59:59+00:00")
        );
        assert_eq!(
            read("2026-12-18T23:59:59Z").as_deref(),
            Some("2026-12-18T23:59:59+00:00")
        );
    }

    #[test]
    fn hard_marker_is_a_word_not_a_substring() {
        let mut m = Milestone {
            id: 1,
            title: "v1".into(),
            description: "Ship date is fixed.\n\ndeadline/hard".into(),
            state: OpenState::Open,
            due_on: None,
            created_at: DateTime::<Utc>::MIN_UTC,
            closed_at: None,
        };
        assert!(m.is_hard());
        m.description = "Marker: `deadline/hard`".into();
        assert!(m.is_hard());
        m.description = "no deadline/hardness here".into();
        assert!(!m.is_hard());
    }
}
