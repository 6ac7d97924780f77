//! `capture_work` for real: a braindump and the interview so far go to the big model, which answers
//! follow-up questions (`needsMoreInfo`) or a proposal of issues; CommiTea checks it and computes its
//! consequence.
//!
//! The model answers one JSON object. It is validated against the draft's JSON Schema (derived from the
//! types below, as the tools' schemas are), then against the state: estimates on the ladder, priorities,
//! milestones and repositories that exist, dependencies on existing issues or on other proposed issues
//! (`new:K`) with no cycle — by running the proposal through `apply_changes`' own op checks as
//! `create_issue` ops. An invalid answer goes back once with the validation error; a second is a clear
//! failure. The `consequence` line is never the model's: the engine forecasts the state with and without
//! the proposal's `create_issue` ops (same seed) and diffs the two. Nothing is filed here: the reviewed
//! proposal is filed through `apply_changes` (`source: capture_work`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::Task;
use crate::config::Config;
use crate::domain::{IssueRef, RepoName};
use crate::ops::{Checked, Checker, Op};
use crate::state::{Layout, Snapshot};
use crate::tools::schema::{CaptureInput, CaptureOutput, Proposal, ProposedDep, ProposedIssue};
use crate::tools::{Context, ToolError};

/// What the big model answers: questions, or a proposal (without a consequence: that is the engine's).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Draft {
    /// Follow-up questions.
    #[serde(default)]
    #[schemars(length(min = 1, max = crate::limits::QUESTIONS), inner(length(min = 1, max = crate::limits::QUESTION_CHARS)))]
    needs_more_info: Option<Vec<String>>,
    /// The proposed issues.
    #[serde(default)]
    proposal: Option<DraftProposal>,
}

/// The model's proposal.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DraftProposal {
    /// The issues.
    #[schemars(length(min = 1, max = crate::limits::PROPOSED_ISSUES))]
    issues: Vec<ProposedIssue>,
}

fn draft_validator() -> Result<&'static jsonschema::Validator, String> {
    static V: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();
    V.get_or_init(|| {
        jsonschema::validator_for(&crate::tools::schema::schema_of::<Draft>())
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The state a proposal is checked against.
pub(crate) struct World {
    pub config: Config,
    pub snapshot: Snapshot,
    pub layout: Layout,
    pub repos: Vec<RepoName>,
}

impl World {
    /// The state repo of `ctx`.
    pub(crate) fn load(ctx: &Context) -> Result<Self, ToolError> {
        let state = |e: Box<dyn std::error::Error + Send + Sync>| ToolError::State(e);
        let layout = Layout::new(&ctx.state_dir);
        let config = Config::load(layout.root(), ctx.env.iter().cloned(), &ctx.overrides)
            .map_err(|e| state(Box::new(e)))?;
        let snapshot = Snapshot::load(&layout).map_err(|e| state(Box::new(e)))?;
        let repos = crate::tools::repositories(&config, &snapshot);
        Ok(Self {
            config,
            snapshot,
            layout,
            repos,
        })
    }

    /// The open milestones, one line each, for the model.
    pub(crate) fn milestones(&self) -> Vec<String> {
        self.snapshot
            .milestones
            .iter()
            .flat_map(|(repo, ms)| ms.iter().map(move |m| (repo, m)))
            .filter(|(_, m)| m.state == crate::domain::OpenState::Open)
            .map(|(repo, m)| {
                let due = m
                    .due_on
                    .map_or_else(String::new, |d| format!(", due {}", d.format("%Y-%m-%d")));
                format!("{} \"{}\" ({repo}{due})", m.id, m.title)
            })
            .collect()
    }

    /// The system prompt's lines naming the repositories and the open milestones.
    pub(crate) fn context_lines(&self) -> String {
        let repos: Vec<String> = self.repos.iter().map(ToString::to_string).collect();
        let m = self.milestones();
        format!(
            "Repositories: {}\nOpen milestones: {}",
            repos.join(", "),
            if m.is_empty() {
                "none".to_owned()
            } else {
                m.join("; ")
            }
        )
    }
}

/// A proposal checked against the state: its issues normalised and in filing order, and its ops.
#[derive(Debug, Clone)]
pub(crate) struct CheckedProposal {
    /// The issues, each after those it depends on, `new:K` renumbered to match.
    pub issues: Vec<ProposedIssue>,
    /// The `create_issue` ops that file them, in the same order, checked.
    pub ops: Vec<Checked>,
}

/// How an error names the `i`-th proposed issue (from 0): for a model, its JSON pointer
/// (`/proposal/issues/1`); for a person in the review tray, its place and title (`issue 2 ("Dark mode:
/// theme switcher")`).
pub(crate) type IssueNamer<'a> = &'a dyn Fn(usize) -> String;

/// The JSON pointer of the `i`-th proposed issue, as a model's errors name it.
pub(crate) fn pointer(i: usize) -> String {
    format!("/proposal/issues/{i}")
}

/// Checks proposed issues against the state as `create_issue` ops; an error names the issue as `name`
/// does, then the field (`/proposal/issues/2/milestone: …`).
pub(crate) fn check_issues(
    world: &World,
    issues: &[ProposedIssue],
    name: IssueNamer<'_>,
) -> Result<CheckedProposal, String> {
    let n = issues.len();
    if n == 0 {
        return Err("/proposal/issues: propose at least one issue".to_owned());
    }
    if n > crate::limits::PROPOSED_ISSUES {
        return Err(format!(
            "/proposal/issues: {n} issues, more than the limit of {}; propose the first steps only",
            crate::limits::PROPOSED_ISSUES
        ));
    }
    // Dependencies: existing issues, and other proposed ones by index.
    let mut news: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut olds: Vec<Vec<IssueRef>> = vec![Vec::new(); n];
    for (i, issue) in issues.iter().enumerate() {
        for (j, d) in issue.deps.iter().flatten().enumerate() {
            let path = format!("{}/deps/{j}", name(i));
            match d {
                ProposedDep::Number(k) => olds[i].push(IssueRef::Number(*k)),
                ProposedDep::Ref(s) => match s.strip_prefix("new:") {
                    Some(k) => {
                        let k: usize = k.parse().unwrap_or(0);
                        if k == 0 || k > n {
                            return Err(format!(
                                "{path}: new:{k} is not an issue of this proposal (new:1 to new:{n})"
                            ));
                        }
                        if k == i + 1 {
                            return Err(format!("{path}: an issue cannot depend on itself"));
                        }
                        news[i].push(k - 1);
                    }
                    None => olds[i].push(IssueRef::Key(s.clone())),
                },
            }
        }
        news[i].sort_unstable();
        news[i].dedup();
    }
    // Filing order: each issue after those it waits for, otherwise as proposed (Kahn, lowest index first).
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    while order.len() < n {
        let Some(next) = (0..n).find(|&i| !placed[i] && news[i].iter().all(|&d| placed[d])) else {
            let stuck: Vec<String> = (0..n)
                .filter(|&i| !placed[i])
                .map(|i| format!("new:{}", i + 1))
                .collect();
            return Err(format!(
                "/proposal/issues: the dependencies between {} make a cycle",
                stuck.join(", ")
            ));
        };
        placed[next] = true;
        order.push(next);
    }
    let position: BTreeMap<usize, usize> =
        order.iter().enumerate().map(|(p, &i)| (i, p + 1)).collect();

    let mut checker = Checker::new(&world.config, &world.snapshot, world.repos.clone());
    let mut out_issues = Vec::with_capacity(n);
    let mut ops = Vec::with_capacity(n);
    for &i in &order {
        let issue = &issues[i];
        let path = name(i);
        let estimate = format!(
            "{}{}",
            crate::domain::Estimate::LABEL_PREFIX,
            issue
                .estimate
                .trim()
                .strip_prefix(crate::domain::Estimate::LABEL_PREFIX)
                .unwrap_or(issue.estimate.trim())
        );
        let priority = issue.priority.as_deref().map(|p| {
            let p = p.trim();
            if p.starts_with(crate::domain::Priority::LABEL_PREFIX) {
                p.to_owned()
            } else {
                format!("{}{p}", crate::domain::Priority::LABEL_PREFIX)
            }
        });
        let repo = match (&issue.repo, issue.milestone, world.repos.as_slice()) {
            (Some(r), _, _) => r.trim().to_owned(),
            (None, Some(m), _) => match world
                .snapshot
                .milestones
                .iter()
                .find(|(_, ms)| ms.iter().any(|x| x.id == m))
            {
                Some((r, _)) => r.to_string(),
                None => return Err(format!("{path}/milestone: there is no milestone {m}")),
            },
            (None, None, [one]) => one.to_string(),
            (None, None, many) => {
                return Err(format!(
                    "{path}/repo: several repositories are configured; say which one ({})",
                    many.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        };
        let mut labels = vec![estimate.clone()];
        labels.extend(priority.clone());
        let op = Op::CreateIssue {
            title: issue.title.clone(),
            body: issue.body.clone(),
            labels,
            milestone: issue.milestone,
            deps: olds[i].clone(),
            repo: Some(repo.clone()),
            depends_on_new: news[i]
                .iter()
                .map(|d| u32::try_from(position[d]).unwrap_or(u32::MAX))
                .collect(),
        };
        // As `apply_changes` will check it when the proposal is filed: two issues of one title in a
        // repository are refused here, not after the review (audit 143).
        let checked = checker
            .check_change(&op, false, &[])
            .map_err(|reason| format!("{path}: {reason}"))?;
        let Op::CreateIssue {
            title,
            deps,
            repo,
            depends_on_new,
            labels,
            ..
        } = &checked.op
        else {
            return Err(format!("{path}: not an issue"));
        };
        let mut deps_out: Vec<ProposedDep> = deps
            .iter()
            .map(|d| ProposedDep::Ref(d.to_string()))
            .collect();
        deps_out.extend(
            depends_on_new
                .iter()
                .map(|k| ProposedDep::Ref(format!("new:{k}"))),
        );
        out_issues.push(ProposedIssue {
            title: title.clone(),
            body: issue.body.clone(),
            estimate: labels
                .iter()
                .find(|l| l.starts_with(crate::domain::Estimate::LABEL_PREFIX))
                .cloned()
                .unwrap_or(estimate),
            priority: labels
                .iter()
                .find(|l| l.starts_with(crate::domain::Priority::LABEL_PREFIX))
                .cloned(),
            deps: (!deps_out.is_empty()).then_some(deps_out),
            milestone: issue.milestone,
            repo: repo.clone(),
        });
        ops.push(checked);
    }
    Ok(CheckedProposal {
        issues: out_issues,
        ops,
    })
}

/// The engine's one line for what filing `proposal` would do.
pub(crate) fn consequence(
    world: &World,
    proposal: &CheckedProposal,
    ctx: &Context,
) -> Result<String, ToolError> {
    let c = crate::tools::apply::consequence_of(
        &world.config,
        &world.snapshot,
        &world.layout,
        &proposal.ops,
        ctx.as_of,
    )?;
    Ok(c.summary)
}

/// The ops that file a checked proposal, for `apply_changes`.
pub(crate) fn ops(proposal: &CheckedProposal) -> Vec<Op> {
    proposal.ops.iter().map(|c| c.op.clone()).collect()
}

/// What the model answered, checked.
enum DraftAnswer {
    Questions(Vec<String>),
    Proposal(CheckedProposal),
}

/// Checks one answer of the model: schema, then state.
fn check_draft(world: &World, v: &Value) -> Result<DraftAnswer, String> {
    let mut v = v.clone();
    // The consequence is the engine's: one the model wrote is dropped, never read.
    if let Some(p) = v.get_mut("proposal").and_then(Value::as_object_mut)
        && p.remove("consequence").is_some()
    {
        tracing::debug!(
            "capture_work: the model wrote a consequence; dropped (the engine computes it)"
        );
    }
    let validator = draft_validator()?;
    crate::tools::schema::validate_with(validator, None, &v).map_err(|e| match e {
        ToolError::Invalid { path, message } => format!("{path}: {message}"),
        other => other.to_string(),
    })?;
    let draft: Draft = serde_json::from_value(v).map_err(|e| format!("/: {e}"))?;
    match (draft.needs_more_info, draft.proposal) {
        (Some(q), None) => {
            let q: Vec<String> = q
                .into_iter()
                .map(|q| q.trim().to_owned())
                .filter(|q| !q.is_empty())
                .collect();
            if q.is_empty() {
                return Err("/needsMoreInfo: the questions are empty".to_owned());
            }
            Ok(DraftAnswer::Questions(q))
        }
        (None, Some(p)) => {
            let checked = check_issues(world, &p.issues, &pointer)?;
            let bytes = serde_json::to_vec(&checked.issues).map_or(0, |b| b.len());
            let budget = crate::limits::answer_budget(crate::tools::CAPTURE_WORK, None) - 512;
            if bytes > budget {
                return Err(format!(
                    "/proposal: {bytes} bytes, over the budget of {budget}: shorter bodies, or fewer issues"
                ));
            }
            Ok(DraftAnswer::Proposal(checked))
        }
        (Some(_), Some(_)) => Err("/: give either needsMoreInfo or proposal, not both".to_owned()),
        (None, None) => Err("/: give needsMoreInfo (questions) or proposal (issues)".to_owned()),
    }
}

/// The rules of capture; the state's repositories, milestones and ladder are appended.
const SYSTEM: &str = "You turn a project manager's braindump into a small set of Gitea issues. Answer with one JSON object and nothing else. Either
{\"needsMoreInfo\": [\"question\", ...]} with at most 5 short questions, when you cannot propose well yet; or
{\"proposal\": {\"issues\": [{\"title\": \"...\", \"body\": \"...\", \"estimate\": \"est/2d\", \"priority\": \"p/2\", \"deps\": [\"new:1\", \"owner/repo#12\"], \"milestone\": 3, \"repo\": \"owner/repo\"}]}}.
Rules: at most 12 issues, the first steps only; a title is one line; a body is Markdown under 1500 characters; the estimate is a median on the ladder below; priority p/0 (drop everything) to p/3 (someday); deps are existing issues (owner/repo#N) or new:K for the K-th issue of your proposal; milestone is an id from the list below; repo is one of the repositories. Write no consequence, date or schedule: CommiTea computes them. To find existing issues, call query_project (view search with filters.query, or view issue).";

/// Runs `capture_work`.
pub(crate) fn capture_work(ctx: &Context, input: CaptureInput) -> Result<CaptureOutput, ToolError> {
    // Spaces only pass the schema's length: refused here, before any model is asked (or found missing).
    if input.braindump.trim().is_empty() {
        return Err(ToolError::invalid(
            "/braindump",
            "is blank: say what the work is, in the person's words",
        ));
    }
    let world = World::load(ctx)?;
    let ladder: Vec<String> = world
        .config
        .estimates
        .ladder
        .iter()
        .map(|e| e.label())
        .collect();
    let system = format!(
        "{SYSTEM}\n{}\nEstimate ladder: {}",
        world.context_lines(),
        ladder.join(", ")
    );
    let answers = input.answers.unwrap_or_default();
    let mut user = format!("Braindump:\n{}\n", input.braindump.trim());
    if !answers.is_empty() {
        user.push_str("\nThe interview so far:\n");
        for a in &answers {
            user.push_str(&format!(
                "Q: {}\nA: {}\n",
                a.question.trim(),
                a.answer.trim()
            ));
        }
    }
    if answers.len() >= MAX_INTERVIEW {
        user.push_str("\nAsk nothing more: propose the issues now.\n");
    }
    let mut words = input.braindump.clone();
    for a in &answers {
        words.push('\n');
        words.push_str(&a.answer);
    }
    let checked = super::agent::draft(ctx, Task::Capture, &system, user, &words, |v| {
        check_draft(&world, v)
    })?;
    match checked {
        DraftAnswer::Questions(q) => Ok(CaptureOutput {
            needs_more_info: Some(q),
            proposal: None,
        }),
        DraftAnswer::Proposal(p) => {
            let consequence = consequence(&world, &p, ctx)?;
            Ok(CaptureOutput {
                needs_more_info: None,
                proposal: Some(Proposal {
                    issues: p.issues,
                    consequence,
                }),
            })
        }
    }
}

/// Interview turns after which the model is told to propose.
const MAX_INTERVIEW: usize = 6;
