//! Jira histories (flattened to three CSV files per dataset) → CommiTea state repos in Gitea's shapes.
//!
//! A dataset `NAME` is three files in one folder: `NAME_issues.csv`, `NAME_history.csv` and
//! `NAME_milestones.csv` (columns in `docs/import.md`). Each Jira project becomes one Gitea repository,
//! `jira/<PROJECT>`, with one state repo of its own.
//!
//! The history is turned into timeline events by walking it *backwards* from each issue's final state: the
//! state before a change is the change's `from` value. So the events always lead exactly to the final
//! labels, milestone, assignee and open/closed state, which the lifecycle's undo logic depends on, and a
//! value the history never mentions is taken to have been there from creation. The full mapping, and what
//! is dropped and why, is in `docs/import.md`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};

use super::{ImportError, parse_csv};
use crate::config::Config;
use crate::domain::{
    Estimate, Issue, IssueKey, Label, Milestone, OpenState, RepoName, TimelineEvent, TrackedTime,
};
use crate::state::{Layout, Meta, Snapshot, write_if_changed};

/// One row of `NAME_issues.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct JiraIssue {
    /// The 1-based line the row starts on.
    pub line: usize,
    /// `DURACLOUD-101`.
    pub key: String,
    /// The project key, `DURACLOUD`.
    pub project: String,
    /// The issue's number within its project.
    pub number: u64,
    /// Bug, Story, Task, …
    pub kind: String,
    /// Blocker, Critical, Major, Minor or Trivial.
    pub priority: String,
    /// The Jira status at crawl time.
    pub status: String,
    /// Closed (has a resolution date) at crawl time.
    pub closed: bool,
    /// The resolution, empty if none.
    pub resolution: String,
    /// When it was created.
    pub created: DateTime<Utc>,
    /// When it was last updated.
    pub updated: DateTime<Utc>,
    /// When it was resolved.
    pub resolved: Option<DateTime<Utc>>,
    /// The first transition to a status containing "Progress".
    pub first_in_progress: Option<DateTime<Utc>>,
    /// The assignee's pseudonym.
    pub assignee: Option<String>,
    /// The reporter's pseudonym.
    pub reporter: String,
    /// Jira labels.
    pub labels: Vec<String>,
    /// The first fixVersion.
    pub milestone: Option<String>,
    /// All fixVersions.
    pub milestones: Vec<String>,
    /// Story points.
    pub story_points: Option<f64>,
    /// Jira's original estimate in hours.
    pub original_estimate_h: Option<f64>,
    /// Time logged in hours.
    pub time_spent_h: Option<f64>,
    /// Keys this issue depends on (is blocked by).
    pub depends_on: Vec<String>,
    /// The summary.
    pub title: String,
}

/// One row of `NAME_history.csv`: one field changed by one person at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JiraHistory {
    /// The 1-based line the row starts on.
    pub line: usize,
    /// The issue's key.
    pub key: String,
    /// When.
    pub at: DateTime<Utc>,
    /// Who.
    pub author: String,
    /// The Jira field (`status`, `assignee`, `Fix Version`, …).
    pub field: String,
    /// The value before, empty if none.
    pub from: String,
    /// The value after, empty if none.
    pub to: String,
}

/// One row of `NAME_milestones.csv`: a Jira fixVersion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JiraMilestone {
    /// The 1-based line the row starts on.
    pub line: usize,
    /// The project key.
    pub project: String,
    /// Jira's version id (becomes the milestone id).
    pub id: u64,
    /// The version's name.
    pub name: String,
    /// Released.
    pub released: bool,
    /// Archived.
    pub archived: bool,
    /// The release date.
    pub release_date: Option<NaiveDate>,
}

/// A loaded dataset: its three files.
#[derive(Debug, Clone, PartialEq)]
pub struct JiraDataset {
    /// The dataset's name, the files' prefix.
    pub name: String,
    /// `NAME_issues.csv`.
    pub issues: Vec<JiraIssue>,
    /// `NAME_history.csv`.
    pub history: Vec<JiraHistory>,
    /// `NAME_milestones.csv`.
    pub milestones: Vec<JiraMilestone>,
}

impl JiraDataset {
    /// Each project key with its number of issues, sorted by key.
    pub fn projects(&self) -> Vec<(String, usize)> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for i in &self.issues {
            *counts.entry(i.project.as_str()).or_default() += 1;
        }
        counts.into_iter().map(|(k, n)| (k.to_owned(), n)).collect()
    }
}

/// What an import kept and what it dropped, for the log and `docs/import.md`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportStats {
    /// Issues imported.
    pub issues: usize,
    /// Of them, open at the data's end.
    pub open: usize,
    /// With a milestone at the end.
    pub with_milestone: usize,
    /// With an `est/*` label at the end.
    pub with_estimate: usize,
    /// With logged time (imported as one tracked-time entry).
    pub with_time_spent: usize,
    /// Timeline events written.
    pub events: usize,
    /// Dependencies kept.
    pub dependencies: usize,
    /// Dependencies on issues of other projects, dropped.
    pub dependencies_other_project: usize,
    /// Dependencies on issues of this project that are not in the data, dropped.
    pub dependencies_missing: usize,
    /// fixVersion names (in the issues' `milestones` or in `Fix Version` history rows) that are not in
    /// the milestones file for the project, dropped.
    pub unknown_milestone_refs: usize,
    /// Issues with a `first_in_progress` moment, which has no Gitea counterpart (dropped).
    pub in_progress_dropped: usize,
    /// History rows of fields that are not mapped (Component, Sprint, duedate, …).
    pub history_rows_ignored: usize,
    /// Close events added because the history never closed an issue that is closed.
    pub closes_added: usize,
    /// History rows of this project's keys that the issues file does not have, dropped: a sign the
    /// files do not belong together, or the issues file was cut short (audit 180: 286 rows of 79 issues
    /// went without a word).
    pub history_rows_orphaned: usize,
    /// The keys of those rows, sorted.
    pub orphaned_keys: Vec<String>,
    /// Issues whose final estimate is more than twice the ladder's top rung, imported as that rung
    /// (audit 180: a 1344-hour item forecast as 60 hours, without a word), by key.
    pub estimates_capped: Vec<String>,
    /// Issues whose title is longer than Gitea takes ([`crate::limits::TITLE_CHARS`]), cut to it (audit 186:
    /// a 50 MB title made a 144 MB site), by key.
    pub titles_cut: Vec<String>,
}

/// One Jira project as a CommiTea state repo, in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedProject {
    /// The project key.
    pub project: String,
    /// The dataset it came from.
    pub dataset: String,
    /// `commitea.yaml`.
    pub config_yaml: String,
    /// `snapshot/`.
    pub snapshot: Snapshot,
    /// How many issues.
    pub issues: usize,
    /// What was kept and dropped.
    pub stats: ImportStats,
}

/// The fields of a parsed CSV file, checked against the columns it must have.
struct Table {
    file: String,
    columns: HashMap<String, usize>,
    rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    fn read(dir: &Path, file: &str, required: &[&str]) -> Result<Self, ImportError> {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).map_err(|source| ImportError::Read {
            path: path.clone(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            // Where the first byte that is not UTF-8 is, as a line and column of the file.
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = good.iter().filter(|b| **b == b'\n').count() + 1;
            let column = good.iter().rev().take_while(|b| **b != b'\n').count() + 1;
            ImportError::Row {
                file: file.to_owned(),
                line,
                message: format!(
                    "byte {column} of the line is not UTF-8 (a file saved as Latin-1 or Windows-1252?): \
                     save the export as UTF-8 and import again"
                ),
            }
        })?;
        // Excel's "CSV UTF-8" starts with a byte-order mark, which is no part of the first column's name.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        Self::parse(file, text, required)
    }

    fn parse(file: &str, text: &str, required: &[&str]) -> Result<Self, ImportError> {
        // Another separator is said as such, before the fields it splits wrongly are (audit 186: a
        // semicolon file was "a quote inside an unquoted field" on line 7, or lacked column "key").
        let header = text.lines().next().unwrap_or("");
        if !header.contains(',')
            && let Some((name, sep)) = [("semicolons", ';'), ("tabs", '\t'), ("bars", '|')]
                .into_iter()
                .find(|(_, c)| header.contains(*c))
        {
            return Err(ImportError::Row {
                file: file.to_owned(),
                line: 1,
                message: format!(
                    "the header's columns are separated by {name} ({} of them), not commas: the import \
                     reads comma-separated CSV (docs/import.md); export it with commas as the separator",
                    header.matches(sep).count()
                ),
            });
        }
        let mut records = parse_csv(text)
            .map_err(|e| ImportError::Row {
                file: file.to_owned(),
                line: e.line,
                message: format!(
                    "{}; the import reads the flattened CSV that docs/import.md describes",
                    e.message
                ),
            })?
            .into_iter();
        let (_, header) = records.next().ok_or_else(|| ImportError::Row {
            file: file.to_owned(),
            line: 1,
            message: "the file is empty; the first line must name the columns".into(),
        })?;
        let columns: HashMap<String, usize> = header
            .iter()
            .enumerate()
            .map(|(i, c)| (c.trim().to_owned(), i))
            .collect();
        for c in required {
            if !columns.contains_key(*c) {
                return Err(ImportError::Row {
                    file: file.to_owned(),
                    line: 1,
                    message: format!(
                        "column \"{c}\" is missing from the header; the import reads the flattened CSV \
                         that docs/import.md describes, not Jira's own CSV or XML export"
                    ),
                });
            }
        }
        let mut rows = Vec::new();
        for (line, fields) in records {
            if fields.len() == 1 && fields[0].is_empty() {
                continue; // a blank line
            }
            if fields.len() != header.len() {
                return Err(ImportError::Row {
                    file: file.to_owned(),
                    line,
                    message: format!(
                        "{} fields, but the header has {}",
                        fields.len(),
                        header.len()
                    ),
                });
            }
            rows.push((line, fields));
        }
        Ok(Self {
            file: file.to_owned(),
            columns,
            rows,
        })
    }

    fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        self.rows.iter().map(move |(line, fields)| Row {
            table: self,
            line: *line,
            fields,
        })
    }
}

struct Row<'a> {
    table: &'a Table,
    line: usize,
    fields: &'a [String],
}

impl Row<'_> {
    fn get(&self, col: &str) -> &str {
        self.table
            .columns
            .get(col)
            .and_then(|i| self.fields.get(*i))
            .map_or("", |s| s.trim())
    }

    fn err(&self, col: &str, what: &str) -> ImportError {
        ImportError::Row {
            file: self.table.file.clone(),
            line: self.line,
            message: format!("column \"{col}\": {what} \"{}\"", self.get(col)),
        }
    }

    fn required(&self, col: &str) -> Result<String, ImportError> {
        let v = self.get(col);
        if v.is_empty() {
            Err(ImportError::Row {
                file: self.table.file.clone(),
                line: self.line,
                message: format!("column \"{col}\": must not be empty"),
            })
        } else {
            Ok(v.to_owned())
        }
    }

    fn opt_time(&self, col: &str) -> Result<Option<DateTime<Utc>>, ImportError> {
        let v = self.get(col);
        if v.is_empty() {
            return Ok(None);
        }
        DateTime::parse_from_rfc3339(v)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|_| self.err(col, "not a timestamp"))
    }

    fn time(&self, col: &str) -> Result<DateTime<Utc>, ImportError> {
        self.opt_time(col)?
            .ok_or_else(|| self.err(col, "not a timestamp"))
    }

    fn opt_date(&self, col: &str) -> Result<Option<NaiveDate>, ImportError> {
        let v = self.get(col);
        if v.is_empty() {
            return Ok(None);
        }
        NaiveDate::parse_from_str(v, "%Y-%m-%d")
            .map(Some)
            .map_err(|_| self.err(col, "not a date (YYYY-MM-DD)"))
    }

    fn opt_f64(&self, col: &str) -> Result<Option<f64>, ImportError> {
        let v = self.get(col);
        if v.is_empty() {
            return Ok(None);
        }
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => Err(self.err(col, "not a number of at least 0")),
        }
    }

    fn u64(&self, col: &str) -> Result<u64, ImportError> {
        self.get(col)
            .parse()
            .map_err(|_| self.err(col, "not a whole number"))
    }

    fn bool(&self, col: &str) -> Result<bool, ImportError> {
        match self.get(col) {
            "True" | "true" => Ok(true),
            "False" | "false" | "" => Ok(false),
            _ => Err(self.err(col, "not True or False")),
        }
    }

    fn list(&self, col: &str) -> Vec<String> {
        self.get(col)
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// A user's name (empty for none): it becomes a Gitea username in the state repo (a team member,
    /// an assignee, a page of the site), so it must be one.
    fn user(&self, col: &str) -> Result<String, ImportError> {
        let v = self.get(col);
        if v.is_empty() || crate::ledger::format::valid_username(v) {
            Ok(v.to_owned())
        } else {
            Err(self.err(
                col,
                &format!("not a username ({}):", crate::ledger::format::USERNAME_RULE),
            ))
        }
    }

    fn opt(&self, col: &str) -> Option<String> {
        Some(self.get(col))
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    }
}

const ISSUE_COLUMNS: &[&str] = &[
    "key",
    "project",
    "number",
    "type",
    "priority",
    "status",
    "state",
    "resolution",
    "created",
    "updated",
    "resolved",
    "first_in_progress",
    "assignee",
    "reporter",
    "labels",
    "milestone",
    "milestones",
    "story_points",
    "original_estimate_h",
    "time_spent_h",
    "depends_on",
    "title",
];
const HISTORY_COLUMNS: &[&str] = &["key", "at", "author", "field", "from", "to"];
const MILESTONE_COLUMNS: &[&str] = &[
    "project",
    "milestone_id",
    "name",
    "released",
    "archived",
    "release_date",
];

/// Reads dataset `dataset` (`duraspace`, `apache`, …) from `dir`: `DATASET_issues.csv`,
/// `DATASET_history.csv` and `DATASET_milestones.csv`.
pub fn load_dataset(dir: &Path, dataset: &str) -> Result<JiraDataset, ImportError> {
    let issues_t = Table::read(dir, &format!("{dataset}_issues.csv"), ISSUE_COLUMNS)?;
    let history_t = Table::read(dir, &format!("{dataset}_history.csv"), HISTORY_COLUMNS)?;
    let milestones_t = Table::read(dir, &format!("{dataset}_milestones.csv"), MILESTONE_COLUMNS)?;
    let mut issues = Vec::with_capacity(issues_t.rows.len());
    for r in issues_t.rows() {
        let state = r.get("state");
        let closed = match state {
            "closed" => true,
            "open" => false,
            _ => return Err(r.err("state", "not open or closed")),
        };
        let (key, project, number) = (r.required("key")?, r.required("project")?, r.u64("number")?);
        // The key names the row's project and number; one that does not would file the issue under one
        // and join its history by the other (audit 97).
        if key != format!("{project}-{number}") {
            return Err(r.err(
                "key",
                &format!("not {project}-{number} (the row's project and number):"),
            ));
        }
        let (created, resolved) = (r.time("created")?, r.opt_time("resolved")?);
        if resolved.is_some_and(|t| t < created) {
            return Err(r.err(
                "resolved",
                &format!("before the issue was created ({}):", created.to_rfc3339()),
            ));
        }
        issues.push(JiraIssue {
            line: r.line,
            key,
            project,
            number,
            kind: r.get("type").to_owned(),
            priority: r.get("priority").to_owned(),
            status: r.get("status").to_owned(),
            closed,
            resolution: r.get("resolution").to_owned(),
            created,
            updated: r.time("updated")?,
            resolved,
            first_in_progress: r.opt_time("first_in_progress")?,
            assignee: Some(r.user("assignee")?).filter(|a| !a.is_empty()),
            reporter: r.user("reporter")?,
            labels: r.list("labels"),
            milestone: r.opt("milestone"),
            milestones: r.list("milestones"),
            story_points: r.opt_f64("story_points")?,
            original_estimate_h: r.opt_f64("original_estimate_h")?,
            time_spent_h: r.opt_f64("time_spent_h")?,
            depends_on: r.list("depends_on"),
            title: r.get("title").to_owned(),
        });
    }
    // Each issue once: a second row of the same key or number would silently replace the first.
    let mut seen_keys: HashMap<&str, usize> = HashMap::new();
    let mut seen_numbers: HashMap<(&str, u64), usize> = HashMap::new();
    for i in &issues {
        let twice = seen_keys
            .insert(&i.key, i.line)
            .map(|first| (first, format!("key {}", i.key)))
            .or_else(|| {
                seen_numbers
                    .insert((&i.project, i.number), i.line)
                    .map(|first| {
                        (
                            first,
                            format!("number {} of project {}", i.number, i.project),
                        )
                    })
            });
        if let Some((first, what)) = twice {
            return Err(ImportError::Row {
                file: issues_t.file.clone(),
                line: i.line,
                message: format!(
                    "the issue's {what} is on line {first} already; an export lists each issue once"
                ),
            });
        }
    }
    let mut history = Vec::with_capacity(history_t.rows.len());
    for r in history_t.rows() {
        let field = r.get("field").to_owned();
        let (from, to) = if field == "assignee" {
            (r.user("from")?, r.user("to")?)
        } else {
            (r.get("from").to_owned(), r.get("to").to_owned())
        };
        history.push(JiraHistory {
            line: r.line,
            key: r.required("key")?,
            at: r.time("at")?,
            author: r.user("author")?,
            field,
            from,
            to,
        });
    }
    let mut milestones = Vec::with_capacity(milestones_t.rows.len());
    for r in milestones_t.rows() {
        milestones.push(JiraMilestone {
            line: r.line,
            project: r.required("project")?,
            id: r.u64("milestone_id")?,
            name: r.required("name")?,
            released: r.bool("released")?,
            archived: r.bool("archived")?,
            release_date: r.opt_date("release_date")?,
        });
    }
    // Each version once, as each issue: a second row of one id replaced the first without a word
    // (audit 186).
    let mut seen_ids: HashMap<u64, usize> = HashMap::new();
    // And each name once in its project: issues name their versions by name, and all of one name went to
    // the lower id without a word (audit 189). Jira gives each version of a project its own name.
    let mut seen_names: HashMap<(&str, &str), (usize, u64)> = HashMap::new();
    for m in &milestones {
        if let Some(first) = seen_ids.insert(m.id, m.line) {
            return Err(ImportError::Row {
                file: milestones_t.file.clone(),
                line: m.line,
                message: format!(
                    "milestone_id {} is on line {first} already; an export lists each version once",
                    m.id
                ),
            });
        }
        if let Some((first, id)) = seen_names.insert((&m.project, &m.name), (m.line, m.id)) {
            return Err(ImportError::Row {
                file: milestones_t.file.clone(),
                line: m.line,
                message: format!(
                    "version \"{}\" of {} is on line {first} already (milestone_id {id}): issues name their \
                     versions by name, so two of one name cannot be told apart; Jira gives each version of \
                     a project its own name — rename one in the file, or leave one out",
                    crate::limits::excerpt(&m.name),
                    m.project
                ),
            });
        }
    }
    Ok(JiraDataset {
        name: dataset.to_owned(),
        issues,
        history,
        milestones,
    })
}

impl JiraDataset {
    /// The export's "as of": the latest moment anywhere in it, whatever the project. A project that
    /// stalled years before the export was taken is forecast from when it was taken, as a sync of it then
    /// would have been (audit 97: HYPAT, silent since 2011, was forecast as of 2011 — its six open issues
    /// "done in 2012" — though the data was crawled in 2014).
    pub fn as_of(&self) -> Option<DateTime<Utc>> {
        let issues = self
            .issues
            .iter()
            .flat_map(|i| [Some(i.created), Some(i.updated), i.resolved])
            .flatten();
        issues.chain(self.history.iter().map(|h| h.at)).max()
    }

    /// Checks that nothing in the export happened after `now`: an export holds only what happened, and
    /// one row dated 9999 would make it the project's "as of" (the latest moment in the data), so its
    /// forecast would start in year 9999 and its backtest cut it every 28 days from the first issue on.
    pub fn check_not_after(&self, now: DateTime<Utc>) -> Result<(), ImportError> {
        let late = |file: String, line: usize, col: &str, at: DateTime<Utc>| ImportError::Row {
            file,
            line,
            message: format!(
                "column \"{col}\": {} is after now ({}); an export holds only what happened",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
        };
        for i in &self.issues {
            let times = [
                ("created", Some(i.created)),
                ("updated", Some(i.updated)),
                ("resolved", i.resolved),
                ("first_in_progress", i.first_in_progress),
            ];
            if let Some((col, at)) = times
                .into_iter()
                .find_map(|(c, t)| t.filter(|t| *t > now).map(|t| (c, t)))
            {
                return Err(late(format!("{}_issues.csv", self.name), i.line, col, at));
            }
        }
        if let Some(h) = self.history.iter().find(|h| h.at > now) {
            return Err(late(
                format!("{}_history.csv", self.name),
                h.line,
                "at",
                h.at,
            ));
        }
        Ok(())
    }
}

/// The `p/*` label of a Jira priority: Blocker p/0, Critical p/1, Major p/2, Minor and Trivial p/3.
pub(crate) fn priority_label(priority: &str) -> Option<&'static str> {
    match priority.trim().to_ascii_lowercase().as_str() {
        "blocker" => Some("p/0"),
        "critical" => Some("p/1"),
        "major" => Some("p/2"),
        "minor" | "trivial" => Some("p/3"),
        _ => None,
    }
}

/// The rung of `ladder` nearest to `hours` on a log scale (ties go to the larger rung); `None` for no
/// positive amount or an empty ladder.
pub(crate) fn snap_to_ladder(
    hours: f64,
    ladder: &[Estimate],
    workday_hours: f64,
) -> Option<Estimate> {
    crate::domain::nearest_rung(hours, ladder, workday_hours)
}

/// Jira statuses that mean resolved.
const CLOSED_STATUSES: &[&str] = &["resolved", "closed", "done"];

/// An issue's fields that the mapping looks at, at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
struct JiraState {
    status: String,
    resolution: String,
    versions: BTreeSet<String>,
    assignee: String,
    priority: String,
    story_points: Option<f64>,
    estimate_h: Option<f64>,
    labels: BTreeSet<String>,
}

/// What the mapping needs to know about the project.
struct Mapping<'a> {
    versions: &'a BTreeMap<String, u64>,
    final_version: Option<&'a str>,
    ladder: &'a [Estimate],
    workday_hours: f64,
}

impl Mapping<'_> {
    /// Whether the state has a resolution (not empty, not `Unresolved`).
    fn resolved(s: &JiraState) -> bool {
        let res = s.resolution.trim();
        !res.is_empty() && !res.eq_ignore_ascii_case("unresolved")
    }

    /// Whether the state's status is a closed one (Resolved, Closed, Done).
    fn closed_status(s: &JiraState) -> bool {
        CLOSED_STATUSES.contains(&s.status.trim().to_ascii_lowercase().as_str())
    }

    /// The Gitea milestone of a set of fixVersions: the issue's final first fixVersion while it is in the
    /// set, else the known version with the lowest id.
    fn milestone(&self, s: &JiraState) -> Option<u64> {
        if let Some(f) = self.final_version
            && s.versions.contains(f)
            && let Some(id) = self.versions.get(f)
        {
            return Some(*id);
        }
        s.versions
            .iter()
            .filter_map(|v| self.versions.get(v).copied())
            .min()
    }

    fn estimate(&self, s: &JiraState) -> Option<String> {
        let hours = match s.story_points {
            Some(sp) if sp > 0.0 => sp * self.workday_hours,
            _ => s.estimate_h?,
        };
        snap_to_ladder(hours, self.ladder, self.workday_hours).map(|e| e.label())
    }

    fn labels(&self, s: &JiraState) -> BTreeSet<String> {
        let mut out = s.labels.clone();
        if let Some(p) = priority_label(&s.priority) {
            out.insert(p.to_owned());
        }
        if let Some(e) = self.estimate(s) {
            out.insert(e);
        }
        out
    }
}

/// The history fields the mapping reads.
const MAPPED_FIELDS: &[&str] = &[
    "status",
    "resolution",
    "Fix Version",
    "assignee",
    "priority",
    "Story Points",
    "timeoriginalestimate",
    "labels",
];

fn history_number(
    ds: &JiraDataset,
    h: &JiraHistory,
    value: &str,
) -> Result<Option<f64>, ImportError> {
    if value.trim().is_empty() {
        return Ok(None);
    }
    match value.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
        _ => Err(ImportError::Row {
            file: format!("{}_history.csv", ds.name),
            line: h.line,
            message: format!("field \"{}\": not a number \"{value}\"", h.field),
        }),
    }
}

/// Undoes one history row: the state just before it.
fn undo(ds: &JiraDataset, s: &mut JiraState, h: &JiraHistory) -> Result<(), ImportError> {
    match h.field.as_str() {
        "status" => s.status = h.from.clone(),
        "resolution" => s.resolution = h.from.clone(),
        "Fix Version" => {
            if !h.to.is_empty() {
                s.versions.remove(&h.to);
            }
            if !h.from.is_empty() {
                s.versions.insert(h.from.clone());
            }
        }
        "assignee" => s.assignee = h.from.clone(),
        "priority" => s.priority = h.from.clone(),
        "Story Points" => s.story_points = history_number(ds, h, &h.from)?,
        "timeoriginalestimate" => {
            s.estimate_h = history_number(ds, h, &h.from)?.map(|secs| secs / 3600.0);
        }
        "labels" => s.labels = h.from.split_whitespace().map(str::to_owned).collect(),
        _ => {}
    }
    Ok(())
}

struct Built {
    issue: Issue,
    team: BTreeSet<String>,
    closes_added: bool,
}

fn build_issue(
    ds: &JiraDataset,
    ji: &JiraIssue,
    rows: &[&JiraHistory],
    map: &Mapping<'_>,
) -> Result<Built, ImportError> {
    let final_state = JiraState {
        status: ji.status.clone(),
        resolution: ji.resolution.clone(),
        versions: ji.milestones.iter().cloned().collect(),
        assignee: ji.assignee.clone().unwrap_or_default(),
        priority: ji.priority.clone(),
        story_points: ji.story_points,
        estimate_h: ji.original_estimate_h,
        labels: ji.labels.iter().cloned().collect(),
    };
    // Group the rows by moment and walk backwards: states[k] is the state after group k, states[0] the
    // state at creation.
    let mut groups: Vec<(DateTime<Utc>, &str, Vec<&JiraHistory>)> = Vec::new();
    for h in rows {
        match groups.last_mut() {
            Some((at, _, g)) if *at == h.at => g.push(h),
            _ => groups.push((h.at, h.author.as_str(), vec![h])),
        }
    }
    let mut states = vec![final_state.clone(); groups.len() + 1];
    let mut cur = final_state;
    for (k, (_, _, g)) in groups.iter().enumerate().rev() {
        for h in g.iter().rev() {
            undo(ds, &mut cur, h)?;
        }
        states[k] = cur.clone();
    }

    let mut team = BTreeSet::new();
    let mut events: Vec<TimelineEvent> = Vec::new();
    let mut next_id = ji.number.saturating_mul(10_000);
    let mut closed = false;
    // A resolution left behind by a move out of a closed status (Closed → Reopened, the resolution not
    // cleared: some workflows do not) says nothing until the resolution changes again (audit 97: 23 of
    // 144 reopens were lost, and a close put years before the issue's last).
    let mut stale_resolution = false;
    for (k, (at, author, _)) in groups.iter().enumerate() {
        let (before, after) = (&states[k], &states[k + 1]);
        let user = if author.is_empty() { "jira" } else { author };
        let mut ev = |kind: &str| {
            next_id += 1;
            TimelineEvent::new(next_id, crate::domain::EventKind::from(kind), *at, user)
        };
        // Assignee.
        if before.assignee != after.assignee {
            if !before.assignee.is_empty() {
                let mut e = ev("assignees");
                e.assignee = Some(before.assignee.clone());
                e.removed = true;
                events.push(e);
            }
            if !after.assignee.is_empty() {
                let mut e = ev("assignees");
                e.assignee = Some(after.assignee.clone());
                events.push(e);
            }
        }
        for s in [before, after] {
            if !s.assignee.is_empty() {
                team.insert(s.assignee.clone());
            }
        }
        // Labels: p/*, est/* and Jira labels.
        let (lb, la) = (map.labels(before), map.labels(after));
        for l in lb.difference(&la) {
            let mut e = ev("label");
            e.label = Some(l.clone());
            e.removed = true;
            events.push(e);
        }
        for l in la.difference(&lb) {
            let mut e = ev("label");
            e.label = Some(l.clone());
            events.push(e);
        }
        // Milestone.
        let (mb, ma) = (map.milestone(before), map.milestone(after));
        if mb != ma {
            let mut e = ev("milestone");
            e.milestone = ma;
            e.old_milestone = mb;
            events.push(e);
        }
        // Open/closed: an issue is open at creation whatever its first status says.
        if before.resolution != after.resolution {
            stale_resolution = false;
        } else if Mapping::closed_status(before) && !Mapping::closed_status(after) {
            stale_resolution = true;
        }
        let c = if k + 1 == groups.len() {
            ji.closed
        } else {
            Mapping::closed_status(after) || (!stale_resolution && Mapping::resolved(after))
        };
        if c != closed {
            events.push(ev(if c { "close" } else { "reopen" }));
            closed = c;
        }
    }
    let mut closes_added = false;
    if ji.closed && !closed {
        // Closed without any recorded transition: one close at the resolution.
        let at = ji.resolved.unwrap_or(ji.updated);
        let at = groups.last().map_or(at, |(g, _, _)| at.max(*g));
        next_id += 1;
        events.push(TimelineEvent::new(
            next_id,
            crate::domain::EventKind::Close,
            at,
            &ji.reporter,
        ));
        closes_added = true;
    }
    if let Some(a) = &ji.assignee {
        team.insert(a.clone());
    }

    let end = states.last().cloned().unwrap_or_default();
    let labels: Vec<String> = map.labels(&end).into_iter().collect();
    let tracked_times = match ji.time_spent_h {
        Some(h) if h > 0.0 => vec![TrackedTime {
            id: ji.number,
            user: ji.assignee.clone().unwrap_or_else(|| ji.reporter.clone()),
            created: ji.resolved.unwrap_or(ji.updated),
            time: (h * 3600.0).round() as u64,
        }],
        _ => Vec::new(),
    };
    let issue = Issue {
        number: ji.number,
        // Gitea takes no longer title; the whole one would be on every page that names the issue.
        title: ji.title.chars().take(crate::limits::TITLE_CHARS).collect(),
        state: if ji.closed {
            OpenState::Closed
        } else {
            OpenState::Open
        },
        author: if ji.reporter.is_empty() {
            "jira".into()
        } else {
            ji.reporter.clone()
        },
        created_at: ji.created,
        updated_at: ji.updated,
        closed_at: if ji.closed {
            Some(ji.resolved.unwrap_or(ji.updated))
        } else {
            None
        },
        assignees: ji.assignee.iter().cloned().collect(),
        labels,
        milestone: map.milestone(&end),
        time_estimate: 0,
        depends_on: Vec::new(),
        body: format!("Imported from Jira {} ({}).", ji.key, ji.kind),
        comments: Vec::new(),
        timeline: events,
        tracked_times,
        outside_blockers: Vec::new(),
        hidden_blockers: 0,
        pull_requests: Vec::new(),
    };
    Ok(Built {
        issue,
        team,
        closes_added,
    })
}

/// Label colours: p/0 red … p/3 green, estimates blue, Jira labels grey.
fn label_color(name: &str) -> (&'static str, String) {
    match name {
        "p/0" => ("b60205", "Priority 0: Jira Blocker".into()),
        "p/1" => ("d93f0b", "Priority 1: Jira Critical".into()),
        "p/2" => ("fbca04", "Priority 2: Jira Major".into()),
        "p/3" => ("0e8a16", "Priority 3: Jira Minor or Trivial".into()),
        _ if name.starts_with(Estimate::LABEL_PREFIX) => (
            "c5def5",
            "Estimate from Jira story points or original estimate".into(),
        ),
        _ => ("ededed", "Jira label".into()),
    }
}

/// Maps project `project` of `ds` to a state repo: `jira/<PROJECT>`, its issues with their history as
/// timeline events, its fixVersions as milestones, and `commitea.yaml` with everyone ever assigned.
///
/// Deterministic: the snapshot's `synced_at` is the latest moment in the export ([`JiraDataset::as_of`]);
/// a project whose own last activity is more than 90 days before it is said so.
pub fn to_state(ds: &JiraDataset, project: &str) -> Result<ImportedProject, ImportError> {
    let issues: Vec<&JiraIssue> = ds.issues.iter().filter(|i| i.project == project).collect();
    let unknown = || ImportError::UnknownProject {
        project: project.to_owned(),
        dataset: ds.name.clone(),
        known: ds
            .projects()
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    };
    if issues.is_empty() {
        return Err(unknown());
    }
    let repo: RepoName =
        format!("jira/{project}")
            .parse()
            .map_err(|_| ImportError::ProjectName {
                project: crate::limits::excerpt(project),
                dataset: ds.name.clone(),
            })?;
    let defaults = Config::default();
    let workday_hours = defaults.calendar.workday_hours.0;
    let ladder = defaults.estimates.ladder.clone();

    // Milestones of the project, by name (the lowest id wins a duplicate name).
    let project_ms: Vec<&JiraMilestone> = {
        let mut v: Vec<&JiraMilestone> = ds
            .milestones
            .iter()
            .filter(|m| m.project == project)
            .collect();
        v.sort_by_key(|m| m.id);
        v.dedup_by_key(|m| m.id);
        v
    };
    let mut versions: BTreeMap<String, u64> = BTreeMap::new();
    for m in &project_ms {
        versions.entry(m.name.clone()).or_insert(m.id);
    }

    let keys: HashMap<&str, u64> = issues.iter().map(|i| (i.key.as_str(), i.number)).collect();
    let created: HashMap<u64, DateTime<Utc>> =
        issues.iter().map(|i| (i.number, i.created)).collect();
    let mut history: HashMap<&str, Vec<&JiraHistory>> = HashMap::new();
    let mut stats = ImportStats::default();
    let mut synced_at = DateTime::<Utc>::MIN_UTC;
    let prefix = format!("{project}-");
    let mut orphaned: BTreeSet<&str> = BTreeSet::new();
    for h in &ds.history {
        if !keys.contains_key(h.key.as_str()) && h.key.starts_with(&prefix) {
            stats.history_rows_orphaned += 1;
            orphaned.insert(h.key.as_str());
        }
        if keys.contains_key(h.key.as_str()) {
            synced_at = synced_at.max(h.at);
            if MAPPED_FIELDS.contains(&h.field.as_str()) {
                history.entry(h.key.as_str()).or_default().push(h);
                if h.field == "Fix Version" {
                    stats.unknown_milestone_refs += [&h.from, &h.to]
                        .iter()
                        .filter(|v| !v.is_empty() && !versions.contains_key(v.as_str()))
                        .count();
                }
            } else {
                stats.history_rows_ignored += 1;
            }
        }
    }
    stats.orphaned_keys = orphaned.into_iter().map(str::to_owned).collect();
    for rows in history.values_mut() {
        rows.sort_by_key(|h| (h.at, h.line));
    }

    // Where each milestone is first seen: the earliest issue or history row naming it.
    let mut first_seen: HashMap<&str, DateTime<Utc>> = HashMap::new();
    let mut see = |name: &str, at: DateTime<Utc>| {
        if let Some((k, _)) = versions.get_key_value(name) {
            let e = first_seen.entry(k.as_str()).or_insert(at);
            *e = (*e).min(at);
        }
    };
    for i in &issues {
        for m in &i.milestones {
            see(m, i.created);
        }
    }
    for rows in history.values() {
        for h in rows.iter().filter(|h| h.field == "Fix Version") {
            see(&h.to, h.at);
            see(&h.from, h.at);
        }
    }
    let project_start = issues
        .iter()
        .map(|i| i.created)
        .min()
        .unwrap_or(DateTime::<Utc>::MIN_UTC);

    let mut team = BTreeSet::new();
    let mut out_issues = BTreeMap::new();
    let mut sorted = issues.clone();
    sorted.sort_by_key(|i| i.number);
    for ji in sorted {
        synced_at = synced_at.max(ji.created).max(ji.updated);
        if let Some(r) = ji.resolved {
            synced_at = synced_at.max(r);
        }
        stats.unknown_milestone_refs += ji
            .milestones
            .iter()
            .filter(|m| !versions.contains_key(m.as_str()))
            .count();
        let map = Mapping {
            versions: &versions,
            final_version: ji.milestone.as_deref(),
            ladder: &ladder,
            workday_hours,
        };
        let rows = history.get(ji.key.as_str()).map_or(&[][..], Vec::as_slice);
        let hours = match ji.story_points {
            Some(sp) if sp > 0.0 => Some(sp * workday_hours),
            _ => ji.original_estimate_h,
        };
        if hours.is_some_and(|h| crate::domain::far_past_the_ladder(h, &ladder, workday_hours)) {
            stats.estimates_capped.push(ji.key.clone());
        }
        if ji.title.chars().nth(crate::limits::TITLE_CHARS).is_some() {
            stats.titles_cut.push(ji.key.clone());
        }
        let mut built = build_issue(ds, ji, rows, &map)?;
        team.append(&mut built.team);
        stats.closes_added += usize::from(built.closes_added);
        let mut deps = BTreeSet::new();
        for d in &ji.depends_on {
            let other_project = d.rsplit_once('-').map(|(p, _)| p);
            if other_project != Some(project) {
                stats.dependencies_other_project += 1;
            } else if let Some(n) = keys.get(d.as_str()) {
                if *n != ji.number {
                    deps.insert(repo.issue(*n));
                }
            } else {
                stats.dependencies_missing += 1;
            }
        }
        built.issue.depends_on = deps.into_iter().collect::<Vec<IssueKey>>();
        stats.dependencies += built.issue.depends_on.len();
        // Gitea records every dependency as an `add_dependency` event (a sync reads dependencies only
        // for issues that have one); Jira's export has no date for a link, so it is added at the
        // earliest it could have been: when the later of the two issues was created.
        for (j, d) in built.issue.depends_on.iter().enumerate() {
            let at = created
                .get(&d.number)
                .map_or(ji.created, |c| (*c).max(ji.created));
            let mut e = TimelineEvent::new(
                ji.number
                    .saturating_mul(10_000)
                    .saturating_add(9_000 + j as u64),
                crate::domain::EventKind::AddDependency,
                at,
                &ji.reporter,
            );
            e.dependency = Some(d.clone());
            built.issue.timeline.push(e);
        }
        built.issue.timeline.sort_by_key(|e| (e.created_at, e.id));
        stats.issues += 1;
        stats.open += usize::from(!ji.closed);
        stats.with_milestone += usize::from(built.issue.milestone.is_some());
        stats.with_estimate += usize::from(built.issue.has_estimate());
        stats.with_time_spent += usize::from(!built.issue.tracked_times.is_empty());
        stats.in_progress_dropped += usize::from(ji.first_in_progress.is_some());
        stats.events += built.issue.timeline.len();
        out_issues.insert(repo.issue(ji.number), built.issue);
    }

    // Labels: every label an issue has or had.
    let mut label_names = BTreeSet::new();
    for i in out_issues.values() {
        label_names.extend(i.labels.iter().cloned());
        label_names.extend(i.timeline.iter().filter_map(|e| e.label.clone()));
    }
    let labels: Vec<Label> = label_names
        .into_iter()
        .enumerate()
        .map(|(n, name)| {
            let (color, description) = label_color(&name);
            Label {
                id: n as u64 + 1,
                name,
                color: color.to_owned(),
                description,
            }
        })
        .collect();

    // When each milestone's last issue closed: the close of a version released with no date (Gitea
    // always has a closed milestone's `closed_at`; audit 97: five came without one).
    let mut last_close: HashMap<u64, DateTime<Utc>> = HashMap::new();
    for i in out_issues.values() {
        if let (Some(m), Some(c)) = (i.milestone, i.closed_at) {
            let e = last_close.entry(m).or_insert(c);
            *e = (*e).max(c);
        }
    }
    let milestones: Vec<Milestone> = project_ms
        .iter()
        .map(|m| {
            let release = m
                .release_date
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc());
            let seen = first_seen
                .get(m.name.as_str())
                .copied()
                .unwrap_or(project_start);
            let created_at = release.map_or(seen, |r| seen.min(r));
            Milestone {
                id: m.id,
                title: m.name.clone(),
                description: if m.archived {
                    "Jira fixVersion (archived).".into()
                } else {
                    "Jira fixVersion.".into()
                },
                state: if m.released {
                    OpenState::Closed
                } else {
                    OpenState::Open
                },
                // A due date is the end of its day, as a sync keeps it: at 00:00Z a server west of UTC
                // shows (and serves) the day before.
                due_on: m.release_date.map(crate::domain::end_of_day),
                created_at,
                closed_at: if m.released {
                    release.or_else(|| Some(last_close.get(&m.id).copied().unwrap_or(created_at)))
                } else {
                    None
                },
            }
        })
        .collect();

    // The project's own last activity is `synced_at` so far; the snapshot is as of the export.
    let last_activity = synced_at;
    let synced_at = ds.as_of().unwrap_or(synced_at).max(last_activity);
    let quiet = (synced_at - last_activity).num_days();
    if quiet > 90 {
        tracing::warn!(
            "{}: {project}'s last activity is {}, {quiet} days before the export's last ({}): it is forecast \
             as of the export, where its open issues have waited that long",
            ds.name,
            last_activity.date_naive(),
            synced_at.date_naive()
        );
    }
    let snapshot = Snapshot {
        meta: Meta::full(synced_at, None, std::slice::from_ref(&repo)),
        labels: BTreeMap::from([(repo.clone(), labels)]),
        milestones: BTreeMap::from([(repo.clone(), milestones)]),
        issues: out_issues,
    };
    let config_yaml = config_text(&ds.name, project, &repo, &team);
    Ok(ImportedProject {
        project: project.to_owned(),
        dataset: ds.name.clone(),
        config_yaml,
        issues: stats.issues,
        snapshot,
        stats,
    })
}

fn config_text(dataset: &str, project: &str, repo: &RepoName, team: &BTreeSet<String>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# CommiTea state imported by `commitea import jira` from Jira project {project} (dataset {dataset}).\n\
         # The mapping is documented in docs/import.md. A key left out takes its default.\n\
         repositories:\n  - {repo}\n\n\
         # Everyone the project's issues were ever assigned to, with the default capacity."
    );
    if team.is_empty() {
        let _ = writeln!(s, "team: []");
    } else {
        let _ = writeln!(s, "team:");
        for t in team {
            let _ = writeln!(s, "  - name: {t}");
        }
    }
    let _ = writeln!(s, "\nsite:\n  title: \"Jira {project} ({dataset})\"");
    s
}

/// The initial `pm-state.md` of an imported state repo.
const LEDGER: &str = "\
# PM directives

This is the project manager's directive ledger (see docs/ledger.md). This state repo was imported from Jira
by `commitea import jira`; Jira has no directives. Those recorded here follow, oldest first.
";

/// Writes `p` into `dir` as a state repo (commitea.yaml, pm-state.md, .gitignore, snapshot/) and commits it
/// with git, by CommiTea at the snapshot's `synced_at`, so the same import always gives the same commit.
///
/// Files already right are left alone and issue files no longer present are removed; when nothing changed
/// no commit is made.
pub fn write_state(dir: &Path, p: &ImportedProject) -> Result<(), ImportError> {
    let layout = Layout::new(dir);
    // Imported again, the snapshot is refreshed and nothing else: the config, the ledger and the op
    // files are the team's by then (audit 118: a directive recorded since was wiped, with exit 0).
    let mut written = vec![crate::state::SNAPSHOT_DIR];
    for (name, path, text) in [
        (
            crate::config::FILE_NAME,
            Config::path_in(dir),
            p.config_yaml.as_str(),
        ),
        (crate::state::LEDGER_FILE, layout.ledger(), LEDGER),
        (
            ".gitignore",
            dir.join(".gitignore"),
            crate::state::GITIGNORE,
        ),
    ] {
        if !path.exists() {
            write_if_changed(&path, text.as_bytes())?;
            written.push(name);
        }
    }
    p.snapshot.save(&layout)?;
    let repo = crate::state::git::open_or_init(dir)?;
    let commit = Config::default().commit;
    let sig = crate::state::git::Signature {
        name: commit.name,
        email: commit.email,
        time: p.snapshot.meta.synced_at,
    };
    let message = format!(
        "Import Jira project {} (dataset {})\n\n{} issues, as of {}. Imported by `commitea import jira`; \
         see docs/import.md for the mapping.\n",
        p.project,
        p.dataset,
        p.issues,
        p.snapshot.meta.synced_at.to_rfc3339()
    );
    // Only what the import writes: a proposal waiting in the checkout reaches the branch by its pull
    // request, not by an import.
    crate::state::git::commit_paths(&repo, &written, &[], &message, &sig)?;
    Ok(())
}

/// Checks that an issue's timeline replays to its final state: every event applies to the state before it
/// (a label added is absent, one removed is present, a milestone change starts from the current
/// milestone, close only when open, reopen only when closed), starting from the state the lifecycle module
/// infers at creation, and the replay ends open or closed as the issue is.
pub fn timeline_consistent(issue: &Issue) -> Result<(), String> {
    let mut labels: BTreeSet<String> = issue.labels.iter().cloned().collect();
    let mut assignees: BTreeSet<String> = issue.assignees.iter().cloned().collect();
    let mut milestone = issue.milestone;
    let mut events: Vec<&TimelineEvent> = issue.timeline.iter().collect();
    events.sort_by_key(|e| (e.created_at, e.id));
    // Undo, as the lifecycle module does.
    for e in events.iter().rev() {
        match &e.kind {
            crate::domain::EventKind::Label => {
                if let Some(l) = &e.label {
                    if e.removed {
                        labels.insert(l.clone());
                    } else {
                        labels.remove(l);
                    }
                }
            }
            crate::domain::EventKind::Assignees => {
                if let Some(a) = &e.assignee {
                    if e.removed {
                        assignees.insert(a.clone());
                    } else {
                        assignees.remove(a);
                    }
                }
            }
            crate::domain::EventKind::Milestone => milestone = e.old_milestone,
            _ => {}
        }
    }
    let mut closed = false;
    for e in &events {
        let fail = |what: &str| Err(format!("event {} ({}): {what}", e.id, e.kind));
        match &e.kind {
            crate::domain::EventKind::Label => {
                let Some(l) = &e.label else {
                    return fail("no label");
                };
                if e.removed {
                    if !labels.remove(l) {
                        return fail("removes a label the issue does not have");
                    }
                } else if !labels.insert(l.clone()) {
                    return fail("adds a label the issue already has");
                }
            }
            crate::domain::EventKind::Assignees => {
                let Some(a) = &e.assignee else {
                    return fail("no assignee");
                };
                if e.removed {
                    if !assignees.remove(a) {
                        return fail("unassigns somebody not assigned");
                    }
                } else if !assignees.insert(a.clone()) {
                    return fail("assigns somebody already assigned");
                }
            }
            crate::domain::EventKind::Milestone => {
                if e.old_milestone != milestone {
                    return fail("old_milestone is not the current milestone");
                }
                milestone = e.milestone;
            }
            crate::domain::EventKind::Close => {
                if closed {
                    return fail("closes a closed issue");
                }
                closed = true;
            }
            crate::domain::EventKind::Reopen => {
                if !closed {
                    return fail("reopens an open issue");
                }
                closed = false;
            }
            _ => {}
        }
    }
    if closed != issue.is_closed() {
        return Err(format!(
            "the replay ends {} but the issue is {}",
            if closed { "closed" } else { "open" },
            if issue.is_closed() { "closed" } else { "open" }
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::lifecycle::{Lifecycle, Rules};

    const ISSUES: &str = "key,project,number,type,subtask,parent,priority,status,state,resolution,created,updated,resolved,first_in_progress,status_transitions,due_date,assignee,reporter,labels,components,milestone,milestones,milestone_release_date,story_points,original_estimate_h,remaining_estimate_h,time_spent_h,sprints,depends_on,links,title
P-1,P,1,Bug,False,,Critical,Closed,closed,Fixed,2014-01-01T10:00:00Z,2014-01-05T10:00:00Z,2014-01-05T10:00:00Z,2014-01-02T10:00:00Z,2,,u2,u1,perf,,1.1,1.1;1.0,,2.0,,,3.5,,P-2;Q-9;P-77,,\"Crash, \"\"badly\"\"\"
P-2,P,2,Story,False,,Minor,Open,open,,2014-01-01T11:00:00Z,2014-01-03T10:00:00Z,,,0,,,u1,,,,,,,8.00,,,,,,Plain
";
    const HISTORY: &str = "key,at,author,field,from,to
P-1,2014-01-02T09:00:00Z,u1,assignee,,u3
P-1,2014-01-02T10:00:00Z,u3,priority,Major,Critical
P-1,2014-01-02T10:00:00Z,u3,status,Open,In Progress
P-1,2014-01-03T10:00:00Z,u1,assignee,u3,u2
P-1,2014-01-03T10:00:00Z,u1,Fix Version,,1.0
P-1,2014-01-03T11:00:00Z,u1,Fix Version,,1.1
P-1,2014-01-04T10:00:00Z,u1,Story Points,1,2
P-1,2014-01-04T10:00:00Z,u1,Component,,core
P-1,2014-01-05T10:00:00Z,u2,status,In Progress,Closed
P-1,2014-01-05T10:00:00Z,u2,resolution,,Fixed
";
    const MILESTONES: &str =
        "project,milestone_id,name,released,archived,release_date,issues,closed_issues
P,11,1.0,True,False,2014-02-01,1,1
P,12,1.1,False,False,,1,1
";

    fn dataset() -> JiraDataset {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t_issues.csv"), ISSUES).unwrap();
        std::fs::write(dir.path().join("t_history.csv"), HISTORY).unwrap();
        std::fs::write(dir.path().join("t_milestones.csv"), MILESTONES).unwrap();
        load_dataset(dir.path(), "t").unwrap()
    }

    #[test]
    fn priorities_and_estimates_map_to_labels() {
        assert_eq!(priority_label("Blocker"), Some("p/0"));
        assert_eq!(priority_label("Critical"), Some("p/1"));
        assert_eq!(priority_label("Major"), Some("p/2"));
        assert_eq!(priority_label("Minor"), Some("p/3"));
        assert_eq!(priority_label("Trivial"), Some("p/3"));
        assert_eq!(priority_label("Whatever"), None);
        let ladder = Config::default().estimates.ladder;
        let snap = |h: f64| snap_to_ladder(h, &ladder, 6.0).map(|e| e.label());
        assert_eq!(snap(6.0).as_deref(), Some("est/1d"));
        assert_eq!(snap(3.0).as_deref(), Some("est/4h"));
        assert_eq!(snap(30.0).as_deref(), Some("est/1w"));
        assert_eq!(snap(48.0).as_deref(), Some("est/2w"));
        assert_eq!(snap(500.0).as_deref(), Some("est/2w"));
        assert_eq!(snap(0.25).as_deref(), Some("est/1h"));
        assert_eq!(snap(0.0), None);
    }

    #[test]
    fn a_title_longer_than_gitea_takes_is_cut_and_counted() {
        // Audit 186: a 50 MB title was imported whole, and every page naming the issue carried it.
        let dir = tempfile::tempdir().unwrap();
        let long = "x".repeat(10_000);
        std::fs::write(
            dir.path().join("t_issues.csv"),
            ISSUES.replace(",,,,,,Plain", &format!(",,,,,,{long}")),
        )
        .unwrap();
        std::fs::write(dir.path().join("t_history.csv"), HISTORY).unwrap();
        std::fs::write(dir.path().join("t_milestones.csv"), MILESTONES).unwrap();
        let ds = load_dataset(dir.path(), "t").unwrap();
        let p = to_state(&ds, "P").unwrap();
        let title = &p.snapshot.issues[&RepoName::new("jira", "P").issue(2)].title;
        assert_eq!(title.chars().count(), crate::limits::TITLE_CHARS);
        assert_eq!(p.stats.titles_cut, vec!["P-2".to_owned()]);
    }

    #[test]
    fn loads_the_three_files() {
        let ds = dataset();
        assert_eq!(ds.projects(), vec![("P".to_string(), 2)]);
        assert_eq!(ds.issues[0].title, "Crash, \"badly\"");
        assert_eq!(ds.issues[0].milestones, vec!["1.1", "1.0"]);
        assert_eq!(ds.history.len(), 10);
        assert_eq!(ds.history[0].line, 2);
        assert_eq!(
            ds.milestones[0].release_date,
            NaiveDate::from_ymd_opt(2014, 2, 1)
        );
    }

    #[test]
    fn bad_fields_name_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let bad = ISSUES.replace("2014-01-01T11:00:00Z", "yesterday");
        std::fs::write(dir.path().join("t_issues.csv"), bad).unwrap();
        std::fs::write(dir.path().join("t_history.csv"), HISTORY).unwrap();
        std::fs::write(dir.path().join("t_milestones.csv"), MILESTONES).unwrap();
        let e = load_dataset(dir.path(), "t").unwrap_err().to_string();
        assert_eq!(
            e,
            "t_issues.csv line 3: column \"created\": not a timestamp \"yesterday\""
        );
        let e = load_dataset(dir.path(), "nope").unwrap_err().to_string();
        assert!(e.contains("nope_issues.csv"), "{e}");
        // A version listed twice is refused at its second row (audit 186: the first was replaced).
        std::fs::write(dir.path().join("t_issues.csv"), ISSUES).unwrap();
        std::fs::write(
            dir.path().join("t_milestones.csv"),
            format!("{MILESTONES}P,11,1.0 again,False,False,,0,0\n"),
        )
        .unwrap();
        let e = load_dataset(dir.path(), "t").unwrap_err().to_string();
        assert_eq!(
            e,
            "t_milestones.csv line 4: milestone_id 11 is on line 2 already; an export lists each version once"
        );
        // A name twice in one project too (audit 189: all its issues went to the lower id); in another
        // project it is another version.
        std::fs::write(
            dir.path().join("t_milestones.csv"),
            format!("{MILESTONES}Q,13,1.0,False,False,,0,0\nP,14,1.0,False,False,,0,0\n"),
        )
        .unwrap();
        let e = load_dataset(dir.path(), "t").unwrap_err().to_string();
        assert!(
            e.starts_with("t_milestones.csv line 5: version \"1.0\" of P is on line 2 already (milestone_id 11)"),
            "{e}"
        );
    }

    #[test]
    fn maps_fields_and_history() {
        let ds = dataset();
        let p = to_state(&ds, "P").unwrap();
        let repo = RepoName::new("jira", "P");
        let i1 = &p.snapshot.issues[&repo.issue(1)];
        assert_eq!(i1.state, OpenState::Closed);
        assert_eq!(i1.author, "u1");
        assert_eq!(i1.assignees, vec!["u2"]);
        assert_eq!(i1.labels, vec!["est/2d", "p/1", "perf"]);
        assert_eq!(i1.milestone, Some(12));
        assert_eq!(i1.depends_on, vec![repo.issue(2)]);
        assert_eq!(i1.tracked_seconds(), 12_600);
        assert_eq!(p.stats.dependencies_other_project, 1);
        assert_eq!(p.stats.dependencies_missing, 1);
        assert_eq!(p.stats.history_rows_ignored, 1);
        assert_eq!(p.stats.history_rows_orphaned, 0);
        // Rows of a key the issues file does not have are counted, with the key (audit 180); another
        // project's rows are not this one's to count.
        let mut cut = dataset();
        let mut orphan = cut.history[0].clone();
        orphan.key = "P-99".into();
        let mut other = cut.history[0].clone();
        other.key = "Q-1".into();
        cut.history.extend([orphan.clone(), orphan, other]);
        let q = to_state(&cut, "P").unwrap();
        assert_eq!(q.stats.history_rows_orphaned, 2);
        assert_eq!(q.stats.orphaned_keys, vec!["P-99".to_owned()]);
        let kinds: Vec<(String, String)> = i1
            .timeline
            .iter()
            .map(|e| {
                let what = e
                    .label
                    .clone()
                    .or(e.assignee.clone())
                    .or(e.milestone.map(|m| m.to_string()))
                    .unwrap_or_default();
                (
                    format!("{}{}", if e.removed { "-" } else { "" }, e.kind),
                    what,
                )
            })
            .collect();
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            kinds,
            vec![
                // Issue 1 depends on issue 2: added when the later of the two was created.
                s("add_dependency", ""),
                s("assignees", "u3"),
                s("-label", "p/2"),
                s("label", "p/1"),
                s("-assignees", "u3"),
                s("assignees", "u2"),
                s("milestone", "11"),
                s("milestone", "12"),
                s("-label", "est/1d"),
                s("label", "est/2d"),
                s("close", ""),
            ]
        );
        timeline_consistent(i1).unwrap();
        // At creation: p/2 (Major), est/1d (1 point), perf, no milestone, nobody: triage.
        let spans = Rules::default().timeline(i1);
        assert_eq!(spans[0].column, Lifecycle::Triage);
        assert_eq!(spans.last().map(|s| s.column), Some(Lifecycle::Done));

        let i2 = &p.snapshot.issues[&repo.issue(2)];
        assert_eq!(i2.labels, vec!["est/1d", "p/3"]);
        assert!(i2.timeline.is_empty());
        assert_eq!(
            p.snapshot.meta.synced_at.to_rfc3339(),
            "2014-01-05T10:00:00+00:00"
        );
        let ms = &p.snapshot.milestones[&repo];
        assert_eq!(ms[0].state, OpenState::Closed);
        assert_eq!(
            ms[0].closed_at.map(|t| t.to_rfc3339()).as_deref(),
            Some("2014-02-01T00:00:00+00:00")
        );
        assert_eq!(
            ms[0].due_on.map(|t| t.to_rfc3339()).as_deref(),
            Some("2014-02-01T23:59:59+00:00"),
            "a due date is the end of its day, as a sync keeps it"
        );
        assert_eq!(ms[1].state, OpenState::Open);
        assert!(p.config_yaml.contains("  - name: u2\n  - name: u3\n"));
        let cfg = Config::parse(&p.config_yaml, Path::new("commitea.yaml")).unwrap();
        assert_eq!(cfg.repositories, vec![repo]);
        assert_eq!(cfg.team.len(), 2);
    }

    #[test]
    fn a_project_is_forecast_as_of_the_export_not_its_own_last_activity() {
        // Project Q is active until 2016; P went quiet in 2014: P is as of 2016 too (audit 97).
        let mut ds = dataset();
        let mut q = ds.issues[1].clone();
        q.key = "Q-1".into();
        q.project = "Q".into();
        q.number = 1;
        q.updated = "2016-03-01T12:00:00Z".parse().unwrap();
        ds.issues.push(q);
        let p = to_state(&ds, "P").unwrap();
        assert_eq!(
            p.snapshot.meta.synced_at.to_rfc3339(),
            "2016-03-01T12:00:00+00:00"
        );
    }

    #[test]
    fn a_version_released_with_no_date_is_closed_when_its_last_issue_closed() {
        // Gitea always has a closed milestone's `closed_at` (audit 97: five came without one).
        let mut ds = dataset();
        for m in &mut ds.milestones {
            if m.id == 12 {
                m.released = true;
            }
        }
        let p = to_state(&ds, "P").unwrap();
        let ms = &p.snapshot.milestones[&RepoName::new("jira", "P")];
        let v11 = ms.iter().find(|m| m.id == 12).unwrap();
        assert_eq!(v11.state, OpenState::Closed);
        assert_eq!(
            v11.closed_at.map(|t| t.to_rfc3339()).as_deref(),
            Some("2014-01-05T10:00:00+00:00")
        );
    }

    #[test]
    fn a_move_out_of_a_closed_status_reopens_though_the_resolution_stays() {
        // Closed with Fixed, reopened without clearing the resolution (some workflows do not), worked on,
        // closed again: two closes and a reopen, none while it was being worked on (audit 97: the reopen
        // was lost, and the one close was years before the last).
        let mut ds = dataset();
        let row = |at: &str, field: &str, from: &str, to: &str| JiraHistory {
            line: 99,
            key: "P-1".into(),
            at: at.parse().unwrap(),
            author: "u1".into(),
            field: field.into(),
            from: from.into(),
            to: to.into(),
        };
        ds.history.extend([
            row("2014-01-06T10:00:00Z", "status", "Closed", "Reopened"),
            row("2014-01-07T10:00:00Z", "status", "Reopened", "In Progress"),
            row("2014-01-08T10:00:00Z", "status", "In Progress", "Closed"),
        ]);
        let p = to_state(&ds, "P").unwrap();
        let i1 = &p.snapshot.issues[&RepoName::new("jira", "P").issue(1)];
        let states: Vec<(String, String)> = i1
            .timeline
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    crate::domain::EventKind::Close | crate::domain::EventKind::Reopen
                )
            })
            .map(|e| {
                (
                    format!("{:?}", e.kind),
                    e.created_at.date_naive().to_string(),
                )
            })
            .collect();
        assert_eq!(
            states,
            [
                ("Close".to_owned(), "2014-01-05".to_owned()),
                ("Reopen".to_owned(), "2014-01-06".to_owned()),
                ("Close".to_owned(), "2014-01-08".to_owned()),
            ]
        );
        timeline_consistent(i1).unwrap();
    }

    #[test]
    fn a_key_not_its_rows_project_and_number_or_a_resolution_before_creation_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let write = |issues: &str| {
            std::fs::write(dir.path().join("t_issues.csv"), issues).unwrap();
            std::fs::write(dir.path().join("t_history.csv"), HISTORY).unwrap();
            std::fs::write(dir.path().join("t_milestones.csv"), MILESTONES).unwrap();
            load_dataset(dir.path(), "t")
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        let err = write(&ISSUES.replacen("\nP-2,P,2,", "\nP-2,P,7,", 1));
        assert!(
            err.contains("t_issues.csv") && err.contains("line 3") && err.contains("not P-7"),
            "{err}"
        );
        let err = write(&ISSUES.replacen(
            "2014-01-01T10:00:00Z,2014-01-05T10:00:00Z,2014-01-05T10:00:00Z",
            "2014-01-01T10:00:00Z,2014-01-05T10:00:00Z,2013-01-05T10:00:00Z",
            1,
        ));
        assert!(
            err.contains("line 2") && err.contains("before the issue was created"),
            "{err}"
        );
    }

    #[test]
    fn a_closed_issue_without_history_gets_one_close() {
        let mut ds = dataset();
        ds.history.clear();
        let p = to_state(&ds, "P").unwrap();
        let i1 = &p.snapshot.issues[&RepoName::new("jira", "P").issue(1)];
        let kinds: Vec<_> = i1.timeline.iter().map(|e| e.kind.clone()).collect();
        // Its dependency's event, and the one close.
        assert_eq!(
            kinds,
            vec![
                crate::domain::EventKind::AddDependency,
                crate::domain::EventKind::Close
            ]
        );
        assert_eq!(p.stats.closes_added, 1);
        timeline_consistent(i1).unwrap();
        assert!(to_state(&ds, "Q").is_err());
    }
}
