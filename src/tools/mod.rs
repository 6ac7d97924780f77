//! The four agent tools — `query_project`, `capture_work`, `apply_changes`, `record_directive` — behind one
//! dispatcher that the CLI (`commitea tool`) and the MCP server (`commitea mcp`) share.
//!
//! Every call is JSON in, JSON out. The input is first checked against the tool's published JSON Schema (so
//! an error names the field, `/filters/limit: 500 is more than the maximum of 100`), then read into
//! typed structs; the answer is a plain serialisable payload whose schema is published too. The schemas are
//! derived from the Rust types with `schemars`, so the documentation and the code cannot drift apart.

pub mod apply;
pub mod mcp;
pub mod query;
pub mod schema;

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// `query_project`.
pub const QUERY_PROJECT: &str = "query_project";
/// `capture_work`.
pub(crate) const CAPTURE_WORK: &str = "capture_work";
/// `apply_changes`.
pub const APPLY_CHANGES: &str = "apply_changes";
/// `record_directive`.
pub(crate) const RECORD_DIRECTIVE: &str = "record_directive";

/// The tool names, in the order they are offered.
pub const NAMES: [&str; 4] = [QUERY_PROJECT, CAPTURE_WORK, APPLY_CHANGES, RECORD_DIRECTIVE];

/// The byte budget of one tool answer (compact JSON), sized for a 4B model's context; see `docs/models.md`.
/// `view` is `query_project`'s view.
pub fn answer_budget(tool: &str, view: Option<&str>) -> usize {
    crate::limits::answer_budget(tool, view)
}

/// Where and when the tools run.
#[derive(Debug, Clone)]
pub struct Context {
    /// The state repo.
    pub state_dir: PathBuf,
    /// Environment variables (`COMMITEA_*` overrides are read from these).
    pub env: Vec<(String, String)>,
    /// The wall clock for the time written into op files and ledger entries; `None` reads the system clock
    /// at each call (the edge), a fixed time makes the output reproducible.
    pub clock: Option<DateTime<Utc>>,
    /// Who is asking (a Gitea username), written into op files.
    pub by: Option<String>,
    /// Whether a model makes the calls (`commitea ask`, MCP): what it writes is marked as a model's and
    /// always goes through a pull request.
    pub model: bool,
    /// Flag overrides of the config (`--seed`, `--trials`).
    pub overrides: crate::config::Overrides,
    /// The moment forecasts are as of (`--now`); default: [`crate::pipeline::day_zero`].
    pub as_of: Option<DateTime<Utc>>,
    /// Proposes what a write tool wrote at once (`approvals.propose_on_write`): pushes it and opens its
    /// pull request; answers one line per proposal.
    pub proposer: Option<Proposer>,
    /// The last forecast the tools computed, kept while what it was computed from is unchanged (an
    /// `ask` or an MCP session reads many views of one state).
    pub memo: Memo,
    /// Set when the caller cancelled the call (MCP's `notifications/cancelled`): a write tool checks it
    /// before writing anything.
    pub cancel: crate::state::Cancel,
    /// What the model calls of the conversation this call is part of have spent (an `ask` that calls
    /// `capture_work`): the big model's calls count against the same bounds.
    pub spent: crate::model::Spent,
}

/// The tools' last computed forecast, keyed by a fingerprint of what it was computed from; shared by
/// the clones of a context.
#[derive(Clone, Default)]
pub struct Memo(pub(crate) std::sync::Arc<std::sync::Mutex<Option<Memoised>>>);

/// A fingerprint of a state and the forecast computed from it.
pub(crate) type Memoised = (u64, std::sync::Arc<crate::pipeline::Computed>);

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}

/// What proposes the checkout's op files and directives (set by the command line, which can reach the
/// server).
#[derive(Clone)]
pub struct Proposer(pub std::sync::Arc<dyn Fn() -> Result<Vec<String>, String> + Send + Sync>);

impl std::fmt::Debug for Proposer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Proposer")
    }
}

impl Context {
    /// A context on a state repo with the system clock and no environment overrides.
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        Self {
            state_dir: state_dir.into(),
            env: Vec::new(),
            clock: None,
            by: None,
            model: false,
            overrides: crate::config::Overrides::default(),
            as_of: None,
            proposer: None,
            memo: Memo::default(),
            cancel: crate::state::Cancel::default(),
            spent: crate::model::Spent::default(),
        }
    }

    /// The time of this call.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.unwrap_or_else(Utc::now)
    }
}

/// Why a tool call failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// No tool of that name.
    #[error(
        "unknown tool \"{0}\" (the tools are query_project, capture_work, apply_changes and record_directive)"
    )]
    UnknownTool(String),
    /// The input is not JSON.
    #[error("the input is not valid JSON: {0}")]
    BadJson(String),
    /// The input does not fit the tool's schema or the state; `path` is a JSON pointer into the input.
    #[error("invalid input at {path}: {message}")]
    Invalid {
        /// JSON pointer of the field (`/filters/limit`), `/` for the whole input.
        path: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// The model a call needs is not configured (`capture_work`, a `say` negotiation); the message names
    /// the setting.
    #[error("{0}")]
    NoModel(String),
    /// The model failed: unreachable, too slow, an error status, a reply cut at its token limit, a draft
    /// still invalid after its repair round.
    #[error(transparent)]
    Model(crate::model::ModelError),
    /// The state repo could not be read or written (the cause is kept).
    #[error("{0}")]
    State(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The caller cancelled the call before anything was written.
    #[error("cancelled before anything was written")]
    Cancelled,
}

impl From<crate::model::ModelError> for ToolError {
    fn from(e: crate::model::ModelError) -> Self {
        match e {
            crate::model::ModelError::NoModel { .. } => Self::NoModel(e.to_string()),
            other => Self::Model(other),
        }
    }
}

impl ToolError {
    /// Whether the caller's input is at fault (exit code 2 on the CLI), rather than the state repo.
    pub fn is_input(&self) -> bool {
        match self {
            Self::UnknownTool(_) | Self::BadJson(_) | Self::Invalid { .. } | Self::NoModel(_) => {
                true
            }
            // A setting refused (commitea.yaml, a COMMITEA_* variable) is the caller's input, as it is
            // for `plan` and `run` (audit 120: `tool` exited 1 where the README says 2).
            Self::State(e) => {
                e.downcast_ref::<crate::config::ConfigError>().is_some()
                    || matches!(
                        e.downcast_ref::<crate::pipeline::PipelineError>(),
                        Some(crate::pipeline::PipelineError::Config(_))
                    )
                    || matches!(
                        e.downcast_ref::<crate::ledger::record::RecordError>(),
                        Some(crate::ledger::record::RecordError::Config(_))
                    )
            }
            Self::Model(_) | Self::Cancelled => false,
        }
    }

    /// The error as a JSON object, for callers that want structure: `{error: {kind, message, path?}}`.
    pub(crate) fn to_json(&self) -> Value {
        let kind = match self {
            Self::UnknownTool(_) => "unknown_tool",
            Self::BadJson(_) => "bad_json",
            Self::Invalid { .. } => "invalid_input",
            Self::NoModel(_) => "no_model",
            Self::Model(_) => "model",
            Self::State(_) => "state",
            Self::Cancelled => "cancelled",
        };
        let mut e = serde_json::Map::new();
        e.insert("kind".into(), kind.into());
        e.insert("message".into(), self.short_message().into());
        if let Self::Invalid { path, .. } = self {
            e.insert("path".into(), path.clone().into());
        }
        serde_json::json!({ "error": e })
    }

    /// The message, cut to [`crate::limits::ERROR_CHARS`]: an error is short, and never echoes an input.
    pub fn short_message(&self) -> String {
        crate::prose::clip(&self.to_string(), crate::limits::ERROR_CHARS)
    }

    /// An input error at `path`.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// One tool as it is offered: name, description and the JSON Schemas of its input and output.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// JSON Schema (draft 2020-12) of the input object.
    pub input_schema: Value,
    /// JSON Schema of the output object.
    pub output_schema: Value,
}

/// The four tools with their schemas.
pub fn specs() -> Vec<ToolSpec> {
    schema::specs()
}

/// Calls a tool with JSON text (the CLI's and MCP's form); bad JSON is an input error.
pub fn call_str(ctx: &Context, name: &str, input: &str) -> Result<Value, ToolError> {
    too_big(input.len())?;
    let value: Value =
        serde_json::from_str(input).map_err(|e| ToolError::BadJson(e.to_string()))?;
    call(ctx, name, &value)
}

/// Refuses an input over [`crate::limits::INPUT_BYTES`].
fn too_big(bytes: usize) -> Result<(), ToolError> {
    if bytes > crate::limits::INPUT_BYTES {
        return Err(ToolError::invalid(
            "/",
            format!(
                "the input is {bytes} bytes, more than the limit of {} for one call; split it",
                crate::limits::INPUT_BYTES
            ),
        ));
    }
    Ok(())
}

/// Calls a tool: checks the input against its schema, runs it, returns its JSON answer.
pub fn call(ctx: &Context, name: &str, input: &Value) -> Result<Value, ToolError> {
    if !NAMES.contains(&name) {
        return Err(ToolError::UnknownTool(crate::limits::excerpt(name)));
    }
    too_big(serde_json::to_vec(input).map_or(0, |v| v.len()))?;
    let input = &schema::whole_numbers(input.clone());
    schema::validate(name, input).map_err(|e| milestone_by_title(ctx, input, e))?;
    let answer = match name {
        QUERY_PROJECT => to_value(&query::query_project(ctx, schema::read(input)?)?)?,
        APPLY_CHANGES => {
            let mut out = apply::apply_changes(ctx, schema::read(input)?)?;
            if out.ops_file.is_some() {
                out.proposed = propose(ctx);
            }
            apply::fit(&mut out, crate::limits::answer_budget(APPLY_CHANGES, None));
            to_value(&out)?
        }
        RECORD_DIRECTIVE => {
            let input: schema::RecordToolInput = schema::read(input)?;
            let mut out = match input.say.clone() {
                Some(say) => negotiate(ctx, &say, input)?,
                None => {
                    let mut out = record_directive(ctx, record_input(input)?)?;
                    out.proposed = propose(ctx);
                    out
                }
            };
            fit_consequence(
                &mut out,
                crate::limits::answer_budget(RECORD_DIRECTIVE, None),
            );
            to_value(&out)?
        }
        CAPTURE_WORK => to_value(&crate::model::capture::capture_work(
            ctx,
            schema::read(input)?,
        )?)?,
        _ => return Err(ToolError::UnknownTool(name.to_owned())),
    };
    Ok(answer)
}

/// A schema error at a `milestone` given as a title, told which id that title is (audit 184: "expected
/// an integer or null, got a string", and no milestone named). Any other error is left as it is.
fn milestone_by_title(ctx: &Context, input: &Value, e: ToolError) -> ToolError {
    let ToolError::Invalid { path, message } = e else {
        return e;
    };
    let title = (path.ends_with("/milestone"))
        .then(|| input.pointer(&path).and_then(Value::as_str))
        .flatten();
    let hint = title.and_then(|title| {
        let snapshot =
            crate::state::Snapshot::load(&crate::state::Layout::new(&ctx.state_dir)).ok()?;
        let all: Vec<(&crate::domain::RepoName, &crate::domain::Milestone)> = snapshot
            .milestones
            .iter()
            .flat_map(|(r, ms)| ms.iter().map(move |m| (r, m)))
            .collect();
        let titled: Vec<_> = all
            .iter()
            .filter(|(_, m)| crate::plan::is_titled(&m.title, title))
            .collect();
        let open: Vec<_> = titled
            .iter()
            .filter(|(_, m)| m.state == crate::domain::OpenState::Open)
            .collect();
        Some(match (open.as_slice(), titled.as_slice()) {
            ([(_, m)], _) => format!("; give the id: \"{}\" is milestone {}", m.title, m.id),
            ([], [(_, m)]) => format!(
                "; \"{}\" is milestone {}, which is closed on Gitea: reopen it there first, or choose an \
                 open one",
                m.title, m.id
            ),
            // A number in quotes that titles none: the number it is (audit 195: "no milestone is titled
            // \"4\""); one that titles a milestone is that one (audit 197: "1" was told to be id 1).
            ([], []) if title.trim().parse::<u64>().is_ok() => {
                let n = title.trim();
                format!("; give the id as a number: {n}, not \"{n}\"")
            }
            ([], []) => {
                let ids: Vec<String> = all
                    .iter()
                    .filter(|(_, m)| m.state == crate::domain::OpenState::Open)
                    .map(|(_, m)| format!("{} ({})", m.id, m.title))
                    .collect();
                if ids.is_empty() {
                    "; a milestone is given by its id, and there are no open milestones".to_owned()
                } else {
                    format!(
                        "; a milestone is given by its id, and no milestone is titled \"{}\": the open ones are {}",
                        crate::limits::excerpt(title),
                        ids.join(", ")
                    )
                }
            }
            (several, _) => format!(
                "; give the id: \"{}\" is {}",
                crate::limits::excerpt(title),
                several
                    .iter()
                    .map(|(r, m)| format!("milestone {} in {r}", m.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
    });
    ToolError::Invalid {
        message: format!("{message}{}", hint.unwrap_or_default()),
        path,
    }
}

/// The directive of a `record_directive` call that is not a negotiation.
fn record_input(
    input: schema::RecordToolInput,
) -> Result<crate::ledger::record::RecordInput, ToolError> {
    Ok(crate::ledger::record::RecordInput {
        kind: input
            .kind
            .ok_or_else(|| ToolError::invalid("/kind", "missing the field kind (or give say)"))?,
        quote: input
            .quote
            .ok_or_else(|| ToolError::invalid("/quote", "missing the field quote (or give say)"))?,
        target: input.target,
        params: input.params,
        rationale: input.rationale,
        by: input.by,
    })
}

/// A negotiation: the big model drafts the directive from the PM's words, CommiTea checks it and computes
/// its consequence; nothing is recorded.
fn negotiate(
    ctx: &Context,
    say: &str,
    input: schema::RecordToolInput,
) -> Result<schema::RecordAnswer, ToolError> {
    if input.kind.is_some()
        || input.quote.is_some()
        || input.target.is_some()
        || input.params.is_some()
    {
        return Err(ToolError::invalid(
            "/say",
            "give either say (the PM's words, to draft from) or kind and quote (a directive), not both",
        ));
    }
    let by = caller(ctx, input.by)?;
    let mut n = crate::model::negotiate::negotiate(ctx, say)?;
    if n.draft.by.is_none() || ctx.model {
        n.draft.by = by;
    }
    Ok(schema::RecordAnswer {
        directive_id: None,
        draft: Some(n.draft),
        consequence: n.preview.consequence,
        consequence_omitted: 0,
        summary: n.preview.summary,
        as_of: n.preview.detail.as_of.map(|d| d.to_string()),
        ops_file: None,
        proposed: Vec::new(),
    })
}

/// Cuts a directive's consequence to the answer's budget, biggest moves kept (milestones first, as the
/// diff orders them), and says how many were left out.
fn fit_consequence(out: &mut schema::RecordAnswer, budget: usize) {
    let size = |o: &schema::RecordAnswer| serde_json::to_vec(o).map_or(0, |v| v.len());
    let total = out.consequence.len();
    while size(out) > budget && !out.consequence.is_empty() {
        out.consequence.pop();
        out.consequence_omitted = total - out.consequence.len();
    }
}

/// Proposes what was just written, when the context can (see [`Context::proposer`]); a failure to propose
/// leaves the files in the checkout for `commitea propose` and is said in the answer.
fn propose(ctx: &Context) -> Vec<String> {
    match &ctx.proposer {
        None => Vec::new(),
        Some(p) => match (p.0)() {
            Ok(lines) => lines,
            Err(e) => vec![format!(
                "not proposed yet ({}); `commitea propose` will",
                // Long enough for the reason, not only the request (an audit saw it cut at the URL).
                crate::prose::one_line(&crate::limits::excerpt_long(&e))
            )],
        },
    }
}

/// The repositories bare issue numbers resolve against: the configured ones, else the snapshot's.
pub fn repositories(
    config: &crate::config::Config,
    snapshot: &crate::state::Snapshot,
) -> Vec<crate::domain::RepoName> {
    if config.repositories.is_empty() {
        snapshot
            .meta
            .repositories
            .iter()
            .map(|r| r.name.clone())
            .collect()
    } else {
        config.repositories.clone()
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, ToolError> {
    serde_json::to_value(v)
        .map_err(|e| ToolError::State(format!("could not serialise the answer: {e}").into()))
}

/// Who a directive is recorded as: the `by` a call gives, else the context's. A model's call (`ask`,
/// MCP) records as the person the session was started for (`--by`), never as whoever the model names:
/// text planted in an issue could otherwise put a decision in a PM's name.
fn caller(ctx: &Context, given: Option<String>) -> Result<Option<String>, ToolError> {
    match given {
        Some(b) if ctx.model && ctx.by.as_deref() != Some(b.as_str()) => Err(ToolError::invalid(
            "/by",
            format!(
                "an agent records as the person its session is for ({}), not as \"{}\"; leave by out",
                ctx.by.as_deref().map_or_else(
                    || "nobody named: start it with --by".to_owned(),
                    str::to_owned
                ),
                crate::limits::excerpt(&b)
            ),
        )),
        Some(b) => Ok(Some(b)),
        None => Ok(ctx.by.clone()),
    }
}

/// `record_directive`, wired to the ledger module.
fn record_directive(
    ctx: &Context,
    mut input: crate::ledger::record::RecordInput,
) -> Result<schema::RecordAnswer, ToolError> {
    input.by = caller(ctx, input.by.take())?;
    let options = crate::ledger::record::RecordOptions {
        clock: ctx.now(),
        env: ctx.env.clone(),
        overrides: ctx.overrides.clone(),
        as_of: ctx.as_of,
        model: ctx.model,
        cancel: ctx.cancel.clone(),
    };
    crate::ledger::record::record_directive(&ctx.state_dir, &input, &options)
        .map(|o| schema::RecordAnswer {
            directive_id: Some(o.directive_id),
            draft: None,
            consequence: o.consequence,
            consequence_omitted: 0,
            summary: o.summary,
            as_of: o.detail.as_of.map(|d| d.to_string()),
            ops_file: o.ops_file,
            proposed: Vec::new(),
        })
        .map_err(|e| match e {
            crate::ledger::record::RecordError::Invalid { field, message } => {
                ToolError::invalid(format!("/{field}"), message)
            }
            crate::ledger::record::RecordError::Cancelled => ToolError::Cancelled,
            other => ToolError::State(Box::new(other)),
        })
}
