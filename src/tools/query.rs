//! `query_project`: the one read tool. A view selects the payload's shape, filters narrow it.
//!
//! Each call replays and forecasts the committed state (offline, exactly as `commitea plan` does), so the
//! numbers are the engine's and the same state always answers the same. Which filters each view reads is
//! listed in `docs/tools.md`; a filter a view does not read is ignored.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Context, ToolError};
use crate::domain::{IssueRef, Lifecycle};
use crate::pipeline::{self, Computed, RunOptions};
use crate::views::{self, Inputs, Selection};

/// The nine views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// What to work on now, next and later.
    Focus,
    /// One issue: intent and derived facts (needs `issueId`).
    Issue,
    /// One milestone: due, cone, stats, issues (needs `milestoneId`).
    Milestone,
    /// Issues in the five lifecycle columns.
    Board,
    /// Milestones' bands and slack, and the team's capacity.
    Runway,
    /// The estimate calibration.
    Calibration,
    /// The pending directive's consequence and the recent ledger entries.
    Directives,
    /// Drift, each person's next days, stale blockers.
    Standup,
    /// Issues matching `query`.
    Search,
}

/// The filters; each view reads those that make sense for it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Filters {
    /// The issue (view `issue`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_id: Option<IssueRef>,
    /// Gitea's milestone id (view `milestone`; narrows focus, board, runway, search, standup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub milestone_id: Option<u64>,
    /// A lifecycle column (narrows board, focus, milestone, search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Lifecycle>,
    /// A Gitea username: issues assigned to them, or planned for them when unassigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::NAME_CHARS))]
    pub assignee: Option<String>,
    /// A label name, exact (without case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::NAME_CHARS))]
    pub label: Option<String>,
    /// Free text (view `search`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::NAME_CHARS))]
    pub query: Option<String>,
    /// The most items a list shows: 1 to 100, default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// `query_project`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryInput {
    /// Which view.
    pub view: View,
    /// Filters.
    #[serde(default)]
    pub filters: Filters,
}

/// `query_project`'s answer: one of the nine payloads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum QueryOutput {
    /// `focus`.
    Focus(views::focus::Focus),
    /// `issue`.
    Issue(Box<views::issue::IssueView>),
    /// `milestone`.
    Milestone(views::milestone::MilestoneView),
    /// `board`.
    Board(views::Board),
    /// `runway`.
    Runway(views::Runway),
    /// `calibration`.
    Calibration(views::calibration::CalibrationView),
    /// `directives`.
    Directives(views::directives::Directives),
    /// `standup`.
    Standup(Box<views::standup::Standup>),
    /// `search`.
    Search(views::search::SearchView),
}

/// Replays and forecasts the state offline, for the tools; the same state read again (another view in
/// one `ask` or MCP session) reuses the last forecast instead of replaying and forecasting it again.
pub fn compute(ctx: &Context) -> Result<std::sync::Arc<Computed>, ToolError> {
    let key = fingerprint(ctx);
    let memo = &ctx.memo.0;
    if let Some(key) = key
        && let Some((k, c)) = memo.lock().ok().and_then(|m| m.clone())
        && k == key
    {
        return Ok(c);
    }
    let c = std::sync::Arc::new(compute_now(ctx)?);
    if let (Some(key), Ok(mut m)) = (key, memo.lock()) {
        *m = Some((key, c.clone()));
    }
    Ok(c)
}

/// A fingerprint of everything [`compute`] reads: the context's inputs, the bytes of the config and the
/// ledger, the branch `HEAD` names, and the size and time of every file of the snapshot, the op files
/// and the forecast. `None` where something cannot be read (nothing is then reused).
fn fingerprint(ctx: &Context) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ctx.env.hash(&mut h);
    format!("{:?}", ctx.overrides).hash(&mut h);
    ctx.as_of.hash(&mut h);
    let root = &ctx.state_dir;
    for file in [
        crate::config::FILE_NAME,
        crate::state::LEDGER_FILE,
        ".git/HEAD",
    ] {
        std::fs::read(root.join(file)).ok().hash(&mut h);
    }
    // The commit the branch points to (a loose ref, or packed ones).
    if let Ok(head) = std::fs::read_to_string(root.join(".git/HEAD"))
        && let Some(r) = head.trim().strip_prefix("ref: ")
    {
        std::fs::read(root.join(".git").join(r)).ok().hash(&mut h);
        std::fs::read(root.join(".git/packed-refs"))
            .ok()
            .hash(&mut h);
    }
    for dir in ["snapshot", "ops", "forecast"] {
        let dir = root.join(dir);
        dir.exists().hash(&mut h);
        if !dir.exists() {
            continue;
        }
        for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
            let e = e.ok()?;
            let meta = e.metadata().ok()?;
            e.path().hash(&mut h);
            meta.len().hash(&mut h);
            meta.modified().ok()?.hash(&mut h);
        }
    }
    Some(h.finish())
}

/// Replays and forecasts the state offline.
fn compute_now(ctx: &Context) -> Result<Computed, ToolError> {
    let opts = RunOptions {
        state_dir: ctx.state_dir.clone(),
        now: ctx.as_of,
        clock: ctx.now(),
        offline: true,
        full_sync: false,
        token: None,
        server_fallback: None,
        overrides: ctx.overrides.clone(),
        env: ctx.env.clone(),
        commit: false,
        render: false,
        applied_before: Vec::new(),
        skip_ci: false,
    };
    pipeline::compute(&opts).map_err(|e| ToolError::State(Box::new(e)))
}

/// Runs `query_project`.
pub fn query_project(ctx: &Context, input: QueryInput) -> Result<QueryOutput, ToolError> {
    let f = &input.filters;
    let limit = f.limit.map_or(Selection::DEFAULT_LIMIT, |l| l as usize);
    if !(1..=Selection::MAX_LIMIT).contains(&limit) {
        return Err(ToolError::invalid(
            "/filters/limit",
            format!("{limit} is out of range: the limit is 1 to 100"),
        ));
    }
    // Check what a view needs before the forecast runs, so a bad call answers at once.
    match input.view {
        View::Issue if f.issue_id.is_none() => {
            return Err(ToolError::invalid(
                "/filters/issueId",
                "view \"issue\" needs filters.issueId (a number, or owner/repo#N)",
            ));
        }
        View::Milestone if f.milestone_id.is_none() => {
            return Err(ToolError::invalid(
                "/filters/milestoneId",
                "view \"milestone\" needs filters.milestoneId (Gitea's milestone id; the runway view lists them)",
            ));
        }
        View::Search if f.query.as_deref().is_none_or(|q| q.trim().is_empty()) => {
            return Err(ToolError::invalid(
                "/filters/query",
                "view \"search\" needs filters.query (the words to look for)",
            ));
        }
        View::Search
            if f.query
                .as_deref()
                .is_some_and(|q| views::search::terms(q).is_empty()) =>
        {
            return Err(ToolError::invalid(
                "/filters/query",
                format!(
                    "\"{}\" has no word to look for: a word is two letters or digits or more (one is left \
                     out; symbols and emoji are not searched), or an issue number",
                    crate::limits::excerpt(f.query.as_deref().unwrap_or_default())
                ),
            ));
        }
        _ => {}
    }
    let c = compute(ctx)?;
    if let Some(m) = f.milestone_id
        && c.plan.milestone(m).is_none()
    {
        return Err(ToolError::invalid(
            "/filters/milestoneId",
            format!("no milestone {m}; {}", c.plan.milestones_listed()),
        ));
    }
    // A name or label nobody has is a typo, not "nobody has work": say so, with what there is.
    if let Some(a) = f.assignee.as_deref() {
        let mut people: Vec<&str> = c
            .plan
            .team
            .iter()
            .map(|m| m.name.as_str())
            .chain(
                c.plan
                    .issues
                    .iter()
                    .flat_map(|i| i.assignees.iter().map(String::as_str)),
            )
            .collect();
        people.sort_unstable();
        people.dedup();
        if !people.iter().any(|p| p.eq_ignore_ascii_case(a)) {
            // A typo of someone's name is said, as a directive's target says it (audit 112: "gsu").
            let meant = crate::plan::nearest(a, people.iter().copied())
                .map(|(_, p)| format!(" (did you mean {p}?)"))
                .unwrap_or_default();
            return Err(ToolError::invalid(
                "/filters/assignee",
                format!(
                    "\"{}\" is not on the team and is assigned no issue{meant}; the people are {}",
                    crate::limits::excerpt(a),
                    if people.is_empty() {
                        "none".to_owned()
                    } else {
                        people.join(", ")
                    }
                ),
            ));
        }
    }
    if let Some(l) = f.label.as_deref()
        && !c
            .plan
            .issues
            .iter()
            .any(|i| i.labels.iter().any(|x| x.eq_ignore_ascii_case(l)))
    {
        let mut labels: Vec<&str> = c
            .plan
            .issues
            .iter()
            .flat_map(|i| i.labels.iter().map(String::as_str))
            .collect();
        labels.sort_unstable();
        labels.dedup();
        // A tracker may have hundreds: the first 40 say what labels look like here.
        const SHOWN: usize = 40;
        let more = labels.len().saturating_sub(SHOWN);
        labels.truncate(SHOWN);
        return Err(ToolError::invalid(
            "/filters/label",
            format!(
                "no issue carries the label \"{}\"; the labels in use are {}{}",
                crate::limits::excerpt(l),
                if labels.is_empty() {
                    "none".to_owned()
                } else {
                    labels.join(", ")
                },
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ),
        ));
    }
    let previous = (input.view == View::Standup)
        .then(|| previous_forecast(ctx, &c))
        .flatten();
    // Within the view's byte budget: the largest limit up to the one asked for whose answer fits, found
    // by bisection, so a larger limit never answers less (audit 96: halving 100 gave 3 milestones where
    // 20 gave 5); each view's counts stay whole, so the caller sees there is more.
    let budget = crate::limits::answer_budget(super::QUERY_PROJECT, Some(view_name(input.view)));
    let size = |out: &QueryOutput| serde_json::to_vec(out).map_or(0, |v| v.len());
    // Long words are cut before the list is: one directive's 2,000-character quote cut the directives
    // view to that one directive at every limit (audit 106).
    let fit = |limit: usize| -> Result<QueryOutput, ToolError> {
        Ok(shortened(
            render(&c, &input, limit, previous.as_ref())?,
            size,
            budget,
        ))
    };
    let out = fit(limit)?;
    if size(&out) <= budget || limit == 1 {
        return Ok(over_budget(out, size, budget, input.view));
    }
    // Every limit under `fits` is known to fit; `limit` does not.
    let (mut fits, mut over, mut best) = (1, limit, None);
    while fits < over {
        let mid = fits + (over - fits) / 2;
        let o = fit(mid)?;
        if size(&o) <= budget {
            fits = mid + 1;
            best = Some(o);
        } else {
            over = mid;
        }
    }
    tracing::debug!(
        "{:?} is over its budget of {budget} at limit {limit}: answered at limit {}",
        input.view,
        fits.saturating_sub(1).max(1)
    );
    match best {
        Some(o) => Ok(o),
        None => Ok(over_budget(fit(1)?, size, budget, input.view)),
    }
}

/// `out` within `budget` where cutting its long words does it: the directives' quotes and rationales, to
/// 400 characters, then 200, 100, 50, as far as it takes; every other view as it is.
fn shortened(out: QueryOutput, size: impl Fn(&QueryOutput) -> usize, budget: usize) -> QueryOutput {
    let QueryOutput::Directives(full) = &out else {
        return out;
    };
    if size(&out) <= budget {
        return out;
    }
    let mut cut = None;
    for chars in [400, 200, 100, 50] {
        let mut d = full.clone();
        d.cut_texts(chars);
        let o = QueryOutput::Directives(d);
        let fits = size(&o) <= budget;
        cut = Some(o);
        if fits {
            break;
        }
    }
    cut.unwrap_or(out)
}

/// `out`, said in the log when even limit 1 is over the budget.
fn over_budget(
    out: QueryOutput,
    size: impl Fn(&QueryOutput) -> usize,
    budget: usize,
    view: View,
) -> QueryOutput {
    let bytes = size(&out);
    if bytes > budget {
        // The answer is given whole; only a reader of the logs minding an agent's context wants this.
        tracing::debug!(
            "the {} view is {bytes} bytes even with one item, over its budget of {budget}",
            view_name(view)
        );
    }
    out
}

/// The view's name, as in the input.
fn view_name(v: View) -> &'static str {
    match v {
        View::Focus => "focus",
        View::Issue => "issue",
        View::Milestone => "milestone",
        View::Board => "board",
        View::Runway => "runway",
        View::Calibration => "calibration",
        View::Directives => "directives",
        View::Standup => "standup",
        View::Search => "search",
    }
}

/// One view of the computed state at `limit`.
fn render(
    c: &Computed,
    input: &QueryInput,
    limit: usize,
    previous: Option<&views::standup::Previous>,
) -> Result<QueryOutput, ToolError> {
    let f = &input.filters;
    let selection = Selection {
        state: f.state,
        assignee: f.assignee.clone(),
        label: f.label.clone(),
        milestone: f.milestone_id,
        limit,
    };
    let inputs = Inputs {
        plan: &c.plan,
        report: &c.report,
    };
    Ok(match input.view {
        View::Focus => QueryOutput::Focus(views::focus::focus(inputs, &selection)),
        View::Issue => {
            let r = f.issue_id.as_ref().ok_or_else(|| {
                ToolError::invalid("/filters/issueId", "view \"issue\" needs filters.issueId")
            })?;
            let key = r
                .resolve(&super::repositories(&c.config, &c.snapshot))
                .map(|k| c.snapshot.meta.now_keyed(k))
                .map_err(|m| ToolError::invalid("/filters/issueId", m))?;
            let view = views::issue::issue(inputs, &c.snapshot, &key).ok_or_else(|| {
                ToolError::invalid(
                    "/filters/issueId",
                    format!(
                        "no issue {key} in the snapshot (the search view finds issues by words)"
                    ),
                )
            })?;
            QueryOutput::Issue(Box::new(view))
        }
        View::Milestone => {
            let id = f.milestone_id.unwrap_or_default();
            let view = views::milestone::milestone(inputs, id, &selection).ok_or_else(|| {
                ToolError::invalid("/filters/milestoneId", format!("no milestone {id}"))
            })?;
            QueryOutput::Milestone(view)
        }
        View::Board => QueryOutput::Board(views::board::board_selected(inputs, &selection)),
        View::Runway => QueryOutput::Runway(views::runway::runway_selected(inputs, &selection)),
        View::Calibration => QueryOutput::Calibration(views::calibration::calibration(
            inputs,
            &selection,
            c.backtest.as_ref(),
        )),
        View::Directives => {
            let mut d = c.directives.clone();
            // Newest first: the limit keeps the newest, and what it cuts in force stays in sight.
            d.cut(limit);
            if let Some(p) = d.pending.as_mut() {
                let total = p.consequence.len();
                p.consequence.truncate(limit);
                p.consequence_omitted = total - p.consequence.len();
            }
            let problems = d.problems.len();
            d.problems.truncate(limit);
            d.problems_omitted += problems - d.problems.len();
            let notices = d.notices.len();
            d.notices.truncate(limit);
            d.notices_omitted += notices - d.notices.len();
            QueryOutput::Directives(d)
        }
        View::Standup => {
            let settings = views::standup::StandupSettings {
                stale_days: c.config.standup.stale_days.0,
                plan_days: c.config.standup.plan_days.0,
            };
            QueryOutput::Standup(Box::new(views::standup::standup(
                inputs,
                &c.snapshot,
                previous,
                settings,
                &selection,
            )))
        }
        View::Search => QueryOutput::Search(views::search::search(
            inputs,
            &c.snapshot,
            f.query.as_deref().unwrap_or_default(),
            &selection,
        )),
    })
}

/// The newest committed forecast that differs from today's, if the state repo has one.
fn previous_forecast(ctx: &Context, c: &Computed) -> Option<views::standup::Previous> {
    crate::pipeline::previous_forecast(&ctx.state_dir, c)
}
