//! Op files: the changes `apply_changes` proposes to Gitea, checked against the state, with their
//! consequence, written under `ops/pending/` for review.
//!
//! This module decides what may be written to Gitea: only labels in CommiTea's namespaces (`est/*`, `p/*`,
//! `deadline/hard`) and native fields (milestone, dependencies, state, new issues). It never talks to
//! Gitea; merging the op file's pull request is the approval, and the apply stage carries it out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::domain::{
    Estimate, Issue, IssueKey, IssueRef, Milestone, OpenState, Priority, RepoName, TimelineEvent,
};
use crate::ledger::record::ConsequencePair;
use crate::state::{Layout, Snapshot, StateError};

/// The folder, under `ops/`, of op files awaiting review.
pub(crate) const PENDING_DIR: &str = "pending";
/// The folder, under `ops/`, of op files the apply stage has carried out.
pub(crate) const APPLIED_DIR: &str = "applied";
/// `ops/pending`, relative to the state repo (and its path in git).
pub const PENDING_PATH: &str = "ops/pending";
/// `ops/applied`, relative to the state repo: op files the apply stage carried out, with what happened.
pub const APPLIED_PATH: &str = "ops/applied";
/// The prefix of `apply_changes` op file ids (`C-0001`); directives' op files carry the directive's id
/// (`D-0001`).
pub(crate) const ID_PREFIX: &str = "C-";

/// One change, in the seed's shapes. Issues are named by number (one repository) or `owner/repo#N`; an
/// op file always holds the full `owner/repo#N`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    /// File a new issue.
    CreateIssue {
        /// Title (one line).
        #[schemars(length(min = 1, max = crate::limits::TITLE_CHARS))]
        title: String,
        /// Body, Markdown.
        #[serde(default)]
        #[schemars(length(max = crate::limits::BODY_CHARS))]
        body: String,
        /// Labels, only `est/*` (on the ladder), `p/*` (0 to 3).
        #[serde(
            default,
            skip_serializing_if = "Vec::is_empty",
            deserialize_with = "null_is_empty"
        )]
        #[schemars(
            length(max = crate::limits::LIST_ITEMS),
            inner(length(max = crate::limits::NAME_CHARS)),
            extend("type" = ["array", "null"])
        )]
        labels: Vec<String>,
        /// Gitea's milestone id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        milestone: Option<u64>,
        /// Issues it depends on.
        #[serde(
            default,
            skip_serializing_if = "Vec::is_empty",
            deserialize_with = "null_is_empty"
        )]
        #[schemars(length(max = crate::limits::LIST_ITEMS), extend("type" = ["array", "null"]))]
        deps: Vec<IssueRef>,
        /// `owner/repo` to file it in; needed when several repositories are configured.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(max = crate::limits::NAME_CHARS))]
        repo: Option<String>,
        /// New issues of the same call it depends on, by position among the call's `create_issue` ops
        /// (1 is the first); only earlier ones, so a proposal files in order.
        #[serde(
            default,
            rename = "dependsOnNew",
            skip_serializing_if = "Vec::is_empty",
            deserialize_with = "null_is_empty"
        )]
        #[schemars(
            length(max = crate::limits::LIST_ITEMS),
            inner(range(min = 1)),
            extend("type" = ["array", "null"])
        )]
        depends_on_new: Vec<u32>,
    },
    /// Set the `est/*` label.
    SetEstimate {
        /// The issue.
        issue: IssueRef,
        /// `est/2d` (or `2d`), a rung of the configured ladder.
        // Bounded as every name is: a 1,000-digit rung came back whole in the reason (audit 158).
        #[schemars(
            regex(pattern = r"^(est/)?[0-9]+[hdw]$"),
            length(max = crate::limits::NAME_CHARS)
        )]
        estimate: String,
    },
    /// Set the `p/*` label.
    SetPriority {
        /// The issue.
        issue: IssueRef,
        /// `p/0` (drop everything) to `p/3` (someday); the level alone (`1` or `"1"`) is taken too.
        #[serde(deserialize_with = "label_or_level")]
        #[schemars(
            regex(pattern = r"^(p/)?[0-9]+$"),
            extend("type" = ["string", "integer"])
        )]
        priority: String,
    },
    /// Move the issue to a milestone, or out of any (`null`).
    SetMilestone {
        /// The issue.
        issue: IssueRef,
        /// Gitea's milestone id, or null (required: say null to take the issue out of its milestone).
        #[schemars(required, schema_with = "nullable_id")]
        milestone: Option<u64>,
    },
    /// Set a milestone's due date (the due-date half of a `set-deadline` directive).
    SetMilestoneDue {
        /// Gitea's milestone id.
        #[schemars(range(min = 1))]
        milestone: u64,
        /// `YYYY-MM-DD`.
        #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
        due: String,
    },
    /// Mark a milestone's deadline hard, or not (`deadline/hard` in its description).
    SetDeadlineHard {
        /// Gitea's milestone id.
        #[schemars(range(min = 1))]
        milestone: u64,
        /// Hard or not.
        hard: bool,
    },
    /// Make `issue` wait for `dependsOn`.
    AddDep {
        /// The issue that waits.
        issue: IssueRef,
        /// The issue it waits for.
        #[serde(rename = "dependsOn")]
        depends_on: IssueRef,
    },
    /// Remove a dependency (destructive).
    RemoveDep {
        /// The issue that waits.
        issue: IssueRef,
        /// The issue it waits for.
        #[serde(rename = "dependsOn")]
        depends_on: IssueRef,
    },
    /// Close the issue (destructive).
    CloseIssue {
        /// The issue.
        issue: IssueRef,
    },
    /// Remove a label in CommiTea's namespaces (destructive).
    RemoveLabel {
        /// The issue.
        issue: IssueRef,
        /// `est/*`, `p/*` or `deadline/hard`.
        #[schemars(length(max = crate::limits::NAME_CHARS))]
        label: String,
    },
}

/// A milestone id or null, which must be given.
/// A priority given as its label (`"p/1"`), its level as text (`"1"`) or as a number (`1`), as a small model
/// sends it (audit 102: the number failed the whole call), kept as text for [`Checker`] to read.
fn label_or_level<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Said {
        Text(String),
        Level(u64),
    }
    Ok(match Said::deserialize(d)? {
        Said::Text(t) => t,
        Said::Level(n) => n.to_string(),
    })
}

/// An optional list given as `null` is an empty one, as an optional scalar's `null` is none: a small model
/// writes `"deps": null` for "no dependencies" (audit 91: refused as an input error).
fn null_is_empty<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<Vec<T>>::deserialize(d).map(Option::unwrap_or_default)
}

fn nullable_id(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "Gitea's milestone id, or null to take the issue out of its milestone (required).",
        "type": ["integer", "null"],
        "minimum": 1
    })
}

impl Op {
    /// Every op's name, as in the input.
    pub const NAMES: [&'static str; 10] = [
        "create_issue",
        "set_estimate",
        "set_priority",
        "set_milestone",
        "set_milestone_due",
        "set_deadline_hard",
        "add_dep",
        "remove_dep",
        "close_issue",
        "remove_label",
    ];

    /// The op's name, as in the input.
    pub fn name(&self) -> &'static str {
        match self {
            Self::CreateIssue { .. } => "create_issue",
            Self::SetEstimate { .. } => "set_estimate",
            Self::SetPriority { .. } => "set_priority",
            Self::SetMilestone { .. } => "set_milestone",
            Self::SetMilestoneDue { .. } => "set_milestone_due",
            Self::SetDeadlineHard { .. } => "set_deadline_hard",
            Self::AddDep { .. } => "add_dep",
            Self::RemoveDep { .. } => "remove_dep",
            Self::CloseIssue { .. } => "close_issue",
            Self::RemoveLabel { .. } => "remove_label",
        }
    }

    /// The op in words, for a pull request: `set the priority of acme/api#3 to p/0`.
    pub fn describe(&self) -> String {
        match self {
            Self::CreateIssue {
                title,
                labels,
                milestone,
                deps,
                repo,
                depends_on_new,
                ..
            } => {
                let mut s = format!(
                    "file a new issue \"{title}\" in {}",
                    repo.as_deref().unwrap_or("the repository")
                );
                if !labels.is_empty() {
                    s.push_str(&format!(" labelled {}", labels.join(", ")));
                }
                if let Some(m) = milestone {
                    s.push_str(&format!(" in milestone {m}"));
                }
                let mut d: Vec<String> = deps.iter().map(ToString::to_string).collect();
                d.extend(
                    depends_on_new
                        .iter()
                        .map(|k| format!("new issue {k} of this proposal")),
                );
                if !d.is_empty() {
                    s.push_str(&format!(", depending on {}", d.join(", ")));
                }
                s
            }
            Self::SetEstimate { issue, estimate } => {
                format!("set the estimate of {issue} to {estimate}")
            }
            Self::SetPriority { issue, priority } => {
                format!("set the priority of {issue} to {priority}")
            }
            Self::SetMilestone {
                issue,
                milestone: Some(m),
            } => format!("move {issue} to milestone {m}"),
            Self::SetMilestone {
                issue,
                milestone: None,
            } => format!("take {issue} out of its milestone"),
            Self::SetMilestoneDue { milestone, due } => {
                format!("set the due date of milestone {milestone} to {due}")
            }
            Self::SetDeadlineHard {
                milestone,
                hard: true,
            } => format!("mark milestone {milestone}'s deadline hard"),
            Self::SetDeadlineHard {
                milestone,
                hard: false,
            } => format!("mark milestone {milestone}'s deadline movable"),
            Self::AddDep { issue, depends_on } => format!("make {issue} wait for {depends_on}"),
            Self::RemoveDep { issue, depends_on } => {
                format!("stop {issue} waiting for {depends_on}")
            }
            Self::CloseIssue { issue } => format!("close {issue}"),
            Self::RemoveLabel { issue, label } => format!("remove the label {label} from {issue}"),
        }
    }

    /// The issue the op changes, if it changes one that exists (not `create_issue`, not a milestone's).
    pub fn issue(&self) -> Option<&IssueRef> {
        match self {
            Self::SetEstimate { issue, .. }
            | Self::SetPriority { issue, .. }
            | Self::SetMilestone { issue, .. }
            | Self::AddDep { issue, .. }
            | Self::RemoveDep { issue, .. }
            | Self::CloseIssue { issue, .. }
            | Self::RemoveLabel { issue, .. } => Some(issue),
            Self::CreateIssue { .. }
            | Self::SetMilestoneDue { .. }
            | Self::SetDeadlineHard { .. } => None,
        }
    }

    /// The milestone the op changes itself (its due date, its hard deadline), if any: not one an issue is
    /// moved into.
    pub fn milestone_changed(&self) -> Option<u64> {
        match self {
            Self::SetMilestoneDue { milestone, .. } | Self::SetDeadlineHard { milestone, .. } => {
                Some(*milestone)
            }
            _ => None,
        }
    }

    /// The repositories the op names by name: its issues' and dependencies' `owner/repo#N`, the repository
    /// a new issue is filed in. A bare number names none.
    pub fn repositories_named(&self) -> Vec<RepoName> {
        let of = |r: &IssueRef| r.key().map(|k| k.repo);
        let mut out: Vec<RepoName> = self.issue().and_then(of).into_iter().collect();
        match self {
            Self::AddDep { depends_on, .. } | Self::RemoveDep { depends_on, .. } => {
                out.extend(of(depends_on));
            }
            Self::CreateIssue { deps, repo, .. } => {
                out.extend(deps.iter().filter_map(of));
                out.extend(repo.as_deref().and_then(|r| r.parse::<RepoName>().ok()));
            }
            _ => {}
        }
        out
    }

    /// The milestones the op is about: those it names, and the one its issue is in (in `snapshot`), so a
    /// consequence can say what happens to them even when another milestone moved more.
    pub fn milestones_about(&self, snapshot: &crate::state::Snapshot) -> Vec<u64> {
        let mut ids: Vec<u64> = match self {
            Self::CreateIssue { milestone, .. } | Self::SetMilestone { milestone, .. } => {
                milestone.iter().copied().collect()
            }
            Self::SetMilestoneDue { milestone, .. } | Self::SetDeadlineHard { milestone, .. } => {
                vec![*milestone]
            }
            _ => Vec::new(),
        };
        if let Some(IssueRef::Key(k)) = self.issue()
            && let Ok(key) = k.parse::<IssueKey>()
            && let Some(m) = snapshot.issues.get(&key).and_then(|i| i.milestone)
        {
            ids.push(m);
        }
        ids
    }

    /// Whether `snapshot` already holds what the op (its issues named in full) would write: Gitea has it,
    /// so carrying it out changes nothing. A new issue is never already so here (the apply stage finds
    /// one it filed before by other means); an issue or milestone `snapshot` lacks is not either.
    pub fn already_so(&self, snapshot: &crate::state::Snapshot) -> bool {
        let issue = |r: &IssueRef| r.key().and_then(|k| snapshot.issues.get(&k));
        match self {
            Self::SetEstimate {
                issue: r,
                estimate: label,
            }
            | Self::SetPriority {
                issue: r,
                priority: label,
            } => issue(r).is_some_and(|i| {
                // Exactly this label of its scope: another one beside it is still to take away.
                let scope = label_scope(label);
                i.labels.iter().any(|l| l == label)
                    && i.labels
                        .iter()
                        .all(|l| l == label || label_scope(l) != scope)
            }),
            Self::SetMilestone {
                issue: r,
                milestone,
            } => issue(r).is_some_and(|i| i.milestone == *milestone),
            Self::SetMilestoneDue { milestone, due } => {
                let day = chrono::NaiveDate::parse_from_str(due, "%Y-%m-%d").ok();
                snapshot
                    .milestone(*milestone)
                    .is_some_and(|(_, m)| day.is_some() && m.due_on.map(|d| d.date_naive()) == day)
            }
            Self::SetDeadlineHard { milestone, hard } => snapshot
                .milestone(*milestone)
                .is_some_and(|(_, m)| m.is_hard() == *hard),
            Self::AddDep {
                issue: r,
                depends_on,
            } => issue(r)
                .zip(depends_on.key())
                .is_some_and(|(i, d)| i.depends_on.contains(&d)),
            Self::RemoveDep {
                issue: r,
                depends_on,
            } => issue(r)
                .zip(depends_on.key())
                .is_some_and(|(i, d)| !i.depends_on.contains(&d)),
            Self::CloseIssue { issue: r } => issue(r).is_some_and(Issue::is_closed),
            Self::RemoveLabel { issue: r, label } => {
                issue(r).is_some_and(|i| !i.labels.contains(label))
            }
            Self::CreateIssue { .. } => false,
        }
    }

    /// What on Gitea the op sets (an issue's estimate, a milestone's due date, one dependency, …), for
    /// telling two ops that change the same thing; `None` for a new issue.
    fn field(&self) -> Option<(&'static str, String)> {
        let key = |r: &IssueRef| r.to_string();
        Some(match self {
            Self::SetEstimate { issue, .. } => ("estimate", key(issue)),
            Self::SetPriority { issue, .. } => ("priority", key(issue)),
            Self::SetMilestone { issue, .. } => ("milestone", key(issue)),
            Self::SetMilestoneDue { milestone, .. } => {
                ("due date", format!("milestone {milestone}"))
            }
            Self::SetDeadlineHard { milestone, .. } => {
                ("hard deadline", format!("milestone {milestone}"))
            }
            Self::AddDep { issue, depends_on } | Self::RemoveDep { issue, depends_on } => {
                ("dependency", format!("{issue} on {depends_on}"))
            }
            Self::CloseIssue { issue } => ("state", key(issue)),
            Self::RemoveLabel { issue, label } => ("label", format!("{label} of {issue}")),
            Self::CreateIssue { .. } => return None,
        })
    }

    /// Whether the op takes something away (and so needs `approved: true`).
    pub fn is_destructive(&self) -> bool {
        matches!(
            self,
            Self::RemoveDep { .. } | Self::CloseIssue { .. } | Self::RemoveLabel { .. }
        )
    }
}

/// An op that was not accepted, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rejected {
    /// The op as given.
    pub op: serde_json::Value,
    /// Why, and what to do.
    pub reason: String,
}

/// Where an op file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// An `apply_changes` call (`C-NNNN`).
    ApplyChanges,
    /// A PM directive's Gitea-side effects (`D-NNNN`, the directive's id); `directive` says which.
    Directive,
    /// A `capture_work` proposal filed through `apply_changes`.
    CaptureWork,
}

/// The directive an op file carries out, as the ledger holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirectiveRecord {
    /// The kind.
    pub kind: String,
    /// The PM's words.
    pub quote: String,
    /// `issue owner/repo#N`, `milestone ID` or `member USERNAME`.
    pub target: Option<String>,
    /// The params as inline JSON.
    pub params: Option<String>,
    /// Why.
    pub rationale: Option<String>,
}

impl DirectiveRecord {
    /// Whether `other` is the same directive: its kind, target and params (the quote and the rationale
    /// may be worded again). Params are compared as JSON, so spacing and key order do not count.
    pub fn same_directive(&self, other: &Self) -> bool {
        let params = |p: &Option<String>| {
            p.as_deref().map(|t| {
                serde_json::from_str::<serde_json::Value>(t).unwrap_or_else(|_| t.trim().into())
            })
        };
        self.kind.trim() == other.kind.trim()
            && self.target.as_deref().map(str::trim) == other.target.as_deref().map(str::trim)
            && params(&self.params) == params(&other.params)
    }

    /// The directive in a few words: `reprioritize issue acme/api#198 {"priority":2}`.
    pub fn words(&self) -> String {
        [
            Some(self.kind.as_str()),
            self.target.as_deref(),
            self.params.as_deref(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
    }
}

/// Each issue `ops` change, with the id of the last event of its timeline in `snapshot` (0 when it has none),
/// for an op file's `seen`: an event after it happened on Gitea after the proposal.
pub fn seen(ops: &[Op], snapshot: &crate::state::Snapshot) -> BTreeMap<String, u64> {
    ops.iter()
        .filter_map(|op| op.issue()?.key())
        .filter_map(|key| {
            let issue = snapshot.issues.get(&key)?;
            let last = issue.timeline.iter().map(|e| e.id).max().unwrap_or(0);
            Some((key.to_string(), last))
        })
        .collect()
}

/// Why an estimate as written (`text`, quoted as typed: audits 175, 179) is refused, with the nearest
/// rung where it reads as an estimate at all.
pub(crate) fn off_the_ladder(
    text: &str,
    estimate: Option<&Estimate>,
    estimates: &crate::config::EstimatesConfig,
    workday_hours: f64,
) -> String {
    // Far past the largest rung, the nearest is no estimate of it (audit 181: "100w" told "pick 2w").
    let split = estimate.is_some_and(|e| {
        crate::domain::far_past_the_ladder(e.hours(workday_hours), &estimates.ladder, workday_hours)
    });
    let nearest = match estimate.and_then(|e| estimates.nearest(e, workday_hours)) {
        Some(r) if split => {
            format!("the nearest rung ({r}), or split the work: it is over twice the largest rung")
        }
        Some(r) => format!("the nearest rung ({r})"),
        None => "the nearest rung".to_owned(),
    };
    format!(
        "estimate \"{text}\" is not on the estimate ladder ({}); pick {nearest}",
        estimates.ladder_words()
    )
}

/// Why `ops` break the bounds a proposal is held to, if they do: at most [`crate::limits::OPS`] of them,
/// and each field within the length its schema gives `apply_changes` (a title's, a body's, a list's). The
/// values themselves (a priority of `p/7`) are the apply stage's check, op by op; a file past these bounds
/// is refused whole.
pub(crate) fn limits_problem(ops: &[Op]) -> Option<String> {
    use crate::limits::{BODY_CHARS, LIST_ITEMS, NAME_CHARS, OPS, TITLE_CHARS};
    if ops.len() > OPS {
        return Some(format!(
            "ops: {} ops, more than the limit of {OPS} in one file: split the change",
            ops.len()
        ));
    }
    let chars = |field: &str, text: &str, limit: usize| {
        let n = text.chars().count();
        (n > limit).then(|| format!("{field}: {n} characters, more than the limit of {limit}"))
    };
    let items = |field: &str, n: usize| {
        (n > LIST_ITEMS).then(|| format!("{field}: {n} items, more than the limit of {LIST_ITEMS}"))
    };
    ops.iter().enumerate().find_map(|(i, op)| {
        let problem = match op {
            Op::CreateIssue {
                title,
                body,
                labels,
                deps,
                repo,
                depends_on_new,
                ..
            } => chars("title", title, TITLE_CHARS)
                .or_else(|| chars("body", body, BODY_CHARS))
                .or_else(|| items("labels", labels.len()))
                .or_else(|| items("deps", deps.len()))
                .or_else(|| items("dependsOnNew", depends_on_new.len()))
                .or_else(|| chars("repo", repo.as_deref().unwrap_or(""), NAME_CHARS)),
            Op::RemoveLabel { label, .. } => chars("label", label, NAME_CHARS),
            _ => None,
        };
        problem.map(|p| format!("ops[{i}].{p}"))
    })
}

/// An op file, `ops/pending/ID.yaml`: the changes one call or one directive proposes to Gitea, with their
/// consequence. The one format for every source; `ops/applied/ID.yaml` adds what happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpFile {
    /// `C-0001` (a tool call) or `D-0009` (a directive).
    pub id: String,
    /// Where it comes from.
    pub source: Source,
    /// When it was written (RFC 3339, UTC, whole seconds).
    pub created_at: String,
    /// Who asked (a Gitea username), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// Written by a model (`commitea ask`, or an agent over MCP): it goes through a pull request whatever
    /// its ops. A model reads issue text anyone can write, and can be steered by it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub model: bool,
    /// Whether the caller said the consequence was approved (required for destructive ops).
    pub approved: bool,
    /// Whether any op is destructive: such a file goes through a pull request.
    pub destructive: bool,
    /// The directive it carries out, for `source: directive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directive: Option<DirectiveRecord>,
    /// Each issue its ops change, with the last event of its Gitea timeline the proposal saw (0: none):
    /// what happens on Gitea after it is not what was approved ([`seen`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub seen: BTreeMap<String, u64>,
    /// The accepted ops, issues named in full.
    pub ops: Vec<Op>,
    /// The consequence's one-line summary.
    pub summary: String,
    /// The consequence, subject by subject.
    pub consequence: Vec<ConsequencePair>,
}

/// A directive's op file as CommiTea wrote it before op files had one format (`D-NNNN` with no `source`):
/// still read, and read as an [`OpFile`] with `source: directive`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct LegacyDirectiveFile {
    id: String,
    created_at: String,
    #[serde(default)]
    by: Option<String>,
    directive: DirectiveRecord,
    ops: Vec<Op>,
    summary: String,
    consequence: Vec<ConsequencePair>,
}

impl OpFile {
    /// Renders the file (YAML, stable key order).
    pub fn render(&self, rel: &Path) -> Result<String, crate::yamlfile::YamlError> {
        crate::yamlfile::to_string(self, rel)
    }

    /// Reads a file's text; errors name the file, line and field. A directive's op file in the format
    /// before [`Source`] existed is read too (migrated on read; rewritten in the new format only when
    /// the file is next written).
    pub fn parse(text: &str, rel: &Path) -> Result<Self, crate::yamlfile::YamlError> {
        match crate::yamlfile::parse::<Self>(text, rel) {
            Ok(f) => match limits_problem(&f.ops) {
                // Merged by hand, a file is held to what `apply_changes` holds a proposal to (audit 136:
                // 101 ops and a 30,000-character body were filed in full).
                Some(message) => Err(crate::yamlfile::YamlError {
                    file: rel.to_path_buf(),
                    line: None,
                    column: None,
                    message,
                }),
                None => Ok(f),
            },
            Err(e) => match crate::yamlfile::parse::<LegacyDirectiveFile>(text, rel) {
                Ok(old) => Ok(Self {
                    destructive: old.ops.iter().any(Op::is_destructive),
                    id: old.id,
                    source: Source::Directive,
                    created_at: old.created_at,
                    by: old.by,
                    model: false,
                    approved: false,
                    directive: Some(old.directive),
                    seen: BTreeMap::new(),
                    ops: old.ops,
                    summary: old.summary,
                    consequence: old.consequence,
                }),
                Err(_) => Err(with_missing_fields(with_op_field(e, text), text)),
            },
        }
    }

    /// Reads the op file at `path`.
    pub fn read(layout: &Layout, path: &Path) -> Result<Self, StateError> {
        let text = crate::state::read_text_file(path).map_err(|source| StateError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self::parse(&text, layout.rel(path))?)
    }

    /// Writes the file to `ops/pending/ID.yaml`; returns its path.
    pub(crate) fn write_pending(&self, layout: &Layout) -> Result<PathBuf, StateError> {
        let path = pending_path(layout, &self.id);
        let text = self.render(layout.rel(&path))?;
        crate::state::write_if_changed(&path, text.as_bytes())?;
        Ok(path)
    }
}

/// The fields every op file has (the others, `by` and `directive`, may be left out).
const REQUIRED_FIELDS: [&str; 8] = [
    "id",
    "source",
    "created_at",
    "approved",
    "destructive",
    "ops",
    "summary",
    "consequence",
];

/// `e` naming every required field the file lacks, not only the first the parser met: a file written by
/// hand is fixed in one go, not one run per field.
fn with_missing_fields(
    mut e: crate::yamlfile::YamlError,
    text: &str,
) -> crate::yamlfile::YamlError {
    if !e.message.starts_with("missing field") {
        return e;
    }
    let Ok(serde_json::Value::Object(top)) = yaml_serde::from_str::<serde_json::Value>(text) else {
        return e;
    };
    let missing: Vec<String> = REQUIRED_FIELDS
        .iter()
        .filter(|f| !top.contains_key(**f))
        .map(|f| format!("`{f}`"))
        .collect();
    if missing.len() > 1 {
        e.message = format!(
            "missing fields {}; an op file has {} (docs/tools.md has the format)",
            missing.join(", "),
            REQUIRED_FIELDS.join(", ")
        );
    }
    e
}

/// `e` with its path taken down to the op's field when it stops at the op (`ops[0]: invalid type: sequence,
/// expected a string` → `ops[0].estimate: …`): an op is read by its `op` tag, which hides the field from
/// the parser, so the op is checked again as the `apply_changes` tool checks its input.
fn with_op_field(mut e: crate::yamlfile::YamlError, text: &str) -> crate::yamlfile::YamlError {
    let Some(n) = e
        .message
        .strip_prefix("ops[")
        .and_then(|rest| rest.split_once("]: "))
        .and_then(|(n, _)| n.parse::<usize>().ok())
    else {
        return e;
    };
    let op = yaml_serde::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("ops")?.get(n).cloned());
    // The op alone as `apply_changes`'s input: the tool's own check names the field.
    if let Some(op) = op
        && let Err(crate::tools::ToolError::Invalid { path, message }) =
            crate::tools::schema::validate(
                crate::tools::APPLY_CHANGES,
                &serde_json::json!({ "ops": [op] }),
            )
        && let Some(inner) = path.strip_prefix("/ops/0/")
    {
        let field: String = inner
            .split('/')
            .map(|seg| match seg.parse::<usize>() {
                Ok(k) => format!("[{k}]"),
                Err(_) => format!(".{seg}"),
            })
            .collect();
        e.message = format!("ops[{n}]{field}: {message}");
    }
    e
}

/// Every op file under `ops/pending/`, in id order (`C-` before `D-`, then by number); a file that does
/// not read is said on stderr (once per call) and left out, the others still count.
pub fn pending(layout: &Layout) -> Result<Vec<OpFile>, StateError> {
    let (files, problems) = read_pending(layout)?;
    for (_, e) in problems {
        warn_left_out(&e);
    }
    Ok(files)
}

/// Says on stderr that an op file that does not read is left out.
pub(crate) fn warn_left_out(e: &StateError) {
    tracing::warn!(
        "{e}; that op file is left out until it is fixed (or deleted, if the proposal is dropped)"
    );
}

/// Why an op file's `id` cannot stand for the file `file_name` (`C-0004.yaml`), if it cannot: the id names
/// the proposal's branch (`commitea/ID`) and its record (`ops/applied/ID.yaml`), so it is `C-` or `D-` and
/// digits, and the file's own name.
pub(crate) fn id_problem(file_name: &str, id: &str) -> Option<String> {
    let well_formed = id
        .strip_prefix("C-")
        .or_else(|| id.strip_prefix("D-"))
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    if !well_formed {
        return Some(format!(
            "its id \"{}\" is not an op file's id (C- or D- and digits, as C-0004)",
            crate::limits::excerpt(id)
        ));
    }
    let stem = file_name.strip_suffix(".yaml").unwrap_or(file_name);
    (stem != id)
        .then(|| format!("its id is {id} but the file is named {file_name}: make them the same"))
}

/// The op files that do not read, each with its path and why.
pub(crate) type Unread = Vec<(PathBuf, StateError)>;

/// The op files under `ops/pending/` that read, and why the others do not (with their paths), without a
/// word on stderr (for a reader whose caller already reports them).
pub(crate) fn read_pending(layout: &Layout) -> Result<(Vec<OpFile>, Unread), StateError> {
    let dir = layout.ops_dir().join(PENDING_DIR);
    if let Some(link) = crate::state::link_below(layout.root(), &dir) {
        return Err(StateError::Io {
            path: link,
            source: crate::state::link_refused(),
        });
    }
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(source) => return Err(StateError::Io { path: dir, source }),
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    let mut files = Vec::new();
    let mut problems = Vec::new();
    // Anything else in the folder is said, not passed over: a file named `.yml` waited there, merged and
    // never carried out, with not a word (audit 120). A hidden file (`.gitkeep`) is no proposal.
    paths.retain(|p| {
        let name = p
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if name.starts_with('.') || (name.ends_with(".yaml") && !p.is_dir()) {
            return true;
        }
        problems.push((
            p.clone(),
            StateError::Invalid {
                path: layout.rel(p).to_path_buf(),
                message: if p.is_dir() {
                    "is a folder, not an op file: op files are ID.yaml files right in the folder; \
                     move what it holds out"
                } else {
                    "is not read: an op file is named by its id and `.yaml` (C-0004.yaml); rename it, \
                     or move it out of the folder"
                }
                .to_owned(),
            },
        ));
        false
    });
    paths.retain(|p| p.extension().is_some_and(|x| x == "yaml"));
    for p in &paths {
        match OpFile::read(layout, p) {
            // The id names the proposal's branch and its applied record: it must be the file's name.
            Ok(f)
                if let Some(problem) = id_problem(
                    &p.file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                    &f.id,
                ) =>
            {
                problems.push((
                    p.clone(),
                    StateError::Invalid {
                        path: layout.rel(p).to_path_buf(),
                        message: problem,
                    },
                ));
            }
            Ok(f) => files.push(f),
            Err(e) => problems.push((p.clone(), e)),
        }
    }
    Ok((files, problems))
}

/// The state an op batch is checked against.
pub(crate) struct Checker<'a> {
    config: &'a Config,
    snapshot: &'a Snapshot,
    repos: Vec<RepoName>,
    /// Dependencies as they stand after the ops accepted so far.
    deps: BTreeMap<IssueKey, BTreeSet<IssueKey>>,
    /// Issues closed by ops accepted so far.
    closed: BTreeSet<IssueKey>,
    /// Each `create_issue` op checked so far: its position among the accepted ones, or none if rejected.
    created: Vec<Option<u32>>,
    /// Checking for the apply stage: an op with nothing left to do passes (the writer records it as
    /// already so) instead of being refused, and a missing issue is one the server no longer has.
    at_apply: bool,
    /// What the ops [`check_change`](Checker::check_change) accepted so far set, with the op's place in
    /// the call (1 is the first).
    fields: BTreeMap<(&'static str, String), usize>,
    /// The new issues an earlier op of the call files, by repository and title: the op's place.
    titles: BTreeMap<(Option<RepoName>, String), usize>,
    /// How many ops `check_change` has seen.
    seen: usize,
}

/// An op after checking: issues resolved to full keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The op with every issue named `owner/repo#N`.
    pub op: Op,
}

fn key_ref(k: &IssueKey) -> IssueRef {
    IssueRef::Key(k.to_string())
}

impl<'a> Checker<'a> {
    /// A checker over a snapshot; `repos` resolves bare issue numbers.
    pub fn new(config: &'a Config, snapshot: &'a Snapshot, repos: Vec<RepoName>) -> Self {
        let deps = snapshot
            .issues
            .iter()
            .map(|(k, i)| (k.clone(), i.depends_on.iter().cloned().collect()))
            .collect();
        Self {
            config,
            snapshot,
            repos,
            deps,
            closed: BTreeSet::new(),
            created: Vec::new(),
            at_apply: false,
            fields: BTreeMap::new(),
            titles: BTreeMap::new(),
            seen: 0,
        }
    }

    /// A checker for the apply stage, over the snapshot synced just before: an op file on the branch is
    /// held to the rules `apply_changes` holds a proposal to (it may be hand-written), but an op the world
    /// has already carried out passes, for the writer to record as already so.
    pub fn at_apply(config: &'a Config, snapshot: &'a Snapshot, repos: Vec<RepoName>) -> Self {
        Self {
            at_apply: true,
            ..Self::new(config, snapshot, repos)
        }
    }

    /// Starts the next op file: `dependsOnNew` counts the new issues of one file. What earlier files
    /// added (dependencies, closes) is kept.
    pub fn next_file(&mut self) {
        self.created.clear();
    }

    /// Counts an op refused before the checker saw it, so that `dependsOnNew` positions still match.
    pub fn refused_before(&mut self, op: &Op) {
        if matches!(op, Op::CreateIssue { .. }) {
            self.created.push(None);
        }
    }

    fn issue(&self, r: &IssueRef) -> Result<(IssueKey, &'a Issue), String> {
        // A repository's former name is the repository (audit 179: the ledger took `acme/api#64` after
        // the rename, the tools refused it); the op is written under the name it goes by now.
        let key = self.snapshot.meta.now_keyed(r.resolve(&self.repos)?);
        match self.snapshot.issues.get(&key) {
            Some(i) => Ok((key, i)),
            None if self.at_apply => Err(format!("{key} is not on the server")),
            // Said with why it is unknown (audit 128: a repository not synced, or a pull request, read
            // as a missing issue).
            None if !self.repos.contains(&key.repo) => Err(format!(
                "unknown issue {key}: {} is not one of the repositories synced (`repositories` in \
                 commitea.yaml)",
                key.repo
            )),
            None => Err(format!(
                "unknown issue {key}: it is not in the snapshot (a pull request, or an issue filed since the \
                 last sync: `commitea run` syncs it)"
            )),
        }
    }

    /// Refuses a change to what plans an issue that is closed (on Gitea, or by an earlier op of the
    /// batch): it plans nothing any more, and a late estimate would be read as the estimate it was done
    /// against.
    fn open(&self, key: &IssueKey, issue: &Issue, what: &str) -> Result<(), String> {
        if issue.is_closed() || self.closed.contains(key) {
            return Err(format!(
                "{key} is closed: its {what} plans nothing any more (reopen it on Gitea first if the work is back)"
            ));
        }
        Ok(())
    }

    fn milestone(&self, id: u64) -> Result<(&'a RepoName, &'a Milestone), String> {
        self.snapshot.milestone(id).ok_or_else(|| {
            let known: Vec<String> = self
                .snapshot
                .milestones
                .values()
                .flatten()
                .map(|m| match m.state {
                    OpenState::Open => format!("{} ({})", m.id, m.title),
                    OpenState::Closed => format!("{} ({}, closed)", m.id, m.title),
                })
                .collect();
            format!(
                "unknown milestone {id}; the milestones are {}",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )
        })
    }

    /// A milestone an op may put work in or plan by: one that exists and is open (a closed milestone is
    /// done; moving work into it, or giving it a date, is a mistake to catch, not to carry out).
    fn open_milestone(&self, id: u64) -> Result<(&'a RepoName, &'a Milestone), String> {
        let (repo, m) = self.milestone(id)?;
        if m.state == OpenState::Closed {
            return Err(format!(
                "milestone {id} ({}) is closed on Gitea: reopen it there first, or choose an open one",
                m.title
            ));
        }
        Ok((repo, m))
    }

    fn estimate(&self, text: &str) -> Result<String, String> {
        let bare = text.strip_prefix(Estimate::LABEL_PREFIX).unwrap_or(text);
        match bare.parse::<Estimate>() {
            Ok(e) if self.config.estimates.ladder.contains(&e) => Ok(e.label()),
            parsed => Err(off_the_ladder(
                text,
                parsed.ok().as_ref(),
                &self.config.estimates,
                self.config.workday_hours(),
            )),
        }
    }

    fn priority(text: &str) -> Result<String, String> {
        match Priority::from_said(text) {
            Some(p) => Ok(p.label()),
            None => Err(format!(
                "priority \"{text}\" is out of range: p/0 (drop everything) to p/3 (someday)"
            )),
        }
    }

    /// A label `create_issue` may carry or `remove_label` may take away.
    fn own_label(&self, label: &str) -> Result<String, String> {
        if label.starts_with(Estimate::LABEL_PREFIX) {
            self.estimate(label)
        } else if label.starts_with(Priority::LABEL_PREFIX) {
            Self::priority(label)
        } else if label == Milestone::HARD_MARKER {
            Ok(label.to_owned())
        } else {
            Err(outside_namespaces(label))
        }
    }

    /// The path from `to` back to `from` through dependencies, if any: adding `from → to` closes a cycle.
    fn path(&self, from: &IssueKey, to: &IssueKey) -> Option<Vec<IssueKey>> {
        // Depth-first search from `to` along "depends on" edges, looking for `from`.
        let mut stack = vec![vec![to.clone()]];
        let mut seen = BTreeSet::new();
        while let Some(path) = stack.pop() {
            let last = path.last()?.clone();
            if &last == from {
                return Some(path);
            }
            if !seen.insert(last.clone()) {
                continue;
            }
            for next in self.deps.get(&last).into_iter().flatten() {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push(p);
            }
        }
        None
    }

    /// Checks one op (given the ops accepted before it); on success the batch state moves on.
    pub fn check(&mut self, op: &Op, approved: bool) -> Result<Checked, String> {
        let result = self.check_op(op, approved);
        if matches!(op, Op::CreateIssue { .. }) {
            let accepted = self.created.iter().flatten().count();
            let position = result
                .as_ref()
                .ok()
                .map(|_| u32::try_from(accepted + 1).unwrap_or(u32::MAX));
            self.created.push(position);
        }
        result
    }

    /// Checks an op a caller asks for (`apply_changes`, a filed capture): as [`check`](Self::check), and
    /// refuses one that would change nothing — Gitea already has it, an earlier op of the call changes
    /// the same thing, or an op file waiting for review (`pending`) already proposes it, as a retried
    /// call would. A directive's ops go through `check` alone: a PM may record a decision Gitea already
    /// carries out.
    pub fn check_change(
        &mut self,
        op: &Op,
        approved: bool,
        pending: &[OpFile],
    ) -> Result<Checked, String> {
        self.seen += 1;
        if let Op::CreateIssue { title, repo, .. } = op {
            let repos = &self.repos;
            let named = |r: &str| {
                r.trim()
                    .parse::<RepoName>()
                    .ok()
                    .map(|r| r.as_configured(repos))
                    .map(|r| self.snapshot.meta.as_now(r))
            };
            let repo = match (repo, repos.as_slice()) {
                (Some(r), _) => named(r),
                (None, [one]) => Some(one.clone()),
                (None, _) => None,
            };
            let same = |o: &Op| {
                matches!(o, Op::CreateIssue { title: t, repo: r, .. }
                    if t.trim() == title.trim() && r.as_deref().and_then(named) == repo)
            };
            if let Some(f) = pending.iter().find(|f| f.ops.iter().any(same)) {
                self.refused_before(op);
                let id = &f.id;
                return Err(format!(
                    "{id} ({PENDING_PATH}/{id}.yaml) already proposes a new issue titled \"{}\" there: merge \
                     or close its pull request first, or give this one another title",
                    crate::limits::excerpt(title.trim())
                ));
            }
            // Twice in one call is two issues of one name on Gitea (audit 91).
            let key = (repo, title.trim().to_owned());
            if let Some(&n) = self.titles.get(&key) {
                self.refused_before(op);
                return Err(format!(
                    "op {n} of this call already files a new issue titled \"{}\" there: one issue per \
                     title, or give this one another",
                    crate::limits::excerpt(title.trim())
                ));
            }
            let checked = self.check(op, approved)?;
            self.titles.insert(key, self.seen);
            return Ok(checked);
        }
        let checked = self.check(op, approved)?;
        let field = checked.op.field();
        if let Some(f @ (what, of)) = &field
            && let Some(n) = self.fields.get(f)
        {
            return Err(format!(
                "op {n} of this call already changes the {what} of {of}: one change to it per call"
            ));
        }
        if checked.op.already_so(self.snapshot) {
            return Err(format!(
                "nothing to change: Gitea already has it ({})",
                checked.op.describe()
            ));
        }
        if let Some(f) = pending.iter().find(|f| f.ops.contains(&checked.op)) {
            let id = &f.id;
            return Err(format!(
                "{id} ({PENDING_PATH}/{id}.yaml) already proposes this ({}): merge or close its pull request \
                 first",
                checked.op.describe()
            ));
        }
        if let Some(f) = field {
            self.fields.insert(f, self.seen);
        }
        Ok(checked)
    }

    /// The `create_issue` ops of this call that `positions` name (1 is the first), as their positions
    /// among the accepted ones; an error when one is not an earlier op or was rejected.
    fn new_deps(&self, positions: &[u32]) -> Result<Vec<u32>, String> {
        let mut out = Vec::new();
        for &k in positions {
            let i = usize::try_from(k).unwrap_or(usize::MAX);
            match i.checked_sub(1).and_then(|i| self.created.get(i)) {
                None => {
                    // This op is the next create_issue: it is being checked (audit 140: "there is no
                    // earlier create_issue number 1 (1 is the first)" for an op naming itself).
                    let this = self.created.len() + 1;
                    let ahead = match this {
                        1 => "there is none before it".to_owned(),
                        2 => "only create_issue 1 comes before it".to_owned(),
                        n => format!("create_issue 1 to {} come before it", n - 1),
                    };
                    let what = if i == this {
                        "an issue cannot wait for itself"
                    } else {
                        "it comes later in the call"
                    };
                    return Err(format!(
                        "dependsOnNew {k}: {what}; this is create_issue {this} of the call, and dependsOnNew \
                         names only earlier ones ({ahead})"
                    ));
                }
                Some(None) => {
                    return Err(format!(
                        "dependsOnNew {k}: that create_issue was rejected, so this one cannot wait for it"
                    ));
                }
                Some(Some(p)) => out.push(*p),
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    fn check_op(&mut self, op: &Op, approved: bool) -> Result<Checked, String> {
        // A label CommiTea may never touch is the more basic refusal; say that before asking for approval.
        if let Op::RemoveLabel { label, .. } = op
            && !own_namespace(label)
        {
            return Err(outside_namespaces(label));
        }
        if op.is_destructive() && !approved {
            return Err(format!(
                "{} is destructive: it needs \"approved\": true, given only after the person has seen the consequence (\"preview\": true shows it, writing nothing)",
                op.name()
            ));
        }
        let checked = match op {
            Op::CreateIssue {
                title,
                body,
                labels,
                milestone,
                deps,
                repo,
                depends_on_new,
            } => {
                if title.trim().is_empty() || title.contains(['\n', '\r']) {
                    return Err("the title must be one non-empty line".to_owned());
                }
                // A terminal's escape sequence or a bidirectional override would be filed to Gitea and
                // redraw whoever reads it (audit 83: a model's title carried ESC[31m).
                let said = |c: char| {
                    if c.is_control() {
                        format!("the control character U+{:04X}", u32::from(c))
                    } else {
                        format!("the bidirectional override U+{:04X}", u32::from(c))
                    }
                };
                if let Some(c) = title
                    .chars()
                    .find(|c| c.is_control() || crate::site::text::is_bidi_override(*c))
                {
                    return Err(format!(
                        "the title holds {}: write it as plain text",
                        said(c)
                    ));
                }
                // The body too, but for line breaks and tabs: Markdown (audit 91: ESC and NUL were filed).
                if let Some(c) = body.chars().find(|c| {
                    (c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
                        || crate::site::text::is_bidi_override(*c)
                }) {
                    return Err(format!(
                        "the body holds {}: write it as plain text (line breaks and tabs are fine)",
                        said(c)
                    ));
                }
                let repo: RepoName = match (repo, self.repos.as_slice()) {
                    (Some(r), _) => {
                        let r: RepoName = r
                            .parse::<RepoName>()
                            .map_err(|e| format!("repo \"{r}\" is not owner/repo: {e}"))?
                            .as_configured(&self.repos);
                        let r = self.snapshot.meta.as_now(r);
                        if !self.repos.contains(&r) {
                            return Err(format!(
                                "repo {r} is not one of the configured repositories"
                            ));
                        }
                        r
                    }
                    (None, [one]) => one.clone(),
                    (None, _) => {
                        return Err(
                            "several repositories are configured: say which one with \"repo\": \"owner/repo\""
                                .to_owned(),
                        );
                    }
                };
                let mut own = Vec::new();
                for l in labels {
                    own.push(self.own_label(l)?);
                }
                let kinds = |p: &str| own.iter().filter(|l| l.starts_with(p)).count();
                if kinds(Estimate::LABEL_PREFIX) > 1 || kinds(Priority::LABEL_PREFIX) > 1 {
                    return Err("at most one est/* and one p/* label".to_owned());
                }
                if own.iter().any(|l| l == Milestone::HARD_MARKER) {
                    return Err(
                        "deadline/hard belongs on a milestone (set_deadline_hard), not an issue"
                            .to_owned(),
                    );
                }
                if let Some(m) = milestone {
                    let (mrepo, _) = self.open_milestone(*m)?;
                    if *mrepo != repo {
                        return Err(format!("milestone {m} belongs to {mrepo}, not {repo}"));
                    }
                }
                let mut resolved = Vec::new();
                for d in deps {
                    resolved.push(key_ref(&self.issue(d)?.0));
                }
                let new_deps = self.new_deps(depends_on_new)?;
                Op::CreateIssue {
                    title: title.trim().to_owned(),
                    body: body.clone(),
                    labels: own,
                    milestone: *milestone,
                    deps: resolved,
                    repo: Some(repo.to_string()),
                    depends_on_new: new_deps,
                }
            }
            Op::SetEstimate { issue, estimate } => {
                let (key, i) = self.issue(issue)?;
                self.open(&key, i, "estimate")?;
                Op::SetEstimate {
                    issue: key_ref(&key),
                    estimate: self.estimate(estimate)?,
                }
            }
            Op::SetPriority { issue, priority } => {
                let (key, i) = self.issue(issue)?;
                self.open(&key, i, "priority")?;
                Op::SetPriority {
                    issue: key_ref(&key),
                    priority: Self::priority(priority)?,
                }
            }
            Op::SetMilestone { issue, milestone } => {
                let (key, _) = self.issue(issue)?;
                if let Some(m) = milestone {
                    let (repo, ms) = self.open_milestone(*m)?;
                    if *repo != key.repo {
                        return Err(format!(
                            "milestone {m} ({}) belongs to {repo}; {key} can only use its own repository's milestones",
                            ms.title
                        ));
                    }
                }
                Op::SetMilestone {
                    issue: key_ref(&key),
                    milestone: *milestone,
                }
            }
            Op::SetMilestoneDue { milestone, due } => {
                self.open_milestone(*milestone)?;
                let date = chrono::NaiveDate::parse_from_str(due, "%Y-%m-%d")
                    .map_err(|_| format!("due \"{due}\" is not a date (YYYY-MM-DD)"))?;
                Op::SetMilestoneDue {
                    milestone: *milestone,
                    due: date.format("%Y-%m-%d").to_string(),
                }
            }
            Op::SetDeadlineHard { milestone, hard } => {
                self.open_milestone(*milestone)?;
                Op::SetDeadlineHard {
                    milestone: *milestone,
                    hard: *hard,
                }
            }
            Op::AddDep { issue, depends_on } => {
                let (a, _) = self.issue(issue)?;
                let (b, _) = self.issue(depends_on)?;
                if a == b {
                    return Err(format!("{a} cannot depend on itself"));
                }
                // A dependency Gitea already has makes no cycle it is not already in: it is "already
                // so", not refused as a new cycle (audit 128).
                let had = self.deps.get(&a).is_some_and(|d| d.contains(&b));
                if let Some(path) = self.path(&a, &b).filter(|_| !had) {
                    let mut chain: Vec<String> = vec![a.to_string()];
                    chain.extend(path.iter().map(ToString::to_string));
                    return Err(format!(
                        "the dependency would make a cycle: {}",
                        chain.join(" → ")
                    ));
                }
                self.deps.entry(a.clone()).or_default().insert(b.clone());
                Op::AddDep {
                    issue: key_ref(&a),
                    depends_on: key_ref(&b),
                }
            }
            // At apply time the writer decides these from the fresh snapshot: done already, or to do.
            Op::RemoveDep { issue, depends_on } if self.at_apply => {
                let (a, b) = (
                    issue.resolve(&self.repos)?,
                    depends_on.resolve(&self.repos)?,
                );
                // Gone for the cycle check of the ops after it, as it will be on Gitea.
                if let Some(d) = self.deps.get_mut(&a) {
                    d.remove(&b);
                }
                Op::RemoveDep {
                    issue: key_ref(&a),
                    depends_on: key_ref(&b),
                }
            }
            Op::CloseIssue { issue } if self.at_apply => {
                let key = issue.resolve(&self.repos)?;
                self.closed.insert(key.clone());
                Op::CloseIssue {
                    issue: key_ref(&key),
                }
            }
            Op::RemoveLabel { issue, label } if self.at_apply => Op::RemoveLabel {
                issue: key_ref(&issue.resolve(&self.repos)?),
                label: label.clone(),
            },
            Op::RemoveDep { issue, depends_on } => {
                let (a, _) = self.issue(issue)?;
                let (b, _) = self.issue(depends_on)?;
                if !self.deps.get(&a).is_some_and(|d| d.contains(&b)) {
                    return Err(format!("{a} does not depend on {b}"));
                }
                if let Some(d) = self.deps.get_mut(&a) {
                    d.remove(&b);
                }
                Op::RemoveDep {
                    issue: key_ref(&a),
                    depends_on: key_ref(&b),
                }
            }
            Op::CloseIssue { issue } => {
                let (key, i) = self.issue(issue)?;
                if i.is_closed() || self.closed.contains(&key) {
                    return Err(format!("{key} is already closed"));
                }
                // Gitea answers 412 to closing an issue with an open dependency (`CloseIssue`,
                // `ErrDependenciesLeft`): say so now, with what to do, not at the run.
                let open_blocker = self.deps.get(&key).and_then(|blockers| {
                    blockers.iter().find(|b| {
                        !self.closed.contains(*b)
                            && self.snapshot.issues.get(*b).is_some_and(|x| !x.is_closed())
                    })
                });
                if let Some(b) = open_blocker {
                    return Err(format!(
                        "{key} depends on {b}, which is open, and Gitea refuses to close an issue with an \
                         open dependency: close {b} first, or remove the dependency (remove_dep) in an op \
                         before this one"
                    ));
                }
                // Gitea counts every blocker, synced or not, pull requests too (`IssueNoDependenciesLeft`
                // joins the issue table, which holds both).
                if let Some(b) = i
                    .outside_blockers
                    .iter()
                    .find(|b| b.state == crate::domain::OpenState::Open)
                {
                    // One in a repository the snapshot holds issues of is a pull request.
                    if self.snapshot.issues.keys().any(|k| k.repo == b.issue.repo) {
                        return Err(format!(
                            "{key} depends on pull request {}, which is open, and Gitea refuses to close \
                             an issue with an open dependency: merge or close {} first, or remove the \
                             dependency on Gitea",
                            b.issue, b.issue
                        ));
                    }
                    return Err(format!(
                        "{key} depends on {}, which is open (in a repository commitea.yaml does not \
                         name), and Gitea refuses to close an issue with an open dependency: close {} \
                         first, or remove the dependency on Gitea",
                        b.issue, b.issue
                    ));
                }
                self.closed.insert(key.clone());
                Op::CloseIssue {
                    issue: key_ref(&key),
                }
            }
            Op::RemoveLabel { issue, label } => {
                let (key, i) = self.issue(issue)?;
                if !i.labels.iter().any(|l| l == label) {
                    return Err(format!("{key} does not carry the label \"{label}\""));
                }
                Op::RemoveLabel {
                    issue: key_ref(&key),
                    label: label.clone(),
                }
            }
        };
        Ok(Checked { op: checked })
    }
}

/// A scoped label's scope (`est` of `est/1d`): Gitea keeps one label of an exclusive scope on an issue.
pub(crate) fn label_scope(label: &str) -> Option<&str> {
    label.split_once('/').map(|(s, _)| s)
}

/// Whether a label is in one of CommiTea's namespaces (see [`crate::domain::in_own_namespace`]).
pub(crate) fn own_namespace(label: &str) -> bool {
    crate::domain::in_own_namespace(label)
}

fn outside_namespaces(label: &str) -> String {
    format!(
        "label \"{label}\" is outside CommiTea's namespaces (est/*, p/*, deadline/hard): CommiTea never adds or removes other labels"
    )
}

fn full_key(r: &IssueRef) -> Option<IssueKey> {
    match r {
        IssueRef::Key(s) => s.parse().ok(),
        IssueRef::Number(_) => None,
    }
}

/// The snapshot as it would be with the checked ops carried out (new issues get the next free number of
/// their repository), for the consequence. Each change leaves the timeline event Gitea writes for it (a
/// label added or removed, a milestone changed, a dependency on both issues, a close) at `at`, as the
/// sync reads them back after the apply: an issue's lifecycle column is rebuilt from its events, so a
/// label taken away without its event would still hold it in the history the forecast reads.
pub(crate) fn simulate(snapshot: &Snapshot, ops: &[Checked], at: DateTime<Utc>) -> Snapshot {
    let mut s = snapshot.clone();
    let mut next: HashMap<RepoName, u64> = HashMap::new();
    for k in s.issues.keys() {
        let n = next.entry(k.repo.clone()).or_insert(0);
        *n = (*n).max(k.number);
    }
    // The keys of the new issues, in the order of the ops, for `dependsOnNew`.
    let mut created: Vec<Option<IssueKey>> = Vec::new();
    for c in ops {
        match &c.op {
            Op::CreateIssue {
                title,
                body,
                labels,
                milestone,
                deps,
                repo,
                depends_on_new,
            } => {
                let Some(repo) = repo.as_deref().and_then(|r| r.parse::<RepoName>().ok()) else {
                    created.push(None);
                    continue;
                };
                let n = next.entry(repo.clone()).or_insert(0);
                *n += 1;
                let key = IssueKey {
                    repo: repo.clone(),
                    number: *n,
                };
                let depends_on: Vec<IssueKey> = deps
                    .iter()
                    .filter_map(full_key)
                    .chain(depends_on_new.iter().filter_map(|k| {
                        let i = usize::try_from(*k).ok()?.checked_sub(1)?;
                        created.get(i).cloned().flatten()
                    }))
                    .collect();
                let mut issue = Issue {
                    number: *n,
                    title: title.clone(),
                    state: OpenState::Open,
                    author: "commitea".to_owned(),
                    created_at: at,
                    updated_at: at,
                    closed_at: None,
                    assignees: Vec::new(),
                    labels: Vec::new(),
                    milestone: None,
                    time_estimate: 0,
                    depends_on: Vec::new(),
                    body: body.clone(),
                    comments: Vec::new(),
                    timeline: Vec::new(),
                    tracked_times: Vec::new(),
                    outside_blockers: Vec::new(),
                    hidden_blockers: 0,
                    pull_requests: Vec::new(),
                };
                let mut new_labels = labels.clone();
                new_labels.sort();
                set_labels(&mut issue, new_labels, at);
                set_milestone(&mut issue, *milestone, at);
                created.push(Some(key.clone()));
                s.issues.insert(key.clone(), issue);
                for d in depends_on {
                    set_dependency(&mut s, &key, &d, true, at);
                }
            }
            Op::SetEstimate {
                issue,
                estimate: label,
            }
            | Op::SetPriority {
                issue,
                priority: label,
            } => {
                if let Some(i) = issue_of(&mut s, issue) {
                    // The label, and no other of its scope (Gitea's exclusive scoped labels).
                    let scope = label_scope(label);
                    let mut new: Vec<String> = i
                        .labels
                        .iter()
                        .filter(|l| label_scope(l) != scope)
                        .cloned()
                        .collect();
                    new.push(label.clone());
                    new.sort();
                    set_labels(i, new, at);
                }
            }
            Op::SetMilestone { issue, milestone } => {
                if let Some(i) = issue_of(&mut s, issue) {
                    set_milestone(i, *milestone, at);
                }
            }
            Op::SetMilestoneDue { milestone, due } => {
                // Gitea stores a due date as the end of that day.
                let end = chrono::NaiveDate::parse_from_str(due, "%Y-%m-%d")
                    .ok()
                    .map(crate::domain::end_of_day);
                for m in s.milestones.values_mut().flatten() {
                    if m.id == *milestone && end.is_some() {
                        m.due_on = end;
                    }
                }
            }
            Op::SetDeadlineHard { milestone, hard } => {
                for m in s.milestones.values_mut().flatten() {
                    if m.id == *milestone && m.is_hard() != *hard {
                        m.description = set_hard_marker(&m.description, *hard);
                    }
                }
            }
            Op::AddDep { issue, depends_on } | Op::RemoveDep { issue, depends_on } => {
                if let (Some(a), Some(b)) = (full_key(issue), full_key(depends_on)) {
                    set_dependency(&mut s, &a, &b, matches!(c.op, Op::AddDep { .. }), at);
                }
            }
            Op::CloseIssue { issue } => {
                if let Some(i) = issue_of(&mut s, issue)
                    && !i.is_closed()
                {
                    i.state = OpenState::Closed;
                    i.closed_at = Some(at);
                    record(
                        i,
                        TimelineEvent::new(0, crate::domain::EventKind::Close, at, ""),
                        at,
                    );
                }
            }
            Op::RemoveLabel { issue, label } => {
                if let Some(i) = issue_of(&mut s, issue) {
                    let new = i.labels.iter().filter(|l| *l != label).cloned().collect();
                    set_labels(i, new, at);
                }
            }
        }
    }
    s
}

/// The issue `r` names in full, in `s`.
fn issue_of<'s>(s: &'s mut Snapshot, r: &IssueRef) -> Option<&'s mut Issue> {
    full_key(r).and_then(|k| s.issues.get_mut(&k))
}

/// Adds `event` to `issue`'s timeline as CommiTea's, with the next id, and marks the issue updated.
fn record(issue: &mut Issue, mut event: TimelineEvent, at: DateTime<Utc>) {
    event.id = issue.timeline.iter().map(|e| e.id).max().unwrap_or(0) + 1;
    "commitea".clone_into(&mut event.user);
    issue.timeline.push(event);
    issue.updated_at = at;
}

/// Gives `issue` the labels `new` (sorted), with a `label` event for each one taken away, then each one
/// added.
fn set_labels(issue: &mut Issue, new: Vec<String>, at: DateTime<Utc>) {
    let label_event = |label: &str, removed: bool| {
        let mut e = TimelineEvent::new(0, crate::domain::EventKind::Label, at, "");
        e.label = Some(label.to_owned());
        e.removed = removed;
        e
    };
    let gone: Vec<String> = issue
        .labels
        .iter()
        .filter(|l| !new.contains(l))
        .cloned()
        .collect();
    let added: Vec<String> = new
        .iter()
        .filter(|l| !issue.labels.contains(l))
        .cloned()
        .collect();
    for l in &gone {
        record(issue, label_event(l, true), at);
    }
    for l in &added {
        record(issue, label_event(l, false), at);
    }
    issue.labels = new;
}

/// Puts `issue` in `milestone` (none: out of its milestone), with the `milestone` event, if that changes it.
fn set_milestone(issue: &mut Issue, milestone: Option<u64>, at: DateTime<Utc>) {
    if issue.milestone == milestone {
        return;
    }
    let mut e = TimelineEvent::new(0, crate::domain::EventKind::Milestone, at, "");
    e.milestone = milestone;
    e.old_milestone = issue.milestone;
    issue.milestone = milestone;
    record(issue, e, at);
}

/// Makes `a` depend on `b` (or not), with the event Gitea writes on each of the two issues.
fn set_dependency(s: &mut Snapshot, a: &IssueKey, b: &IssueKey, add: bool, at: DateTime<Utc>) {
    let Some(i) = s.issues.get_mut(a) else { return };
    if i.depends_on.contains(b) == add {
        return;
    }
    if add {
        i.depends_on.push(b.clone());
        i.depends_on.sort();
    } else {
        i.depends_on.retain(|x| x != b);
    }
    let kind = if add {
        crate::domain::EventKind::AddDependency
    } else {
        crate::domain::EventKind::RemoveDependency
    };
    for (on, other) in [(a, b), (b, a)] {
        if let Some(i) = s.issues.get_mut(on) {
            let mut e = TimelineEvent::new(0, kind.clone(), at, "");
            e.dependency = Some(other.clone());
            record(i, e, at);
        }
    }
}

/// A milestone description with the `deadline/hard` marker added (on its own last line) or removed.
pub(crate) fn set_hard_marker(description: &str, hard: bool) -> String {
    if hard {
        if description.trim().is_empty() {
            Milestone::HARD_MARKER.to_owned()
        } else {
            format!("{}\n\n{}", description.trim_end(), Milestone::HARD_MARKER)
        }
    } else {
        description
            .lines()
            .filter(|l| l.trim() != Milestone::HARD_MARKER)
            .collect::<Vec<_>>()
            .join("\n")
            .trim_end()
            .to_owned()
    }
}

/// The next free op file id: one more than the highest `C-NNNN` taken ([`highest_taken`]).
pub fn next_id(layout: &Layout) -> Result<String, StateError> {
    Ok(format!(
        "{ID_PREFIX}{:04}",
        highest_taken(layout, ID_PREFIX)? + 1
    ))
}

/// The highest number taken by an id of `prefix` (`C-` or `D-`; 0 if none): under `ops/pending/` and
/// `ops/applied/`, and by proposals git knows of ([`ids_taken_in_git`]). Ids are never given twice: an
/// applied record keeps its id after its entry or file is gone (audit 167: a reverted directive's D-0005
/// was given again beside `ops/applied/D-0005.yaml`).
pub(crate) fn highest_taken(layout: &Layout, prefix: &str) -> Result<u32, StateError> {
    let mut max = 0u32;
    for dir in [PENDING_DIR, APPLIED_DIR] {
        let dir = layout.ops_dir().join(dir);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(StateError::Io { path: dir, source }),
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let n = name
                .to_str()
                .and_then(|n| n.strip_suffix(".yaml"))
                .and_then(|n| id_number(n, prefix));
            if let Some(n) = n {
                max = max.max(n);
            }
        }
    }
    for id in ids_taken_in_git(layout.root()) {
        if let Some(n) = id_number(&id, prefix) {
            max = max.max(n);
        }
    }
    if prefix == "D-" {
        max = max.max(ledger_ids_in_history(layout.root()));
    }
    Ok(max)
}

/// The highest directive id any version of the ledger on the branch's first-parent history held: a
/// directive with no op file (a capacity, a note) leaves no record in `ops/applied`, and once a commit
/// removed its entry its id was given again (audit 170). Each version is read once.
fn ledger_ids_in_history(root: &Path) -> u32 {
    let Ok(repo) = gix::open(root) else {
        return 0;
    };
    let Ok(history) = crate::state::git::first_parent_history(&repo) else {
        return 0;
    };
    let mut seen = std::collections::HashSet::new();
    let mut max = 0;
    for (commit, _) in history {
        let Some(blob) = crate::state::git::blob_id_at(&repo, commit, crate::state::LEDGER_FILE)
        else {
            continue;
        };
        if !seen.insert(blob) {
            continue;
        }
        if let Ok(object) = repo.find_object(blob) {
            let text = String::from_utf8_lossy(&object.data);
            max = max.max(crate::ledger::parse::next_id(&text).0.saturating_sub(1));
        }
    }
    max
}

/// The ids proposals have taken that the checkout no longer shows: those of the branches `commitea/ID`
/// this repository knows (its own, and the remote's as last fetched or pushed), and those of the op files
/// on the remote's other branches as last fetched or pushed (an additive op `propose` pushed straight to
/// the branch). `commitea propose` takes a proposal out of the checkout once it is on its branch, so
/// counting the checkout alone would give its id again — and the next proposal would replace its open
/// pull request, or a tool's answer would name the file of another.
pub(crate) fn ids_taken_in_git(root: &Path) -> Vec<String> {
    let Ok(repo) = gix::open(root) else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    for name in crate::state::git::reference_names(&repo) {
        let remote = name
            .strip_prefix("refs/remotes/")
            .and_then(|r| r.split_once('/'))
            .map(|(_, b)| b);
        let Some(branch) = name.strip_prefix("refs/heads/").or(remote) else {
            continue;
        };
        if let Some(id) = branch.strip_prefix(crate::apply::propose::BRANCH_PREFIX) {
            if id_problem(&format!("{id}.yaml"), id).is_none() {
                ids.push(id.to_owned());
            }
            continue;
        }
        let Some(tip) = remote
            .filter(|b| *b != "HEAD")
            .and_then(|_| crate::state::git::resolve(&repo, &name))
        else {
            continue;
        };
        for dir in [PENDING_PATH, APPLIED_PATH] {
            for file in crate::state::git::list_dir(&repo, tip, dir).unwrap_or_default() {
                if let Some(id) = file.strip_suffix(".yaml")
                    && id_problem(&file, id).is_none()
                {
                    ids.push(id.to_owned());
                }
            }
        }
    }
    ids
}

/// The number of `id` when it has `prefix` (`C-0004` → 4 for `C-`).
pub(crate) fn id_number(id: &str, prefix: &str) -> Option<u32> {
    id.strip_prefix(prefix)?.parse().ok()
}

/// Where an op file of `id` goes.
pub(crate) fn pending_path(layout: &Layout, id: &str) -> PathBuf {
    layout
        .ops_dir()
        .join(PENDING_DIR)
        .join(format!("{id}.yaml"))
}

/// The time written into op files: UTC, whole seconds.
pub(crate) fn stamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file merged by hand is held to the bounds `apply_changes` holds a proposal to: at most 100 ops,
    /// a title of 255 characters, a body of 20,000 (audit 136: both were filed in full).
    #[test]
    fn an_op_file_past_the_bounds_of_a_proposal_does_not_read() {
        let file = |ops: &str| {
            format!(
                "id: C-0001\nsource: apply_changes\ncreated_at: 2026-11-29T09:00:00Z\napproved: false\n\
                 destructive: false\nops:\n{ops}summary: x\nconsequence: []\n"
            )
        };
        let rel = Path::new("ops/pending/C-0001.yaml");
        let create = |title: &str, body: &str| {
            format!("- op: create_issue\n  repo: acme/api\n  title: {title}\n  body: {body}\n")
        };
        assert!(OpFile::parse(&file(&create("Fine", "fine")), rel).is_ok());
        assert!(OpFile::parse(&file(&create("Fine", "fine").repeat(100)), rel).is_ok());
        let e = OpFile::parse(&file(&create("Fine", "fine").repeat(101)), rel).unwrap_err();
        assert!(
            e.message
                .starts_with("ops: 101 ops, more than the limit of 100"),
            "{e}"
        );
        let e = OpFile::parse(&file(&create(&"t".repeat(256), "fine")), rel).unwrap_err();
        assert!(e.message.starts_with("ops[0].title: "), "{e}");
        let e = OpFile::parse(&file(&create("Fine", &"b".repeat(20_001))), rel).unwrap_err();
        assert!(e.message.starts_with("ops[0].body: "), "{e}");
        assert!(
            e.to_string()
                .starts_with("ops/pending/C-0001.yaml: ops[0].body"),
            "{e}"
        );
    }

    /// An unknown field of an op is named at its own line, not the op's first (audit 114: "line 8" for a
    /// `note:` on line 11).
    #[test]
    fn an_unknown_field_of_an_op_is_named_at_its_line() {
        let text = "id: C-0001\nsource: apply_changes\ncreated_at: 2026-11-29T09:00:00Z\nby: ann\n\
                    approved: false\ndestructive: false\nops:\n- op: set_priority\n  issue: acme/api#1\n\
                    \x20 priority: p/0\n  note: why\nsummary: x\nconsequence: []\n";
        let e = OpFile::parse(text, Path::new("ops/pending/C-0001.yaml")).expect_err("note");
        assert!(e.message.contains("note"), "{e}");
        assert_eq!(e.line, Some(11), "{e}");
    }

    /// `REQUIRED_FIELDS` is exactly the fields a file cannot leave out: a field added to `OpFile` without
    /// a default must be listed, or a hand-written file missing it would be told only part of the story.
    #[test]
    fn the_required_fields_are_the_ones_the_format_requires() {
        let text = "id: C-0001\nsource: apply_changes\ncreated_at: 2026-11-29T09:00:00Z\nby: ann\n\
                    approved: false\ndestructive: false\nops: []\nsummary: x\nconsequence: []\n";
        let rel = Path::new("ops/pending/C-0001.yaml");
        let full: serde_json::Map<String, serde_json::Value> =
            yaml_serde::from_str(text).expect("the file reads as a mapping");
        assert!(OpFile::parse(text, rel).is_ok());
        let optional = ["by", "directive"];
        // Every field, as a file with all of them writes them.
        let mut all = OpFile::parse(text, rel).expect("reads");
        all.directive = Some(DirectiveRecord {
            kind: "note".into(),
            quote: "q".into(),
            target: None,
            params: None,
            rationale: None,
        });
        let fields: Vec<String> = match serde_json::to_value(&all).expect("serialises") {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            other => panic!("{other}"),
        };
        assert_eq!(
            fields.len(),
            REQUIRED_FIELDS.len() + optional.len(),
            "{fields:?}"
        );
        for f in &fields {
            assert!(
                REQUIRED_FIELDS.contains(&f.as_str()) || optional.contains(&f.as_str()),
                "{f} is neither required nor optional"
            );
        }
        for f in REQUIRED_FIELDS {
            let mut without = full.clone();
            without.remove(f);
            let text = yaml_serde::to_string(&without).expect("writes");
            let e = OpFile::parse(&text, rel).expect_err(f);
            assert!(e.message.contains(&format!("`{f}`")), "{f}: {e}");
        }
    }
}
