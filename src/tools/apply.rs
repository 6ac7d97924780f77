//! `apply_changes`: check a batch of ops against the state, compute its consequence, write one op file.
//!
//! Ops are checked in order, each against the state as the ops accepted before it leave it (so a batch
//! cannot build a dependency cycle one edge at a time). A rejected op is reported with its reason and the
//! others go ahead; a destructive op without `approved: true` is rejected and never reaches the file.
//! With `preview: true` the consequence is answered and nothing is written. Nothing talks to Gitea: the
//! op file is the proposal, and merging it is the approval.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Context, ToolError};
use crate::config::Config;
use crate::ops::{self, Checker, Op, OpFile, Rejected};
use crate::state::{Layout, Snapshot};

/// `apply_changes`' input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyInput {
    /// The ops, one coherent change.
    #[schemars(length(min = 1, max = crate::limits::OPS))]
    pub ops: Vec<Op>,
    /// Required (true) when any op is destructive: `remove_dep`, `close_issue`, `remove_label`.
    #[serde(default)]
    pub approved: bool,
    /// Check the ops and answer their consequence, writing nothing: how a destructive op's consequence
    /// is shown to the person before asking for their approval (destructive ops are checked as if
    /// approved). Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preview: bool,
    /// Where the ops come from, for the op file and its pull request: `capture_work` when they file a
    /// reviewed capture proposal; default `apply_changes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ApplySource>,
}

/// Where an `apply_changes` call's ops come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApplySource {
    /// Changes asked for directly.
    ApplyChanges,
    /// A `capture_work` proposal, reviewed and filed.
    CaptureWork,
}

/// `apply_changes`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyOutput {
    /// Ops accepted and written to the op file (0 for a preview).
    pub applied: usize,
    /// Ops a preview accepted: those the same call without `preview` would write (destructive ones
    /// given `approved: true`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub previewed: usize,
    /// One line: what the accepted ops do to the forecast.
    pub consequence: String,
    /// The consequence subject by subject, as `record_directive` answers it: every milestone, then the
    /// moved issues, biggest move first; cut to the answer's budget (see `detailOmitted`). Audit 140: the
    /// one line alone hid the issue an op was about slipping 51 working days.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detail: Vec<crate::ledger::record::ConsequencePair>,
    /// Subjects left out of `detail` to keep the answer within its budget: "and N more".
    #[serde(default, skip_serializing_if = "is_zero")]
    pub detail_omitted: usize,
    /// Day 0 of the forecast the consequence is of: its dates are as of this day (absent when every op
    /// was rejected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// Ops not accepted, with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<Rejected>,
    /// Rejected ops left out of `rejected` to keep the answer within its budget: "and N more".
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rejected_omitted: usize,
    /// The op file written, relative to the state repo (`ops/pending/C-0001.yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_file: Option<String>,
    /// Where it went, when the server proposes on write: `C-0007 pull-request 12 commitea/C-0007` or
    /// `C-0007 direct <commit>` (additive ops where the config allows); `C-0008 duplicate-of C-0007` where
    /// another proposal asks the same (a retried call), and it was not proposed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proposed: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Keeps an answer within `budget` bytes: the consequence's smallest moves go first, then a rejected
/// op's echo loses its body, then the rejected list is cut from the end; `detailOmitted` and
/// `rejectedOmitted` say how many were left out. Why an op was rejected outlasts a one-day move.
pub(crate) fn fit(out: &mut ApplyOutput, budget: usize) {
    let size = |o: &ApplyOutput| serde_json::to_vec(o).map_or(0, |v| v.len());
    let total = out.detail.len() + out.detail_omitted;
    while size(out) > budget && !out.detail.is_empty() {
        out.detail.pop();
        out.detail_omitted = total - out.detail.len();
    }
    if size(out) <= budget {
        return;
    }
    for r in &mut out.rejected {
        if let Some(o) = r.op.as_object_mut() {
            o.remove("body");
            if let Some(t) = o.get("title").and_then(serde_json::Value::as_str) {
                let short = crate::limits::excerpt(t);
                o.insert("title".into(), short.into());
            }
        }
    }
    let total = out.rejected.len() + out.rejected_omitted;
    while size(out) > budget && !out.rejected.is_empty() {
        out.rejected.pop();
        out.rejected_omitted = total - out.rejected.len();
    }
}

/// What a batch of checked ops does to the forecast of the state repo as it is (same seed both sides).
pub(crate) fn consequence_of(
    config: &Config,
    snapshot: &Snapshot,
    layout: &Layout,
    accepted: &[ops::Checked],
    as_of: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<crate::consequence::Consequence, ToolError> {
    let committed = crate::pipeline::Committed::read(layout);
    let now = committed.moment(&config.calendar.timezone, as_of, snapshot.meta.synced_at);
    let ledger =
        crate::ledger::read(&layout.ledger()).map_err(|e| ToolError::State(Box::new(e)))?;
    let after_snapshot = ops::simulate(snapshot, accepted, now);
    let before_plan = crate::ledger::replay(snapshot, config, ledger.as_deref(), now).into_plan();
    let after_plan =
        crate::ledger::replay(&after_snapshot, config, ledger.as_deref(), now).into_plan();
    let (kept, _) = committed.keeps(layout, config, &before_plan, ledger.as_deref());
    let overridden = overridden(&before_plan, accepted);
    let (detail, _, _) = crate::consequence::compare_reusing(
        config,
        before_plan,
        after_plan,
        &kept,
        None,
        committed.report(),
    );
    let about: Vec<u64> = accepted
        .iter()
        .flat_map(|c| c.op.milestones_about(snapshot))
        .collect();
    let mut detail = detail.about(&about);
    if !overridden.is_empty() {
        detail.summary = format!("{}; {}", detail.summary, overridden.join("; "));
    }
    Ok(detail)
}

/// For each op that sets a field a directive in force sets to another value (or takes away the value it
/// holds), why it changes nothing the forecast uses (audit 144: a due date set under a directive's read "p80
/// unchanged", and merged would have put Gitea at odds with the directive without a word). An op writing
/// the directive's own value (`commitea directive --carry-out`) brings Gitea into line: nothing to say
/// (audit 149).
fn overridden(plan: &crate::plan::Plan, accepted: &[ops::Checked]) -> Vec<String> {
    let by = |provenance: &[(String, String)], field: &str| {
        provenance
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, d)| d.clone())
    };
    let bare = |e: &str| {
        e.trim()
            .strip_prefix(crate::domain::Estimate::LABEL_PREFIX)
            .unwrap_or(e.trim())
            .to_owned()
    };
    accepted
        .iter()
        .filter_map(|c| {
            let issue = || -> Option<&crate::plan::PlannedIssue> {
                plan.issue(&c.op.issue()?.to_string().parse().ok()?)
            };
            let held = |field: &str, differs: bool| -> Option<String> {
                let i = issue()?;
                differs.then(|| by(&i.provenance, field)).flatten()
            };
            let estimate_of = || issue().and_then(|i| i.estimate_text()).map(|e| bare(&e));
            let (directive, what) = match &c.op {
                Op::SetPriority { issue: i, priority } => (
                    held(
                        "priority",
                        issue()?.priority.to_string() != *priority,
                    )?,
                    format!("the priority of {i}"),
                ),
                Op::SetEstimate { issue: i, estimate } => (
                    held("estimate", estimate_of() != Some(bare(estimate)))?,
                    format!("the estimate of {i}"),
                ),
                Op::SetMilestone { issue: i, milestone } => (
                    held("milestone", issue()?.milestone != *milestone)?,
                    format!("the milestone of {i}"),
                ),
                Op::RemoveLabel { issue: i, label } => {
                    let (field, now) = if label.starts_with(crate::domain::Priority::LABEL_PREFIX) {
                        ("priority", Some(issue()?.priority.to_string()))
                    } else {
                        (
                            "estimate",
                            estimate_of().map(|e| {
                                format!("{}{e}", crate::domain::Estimate::LABEL_PREFIX)
                            }),
                        )
                    };
                    (
                        held(field, now.as_deref() == Some(label.as_str()))?,
                        format!("the {field} of {i}, which this op takes away"),
                    )
                }
                Op::SetMilestoneDue { milestone: m, due } => {
                    let ms = plan.milestone(*m)?;
                    let differs = ms.due.map(|d| d.to_string()).as_deref() != Some(due.as_str());
                    (
                        differs.then(|| by(&ms.provenance, "due")).flatten()?,
                        format!("the due date of milestone {m}"),
                    )
                }
                Op::SetDeadlineHard { milestone: m, hard } => {
                    let ms = plan.milestone(*m)?;
                    (
                        (ms.hard != *hard)
                            .then(|| by(&ms.provenance, "hard"))
                            .flatten()?,
                        format!("whether milestone {m}'s deadline is hard"),
                    )
                }
                _ => return None,
            };
            Some(format!(
                "{directive} in force sets {what}: the forecast follows it, not this op, and merged the op \
                 puts Gitea at odds with {directive} (withdraw it, or record a new directive instead)"
            ))
        })
        .collect()
}

/// Runs `apply_changes`.
pub fn apply_changes(ctx: &Context, input: ApplyInput) -> Result<ApplyOutput, ToolError> {
    fn state<E: std::error::Error + Send + Sync + 'static>(e: E) -> ToolError {
        ToolError::State(Box::new(e))
    }
    let layout = Layout::new(&ctx.state_dir);
    let config =
        Config::load(layout.root(), ctx.env.iter().cloned(), &ctx.overrides).map_err(state)?;
    // One writer at a time: the op file's number is taken from what is on disk.
    let _lock = crate::state::lock::lock_state(layout.root(), &config).map_err(state)?;
    let snapshot = Snapshot::load(&layout).map_err(state)?;
    let repos = super::repositories(&config, &snapshot);
    let mut checker = Checker::new(&config, &snapshot, repos);
    let pending = ops::pending(&layout).map_err(state)?;
    let mut accepted = Vec::new();
    let mut rejected = Vec::new();
    for op in &input.ops {
        match checker.check_change(op, input.approved || input.preview, &pending) {
            Ok(c) => accepted.push(c),
            Err(reason) => rejected.push(Rejected {
                op: serde_json::to_value(op).unwrap_or(serde_json::Value::Null),
                reason,
            }),
        }
    }
    if accepted.is_empty() {
        return Ok(ApplyOutput {
            applied: 0,
            previewed: 0,
            consequence: "nothing applied: every op was rejected".to_owned(),
            detail: Vec::new(),
            detail_omitted: 0,
            as_of: None,
            rejected,
            rejected_omitted: 0,
            ops_file: None,
            proposed: Vec::new(),
        });
    }

    let detail = consequence_of(&config, &snapshot, &layout, &accepted, ctx.as_of)?;
    // The consequence took its time: a caller who gave up meanwhile gets nothing written.
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    // An agent shows the person what a close would do before asking for approval (audit 122: it could
    // not, a destructive op without approval being refused before any consequence).
    if input.preview {
        return Ok(ApplyOutput {
            applied: 0,
            previewed: accepted.len(),
            consequence: format!("preview, nothing written: {}", detail.summary),
            detail: crate::ledger::record::pairs(&detail),
            detail_omitted: 0,
            as_of: detail.as_of.map(|d| d.to_string()),
            rejected,
            rejected_omitted: 0,
            ops_file: None,
            proposed: Vec::new(),
        });
    }

    let id = ops::next_id(&layout).map_err(state)?;
    let path = ops::pending_path(&layout, &id);
    let rel = layout.rel(&path).to_path_buf();
    let ops: Vec<Op> = accepted.into_iter().map(|c| c.op).collect();
    let file = OpFile {
        id,
        source: match input.source {
            Some(ApplySource::CaptureWork) => ops::Source::CaptureWork,
            _ => ops::Source::ApplyChanges,
        },
        created_at: ops::stamp(ctx.now()),
        by: ctx.by.clone(),
        model: ctx.model,
        approved: input.approved,
        destructive: ops.iter().any(Op::is_destructive),
        directive: None,
        seen: ops::seen(&ops, &snapshot),
        ops,
        summary: detail.summary.clone(),
        consequence: crate::ledger::record::pairs(&detail),
    };
    let text = file.render(&rel).map_err(state)?;
    crate::state::write_if_changed(&path, text.as_bytes()).map_err(state)?;
    Ok(ApplyOutput {
        applied: file.ops.len(),
        previewed: 0,
        as_of: detail.as_of.map(|d| d.to_string()),
        detail: file.consequence,
        detail_omitted: 0,
        consequence: detail.summary,
        rejected,
        rejected_omitted: 0,
        ops_file: Some(rel.to_string_lossy().replace('\\', "/")),
        proposed: Vec::new(),
    })
}
