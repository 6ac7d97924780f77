//! The effective plan: the snapshot as the PM's directives leave it, resolved into what the engine needs.
//!
//! The replay stage ([`crate::ledger`]) builds a [`Plan`]; the forecast stage reads nothing else. Each
//! value that a directive overrides keeps its provenance so the issue view can say where it came from.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use crate::config::Config;
use crate::domain::lifecycle::{Lifecycle, LifecycleSpan, Rules};
use crate::domain::{Issue, IssueKey, OpenState, Priority, RepoName};
use crate::engine::PersonCalendarSpec;
use crate::state::Snapshot;

/// Where an issue's estimate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EstimateSource {
    /// An `est/*` label.
    Label,
    /// Gitea's native `time_estimate`.
    Native,
    /// A directive in the ledger.
    Directive,
    /// None given: the median estimate of similar issues stands in (flagged).
    Imputed,
}

impl EstimateSource {
    /// The snake_case name used in files and views.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Label => "label",
            Self::Native => "native",
            Self::Directive => "directive",
            Self::Imputed => "imputed",
        }
    }
}

/// What a directive did to one field of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "effect")]
pub enum ProvenanceEffect {
    /// It set the field: the value differs from Gitea's.
    Applied,
    /// It asks for what Gitea already has: a no-op, recorded all the same.
    AgreesWithGitea,
    /// A later directive on the same field took its place.
    Replaced {
        /// The later directive's id.
        by: String,
    },
}

/// One directive's mark on one field, in ledger order (the issue, milestone and member views' history).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProvenanceRecord {
    /// The field (`priority`, `estimate`, `due`, `hard`, `milestone`, `capacity 2026-12-21..2027-01-01`).
    pub field: String,
    /// The directive's id (`D-0007`).
    pub directive: String,
    /// What it did.
    #[serde(flatten)]
    pub effect: ProvenanceEffect,
}

/// One issue as the plan sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedIssue {
    /// `owner/repo#N`.
    pub key: IssueKey,
    /// Title.
    pub title: String,
    /// Open or closed.
    pub state: OpenState,
    /// The lifecycle column now.
    pub lifecycle: Lifecycle,
    /// When it entered each column.
    pub timeline: Vec<LifecycleSpan>,
    /// The assignee the plan gives the work to: the first on the team, else the first.
    pub assignee: Option<String>,
    /// All assignees.
    pub assignees: Vec<String>,
    /// Estimate in working hours, when one is given.
    pub estimate_hours: Option<f64>,
    /// The estimate's label text (`2d`), when one is given.
    pub estimate_label: Option<String>,
    /// Where the estimate comes from (`Imputed` when none is given).
    pub estimate_source: EstimateSource,
    /// Priority for planning (`p/2` when none is set).
    pub priority: Priority,
    /// Whether a priority was set explicitly.
    pub priority_set: bool,
    /// The milestone id.
    pub milestone: Option<u64>,
    /// What it waits for.
    pub depends_on: Vec<IssueKey>,
    /// Of `depends_on`, those outside the configured repositories, with the state Gitea gave them.
    pub outside_blockers: Vec<crate::domain::OutsideBlocker>,
    /// Blockers the token may not read (Gitea shows them as `HIDDEN`).
    pub hidden_blockers: u64,
    /// Hours of tracked time.
    pub tracked_hours: f64,
    /// Whether work has begun (tracked time or a pull request).
    pub started: bool,
    /// Whether a linked pull request was merged.
    pub merged_pull: bool,
    /// When the current (first) assignee was last assigned.
    pub assigned_at: Option<DateTime<Utc>>,
    /// Labels.
    pub labels: Vec<String>,
    /// Opened at.
    pub created_at: DateTime<Utc>,
    /// Closed at.
    pub closed_at: Option<DateTime<Utc>>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// Which directive set which field (`field`, directive id): one entry per field, the directive in force
    /// (including one that agrees with Gitea); the full history is in `provenance_log`.
    pub provenance: Vec<(String, String)>,
    /// Every directive that touched the issue, in ledger order, with what it did.
    pub provenance_log: Vec<ProvenanceRecord>,
    /// The issue's own due day, from a `set-deadline` directive on the issue (Gitea issues have none here).
    /// Recorded for the views; the engine does not use it yet.
    pub due: Option<NaiveDate>,
    /// Whether that due day was given as hard (also unused by the engine for now).
    pub due_hard: bool,
}

/// A milestone as the plan sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedMilestone {
    /// Gitea's id.
    pub id: u64,
    /// Its repository.
    pub repo: RepoName,
    /// Title.
    pub title: String,
    /// Open or closed.
    pub state: OpenState,
    /// The day it closed on Gitea, when it is closed.
    pub closed: Option<NaiveDate>,
    /// Due day.
    pub due: Option<NaiveDate>,
    /// Whether the due date cannot move.
    pub hard: bool,
    /// Which directive set which field (`field`, directive id), the directive in force per field.
    pub provenance: Vec<(String, String)>,
    /// Every directive that touched the milestone, in ledger order, with what it did.
    pub provenance_log: Vec<ProvenanceRecord>,
}

/// A person as the plan sees them.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedMember {
    /// Gitea username.
    pub name: String,
    /// Hours in a full week.
    pub hours_per_week: f64,
    /// Their calendar.
    pub calendar: PersonCalendarSpec,
    /// Repositories they take unassigned work from (empty: all).
    pub repositories: Vec<RepoName>,
    /// Whether they are not in the team config but were added by a `capacity` directive (a new hire).
    pub from_directive: bool,
    /// Which directive set which field (`capacity FROM..TO`, directive id).
    pub provenance: Vec<(String, String)>,
    /// Every directive that touched the member, in ledger order, with what it did.
    pub provenance_log: Vec<ProvenanceRecord>,
}

impl PlannedIssue {
    /// The estimate as a reader is shown it: its label text (`2d`), or Gitea's own time estimate in
    /// hours (`2h`, `1.5h`), which has no label; `None` when none is given.
    pub fn estimate_text(&self) -> Option<String> {
        match (
            &self.estimate_label,
            self.estimate_source,
            self.estimate_hours,
        ) {
            (Some(label), _, _) => Some(label.clone()),
            (None, EstimateSource::Native, Some(h)) => {
                let h = (h * 100.0).round() / 100.0;
                Some(format!("{h}h"))
            }
            _ => None,
        }
    }
}

impl PlannedMember {
    /// Their first working day when it is after `day`: someone who has not started yet.
    pub fn starts_after(&self, day: NaiveDate) -> Option<NaiveDate> {
        self.calendar.starts.filter(|s| *s > day)
    }

    /// Their last working day, where their hours stop for good, with what stops them in words
    /// (`team[].ends`, `D-0009's capacity of 0 hours a week from 2027-01-04`); `None` while they work on.
    pub fn last_day(&self) -> Option<(NaiveDate, String)> {
        let day = self.calendar.last_working_day()?;
        let directive = |field: &str| {
            self.provenance_log
                .iter()
                .rev()
                .find(|r| r.field == field)
                .map(|r| r.directive.clone())
        };
        // The period that takes over for good, if it is one of no hours.
        let leaves = self
            .calendar
            .final_period()
            .filter(|o| o.hours_per_day <= 0.0);
        let why = if let Some(e) = self.calendar.ends.filter(|e| *e >= day && leaves.is_none()) {
            // A day they do not work given as the last: the one given is said beside the last worked.
            if e == day {
                "team[].ends".to_owned()
            } else {
                format!("team[].ends: {e}")
            }
        } else if let Some(o) = leaves
            && let Some(id) = directive(&capacity_field(o.from, None))
        {
            format!("{id}'s capacity of 0 hours a week from {}", o.from)
        } else if self.from_directive
            && let Some(r) = self.provenance_log.first()
        {
            format!(
                "{}'s capacity period; {} is not in the team in commitea.yaml",
                r.directive, self.name
            )
        } else {
            "their hours in commitea.yaml".to_owned()
        };
        Some((day, why))
    }
}

/// The provenance field a capacity directive sets on a member: `capacity 2026-12-07..2027-01-08`, open-ended
/// `capacity 2026-12-07..`.
pub fn capacity_field(from: NaiveDate, to: Option<NaiveDate>) -> String {
    match to {
        Some(to) => format!("capacity {from}..{to}"),
        None => format!("capacity {from}.."),
    }
}

/// Everything the forecast needs, and nothing else.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Day 0 of the forecast.
    pub as_of: NaiveDate,
    /// The moment the plan describes (the snapshot's time unless overridden).
    pub now: DateTime<Utc>,
    /// Every issue, ordered by key.
    pub issues: Vec<PlannedIssue>,
    /// Every milestone, ordered by id.
    pub milestones: Vec<PlannedMilestone>,
    /// The team, in config order.
    pub team: Vec<PlannedMember>,
    /// The team's working days and holidays (for slack in working days).
    pub team_calendar: PersonCalendarSpec,
    /// The team's time zone (`calendar.timezone`): the days of events (an issue's close, a milestone's) and
    /// the working days of the history are the team's, not UTC's.
    pub zone: crate::config::Zone,
    /// Hours in a working day.
    pub workday_hours: f64,
    /// The abandonment model's window in days (`forecast.abandonment_days`).
    pub abandonment_days: u32,
    /// Days of history the abandonment model needs (`forecast.abandonment_min_history_days`).
    pub abandonment_min_history_days: u32,
    /// Who the last committed forecast planned each unassigned open issue for: the forecast keeps that
    /// person unless they left the team or may no longer take it, so plans do not reshuffle between runs
    /// (`forecast.keep_planned_people`). Empty for a first forecast.
    pub planned_for: BTreeMap<IssueKey, String>,
    /// Who the last committed forecast planned each unassigned open issue for, kept or not (someone joined,
    /// `forecast.keep_planned_people` off): what a leaver's work "went to the others" is counted against.
    /// Not in the forecast's key: it changes no figure. Empty for a first forecast.
    pub last_planned: BTreeMap<IssueKey, String>,
    /// The cut line the last committed forecast gave each hard-deadline milestone (by id): the search
    /// tries those issues first, so a cut that still meets the deadline is kept (trimmed where less is
    /// needed) instead of another drawn afresh (audit 108: closing an issue of the milestone turned a cut
    /// of 10 issues into one of 13). Empty for a first forecast.
    pub cut_before: BTreeMap<u64, Vec<IssueKey>>,
    /// A former name of a synced repository (renamed or transferred on Gitea, as the server told) and
    /// the name it goes by now: the ledger's targets naming the old one are read as the new one's.
    pub former_names: BTreeMap<RepoName, RepoName>,
    /// Problems found while building the plan (bad labels …) and replaying the ledger, for the run summary.
    pub warnings: Vec<Problem>,
}

/// Where a problem is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum At {
    /// A line of the ledger, `pm-state.md`.
    Ledger {
        /// 1-based.
        line: usize,
    },
    /// An issue of the snapshot.
    Issue(IssueKey),
    /// Several issues with the same problem (a label renamed on Gitea is one problem, not one per
    /// issue), in key order.
    Issues(Vec<IssueKey>),
    /// A member of `team:` in `commitea.yaml`, by name.
    Member(String),
    /// The snapshot as a whole (`snapshot/meta.yaml`).
    Snapshot,
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum ProblemKind {
    /// A ledger entry that does not read (it is left out; the others count).
    Malformed(crate::ledger::format::LedgerProblem),
    /// A directive that replay could not apply, and why (its target is not in the snapshot …).
    NotApplied(String),
    /// Data in the snapshot that the plan works around, and how (a priority label out of range …).
    Data(String),
    /// A directive in force whose change Gitea does not carry, with no op file pending to carry it (it
    /// applies all the same: not a problem of the ledger's, a disagreement to settle).
    NotOnGitea(String),
    /// An op file pending for a directive no longer in force (withdrawn, superseded): the apply stage
    /// passes it over, and it waits to be deleted. Not a problem of the ledger's: the file is the thing
    /// to remove (audit 179: listed under the ledger's skipped entries, "fix them in pm-state.md").
    OpFileLeft(String),
}

/// A problem found while building the plan: where it is and what it is, as data. Its text (for the run
/// summary and the pages) is its [`Display`](std::fmt::Display); nothing reads that text back.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Where.
    pub at: At,
    /// What.
    pub kind: ProblemKind,
}

impl Problem {
    /// A problem with issue `key`'s data.
    pub fn data(key: &IssueKey, message: impl Into<String>) -> Self {
        Self {
            at: At::Issue(key.clone()),
            kind: ProblemKind::Data(message.into()),
        }
    }

    /// The ledger line it is on, if it is in the ledger.
    pub fn ledger_line(&self) -> Option<usize> {
        match self.at {
            At::Ledger { line } => Some(line),
            At::Issue(_) | At::Issues(_) | At::Member(_) | At::Snapshot => None,
        }
    }
}

impl From<&crate::ledger::format::LedgerProblem> for Problem {
    fn from(p: &crate::ledger::format::LedgerProblem) -> Self {
        Self {
            at: At::Ledger { line: p.line() },
            kind: ProblemKind::Malformed(p.clone()),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.at, &self.kind) {
            // The parser's problems say their line themselves.
            (_, ProblemKind::Malformed(p)) => write!(f, "{p}"),
            (
                At::Ledger { line },
                ProblemKind::NotApplied(m)
                | ProblemKind::Data(m)
                | ProblemKind::NotOnGitea(m)
                | ProblemKind::OpFileLeft(m),
            ) => write!(f, "ledger line {line}: {m}"),
            (
                At::Issue(key),
                ProblemKind::NotApplied(m)
                | ProblemKind::Data(m)
                | ProblemKind::NotOnGitea(m)
                | ProblemKind::OpFileLeft(m),
            ) => write!(f, "{key}: {m}"),
            (
                At::Issues(keys),
                ProblemKind::NotApplied(m)
                | ProblemKind::Data(m)
                | ProblemKind::NotOnGitea(m)
                | ProblemKind::OpFileLeft(m),
            ) => {
                const NAMED: usize = 3;
                let mut named: Vec<String> =
                    keys.iter().take(NAMED).map(ToString::to_string).collect();
                if keys.len() > NAMED {
                    named.push(format!("{} more issues", keys.len() - NAMED));
                }
                write!(f, "{}: {m}", crate::prose::and_list(&named))
            }
            (
                At::Member(name),
                ProblemKind::NotApplied(m)
                | ProblemKind::Data(m)
                | ProblemKind::NotOnGitea(m)
                | ProblemKind::OpFileLeft(m),
            ) => write!(f, "commitea.yaml team member {name}: {m}"),
            (
                At::Snapshot,
                ProblemKind::NotApplied(m)
                | ProblemKind::Data(m)
                | ProblemKind::NotOnGitea(m)
                | ProblemKind::OpFileLeft(m),
            ) => write!(f, "snapshot: {m}"),
        }
    }
}

impl Plan {
    /// The directives every field of which a later directive took over, each with the last of those:
    /// in force in the ledger, but changing nothing (the Directives page says "replaced by").
    pub fn replaced_directives(&self) -> BTreeMap<String, String> {
        let records = self
            .issues
            .iter()
            .flat_map(|i| &i.provenance_log)
            .chain(self.milestones.iter().flat_map(|m| &m.provenance_log))
            .chain(self.team.iter().flat_map(|m| &m.provenance_log));
        let mut by: BTreeMap<&str, Option<&str>> = BTreeMap::new();
        for r in records {
            let replaced = match &r.effect {
                ProvenanceEffect::Replaced { by } => Some(by.as_str()),
                _ => None,
            };
            let entry = by.entry(r.directive.as_str()).or_insert(replaced);
            // One field still in force keeps the directive in force.
            *entry = entry.and(replaced);
        }
        by.into_iter()
            .filter_map(|(d, b)| Some((d.to_owned(), b?.to_owned())))
            .collect()
    }

    /// The plan straight from the snapshot and config, before any directive.
    pub fn from_snapshot(snapshot: &Snapshot, config: &Config, now: DateTime<Utc>) -> Self {
        let rules = Rules {
            diagnosis_labels: config.lifecycle.diagnosis_labels.clone(),
        };
        let wd = config.workday_hours();
        let mut warnings = Vec::new();
        let issues: Vec<PlannedIssue> = snapshot
            .issues
            .iter()
            .map(|(key, issue)| planned_issue(key, issue, &rules, wd, &config.team, &mut warnings))
            .collect();
        let ladder: Vec<String> = config
            .estimates
            .ladder
            .iter()
            .map(ToString::to_string)
            .collect();
        for i in issues.iter().filter(|i| i.state == OpenState::Open) {
            if let Some(l) = i.estimate_label.as_ref().filter(|l| !ladder.contains(l)) {
                warnings.push(Problem::data(
                    &i.key,
                    format!(
                        "est/{l} is not on the estimate ladder ({}); it is used as it is",
                        ladder.join(" ")
                    ),
                ));
            }
        }
        let mut warnings = one_per_message(warnings);
        let mut milestones: Vec<PlannedMilestone> = snapshot
            .milestones
            .iter()
            .flat_map(|(repo, ms)| {
                ms.iter().map(move |m| PlannedMilestone {
                    id: m.id,
                    repo: repo.clone(),
                    title: m.title.clone(),
                    state: m.state,
                    closed: m
                        .closed_at
                        .filter(|_| m.state == OpenState::Closed)
                        .map(|t| config.calendar.timezone.date_of(t)),
                    due: m.due_date(),
                    hard: m.is_hard(),
                    provenance: Vec::new(),
                    provenance_log: Vec::new(),
                })
            })
            .collect();
        milestones.sort_by_key(|m| m.id);
        let working_days: Vec<chrono::Weekday> =
            config.calendar.working_days.iter().map(|d| d.0).collect();
        let team_calendar = PersonCalendarSpec {
            hours_per_day: wd,
            working_days: working_days.clone(),
            holidays: config.calendar.holidays.clone(),
            time_off: Vec::new(),
            starts: None,
            ends: None,
            overrides: Vec::new(),
        };
        // The team's day: `calendar.timezone` (UTC unless set).
        let zone = &config.calendar.timezone;
        let as_of = zone.day_of(now);
        let (spelled, unseen) = unseen_members(snapshot, config, as_of);
        warnings.extend(unseen);
        let team = config
            .team
            .iter()
            .map(|m| {
                let days: Vec<chrono::Weekday> = m
                    .working_days
                    .as_ref()
                    .map_or_else(|| working_days.clone(), |d| d.iter().map(|d| d.0).collect());
                let per_week = m.hours_per_week.map_or(wd * days.len() as f64, |h| h.0);
                let hours_per_day = if days.is_empty() {
                    0.0
                } else {
                    per_week / days.len() as f64
                };
                PlannedMember {
                    name: spelled.get(&m.name).unwrap_or(&m.name).clone(),
                    hours_per_week: per_week,
                    calendar: PersonCalendarSpec {
                        hours_per_day,
                        working_days: days,
                        holidays: config.calendar.holidays.clone(),
                        time_off: m.time_off.iter().map(|r| (r.from, r.to)).collect(),
                        starts: m.starts,
                        ends: m.ends,
                        overrides: Vec::new(),
                    },
                    // A name the repository went by before the server renamed it is the repository.
                    repositories: m
                        .repositories
                        .iter()
                        .map(|r| snapshot.meta.as_now(r.clone()))
                        .collect(),
                    from_directive: false,
                    provenance: Vec::new(),
                    provenance_log: Vec::new(),
                }
            })
            .collect();
        // A member's repository the config does not sync gives them no work there: a typo, or one taken
        // out of `repositories` and not out of theirs (audit 89: said nowhere).
        for m in &config.team {
            let unsynced: Vec<String> = m
                .repositories
                .iter()
                .filter(|r| {
                    !config.repositories.contains(r) && snapshot.meta.now_named(r).is_none()
                })
                .map(ToString::to_string)
                .collect();
            if !unsynced.is_empty() {
                warnings.push(Problem {
                    at: At::Member(m.name.clone()),
                    kind: ProblemKind::Data(format!(
                        "their repositories name {}, which the top-level `repositories` does not sync: \
                         they take no work there; fix the name, or take it out of theirs",
                        crate::prose::and_list(&unsynced)
                    )),
                });
            }
        }
        // A day zero before the sync forecasts the issues as they stood later as if it were then (an audit
        // ran `--now 2026-06-01` on a November snapshot, milestones created in July and all): said.
        // A repository the last sync could not read is carried as it was: said on every reader's page.
        for r in &snapshot.meta.repositories {
            if let Some(since) = r.unreached_since {
                warnings.push(Problem {
                    at: At::Snapshot,
                    kind: ProblemKind::Data(format!(
                        "{} could not be read since {} (the server does not show it to the token): its \
                         issues are as last read, and approved changes to it wait",
                        r.name,
                        zone.date_of(since)
                    )),
                });
            }
            // Said only in the job's log, nobody read it (audit 168).
            if let Some(now) = &r.renamed_to {
                let also = snapshot.meta.repositories.iter().any(|o| &o.name == now);
                warnings.push(Problem {
                    at: At::Snapshot,
                    kind: ProblemKind::Data(if also {
                        format!(
                            "{} is {now} on the server now (renamed or transferred), and commitea.yaml \
                             names both: its issues are read once, as {now}'s; take {} out of \
                             `repositories`",
                            r.name, r.name
                        )
                    } else {
                        format!(
                            "{} is {now} on the server now (renamed or transferred; Gitea answers the old \
                             name through a redirect): put {now} in `repositories` in commitea.yaml; until \
                             then its issues are kept as {}'s",
                            r.name, r.name
                        )
                    }),
                });
            }
        }
        let synced = zone.date_of(snapshot.meta.synced_at);
        if as_of < synced && !snapshot.issues.is_empty() {
            warnings.push(Problem {
                at: At::Snapshot,
                kind: ProblemKind::Data(format!(
                    "synced on {synced}, after the forecast's day zero {as_of} (--now): the issues are \
                     forecast as they stood on {synced}; `commitea backtest` rewinds them to past days"
                )),
            });
        }
        // A day zero long after the sync forecasts from data that says nothing of the days between: said
        // (audit 101: a 2014 export forecast as of 2020 planned work for 2020 without a word).
        const STALE_DAYS: i64 = 30;
        let stale = (as_of - synced).num_days();
        if stale > STALE_DAYS && !snapshot.issues.is_empty() {
            warnings.push(Problem {
                at: At::Snapshot,
                kind: ProblemKind::Data(format!(
                    "synced on {synced}, {stale} days before the forecast's day zero {as_of}: nothing that \
                     happened since is known (a sync brings it; the forecast takes the issues as they \
                     stood then)"
                )),
            });
        }
        Self {
            as_of,
            now,
            issues,
            milestones,
            team,
            team_calendar,
            zone: zone.clone(),
            workday_hours: wd,
            abandonment_days: config.forecast.abandonment_days.0,
            abandonment_min_history_days: config.forecast.abandonment_min_history_days,
            planned_for: BTreeMap::new(),
            last_planned: BTreeMap::new(),
            cut_before: BTreeMap::new(),
            former_names: snapshot
                .meta
                .repositories
                .iter()
                .flat_map(|r| r.formerly.iter())
                .filter_map(|f| Some((f.clone(), snapshot.meta.now_named(f)?.clone())))
                .collect(),
            warnings,
        }
    }

    /// Takes up what the forecasts before kept (`kept`) and whom the last one planned each issue for
    /// (`last_planned`), an issue keyed under a repository's former name read as the new name's (audit
    /// 179: after a rename, 17 issues changed hands with nothing else changed).
    pub fn keep(&mut self, kept: &crate::forecast::Kept, last_planned: BTreeMap<IssueKey, String>) {
        let now = |k: &IssueKey| match self.now_named(&k.repo) {
            Some(repo) => repo.issue(k.number),
            None => k.clone(),
        };
        let people = |m: &BTreeMap<IssueKey, String>| -> BTreeMap<IssueKey, String> {
            m.iter().map(|(k, v)| (now(k), v.clone())).collect()
        };
        let planned_for = people(&kept.planned_for);
        let last_planned = people(&last_planned);
        let cut_before = kept
            .cut_before
            .iter()
            .map(|(id, keys)| (*id, keys.iter().map(now).collect()))
            .collect();
        self.planned_for = planned_for;
        self.last_planned = last_planned;
        self.cut_before = cut_before;
    }

    /// The name `repo` goes by now where it is a former name of a synced repository
    /// ([`Plan::former_names`]; names compared ignoring case, as Gitea does).
    pub fn now_named(&self, repo: &RepoName) -> Option<&RepoName> {
        self.former_names
            .iter()
            .find(|(old, _)| {
                old.owner.eq_ignore_ascii_case(&repo.owner)
                    && old.name.eq_ignore_ascii_case(&repo.name)
            })
            .map(|(_, now)| now)
    }

    /// The milestone with this id.
    pub fn milestone(&self, id: u64) -> Option<&PlannedMilestone> {
        self.milestones.iter().find(|m| m.id == id)
    }

    /// The issue with this key.
    pub fn issue(&self, key: &IssueKey) -> Option<&PlannedIssue> {
        self.issues.iter().find(|i| &i.key == key)
    }

    /// The team member with this name.
    pub fn member(&self, name: &str) -> Option<&PlannedMember> {
        self.team.iter().find(|m| m.name == name)
    }

    /// The team member a name a PM typed means: the one of that name, case aside (Gitea's usernames are
    /// case-insensitive).
    pub fn member_named(&self, name: &str) -> Option<&PlannedMember> {
        self.member(name)
            .or_else(|| self.team.iter().find(|m| m.name.eq_ignore_ascii_case(name)))
    }

    /// The milestones by id and title, for an error that names a wrong one: `the milestones are 3
    /// (Mobile 3.0), 4 (Public API v2)`, or `there are no milestones`; a title two share comes with each
    /// one's repository, `10 (Release 1.0, acme/api)`.
    pub fn milestones_listed(&self) -> String {
        let names = self.milestone_names();
        let all: Vec<String> = self
            .milestones
            .iter()
            .map(|m| {
                let name = names.get(&m.id).unwrap_or(&m.title);
                if *name == m.title {
                    format!("{} ({name})", m.id)
                } else {
                    format!("{} ({}, {})", m.id, m.title, m.repo)
                }
            })
            .collect();
        if all.is_empty() {
            "there are no milestones".to_owned()
        } else {
            format!("the milestones are {}", all.join(", "))
        }
    }

    /// The team's usernames, in order.
    pub fn team_names(&self) -> impl Iterator<Item = &str> {
        self.team.iter().map(|m| m.name.as_str())
    }

    /// The milestones a title a PM typed may mean (see [`is_titled`]): one, none, or several in as many
    /// repositories. Where open ones have it, only those: a closed milestone of the same title (last
    /// year's "Release 1.0") is not what a PM means today.
    pub fn milestones_titled(&self, title: &str) -> Vec<&PlannedMilestone> {
        let titled: Vec<&PlannedMilestone> = self
            .milestones
            .iter()
            .filter(|m| is_titled(&m.title, title))
            .collect();
        let open: Vec<&PlannedMilestone> = titled
            .iter()
            .copied()
            .filter(|m| m.state == OpenState::Open)
            .collect();
        if open.is_empty() { titled } else { open }
    }

    /// How each milestone is named in words ([`milestone_names`]).
    pub fn milestone_names(&self) -> BTreeMap<u64, String> {
        milestone_names(
            self.milestones
                .iter()
                .map(|m| (m.id, m.title.as_str(), m.repo.to_string())),
        )
    }

    /// The member whose name `name`, not in the team, is more likely a typo of than someone new: within
    /// one edit of a short name, two of a longer one (a swap of neighbouring letters is one), case aside; or
    /// its name with a suffix after `.`, `-`, `_` or a digit (`dana.k`).
    pub fn near_member(&self, name: &str) -> Option<&str> {
        let members = || {
            self.team
                .iter()
                .filter(|m| !m.from_directive)
                .map(|m| m.name.as_str())
        };
        nearest(name, members())
            .map(|(_, m)| m)
            .or_else(|| members().find(|m| same_stem(name, m)))
    }

    /// Why `name`, not in the team, is not taken for a new hire by a capacity directive: it is one typo
    /// away from a member's name.
    pub fn not_a_new_hire(&self, name: &str) -> Option<String> {
        self.near_member(name).map(|_| {
            format!(
                "{}; a capacity directive adds someone new only under a name not this close to a \
                 member's: add them under `team:` in commitea.yaml",
                self.not_in_team(name)
            )
        })
    }

    /// "member X is not in the team", with the member it is likely a typo of and the team's names.
    pub fn not_in_team(&self, name: &str) -> String {
        let near = self
            .near_member(name)
            .map(|m| format!(" (did you mean {m}?)"))
            .unwrap_or_default();
        let names: Vec<&str> = self.team.iter().map(|m| m.name.as_str()).collect();
        format!(
            "member {name} is not in the team{near}; the team is {}",
            if names.is_empty() {
                "empty".to_owned()
            } else {
                names.join(", ")
            }
        )
    }
}

/// The team members whom the synced records name otherwise but for case, with the login they name
/// them by (Gitea reads a username without case and spells it as the account does: `Amara` in
/// commitea.yaml is the `amara` the issues are assigned to; audit 95: her work went to the others); and
/// a problem for each member who has started and whom no synced record names as written (no issue they
/// opened, are assigned, commented on, acted on or tracked time on): most likely a username Gitea does
/// not have, since work can only be assigned to a Gitea user. The login the name is nearest to is
/// suggested.
fn unseen_members(
    snapshot: &Snapshot,
    config: &Config,
    today: NaiveDate,
) -> (BTreeMap<String, String>, Vec<Problem>) {
    if snapshot.issues.is_empty() {
        return (BTreeMap::new(), Vec::new());
    }
    /// Everyone an issue's records name.
    fn names(issue: &Issue) -> impl Iterator<Item = &str> {
        std::iter::once(issue.author.as_str())
            .chain(issue.assignees.iter().map(String::as_str))
            .chain(issue.comments.iter().map(|c| c.user.as_str()))
            .chain(issue.timeline.iter().map(|e| e.user.as_str()))
            // Someone assigned and unassigned since is named by the event (audit 97: "no synced issue
            // names user0038 … did you mean user0008?" of someone an event assigned).
            .chain(issue.timeline.iter().filter_map(|e| e.assignee.as_deref()))
            .chain(issue.tracked_times.iter().map(|t| t.user.as_str()))
    }
    // Every plan reads this: the scan stops as soon as every member is named.
    let mut unseen: BTreeSet<&str> = config.team.iter().map(|m| m.name.as_str()).collect();
    for issue in snapshot.issues.values() {
        if unseen.is_empty() {
            return (BTreeMap::new(), Vec::new());
        }
        for name in names(issue) {
            unseen.remove(name);
        }
    }
    // Someone is unseen: every login, with how often it is named (a hand-edited snapshot may spell one
    // twice; Gitea's answers do not), for the same but for case, or the nearest.
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for name in snapshot.issues.values().flat_map(names) {
        *seen.entry(name).or_default() += 1;
    }
    let members: BTreeSet<&str> = config.team.iter().map(|m| m.name.as_str()).collect();
    let mut spelled = BTreeMap::new();
    let mut problems = Vec::new();
    for m in config
        .team
        .iter()
        .filter(|m| unseen.contains(m.name.as_str()))
    {
        let same_but_case = seen
            .iter()
            .filter(|(login, _)| login.to_lowercase() == m.name.to_lowercase())
            .filter(|(login, _)| !members.contains(**login))
            .max_by_key(|(login, n)| (**n, std::cmp::Reverse(**login)))
            .map(|(login, _)| *login);
        if let Some(login) = same_but_case {
            spelled.insert(m.name.clone(), login.to_owned());
            problems.push(Problem {
                at: At::Member(m.name.clone()),
                kind: ProblemKind::Data(format!(
                    "Gitea spells the username {login}: planned as {login}, the issues' name for them \
                     (write it so, and the pages, the ledger and this warning agree)"
                )),
            });
            continue;
        }
        if m.starts.is_some_and(|s| s > today) {
            continue;
        }
        let hint = nearest(&m.name, seen.keys().copied())
            .map(|(_, login)| format!("; did you mean {login}?"))
            .unwrap_or_else(|| {
                "; if they joined recently, this goes away with their first assignment, comment or \
                 event"
                    .to_owned()
            });
        problems.push(Problem {
            at: At::Member(m.name.clone()),
            kind: ProblemKind::Data(format!(
                "no synced issue, comment or event names {} (the forecast plans work for them all the \
                 same, and Gitea can assign work only to its users): check the username{hint}",
                m.name
            )),
        });
    }
    (spelled, problems)
}

/// Of `candidates`, the one `name` is more likely a typo of than another name: within one edit of a
/// short name, two of a longer one, case aside; with its distance (0: the same but for case).
pub(crate) fn nearest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<(usize, &'a str)> {
    let lower = name.to_lowercase();
    candidates
        .map(|c| (edits(&c.to_lowercase(), &lower), c))
        .filter(|(d, c)| *d <= if c.chars().count() <= 4 { 1 } else { 2 })
        .min()
}

/// Whether one name is the other with a suffix after `.`, `-`, `_` or a digit (`dana.k`, `dana2` of
/// `dana`), case aside: too close to be someone new (audit 140: `dana.k` was a 30 h/week hire).
fn same_stem(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    !short.is_empty()
        && long.len() > short.len()
        && long.strip_prefix(&short).is_some_and(|rest| {
            rest.starts_with(['.', '-', '_']) || rest.starts_with(|c: char| c.is_ascii_digit())
        })
}

/// The edit distance between two names, two neighbouring letters swapped counting as one edit (optimal
/// string alignment): "gsu" is one typo of "gus", as "gux" is (audit 109).
fn edits(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: the distance between a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j - 1] + cost)
                .min(d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// `problems` with each data problem several issues share said once, for all of them, where the first
/// was (audit 129: one label renamed on Gitea made 23 warnings of one sentence).
fn one_per_message(problems: Vec<Problem>) -> Vec<Problem> {
    let mut issues_of: HashMap<String, Vec<IssueKey>> = HashMap::new();
    for p in &problems {
        if let (At::Issue(k), ProblemKind::Data(m)) = (&p.at, &p.kind) {
            issues_of.entry(m.clone()).or_default().push(k.clone());
        }
    }
    let mut out = Vec::with_capacity(problems.len());
    for p in problems {
        match (&p.at, &p.kind) {
            (At::Issue(_), ProblemKind::Data(m)) => match issues_of.remove(m) {
                Some(keys) if keys.len() > 1 => {
                    let mut keys = keys;
                    keys.sort();
                    out.push(Problem {
                        at: At::Issues(keys),
                        kind: p.kind,
                    });
                }
                Some(_) => out.push(p),
                // Said with the first already.
                None => {}
            },
            _ => out.push(p),
        }
    }
    out
}

fn planned_issue(
    key: &IssueKey,
    issue: &Issue,
    rules: &Rules,
    workday_hours: f64,
    team: &[crate::config::Member],
    warnings: &mut Vec<Problem>,
) -> PlannedIssue {
    // The label as it reads (`est/ 2d` is 2d), the largest where several do: read once for the plan and
    // the warnings below.
    let chosen = issue.estimate_label(workday_hours).and_then(Result::ok);
    let (estimate_hours, estimate_label, estimate_source) =
        match issue.estimate_hours(workday_hours) {
            Some(Ok(h)) => {
                let label = chosen.as_ref().map(ToString::to_string);
                let source = if label.is_some() {
                    EstimateSource::Label
                } else {
                    EstimateSource::Native
                };
                (Some(h), label, source)
            }
            Some(Err(e)) => {
                // A closed issue is not forecast: without its estimate it only leaves the calibration
                // (audit 129: "forecast as if it had no estimate" said of closed issues).
                let what = if issue.is_closed() {
                    "the closed issue is left out of the calibration"
                } else {
                    "the issue is forecast as if it had no estimate"
                };
                // Each label that does not read is said, not the first alone (audit 136).
                let unread: Vec<_> = issue
                    .labels
                    .iter()
                    .filter_map(|l| crate::domain::Estimate::from_label(l)?.err())
                    .collect();
                if unread.is_empty() {
                    warnings.push(Problem::data(key, format!("{e}; {what}")));
                }
                for e in unread {
                    warnings.push(Problem::data(key, format!("{e}; {what}")));
                }
                (None, None, EstimateSource::Imputed)
            }
            None => (None, None, EstimateSource::Imputed),
        };
    for l in &issue.labels {
        // Beside one that reads, an estimate label that does not is said with the one used (as a
        // priority's is): it was passed over without a word.
        if let (Some(Err(e)), Some(used)) = (crate::domain::Estimate::from_label(l), &chosen) {
            warnings.push(Problem::data(
                key,
                format!("{e}; its label {} is used", used.label()),
            ));
        }
        if let Some(Err(e)) = crate::domain::Priority::from_label(l) {
            // Beside a label that reads, that one is used (audit 129: "treated as p/2" beside a p/0
            // that the plan used).
            let used = match issue.priority_label() {
                Some(p) => format!("its label {p} is used"),
                None => format!("treated as {}", crate::domain::Priority::DEFAULT),
            };
            warnings.push(Problem::data(key, format!("{e}; {used}")));
        }
        // `Est/2d` is another label on Gitea, which the namespace's writes would not replace.
        for prefix in [
            crate::domain::Estimate::LABEL_PREFIX,
            crate::domain::Priority::LABEL_PREFIX,
        ] {
            if !l.starts_with(prefix)
                && l.get(..prefix.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
            {
                warnings.push(Problem::data(
                    key,
                    format!(
                        "the label \"{l}\" is not read: CommiTea's labels are written {prefix}… in lower \
                         case; rename it on Gitea"
                    ),
                ));
            }
        }
    }
    // Two labels of one scope (set where the scope is not exclusive, or by hand): said, with the rule.
    let mut several = |what: &str, labels: Vec<String>, rule: &str, used: Option<String>| {
        if let (true, Some(used)) = (labels.len() > 1, used) {
            warnings.push(Problem::data(
                key,
                format!(
                    "{} {what} labels ({}): the {rule}, {used}, is used; keep one",
                    labels.len(),
                    labels.join(", ")
                ),
            ));
        }
    };
    several(
        "estimate",
        issue.estimate_labels().iter().map(|e| e.label()).collect(),
        "largest",
        chosen.as_ref().map(|e| e.label()),
    );
    several(
        "priority",
        issue.priority_labels().iter().map(|p| p.label()).collect(),
        "highest",
        Some(issue.priority().label()),
    );
    // The label wins over Gitea's own time estimate (docs); one far from the other is said, since someone
    // set each (audit 82: est/1h beside 100 hours, silently 1 hour).
    if let (Some(label), true) = (&chosen, issue.time_estimate > 0) {
        let (l, native) = (
            label.hours(workday_hours),
            issue.time_estimate as f64 / 3600.0,
        );
        if native > 2.0 * l || l > 2.0 * native {
            warnings.push(Problem::data(
                key,
                format!(
                    "{} and a Gitea time estimate of {} h: the label is used; keep one",
                    label.label(),
                    (native * 10.0).round() / 10.0
                ),
            ));
        }
    }
    // One queue per issue: the work goes to its first assignee on the team (the first, where none is);
    // the others are said (audit 82). A first assignee from outside the team passed the work to someone
    // not assigned at all while a co-assignee on the team looked on (audit 137).
    let on_team = |a: &String| team.iter().any(|m| m.name.eq_ignore_ascii_case(a));
    let planned = issue
        .assignees
        .iter()
        .find(|a| on_team(a))
        .or_else(|| issue.assignees.first())
        .cloned();
    if let Some(planned) = &planned
        && issue.assignees.len() > 1
        && issue.state == OpenState::Open
    {
        let others: Vec<&str> = issue
            .assignees
            .iter()
            .filter(|a| *a != planned)
            .map(String::as_str)
            .collect();
        let which = if issue.assignees.first() == Some(planned) {
            format!("the first, {planned}")
        } else {
            format!("{planned}, the first of them on the team")
        };
        warnings.push(Problem::data(
            key,
            format!(
                "assigned to {} people: its work is planned on {which}, alone (the plan gives an issue \
                 one person); split it into issues for {} to plan their part",
                issue.assignees.len(),
                others.join(", ")
            ),
        ));
    }
    let tracked_hours = issue.tracked_seconds() as f64 / 3600.0;
    PlannedIssue {
        key: key.clone(),
        title: issue.title.clone(),
        state: issue.state,
        lifecycle: rules.current(issue),
        timeline: rules.timeline(issue),
        assignee: planned.clone(),
        assignees: issue.assignees.clone(),
        estimate_hours,
        estimate_label,
        estimate_source,
        priority: issue.priority(),
        priority_set: issue.priority_label().is_some(),
        milestone: issue.milestone,
        depends_on: issue.depends_on.clone(),
        outside_blockers: issue.outside_blockers.clone(),
        hidden_blockers: issue.hidden_blockers,
        tracked_hours,
        started: tracked_hours > 0.0 || issue.has_open_pull(),
        merged_pull: issue.pull_requests.iter().any(|p| p.merged),
        assigned_at: planned.as_ref().and_then(|a| {
            issue
                .timeline
                .iter()
                .filter(|e| {
                    e.kind == crate::domain::EventKind::Assignees
                        && !e.removed
                        && e.assignee.as_ref() == Some(a)
                })
                .map(|e| e.created_at)
                .max()
        }),
        labels: issue.labels.clone(),
        created_at: issue.created_at,
        closed_at: issue.closed_at,
        updated_at: issue.updated_at,
        provenance: Vec::new(),
        provenance_log: Vec::new(),
        due: None,
        due_hard: false,
    }
}

/// Whether a milestone titled `title` is the one a person typed as `typed`: case, Unicode composition
/// ("é" typed as one character or as "e" and an accent, as macOS writes it) and surrounding spaces aside
/// (the pages name milestones by title, and people retype them).
pub(crate) fn is_titled(title: &str, typed: &str) -> bool {
    folded(title) == folded(typed)
}

/// Text as it is compared when a person typed it: trimmed, and as the search compares it (composed,
/// without zero-width characters, lower case: `Re\u{200b}lease` is `Release`, as it looks).
pub(crate) fn folded(text: &str) -> String {
    crate::views::search::lowered(text.trim())
}

/// How each milestone is named in words: its title, and its repository after it where another milestone
/// has the same title (milestones are per repository in Gitea, so one release across repositories is
/// several milestones of one title), and its id too where one of the same repository has it (titles
/// that differ only in case, accents' encoding or a zero-width character; audit 95: `Café (acme/api)`
/// twice). Takes `(id, title, repository)`.
pub fn milestone_names<'a>(
    milestones: impl IntoIterator<Item = (u64, &'a str, String)>,
) -> BTreeMap<u64, String> {
    let all: Vec<(u64, &str, String)> = milestones.into_iter().collect();
    let mut titles: HashMap<String, usize> = HashMap::new();
    let mut in_repo: HashMap<(String, &str), usize> = HashMap::new();
    for (_, title, repo) in &all {
        *titles.entry(folded(title)).or_default() += 1;
        *in_repo.entry((folded(title), repo.as_str())).or_default() += 1;
    }
    all.iter()
        .map(|(id, title, repo)| {
            let folded = folded(title);
            let name = if in_repo
                .get(&(folded.clone(), repo.as_str()))
                .copied()
                .unwrap_or(0)
                > 1
            {
                format!("{title} ({repo}, milestone {id})")
            } else if titles.get(&folded).copied().unwrap_or(0) > 1 {
                format!("{title} ({repo})")
            } else {
                (*title).to_owned()
            };
            (*id, name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Meta, Snapshot};
    use chrono::TimeZone;
    use std::collections::BTreeMap;

    #[test]
    fn a_name_one_typo_from_a_members_is_found_a_swap_of_neighbours_included() {
        let team = ["amara", "gus", "bjorn"];
        let near = |name: &str| nearest(name, team.iter().copied());
        // A swap of two neighbouring letters is one typo (Levenshtein counts two: audit 109's "gsu").
        assert_eq!(near("gsu"), Some((1, "gus")));
        assert_eq!(near("gux"), Some((1, "gus")));
        assert_eq!(near("GUS"), Some((0, "gus")));
        assert_eq!(near("amra"), Some((1, "amara")));
        assert_eq!(near("bjron"), Some((1, "bjorn")));
        // Two edits of a short name is someone else; of a longer one, still a typo.
        assert_eq!(near("sug"), None);
        assert_eq!(near("amrae"), Some((2, "amara")));
        assert_eq!(near("zoe"), None);
        assert_eq!(edits("ca", "abc"), 3);
    }

    fn snapshot(labels: &[&str]) -> Snapshot {
        let t = Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap();
        let issue = Issue {
            title: "x".into(),
            labels: labels.iter().map(|s| s.to_string()).collect(),
            ..Issue::bare(1, t)
        };
        let key: IssueKey = "acme/api#1".parse().unwrap();
        Snapshot {
            meta: Meta {
                format: crate::state::Format::CURRENT,
                synced_at: t,
                server: None,
                repositories: vec![],
            },
            labels: BTreeMap::new(),
            milestones: BTreeMap::new(),
            issues: [(key, issue)].into(),
        }
    }

    #[test]
    fn estimates_off_the_ladder_and_bad_labels_are_warned_about() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap();
        let plan = Plan::from_snapshot(&snapshot(&["est/5h", "p/7"]), &Config::default(), now);
        assert_eq!(plan.issues[0].estimate_hours, Some(5.0));
        assert!(
            plan.warnings
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .iter()
                .any(|w| w.contains("est/5h is not on the estimate ladder"))
        );
        assert!(
            plan.warnings
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .iter()
                .any(|w| w.contains("p/7") && w.contains("treated as p/2"))
        );
        // Beside one that reads, that one is said to be used.
        let plan = Plan::from_snapshot(&snapshot(&["p/7", "p/0"]), &Config::default(), now);
        let said: Vec<String> = plan.warnings.iter().map(ToString::to_string).collect();
        assert!(
            said.iter()
                .any(|w| w.contains("p/7") && w.contains("its label p/0 is used")),
            "{said:?}"
        );
        assert!(!said.iter().any(|w| w.contains("treated as")), "{said:?}");
        let plan = Plan::from_snapshot(&snapshot(&["est/4h"]), &Config::default(), now);
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        let plan = Plan::from_snapshot(&snapshot(&["est/x"]), &Config::default(), now);
        assert_eq!(plan.issues[0].estimate_source, EstimateSource::Imputed);
        assert!(
            plan.warnings[0]
                .to_string()
                .contains("forecast as if it had no estimate")
        );
        // One problem of several issues is said once, naming them.
        let mut two = snapshot(&["est/x"]);
        let (k, i) = two
            .issues
            .iter()
            .next()
            .map(|(k, i)| (k.clone(), i.clone()))
            .unwrap();
        two.issues.insert(
            IssueKey {
                number: 2,
                ..k.clone()
            },
            i.clone(),
        );
        two.issues.insert(
            IssueKey { number: 3, ..k },
            Issue {
                labels: vec!["est/y".into()],
                ..i
            },
        );
        let plan = Plan::from_snapshot(&two, &Config::default(), now);
        let said: Vec<String> = plan.warnings.iter().map(ToString::to_string).collect();
        assert!(
            said.iter()
                .any(|w| w.starts_with("acme/api#1 and acme/api#2: ") && w.contains("\"x\"")),
            "{said:?}"
        );
        assert!(
            said.iter().any(|w| w.starts_with("acme/api#3: ")),
            "{said:?}"
        );
        assert_eq!(
            said.iter().filter(|w| w.contains("\"x\"")).count(),
            1,
            "{said:?}"
        );
        // A closed issue is not forecast: it leaves the calibration.
        let mut closed = snapshot(&["est/x"]);
        for i in closed.issues.values_mut() {
            i.state = crate::domain::OpenState::Closed;
            i.closed_at = Some(now);
        }
        let plan = Plan::from_snapshot(&closed, &Config::default(), now);
        let said = plan.warnings[0].to_string();
        assert!(
            said.contains("the closed issue is left out of the calibration")
                && !said.contains("forecast as if"),
            "{said}"
        );
    }

    #[test]
    fn labels_as_teams_really_set_them_are_read_one_way_and_said() {
        // Audit 82: two estimates took whichever sorted first (est/10w over est/1h, est/1h over est/2w),
        // `est/ 2d` was "not on the ladder", `est/banana` made the issue "decided", `p/00` was p/0, and
        // `Est/2d` was nothing without a word.
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap();
        let said = |plan: &Plan| {
            plan.warnings
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        let plan = Plan::from_snapshot(
            &snapshot(&["est/1h", "est/2w", "p/1", "p/3"]),
            &Config::default(),
            now,
        );
        let i = &plan.issues[0];
        assert_eq!(
            (i.estimate_label.as_deref(), i.priority.label()),
            (Some("2w"), "p/1".to_owned())
        );
        let w = said(&plan);
        assert!(
            w.iter()
                .any(|w| w
                    .contains("2 estimate labels (est/1h, est/2w): the largest, est/2w, is used")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|w| w.contains("2 priority labels (p/1, p/3): the highest, p/1, is used")),
            "{w:?}"
        );
        let plan = Plan::from_snapshot(&snapshot(&["est/ 2d"]), &Config::default(), now);
        assert_eq!(plan.issues[0].estimate_label.as_deref(), Some("2d"));
        assert!(plan.warnings.is_empty(), "{:?}", said(&plan));
        let banana = snapshot(&["est/banana"]);
        let key: IssueKey = "acme/api#1".parse().unwrap();
        assert!(!banana.issues[&key].has_estimate());
        let plan = Plan::from_snapshot(&banana, &Config::default(), now);
        assert_eq!(
            plan.issues[0].lifecycle,
            crate::domain::Lifecycle::Diagnosis
        );
        let plan = Plan::from_snapshot(&snapshot(&["p/00", "Est/2d"]), &Config::default(), now);
        assert!(!plan.issues[0].priority_set);
        let w = said(&plan);
        assert!(w.iter().any(|w| w.contains("p/00")), "{w:?}");
        assert!(
            w.iter()
                .any(|w| w.contains("the label \"Est/2d\" is not read")),
            "{w:?}"
        );
    }

    #[test]
    fn a_label_far_from_giteas_own_estimate_is_said() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap();
        let mut s = snapshot(&["est/1h"]);
        for i in s.issues.values_mut() {
            i.time_estimate = 100 * 3600;
        }
        let plan = Plan::from_snapshot(&s, &Config::default(), now);
        assert_eq!(plan.issues[0].estimate_hours, Some(1.0));
        assert!(
            plan.warnings.iter().any(|w| w
                .to_string()
                .contains("est/1h and a Gitea time estimate of 100 h: the label is used")),
            "{:?}",
            plan.warnings
        );
        // Near each other, nothing is said.
        for i in s.issues.values_mut() {
            i.time_estimate = 5400;
        }
        assert!(
            Plan::from_snapshot(&s, &Config::default(), now)
                .warnings
                .is_empty()
        );
    }

    /// A name that is a member's with a suffix is taken for that member mistyped, not for a new hire
    /// (audit 140).
    #[test]
    fn a_member_name_with_a_suffix_is_near_that_member() {
        assert!(
            same_stem("dana.k", "dana")
                && same_stem("Dana", "dana2")
                && same_stem("dana", "dana_k")
        );
        assert!(
            !same_stem("danae", "dana")
                && !same_stem("dana", "dana")
                && !same_stem("kdana", "dana")
        );
    }

    /// Every estimate label that does not read is said: two beside each other both, and one beside a
    /// label that reads with the one used (audit 136: only the first was said, and beside a good label
    /// none).
    #[test]
    fn every_estimate_label_that_does_not_read_is_said() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap();
        let said = |labels: &[&str]| -> Vec<String> {
            Plan::from_snapshot(&snapshot(labels), &Config::default(), now)
                .warnings
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        let both = said(&["est/-3d", "est/99999999999999999999w"]);
        assert!(
            both.iter().any(|w| w.contains("\"-3d\""))
                && both.iter().any(|w| w.contains("\"99999999999999999999w\"")),
            "{both:?}"
        );
        let beside = said(&["est/2d", "est/banana"]);
        assert!(
            beside
                .iter()
                .any(|w| w.contains("\"banana\"") && w.contains("its label est/2d is used")),
            "{beside:?}"
        );
    }

    #[test]
    fn an_issue_with_several_assignees_says_whose_queue_it_is_planned_on() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap();
        let mut s = snapshot(&["est/1d"]);
        for i in s.issues.values_mut() {
            i.assignees = vec!["amara".into(), "bjorn".into(), "chen".into()];
        }
        let plan = Plan::from_snapshot(&s, &Config::default(), now);
        assert_eq!(plan.issues[0].assignee.as_deref(), Some("amara"));
        assert!(
            plan.warnings.iter().any(|w| w
                .to_string()
                .contains("assigned to 3 people: its work is planned on the first, amara, alone")),
            "{:?}",
            plan.warnings
        );
        // A first assignee from outside the team: the first of them on it takes the work (audit 137:
        // someone not assigned at all did, and the warning named the outsider).
        let config = Config {
            team: ["bjorn", "chen"]
                .map(|name| crate::config::Member {
                    name: name.to_owned(),
                    ..Default::default()
                })
                .to_vec(),
            ..Config::default()
        };
        let plan = Plan::from_snapshot(&s, &config, now);
        assert_eq!(plan.issues[0].assignee.as_deref(), Some("bjorn"));
        assert!(
            plan.warnings.iter().any(|w| w.to_string().contains(
                "its work is planned on bjorn, the first of them on the team, alone (the plan gives an \
                 issue one person); split it into issues for amara, chen"
            )),
            "{:?}",
            plan.warnings
        );
    }

    #[test]
    fn a_day_zero_long_after_the_sync_is_said() {
        // The snapshot was synced 2026-11-30 08:00: a forecast months later knows nothing since.
        let snap = snapshot(&[]);
        let said = |now: DateTime<Utc>| {
            Plan::from_snapshot(&snap, &Config::default(), now)
                .warnings
                .iter()
                .any(|w| {
                    w.to_string()
                        .contains("nothing that happened since is known")
                })
        };
        assert!(said(Utc.with_ymd_and_hms(2027, 3, 1, 8, 0, 0).unwrap()));
        assert!(!said(Utc.with_ymd_and_hms(2026, 12, 5, 8, 0, 0).unwrap()));
    }

    #[test]
    fn milestones_of_one_title_are_named_apart_by_repository_and_within_one_by_id() {
        let names = milestone_names([
            (1, "Release", "acme/api".to_owned()),
            (2, "Release", "acme/web".to_owned()),
            (3, "Café", "acme/api".to_owned()),
            (4, "Cafe\u{301}", "acme/api".to_owned()),
            (5, "Re\u{200b}lease", "acme/api".to_owned()),
            (6, "Launch", "acme/api".to_owned()),
        ]);
        assert_eq!(names[&6], "Launch");
        assert_eq!(names[&2], "Release (acme/web)");
        // "Re\u{200b}lease" looks the same as "Release" in acme/api: the id tells them apart.
        assert_eq!(names[&1], "Release (acme/api, milestone 1)");
        assert_eq!(names[&5], "Re\u{200b}lease (acme/api, milestone 5)");
        assert_eq!(names[&3], "Café (acme/api, milestone 3)");
        assert_eq!(names[&4], "Cafe\u{301} (acme/api, milestone 4)");
    }

    #[test]
    fn a_team_member_no_synced_record_names_is_warned_about_with_the_login_it_is_near() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap();
        let member = |name: &str, starts: Option<NaiveDate>| crate::config::Member {
            name: name.into(),
            starts,
            ..Default::default()
        };
        let mut snap = snapshot(&[]);
        let issue = snap.issues.values_mut().next().unwrap();
        issue.assignees = vec!["bjorn".into()];
        // Uma was assigned, then unassigned: the event names her.
        let mut assigned = crate::domain::TimelineEvent::new(
            7,
            crate::domain::EventKind::from("assignees"),
            now,
            "bjorn",
        );
        assigned.assignee = Some("uma".into());
        assigned.removed = true;
        issue.timeline.push(assigned);
        issue.comments.push(crate::domain::Comment {
            id: 1,
            user: "chen".into(),
            created_at: now,
            updated_at: now,
            body: String::new(),
        });
        let config = Config {
            team: vec![
                member("ann", None),
                member("uma", None),
                member("chen", None),
                member("Bjorn", None),
                member("chenn", None),
                member("zed", None),
                member("newbie", NaiveDate::from_ymd_opt(2026, 12, 7)),
            ],
            ..Config::default()
        };
        let plan = Plan::from_snapshot(&snap, &config, now);
        let warnings: Vec<String> = plan.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(warnings.len(), 3, "{warnings:#?}");
        // The same but for case is the login the issues name: planned as it (audit 95: work lost).
        assert!(
            warnings[0]
                .starts_with("commitea.yaml team member Bjorn: Gitea spells the username bjorn")
                && warnings[0].contains("planned as bjorn"),
            "{}",
            warnings[0]
        );
        let team: Vec<&str> = plan.team.iter().map(|m| m.name.as_str()).collect();
        assert!(
            team.contains(&"bjorn") && !team.contains(&"Bjorn"),
            "{team:?}"
        );
        assert!(
            warnings[1].contains("member chenn") && warnings[1].ends_with("did you mean chen?")
        );
        assert!(
            warnings[2].contains("member zed") && warnings[2].contains("if they joined recently")
        );
    }

    #[test]
    fn a_members_repository_not_synced_is_said() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap();
        let repo = |r: &str| r.parse::<crate::domain::RepoName>().unwrap();
        let config = Config {
            repositories: vec![repo("acme/api")],
            team: vec![crate::config::Member {
                name: "ann".into(),
                repositories: vec![repo("acme/api"), repo("acme/nope")],
                ..Default::default()
            }],
            ..Config::default()
        };
        let warnings: Vec<String> = Plan::from_snapshot(&snapshot(&[]), &config, now)
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            warnings.iter().any(|w| w.starts_with(
                "commitea.yaml team member ann: their repositories name acme/nope, which the top-level"
            )),
            "{warnings:#?}"
        );
    }
}
