//! `record_directive`: append a directive to the ledger and say what it does to the forecast.
//!
//! The directive is checked against the state (its kind, target and params), the forecast is run on the
//! ledger as it is and on the ledger with the directive appended (same seed on both sides, so the diff is
//! deterministic), and the two are diffed with [`crate::consequence::diff`]. Then `pm-state.md` is written
//! with the new entry after every earlier byte and, when the directive has an effect on Gitea's side, a
//! proposed op file `ops/pending/<id>.yaml` in `apply_changes`' op shapes. Nothing talks to Gitea and
//! nothing is committed. Invalid input is an error naming the field, and nothing is written.

use std::path::{Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::format::{DirectiveId, DirectiveKind, NewDirective, Params, Target, valid_username};
use crate::config::{Config, ConfigError, Overrides};
use crate::consequence::{self, Consequence};
use crate::domain::{IssueKey, IssueRef, OpenState, RepoName};
use crate::ops::{DirectiveRecord, Op, OpFile, Source};
use crate::plan::Plan;
use crate::state::{Layout, Snapshot, StateError};

/// What `record_directive` is asked to record (the tool's input, camelCase).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordInput {
    /// `reprioritize`, `reestimate`, `set-deadline`, `scope`, `capacity` or `note`.
    #[schemars(extend("enum" = ["reprioritize", "reestimate", "set-deadline", "scope", "capacity", "note"]))]
    pub kind: String,
    /// The PM's words, verbatim.
    #[schemars(length(min = 1, max = crate::limits::QUOTE_CHARS))]
    pub quote: String,
    /// What the directive is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<RecordTarget>,
    /// The structured effect, its shape set by the kind (see `docs/ledger.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Why, on one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::RATIONALE_CHARS))]
    pub rationale: Option<String>,
    /// Who gave the directive (a Gitea username).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::NAME_CHARS))]
    pub by: Option<String>,
}

/// The target of a directive: exactly one of the three.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordTarget {
    /// `owner/repo#N`; or `#N` / `N` (a JSON number too) when one repository is configured.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "string_or_number"
    )]
    #[schemars(with = "Option<crate::domain::IssueRef>")]
    pub issue: Option<String>,
    /// Gitea's milestone id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub milestone: Option<u64>,
    /// A Gitea username.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::NAME_CHARS))]
    pub member: Option<String>,
    /// A milestone by its title, as the command line takes it (`milestone Public API v2`); not part of
    /// the tool's input, whose milestones are ids.
    #[serde(skip)]
    #[schemars(skip)]
    pub milestone_title: Option<String>,
}

fn string_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        S(String),
        N(u64),
    }
    Ok(Option::<Either>::deserialize(d)?.map(|e| match e {
        Either::S(s) => s,
        Either::N(n) => n.to_string(),
    }))
}

impl RecordTarget {
    /// Parses the command line's form: `issue owner/repo#N`, `milestone ID`, `member USERNAME`, or a bare
    /// issue (`owner/repo#N`, `#N`, `N`).
    pub(crate) fn parse_cli(s: &str) -> Self {
        let s = s.trim();
        let (kind, rest) = s
            .split_once(char::is_whitespace)
            .map_or((s, ""), |(k, r)| (k, r.trim()));
        match kind {
            "issue" => Self {
                issue: Some(rest.to_owned()),
                ..Self::default()
            },
            "milestone" => match rest.parse::<u64>() {
                Ok(id) => Self {
                    milestone: Some(id),
                    ..Self::default()
                },
                // Not a number: a title, as the pages name milestones.
                Err(_) => Self {
                    milestone_title: Some(rest.to_owned()),
                    ..Self::default()
                },
            },
            "member" => Self {
                member: Some(rest.to_owned()),
                ..Self::default()
            },
            _ => Self {
                issue: Some(s.to_owned()),
                ..Self::default()
            },
        }
    }
}

/// One subject (a milestone or an issue) before and after the directive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsequencePair {
    /// What moved: `milestone ID TITLE` or `issue owner/repo#N TITLE`.
    pub subject: String,
    /// Its forecast before (`{p50, p80[, probabilityOnTime]}`), null when it was not there.
    pub before: Option<Value>,
    /// Its forecast after, null when it is no longer there.
    pub after: Option<Value>,
    /// Working days its p80 moved, later positive.
    /// Where the p80 crossed the horizon (one side `beyond horizon`) the count runs to the horizon, not
    /// to the work: say it left or came within the horizon.
    pub moved_working_days: i64,
}

/// What `record_directive` returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordOutput {
    /// The new directive's id, `D-0009`.
    pub directive_id: String,
    /// Every milestone and every moved issue, before and after.
    pub consequence: Vec<ConsequencePair>,
    /// One line for a person.
    pub summary: String,
    /// The op file written, relative to the state repo (`ops/pending/D-0009.yaml`), if any.
    pub ops_file: Option<String>,
    /// The whole consequence diff.
    pub detail: Consequence,
    /// Problems with the ledger's other entries (`ledger line 12: …`), each of which replay left out: the
    /// CLI prints them as `run` does; not part of the tool's answer.
    #[serde(skip)]
    pub ledger_problems: Vec<String>,
}

/// Why a directive was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The input is wrong; `field` names the input field.
    #[error("invalid {field}: {message}")]
    Invalid {
        /// `kind`, `quote`, `target`, `params`, `rationale` or `by`.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The ledger as it stands cannot take a new entry (it ends inside an unclosed block); what to fix.
    #[error("pm-state.md cannot take the new directive: {0}")]
    Ledger(String),
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The state repo could not be read or written.
    #[error(transparent)]
    State(#[from] StateError),
    /// The op file could not be serialised.
    #[error(transparent)]
    Yaml(#[from] crate::yamlfile::YamlError),
    /// Another writer holds the state repo.
    #[error(transparent)]
    Lock(#[from] crate::state::lock::LockError),
    /// The caller cancelled the call before anything was written ([`RecordOptions::cancel`]).
    #[error("cancelled before anything was written: nothing was recorded")]
    Cancelled,
}

impl RecordError {
    /// Whether the error is the caller's input (rather than the state repo).
    pub fn is_input(&self) -> bool {
        matches!(self, Self::Invalid { .. })
    }
}

fn invalid(field: &'static str, message: impl Into<String>) -> RecordError {
    RecordError::Invalid {
        field,
        message: message.into(),
    }
}

/// How a directive is recorded: the time it is stamped with, the settings, and the forecast's day zero.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The wall clock: the time written into the ledger entry.
    pub clock: DateTime<Utc>,
    /// `COMMITEA_*` environment overrides of the config.
    pub env: Vec<(String, String)>,
    /// Flag overrides (`--seed`, `--trials`).
    pub overrides: Overrides,
    /// The moment the consequence is forecast as of; default: [`crate::pipeline::day_zero`].
    pub as_of: Option<DateTime<Utc>>,
    /// Whether a model wrote the directive (an agent's call, a draft from the PM's words): its op file
    /// says so, and so does its pull request.
    pub model: bool,
    /// Checked before the first write: a call its caller cancelled writes nothing.
    pub cancel: crate::state::Cancel,
}

impl RecordOptions {
    /// Options with the clock and environment only.
    pub fn new(clock: DateTime<Utc>, env: Vec<(String, String)>) -> Self {
        Self {
            clock,
            env,
            overrides: Overrides::default(),
            as_of: None,
            model: false,
            cancel: crate::state::Cancel::default(),
        }
    }

    /// The state repo's settings with these overrides.
    fn config(&self, layout: &Layout) -> Result<Config, RecordError> {
        Ok(Config::load(
            layout.root(),
            self.env.iter().cloned(),
            &self.overrides,
        )?)
    }
}

/// Records a directive: appends it to `pm-state.md`, writes the proposed op file, returns the consequence.
pub fn record_directive(
    state_dir: &Path,
    input: &RecordInput,
    options: &RecordOptions,
) -> Result<RecordOutput, RecordError> {
    record(state_dir, input, options, true)
}

/// Checks a directive exactly as [`record_directive`] would and computes its consequence, writing nothing:
/// what a negotiation shows before the PM confirms. The id is the one it would get.
pub fn preview_directive(
    state_dir: &Path,
    input: &RecordInput,
    options: &RecordOptions,
) -> Result<RecordOutput, RecordError> {
    record(state_dir, input, options, false)
}

fn record(
    state_dir: &Path,
    input: &RecordInput,
    options: &RecordOptions,
    write: bool,
) -> Result<RecordOutput, RecordError> {
    // The ledger records whole seconds.
    let clock = options.clock.with_nanosecond(0).unwrap_or(options.clock);
    let layout = Layout::new(state_dir);
    let config = options.config(&layout)?;
    // One writer at a time: the ledger is appended to as it is on disk.
    let _lock = if write {
        Some(crate::state::lock::lock_state(layout.root(), &config)?)
    } else {
        None
    };
    let snapshot = Snapshot::load(&layout)?;
    let committed = crate::pipeline::Committed::read(&layout);
    let now = committed.moment(
        &config.calendar.timezone,
        options.as_of,
        snapshot.meta.synced_at,
    );
    let ledger_path = layout.ledger();
    let ledger = super::read_exact(&ledger_path)?;
    let text = ledger.as_deref().unwrap_or("");

    let before_replay = super::replay(&snapshot, &config, ledger.as_deref(), now);
    // Never dated before an entry of its own day: `--now` of a past day stamped its midnight, and the
    // run then warned that the entry just written was given before the one it takes the place of
    // (audit 175). An entry of a later day does not move it: one typo'd year (2062) dated every later
    // directive so (audit 179).
    let day_end = (clock.date_naive() + chrono::Days::new(1))
        .and_time(chrono::NaiveTime::MIN)
        .and_utc();
    let clock = before_replay
        .ledger
        .as_ref()
        .and_then(|l| {
            l.ledger
                .directives()
                .map(|d| d.at)
                .filter(|at| *at < day_end)
                .max()
        })
        .map_or(clock, |latest| clock.max(latest));
    let new = new_directive(input, &config, &snapshot, &before_replay.plan, clock)?;
    if let Some(same) = already_said(text, &new) {
        return Err(invalid(
            "params",
            format!(
                "{} (ledger line {}) already says this and is in force: nothing recorded. If Gitea lacks its \
                 change, `commitea directive --carry-out {}` proposes it; to record it anew, withdraw {} first",
                same.id, same.line, same.id, same.id
            ),
        ));
    }
    // The Gitea changes it proposes are held to `apply_changes`' rules, which the apply stage applies
    // again: a directive never proposes what they would refuse (an estimate off the ladder, a closed issue).
    // An estimate off the ladder is quoted as the PM typed it (`9d`, not the label `est/9d` its op
    // would write; audits 175, 179), with the rung to write instead.
    if let Params::Reestimate { estimate } = &new.params
        && !config.estimates.ladder.contains(estimate)
    {
        let typed = input
            .params
            .as_ref()
            .and_then(|p| p.get("estimate"))
            .and_then(Value::as_str)
            .map_or_else(|| estimate.to_string(), str::to_owned);
        return Err(invalid(
            "params",
            crate::ops::off_the_ladder(
                &typed,
                Some(estimate),
                &config.estimates,
                config.workday_hours(),
            ),
        ));
    }
    // Out of a milestone it is not in: nothing to do, and the PM who said "drop it" is told how (audit
    // 194: recorded, its op "nothing to change", and the issue stayed in the plan). Asked of a new
    // directive only: one carried out leaves its issue in no milestone, and stays in force.
    if let (Params::Scope { included: false }, Some(Target::Issue(key))) =
        (&new.params, &new.target)
        && snapshot
            .issues
            .get(key)
            .is_some_and(|i| i.milestone.is_none())
    {
        return Err(invalid(
            "target",
            format!(
                "{key} is in no milestone on Gitea: scope {{\"in\": false}} takes an issue out of its \
                 milestone, and there is none to take it out of; to drop the work, close the issue \
                 (apply_changes close_issue)"
            ),
        ));
    }
    let ops = proposed_ops(&new, &before_replay.plan);
    let mut checker = crate::ops::Checker::new(
        &config,
        &snapshot,
        crate::tools::repositories(&config, &snapshot),
    );
    for op in &ops {
        if let Err(message) = checker.check(op, true) {
            let closed = match &new.target {
                Some(Target::Issue(k)) => snapshot
                    .issues
                    .get(k)
                    .is_some_and(crate::domain::Issue::is_closed),
                Some(Target::Milestone(id)) => snapshot
                    .milestone(*id)
                    .is_some_and(|(_, m)| m.state == crate::domain::OpenState::Closed),
                _ => false,
            };
            return Err(invalid(if closed { "target" } else { "params" }, message));
        }
    }
    // A directive proposed earlier left the checkout's ledger for its branch: its id stays taken. So
    // does one an op file in the checkout holds with no entry here (audit 91: a stray D-0008.yaml was
    // overwritten by the next directive's), and one carried out whose entry is gone (audit 167).
    let floor = DirectiveId(crate::ops::highest_taken(&layout, "D-")?).next();
    let appended = super::parse::append(text, &new, floor).map_err(|e| match e {
        super::parse::AppendError::EmptyQuote => invalid("quote", e.to_string()),
        super::parse::AppendError::MultiLine(f) => {
            invalid(if f == "by" { "by" } else { "rationale" }, e.to_string())
        }
        super::parse::AppendError::NotReadBack(_) => invalid("quote", e.to_string()),
        e @ super::parse::AppendError::Swallowed { .. } => RecordError::Ledger(e.to_string()),
    })?;
    let after_replay = super::replay(&snapshot, &config, Some(&appended.text), now);
    // A replay problem on the new entry's line means the state does not have what it is about.
    let new_line = super::parse::parse(&appended.text)
        .ledger
        .directives()
        .find(|d| d.id == appended.id)
        .map(|d| d.line);
    // What replay says of the new entry and still applies (a period for someone nobody names) is said,
    // not refused.
    for p in after_replay.problems.iter().filter(|p| {
        new_line.is_some()
            && p.ledger_line() == new_line
            && matches!(p.kind, crate::plan::ProblemKind::Data(_))
    }) {
        tracing::warn!("{p}");
    }
    if let Some(p) = after_replay.problems.iter().find(|p| {
        new_line.is_some()
            && p.ledger_line() == new_line
            && !matches!(p.kind, crate::plan::ProblemKind::Data(_))
    }) {
        let field = if new.target.is_some() {
            "target"
        } else {
            "params"
        };
        let message = match &p.kind {
            crate::plan::ProblemKind::NotApplied(m)
            | crate::plan::ProblemKind::Data(m)
            | crate::plan::ProblemKind::NotOnGitea(m)
            | crate::plan::ProblemKind::OpFileLeft(m) => m.clone(),
            crate::plan::ProblemKind::Malformed(e) => e.to_string(),
        };
        return Err(invalid(field, message));
    }

    let ledger_problems: Vec<String> = before_replay
        .problems
        .iter()
        .map(ToString::to_string)
        .collect();
    let before_plan = before_replay.into_plan();
    let after_plan = after_replay.into_plan();
    let (kept, _) = committed.keeps(&layout, &config, &before_plan, ledger.as_deref());
    let (detail, _, _) = consequence::compare_reusing(
        &config,
        before_plan,
        after_plan,
        &kept,
        None,
        committed.report(),
    );
    // The one line names what the directive is about, as apply_changes' does for the same ops.
    let about: Vec<u64> = ops
        .iter()
        .flat_map(|op| op.milestones_about(&snapshot))
        .chain(match &new.target {
            Some(Target::Milestone(id)) => Some(*id),
            _ => None,
        })
        .collect();
    let mut detail = detail.about(&about);
    let id = appended.id.to_string();
    // A change pending in the checkout that sets what this directive sets, otherwise: merged after it,
    // it puts Gitea at odds with the directive (audit 190: said the other way round only, by
    // apply_changes).
    let clashes = clashes_with_pending(&layout, &ops, &id)?;
    if !clashes.is_empty() {
        for c in &clashes {
            tracing::warn!("{c}");
        }
        detail.summary = format!("{}; {}", detail.summary, clashes.join("; "));
    }
    let pairs = pairs(&detail);

    if !write {
        return Ok(RecordOutput {
            directive_id: id.clone(),
            consequence: pairs,
            summary: detail.summary.clone(),
            ops_file: (!ops.is_empty()).then(|| format!("{}/{id}.yaml", crate::ops::PENDING_PATH)),
            detail,
            ledger_problems,
        });
    }
    // The consequence took its time: a caller who gave up meanwhile gets nothing written.
    if options.cancel.is_cancelled() {
        return Err(RecordError::Cancelled);
    }
    let ops_path: Option<PathBuf> = if ops.is_empty() {
        None
    } else {
        let file = OpFile {
            id: id.clone(),
            source: Source::Directive,
            created_at: clock.to_rfc3339_opts(SecondsFormat::Secs, true),
            by: new.by.clone(),
            model: options.model,
            approved: false,
            destructive: ops.iter().any(Op::is_destructive),
            directive: Some(DirectiveRecord {
                kind: new.kind().to_string(),
                quote: new.quote.clone(),
                target: new.target.as_ref().map(ToString::to_string),
                params: new.params.to_inline_json(),
                rationale: new.rationale.clone(),
            }),
            seen: crate::ops::seen(&ops, &snapshot),
            ops,
            summary: detail.summary.clone(),
            consequence: pairs.clone(),
        };
        Some(file.write_pending(&layout)?)
    };
    if let Err(e) = crate::state::write_if_changed(&ledger_path, appended.text.as_bytes()) {
        if let Some(path) = &ops_path {
            let _ = std::fs::remove_file(path);
        }
        return Err(e.into());
    }
    Ok(RecordOutput {
        directive_id: id,
        consequence: pairs,
        summary: detail.summary.clone(),
        ops_file: ops_path.map(|p| layout.rel(&p).to_string_lossy().replace('\\', "/")),
        detail,
        ledger_problems,
    })
}

/// For each op file pending in the checkout (not a directive's) with an op that sets a field one of `ops`
/// sets, to another value: what it does, in words, and that merged it puts Gitea at odds with `id`.
fn clashes_with_pending(layout: &Layout, ops: &[Op], id: &str) -> Result<Vec<String>, RecordError> {
    let fields: Vec<(String, &Op)> = ops
        .iter()
        .filter_map(|op| Some((crate::apply::field_of(op)?.0, op)))
        .collect();
    if fields.is_empty() {
        return Ok(Vec::new());
    }
    let pending = crate::ops::pending(layout)?;
    Ok(pending
        .iter()
        .filter(|f| f.directive.is_none() && f.id != id)
        .flat_map(|f| {
            f.ops.iter().filter_map(|op| {
                let (field, what) = crate::apply::field_of(op)?;
                fields
                    .iter()
                    .any(|(ours, mine)| *ours == field && *mine != op)
                    .then(|| {
                        format!(
                            "{} (pending) would {}: merged, it puts {what} at odds with {id} (close its pull \
                             request, or delete {}/{}.yaml)",
                            f.id,
                            op.describe(),
                            crate::ops::PENDING_PATH,
                            f.id
                        )
                    })
            })
        })
        .collect())
}

/// The active directive that already says what `new` says, if one does: the latest active one of its kind
/// about its target sets the same (a note: one with the same words about the same target). Recorded
/// again, it would change nothing but the ledger's length — a command run twice.
fn already_said(ledger: &str, new: &NewDirective) -> Option<super::format::DirectiveEntry> {
    let parsed = super::parse::parse(ledger);
    let mut same_kind = parsed.ledger.directives().filter(|d| {
        d.status == super::format::Status::Active && d.kind == new.kind() && d.target == new.target
    });
    if new.kind() == DirectiveKind::Note {
        same_kind.find(|d| d.quote == new.quote).cloned()
    } else {
        same_kind.last().filter(|d| d.params == new.params).cloned()
    }
}

/// The Gitea changes that carry out the directive `id`, in force but not carried by Gitea (`commitea
/// directive --carry-out`): exactly what its fields in force set that Gitea lacks, as replay finds them.
pub fn carry_out_ops(
    state_dir: &Path,
    id: &str,
    options: &RecordOptions,
) -> Result<Vec<Op>, RecordError> {
    const FIELD: &str = "carry-out";
    let layout = Layout::new(state_dir);
    let config = options.config(&layout)?;
    let wanted: DirectiveId = id.trim().to_uppercase().parse().map_err(|()| {
        invalid(
            FIELD,
            format!("\"{id}\" is not a directive id (D- and its number, as in D-0003)"),
        )
    })?;
    let snapshot = Snapshot::load(&layout)?;
    let now = crate::pipeline::moment(
        &layout,
        &config.calendar.timezone,
        options.as_of,
        snapshot.meta.synced_at,
    );
    let ledger = super::read(&layout.ledger())?;
    let parsed = super::parse::parse(ledger.as_deref().unwrap_or(""));
    let Some(d) = parsed.ledger.directives().find(|d| d.id == wanted) else {
        return Err(invalid(
            FIELD,
            format!("{} has no directive {wanted}", crate::state::LEDGER_FILE),
        ));
    };
    if d.status != super::format::Status::Active {
        return Err(invalid(
            FIELD,
            format!(
                "{wanted} is {}: it is not in force, so Gitea need not carry it",
                d.status
            ),
        ));
    }
    // A milestone closed or gone on Gitea takes no due date or deadline: nothing to carry out there,
    // and "Gitea already carries it" would be untrue (audit 133).
    if let Some(Target::Milestone(id)) = &d.target {
        let why = match snapshot.milestone(*id) {
            None => Some(format!(
                "milestone {id} is not on Gitea (deleted there, or of a repository no longer synced)"
            )),
            Some((_, m)) if m.state == OpenState::Closed => {
                Some(format!("milestone {id} ({}) is closed on Gitea", m.title))
            }
            Some(_) => None,
        };
        if let Some(why) = why {
            return Err(invalid(
                FIELD,
                format!(
                    "{why}: {wanted} has nothing to carry out there; reopen the milestone on Gitea, or \
                     withdraw {wanted} (status: withdrawn)"
                ),
            ));
        }
    }
    let wanted = wanted.to_string();
    super::replay(&snapshot, &config, ledger.as_deref(), now)
        .not_on_gitea
        .into_iter()
        .find(|n| n.directive == wanted)
        .map(|n| n.carry)
        .filter(|carry| !carry.is_empty())
        .ok_or_else(|| {
            invalid(
                FIELD,
                format!(
                    "Gitea already carries {wanted}: nothing it sets in force (a p/ or est/ label, an open \
                     issue's milestone, a milestone's due date or deadline/hard) differs from Gitea \
                     (capacity, notes and an issue's deadline live only in the ledger)"
                ),
            )
        })
}

/// Checks the input against the state and builds the directive to append.
fn new_directive(
    input: &RecordInput,
    config: &Config,
    snapshot: &Snapshot,
    plan: &Plan,
    clock: DateTime<Utc>,
) -> Result<NewDirective, RecordError> {
    let kind: DirectiveKind = input.kind.parse().map_err(|()| {
        invalid(
            "kind",
            format!(
                "unknown kind \"{}\" (expected reprioritize, reestimate, set-deadline, scope, capacity or note)",
                crate::limits::excerpt(&input.kind)
            ),
        )
    })?;
    if input.quote.trim().is_empty() {
        return Err(invalid(
            "quote",
            "the quote is empty; record the PM's words verbatim",
        ));
    }
    // The CLI reaches here without the tool schema's bounds: check them here, for both.
    crate::limits::check_len(&input.quote, crate::limits::QUOTE_CHARS).map_err(|e| {
        invalid(
            "quote",
            format!("{e}; a quote is the PM's words, not a document: quote the decision itself"),
        )
    })?;
    if let Some(r) = &input.rationale {
        crate::limits::check_len(r, crate::limits::RATIONALE_CHARS)
            .map_err(|e| invalid("rationale", e))?;
    }
    // Words are kept as written, lines and all, but an escape sequence in them would rewrite the
    // terminal of whoever reads the ledger, the draft shown for confirmation, or `git log`; a
    // bidirectional override would make the ledger's pull request diff read otherwise than it says.
    for (field, text) in [
        ("quote", Some(&input.quote)),
        ("rationale", input.rationale.as_ref()),
    ] {
        if let Some(c) = text.and_then(|t| {
            t.chars().find(|&c| {
                (c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
                    || crate::site::text::is_bidi_override(c)
            })
        }) {
            return Err(invalid(
                field,
                format!(
                    "holds the {} U+{:04X}; write the words as plain text",
                    if c.is_control() {
                        "control character"
                    } else {
                        "bidirectional formatting character"
                    },
                    u32::from(c)
                ),
            ));
        }
    }
    if let Some(b) = &input.by {
        crate::limits::check_len(b, crate::limits::NAME_CHARS).map_err(|e| invalid("by", e))?;
    }
    let target = match &input.target {
        None => None,
        Some(t) => Some(resolve_target(t, config, snapshot, plan, kind)?),
    };
    if !kind.allows_target(target.as_ref()) {
        let got = target
            .as_ref()
            .map_or_else(|| "no target".to_owned(), ToString::to_string);
        return Err(invalid(
            "target",
            format!("{kind} needs {}, not {got}", kind.target_help()),
        ));
    }
    let params = match (&input.params, kind) {
        (None, DirectiveKind::Note) => Params::Note,
        (None, _) => {
            return Err(invalid(
                "params",
                format!("{kind} needs params (see docs/ledger.md)"),
            ));
        }
        (Some(v), _) => super::parse::parse_params(kind, &v.to_string()).map_err(|reason| {
            invalid("params", format!("params for {kind} are wrong: {reason}"))
        })?,
    };
    // A due date already past is late before any work is done: far more often a typo (2020 for 2027)
    // than a decision, and the forecast could only report it missed.
    if let Params::SetDeadline { due, .. } = &params
        && *due < plan.as_of
    {
        return Err(invalid(
            "params",
            format!(
                "due {due} is before the forecast's day ({}): a milestone due then is late before any work \
                 is done; give a date from {} on",
                plan.as_of, plan.as_of
            ),
        ));
    }
    // A capacity period that ended before the forecast's day changes nothing the forecast looks at.
    if let Params::Capacity {
        from, to: Some(to), ..
    } = &params
        && *to < plan.as_of
    {
        return Err(invalid(
            "params",
            format!(
                "capacity from {from} to {to} ended before the forecast's day ({}): it changes nothing \
                 the forecast plans; give a period that reaches {} or later",
                plan.as_of, plan.as_of
            ),
        ));
    }
    if let Some(r) = &input.rationale
        && r.contains(['\n', '\r'])
    {
        return Err(invalid("rationale", "the rationale must be a single line"));
    }
    if let Some(b) = &input.by
        && !valid_username(b)
    {
        return Err(invalid(
            "by",
            format!("\"{}\" is not a Gitea username", crate::limits::excerpt(b)),
        ));
    }
    // A blank rationale is none: the ledger cannot keep whitespace after `- rationale:`.
    let rationale = input
        .rationale
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    Ok(NewDirective {
        at: clock,
        quote: super::format::normalise_quote(&input.quote),
        target,
        params,
        rationale,
        by: input.by.clone(),
    })
}

/// The target as the ledger writes it, checked to exist in the state.
fn resolve_target(
    t: &RecordTarget,
    config: &Config,
    snapshot: &Snapshot,
    plan: &Plan,
    kind: DirectiveKind,
) -> Result<Target, RecordError> {
    let given = [
        t.issue.is_some(),
        t.milestone.is_some() || t.milestone_title.is_some(),
        t.member.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if given != 1 {
        return Err(invalid(
            "target",
            "give exactly one of issue, milestone or member",
        ));
    }
    if let Some(issue) = &t.issue {
        let key = issue_key(issue.trim(), config, snapshot, plan).map_err(|e| match e {
            // Words where a key was expected: most likely another kind of target, mistyped.
            RecordError::Invalid { field, message } if issue.trim().contains(char::is_whitespace) => {
                RecordError::Invalid {
                    field,
                    message: format!(
                        "{message} (a target is `issue owner/repo#N`, `milestone ID` or `milestone TITLE`, or \
                         `member USERNAME`)"
                    ),
                }
            }
            other => other,
        })?;
        if !plan.issues.iter().any(|i| i.key == key) {
            return Err(invalid(
                "target",
                format!("issue {key} does not exist in the snapshot"),
            ));
        }
        return Ok(Target::Issue(key));
    }
    if let Some(id) = t.milestone {
        if !plan.milestones.iter().any(|m| m.id == id) {
            return Err(invalid(
                "target",
                format!(
                    "milestone {id} does not exist in the snapshot; {}",
                    plan.milestones_listed()
                ),
            ));
        }
        return Ok(Target::Milestone(id));
    }
    if let Some(title) = &t.milestone_title {
        return match plan.milestones_titled(title)[..] {
            [m] => Ok(Target::Milestone(m.id)),
            [] => Err(invalid(
                "target",
                format!(
                    "no milestone is titled \"{}\"; {}",
                    crate::limits::excerpt(title.trim()),
                    plan.milestones_listed()
                ),
            )),
            // Milestones are per repository: one release across repositories is several of one title,
            // and taking the first would change one of them without a word.
            ref several => Err(invalid(
                "target",
                format!(
                    "\"{}\" is the title of {} milestones: {}; name the one meant by its id (`milestone \
                     {}`), one directive per milestone",
                    crate::limits::excerpt(title.trim()),
                    several.len(),
                    several
                        .iter()
                        .map(|m| format!("{} ({})", m.id, m.repo))
                        .collect::<Vec<_>>()
                        .join(", "),
                    several[0].id
                ),
            )),
        };
    }
    let name = t.member.as_deref().unwrap_or_default().trim();
    if !valid_username(name) {
        return Err(invalid(
            "target",
            format!("member \"{name}\" is not a Gitea username"),
        ));
    }
    if let Some(m) = plan.member_named(name) {
        return Ok(Target::Member(m.name.clone()));
    }
    // A capacity directive may add a new hire, though not under a name one typo away from a member's;
    // anything else must name a team member.
    if kind != DirectiveKind::Capacity {
        return Err(invalid("target", plan.not_in_team(name)));
    }
    if let Some(refused) = plan.not_a_new_hire(name) {
        return Err(invalid("target", refused));
    }
    Ok(Target::Member(name.to_owned()))
}

/// The target form that names `bare`, which is no issue: the team member or the milestone of that name,
/// else every form.
fn target_form(bare: &str, plan: &Plan) -> String {
    if let Some(m) = plan.member_named(bare) {
        format!("for the team member, say `member {}`", m.name)
    } else if let [m] = plan.milestones_titled(bare)[..] {
        format!("for the milestone, say `milestone {}`", m.id)
    } else {
        "a target is `issue owner/repo#N`, `milestone ID` (or its title) or `member USERNAME`"
            .to_owned()
    }
}

/// `owner/repo#N`, or `#N` / `N` in the only repository; `plan` names what a bare name would be.
fn issue_key(
    s: &str,
    config: &Config,
    snapshot: &Snapshot,
    plan: &Plan,
) -> Result<IssueKey, RecordError> {
    if s.contains('/') {
        // Spelt as the config spells its repository: Gitea's names ignore case (audit 158: `ACME/API#57`
        // was "not in the snapshot", where apply_changes took it).
        return s
            .parse::<IssueKey>()
            .map(|k| {
                snapshot.meta.now_keyed(
                    k.repo
                        .as_configured(&crate::tools::repositories(config, snapshot))
                        .issue(k.number),
                )
            })
            .map_err(|e| invalid("target", format!("issue: {e}")));
    }
    // A bare name on the command line (`--target bjorn`) is likelier a member or a milestone than an
    // issue: the error says which form names it.
    let number: u64 = s.trim_start_matches('#').parse().map_err(|_| {
        invalid(
            "target",
            format!(
                "issue \"{}\" is not owner/repo#N, #N or N; {}",
                crate::limits::excerpt(s),
                target_form(s, plan)
            ),
        )
    })?;
    let mut repos: Vec<RepoName> = if config.repositories.is_empty() {
        snapshot.issues.keys().map(|k| k.repo.clone()).collect()
    } else {
        config.repositories.clone()
    };
    repos.sort();
    repos.dedup();
    match repos.as_slice() {
        [only] => Ok(only.issue(number)),
        _ => Err(invalid(
            "target",
            format!(
                "issue \"{s}\" names no repository and {} are configured: write owner/repo#{number}",
                repos.len()
            ),
        )),
    }
}

/// The Gitea changes that carry the directive out, in `apply_changes`' op shapes.
fn proposed_ops(new: &NewDirective, plan: &Plan) -> Vec<Op> {
    match (&new.params, &new.target) {
        (Params::Reprioritize { priority }, Some(Target::Issue(key))) => {
            vec![Op::SetPriority {
                issue: IssueRef::Key(key.to_string()),
                priority: priority.label(),
            }]
        }
        (Params::Reestimate { estimate }, Some(Target::Issue(key))) => {
            vec![Op::SetEstimate {
                issue: IssueRef::Key(key.to_string()),
                estimate: estimate.label(),
            }]
        }
        (Params::SetDeadline { due, hard }, Some(Target::Milestone(id))) => {
            let mut ops = vec![Op::SetMilestoneDue {
                milestone: *id,
                due: due.format("%Y-%m-%d").to_string(),
            }];
            if *hard {
                ops.push(Op::SetDeadlineHard {
                    milestone: *id,
                    hard: true,
                });
            }
            ops
        }
        (Params::Scope { included: false }, Some(Target::Issue(key))) => {
            vec![Op::SetMilestone {
                issue: IssueRef::Key(key.to_string()),
                milestone: None,
            }]
        }
        (Params::Scope { included: false }, Some(Target::Milestone(id))) => plan
            .issues
            .iter()
            .filter(|i| i.milestone == Some(*id) && i.state == OpenState::Open)
            .map(|i| Op::SetMilestone {
                issue: IssueRef::Key(i.key.to_string()),
                milestone: None,
            })
            .collect(),
        // Scope back in: Gitea already has the issue in its milestone. Capacity and notes live only in the
        // ledger; a deadline on an issue has no Gitea field.
        _ => Vec::new(),
    }
}

/// Every milestone change and every moved issue as a `{subject, before, after}` pair.
pub(crate) fn pairs(c: &Consequence) -> Vec<ConsequencePair> {
    fn json<T: Serialize>(v: &T) -> Value {
        serde_json::to_value(v).unwrap_or(Value::Null)
    }
    // A title two repositories share is named with its repository (audit 168).
    let names = crate::consequence::names_of(&c.milestones);
    let ms = c.milestones.iter().map(|m| ConsequencePair {
        subject: format!(
            "milestone {} {}",
            m.milestone,
            names.get(&m.milestone).unwrap_or(&m.title)
        ),
        before: m.before.as_ref().map(json),
        after: m.after.as_ref().map(json),
        moved_working_days: m.moved_working_days,
    });
    let is = c.issues.iter().map(|i| ConsequencePair {
        subject: format!("issue {} {}", i.issue, i.title),
        before: i.before.as_ref().map(json),
        after: i.after.as_ref().map(json),
        moved_working_days: i.moved_working_days,
    });
    ms.chain(is).collect()
}
