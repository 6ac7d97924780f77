//! The tools' JSON Schemas: derived from the Rust types, published by `commitea tool --list`, MCP's
//! `tools/list` and `docs/tools.md`, and used to check every input before it is read.

use std::collections::HashMap;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{APPLY_CHANGES, CAPTURE_WORK, QUERY_PROJECT, RECORD_DIRECTIVE, ToolError, ToolSpec};
use crate::ledger::record::{ConsequencePair, RecordInput};

/// `capture_work`'s input: a braindump and the interview so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaptureInput {
    /// What the person said, as they said it.
    #[schemars(length(min = 1, max = crate::limits::BRAINDUMP_CHARS))]
    pub braindump: String,
    /// The interview turns so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::ANSWERS))]
    pub answers: Option<Vec<Answer>>,
}

/// One interview turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// The question asked.
    #[schemars(length(max = crate::limits::ANSWER_CHARS))]
    pub question: String,
    /// The person's answer.
    #[schemars(length(max = crate::limits::ANSWER_CHARS))]
    pub answer: String,
}

/// `capture_work`'s answer: follow-up questions, or a proposed issue set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CaptureOutput {
    /// Follow-up questions, shown as chips; answer them and call again with `answers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_more_info: Option<Vec<String>>,
    /// The proposed issues, for the review tray; filed later with apply_changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Proposal>,
}

/// A proposed issue set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Proposal {
    /// The issues, in an order that files each after those it depends on.
    pub issues: Vec<ProposedIssue>,
    /// One line: the schedule impact, computed by the engine (never by the model).
    pub consequence: String,
}

/// One proposed issue: the seed's fields, plus `repo` where several repositories are configured. It maps
/// onto one `create_issue` op: `labels` are the estimate and the priority, a `deps` entry `new:K` is
/// `dependsOnNew: [K]`, the others are `deps`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposedIssue {
    /// Title (one line).
    #[schemars(length(min = 1, max = crate::limits::TITLE_CHARS))]
    pub title: String,
    /// Body, Markdown.
    #[serde(default)]
    #[schemars(length(max = crate::limits::PROPOSED_BODY_CHARS))]
    pub body: String,
    /// `est/2d`, a rung of the configured ladder.
    #[schemars(regex(pattern = r"^(est/)?[0-9]+[hdw]$"))]
    pub estimate: String,
    /// `p/0` (drop everything) to `p/3` (someday).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(p/)?[0-3]$"))]
    pub priority: Option<String>,
    /// What it waits for: existing issues (`owner/repo#N`, or `N` with one repository) or other proposed
    /// issues, `new:K` for the K-th of this proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::LIST_ITEMS))]
    pub deps: Option<Vec<ProposedDep>>,
    /// Gitea's milestone id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub milestone: Option<u64>,
    /// `owner/repo` to file it in; default: its milestone's repository, or the only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::NAME_CHARS))]
    pub repo: Option<String>,
}

/// A proposed issue's dependency: an existing issue, or `new:K`, the K-th issue of the same proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ProposedDep {
    /// An existing issue's number (one repository configured).
    Number(#[schemars(range(min = 1))] u64),
    /// `owner/repo#N`, `#N`, or `new:K`.
    Ref(
        #[schemars(regex(
            pattern = r"^(new:[1-9][0-9]*|([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#|#)?[0-9]+)$"
        ))]
        String,
    ),
}

impl std::fmt::Display for ProposedDep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::Ref(s) => f.write_str(s),
        }
    }
}

/// `record_directive`'s input: a directive with the PM's verbatim quote — or only the PM's words (`say`),
/// for the big model to draft one from (nothing is recorded then: the answer is the draft and its
/// consequence, and calling again with the draft records it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
// No `oneOf` of kind-and-quote or say at the root: hosts on Anthropic's API refuse a tool whose input
// schema has a combinator there (an audit's finding). The tool says which is missing, or that both came.
pub(crate) struct RecordToolInput {
    /// `reprioritize`, `reestimate`, `set-deadline`, `scope`, `capacity` or `note`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["reprioritize", "reestimate", "set-deadline", "scope", "capacity", "note"]))]
    pub kind: Option<String>,
    /// The PM's words, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::QUOTE_CHARS))]
    pub quote: Option<String>,
    /// What the directive is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<crate::ledger::record::RecordTarget>,
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
    /// Instead of the fields above: what the PM said, for the big model to draft the directive from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::SAY_CHARS))]
    pub say: Option<String>,
}

/// `record_directive`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecordAnswer {
    /// The new directive's id, `D-0009`; absent for a draft (`say`), which records nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directive_id: Option<String>,
    /// The directive the big model drafted from `say`, checked: record it by calling again with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<RecordInput>,
    /// The milestones and the moved issues, before and after, biggest move first; cut to the answer's
    /// budget (see `consequenceOmitted`).
    pub consequence: Vec<ConsequencePair>,
    /// Subjects left out of `consequence` to keep the answer within its budget: "and N more".
    #[serde(default, skip_serializing_if = "crate::views::is_zero")]
    pub consequence_omitted: usize,
    /// One line for a person.
    pub summary: String,
    /// Day 0 of the forecast the consequence is of: its dates are as of this day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// The proposed op file, if the directive has Gitea-side effects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_file: Option<String>,
    /// Where the directive went, when the server proposes on write: `D-0009 pull-request 12 commitea/D-0009`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proposed: Vec<String>,
}

const QUERY_DESCRIPTION: &str = "Read the project. view selects the payload: focus (now/next/later with rationales), issue (needs filters.issueId), milestone (needs filters.milestoneId: due, hard, stats, cone p10/p50/p80, issues), board (five lifecycle columns), runway (milestone bands p50/p80 and slack, capacity), calibration, directives (pending consequence, recent ledger entries), standup (drift, per-person plan, stale blockers), search (needs filters.query). Filters: issueId (a number, or owner/repo#N when several repositories are configured), milestoneId, state, assignee, label, query, limit (default 20, max 100). Forecasts are ranges, never single dates; every number comes from the engine.";
const CAPTURE_DESCRIPTION: &str = "Turn a braindump into a proposed issue set on the big model: answers needsMoreInfo (follow-up questions: ask the person, call again with answers) or a proposal {issues: [{title, body, estimate, priority?, deps?, milestone?, repo?}], consequence} whose consequence the engine computed. Never files anything: file the reviewed proposal with apply_changes create_issue ops (source: capture_work; a deps entry new:K is dependsOnNew: [K]).";
const APPLY_DESCRIPTION: &str = "Propose changes to Gitea as one op file under ops/pending/ for review: create_issue, set_estimate, set_priority, set_milestone, set_deadline_hard, add_dep, and the destructive remove_dep, close_issue, remove_label (these need approved: true; preview: true answers the consequence of the ops, destructive ones included, writing nothing — show it to the person before asking). An op that changes nothing (Gitea has it already, an earlier op of the call changes the same thing, a pending op file proposes it) is rejected. Returns {applied, consequence, detail, rejected?} ({previewed, consequence, detail, rejected?} for a preview): consequence in one line, detail before/after per milestone and moved issue (biggest moves first, cut to the budget), each rejected op with its reason. The op file is a proposal: Gitea, runs and the site see it only once its pull request is merged (proposed says where it went; without it, `commitea propose` opens the pull request).";
const RECORD_DESCRIPTION: &str = "Record a PM directive (reprioritize, reestimate, set-deadline, scope, capacity, note) in the ledger pm-state.md with the PM's verbatim quote; returns the consequence diff (before/after per milestone and moved issue, cut to the biggest moves) and a one-line summary. Or give only {say: the PM's words}: the big model drafts the directive, CommiTea checks it and answers the draft with its consequence, recording nothing; call again with the draft to record it. Does not change Gitea. The ledger entry is a proposal in the checkout: runs and the site count it only once it is merged (proposed says where it went; without it, `commitea propose` opens the pull request), while query_project reads the checkout and shows it at once.";

/// The JSON Schema (draft 2020-12) of `T`, as the tools and the models' drafts are checked against.
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// The four tools with their schemas.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: QUERY_PROJECT,
            description: QUERY_DESCRIPTION,
            input_schema: schema_of::<super::query::QueryInput>(),
            output_schema: schema_of::<super::query::QueryOutput>(),
        },
        ToolSpec {
            name: CAPTURE_WORK,
            description: CAPTURE_DESCRIPTION,
            input_schema: schema_of::<CaptureInput>(),
            output_schema: schema_of::<CaptureOutput>(),
        },
        ToolSpec {
            name: APPLY_CHANGES,
            description: APPLY_DESCRIPTION,
            input_schema: schema_of::<super::apply::ApplyInput>(),
            output_schema: schema_of::<super::apply::ApplyOutput>(),
        },
        ToolSpec {
            name: RECORD_DIRECTIVE,
            description: RECORD_DESCRIPTION,
            input_schema: schema_of::<RecordToolInput>(),
            output_schema: schema_of::<RecordAnswer>(),
        },
    ]
}

/// Each tool's compiled input schema, with the schema itself (an error names the fields there are).
type Validators = HashMap<&'static str, (Result<jsonschema::Validator, String>, Value)>;

fn validators() -> &'static Validators {
    static V: OnceLock<Validators> = OnceLock::new();
    V.get_or_init(|| {
        specs()
            .into_iter()
            .map(|s| {
                (
                    s.name,
                    (
                        jsonschema::validator_for(&s.input_schema).map_err(|e| e.to_string()),
                        s.input_schema,
                    ),
                )
            })
            .collect()
    })
}

/// The fields the object at `schema_path` (an `additionalProperties` check's place in `schema`) takes,
/// following `$ref`s; `None` where the path does not lead to one.
fn fields_at(schema: &Value, schema_path: &str) -> Option<Vec<String>> {
    let mut node = schema;
    let segments: Vec<&str> = schema_path.split('/').filter(|s| !s.is_empty()).collect();
    let (_, parents) = segments.split_last()?;
    for seg in parents {
        if *seg == "$ref" {
            let target = node.get("$ref")?.as_str()?.strip_prefix('#')?;
            node = schema.pointer(target)?;
        } else {
            node = node.get(*seg)?;
        }
    }
    if let Some(target) = node.get("$ref").and_then(Value::as_str) {
        node = schema.pointer(target.strip_prefix('#')?)?;
    }
    let fields: Vec<String> = node
        .get("properties")?
        .as_object()?
        .keys()
        .cloned()
        .collect();
    (!fields.is_empty()).then_some(fields)
}

/// `v` with every number that is a whole number written with a fraction (`5.0`) as the integer it is:
/// JSON Schema counts it an integer, and hosts whose model API keeps numbers as doubles send every integer
/// so, which the tools refused field by field (an audit's finding).
pub(crate) fn whole_numbers(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            // Exact below 2^53: the cast keeps the value.
            .map_or(Value::Number(n), |f| Value::from(f as i64)),
        Value::Array(a) => Value::Array(a.into_iter().map(whole_numbers).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k, whole_numbers(v))).collect())
        }
        other => other,
    }
}

/// Checks an input against the tool's schema; the error names the field by JSON pointer, gives the limit
/// or the valid values, and quotes at most a short excerpt of the input.
pub(crate) fn validate(name: &str, input: &Value) -> Result<(), ToolError> {
    let (v, schema) = match validators().get(name) {
        Some((Ok(v), schema)) => (v, schema),
        Some((Err(e), _)) => {
            return Err(ToolError::State(
                format!("the schema of {name} is broken: {e}").into(),
            ));
        }
        None => return Err(ToolError::UnknownTool(name.to_owned())),
    };
    validate_with(v, Some(schema), input)
}

/// Checks `input` against a compiled schema (`schema` its source, for naming the fields there are);
/// the error is [`validate`]'s.
pub(crate) fn validate_with(
    v: &jsonschema::Validator,
    schema: Option<&Value>,
    input: &Value,
) -> Result<(), ToolError> {
    let mut errors: Vec<(String, String)> =
        v.iter_errors(input).map(|e| describe(&e, schema)).collect();
    if errors.is_empty() {
        return Ok(());
    }
    // The deepest error is the most specific.
    errors.sort_by(|a, b| {
        b.0.matches('/')
            .count()
            .cmp(&a.0.matches('/').count())
            .then(a.cmp(b))
    });
    errors.dedup();
    let (path, first) = errors.swap_remove(0);
    let more = errors.len();
    let message = if more > 0 {
        format!(
            "{first} (and {})",
            crate::prose::count(more, "more problem", "more problems")
        )
    } else {
        first
    };
    Err(ToolError::Invalid { path, message })
}

/// A JSON value shown in an error: a short excerpt, never the whole input.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{}\"", crate::limits::excerpt(s)),
        Value::Array(a) => format!("a list of {}", a.len()),
        Value::Object(_) => "an object".to_owned(),
        other => crate::limits::excerpt(&other.to_string()),
    }
}

/// The kind of a JSON value, in words.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A JSON Schema type name with its article, as [`kind_of`] says a value's: `integer` → "an integer".
fn a_type(name: &str) -> String {
    match name {
        "null" => "null".to_owned(),
        "array" => "a list".to_owned(),
        "integer" | "object" => format!("an {name}"),
        other => format!("a {other}"),
    }
}

/// One validation error as (JSON pointer, message), in words a caller can act on.
fn describe(e: &jsonschema::ValidationError<'_>, schema: Option<&Value>) -> (String, String) {
    use jsonschema::error::ValidationErrorKind as K;
    let path = match e.instance_path().to_string() {
        p if p.is_empty() => "/".to_owned(),
        p => p,
    };
    let instance: &Value = e.instance();
    let message = match e.kind() {
        K::MaxLength { limit } => match instance {
            Value::String(s) => format!(
                "{} characters, more than the limit of {limit} (\"{}\")",
                s.chars().count(),
                crate::limits::excerpt(s)
            ),
            _ => format!("longer than the limit of {limit}"),
        },
        K::MinLength { .. } => "must not be empty".to_owned(),
        K::MaxItems { limit } => format!(
            "{} items, more than the limit of {limit} in one call",
            instance.as_array().map_or(0, Vec::len)
        ),
        K::MinItems { limit } => format!("needs at least {limit}"),
        K::Enum { options } => format!(
            "{} is not one of the valid values: {}",
            shown(instance),
            options
                .as_array()
                .map(|o| o
                    .iter()
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_default()
        ),
        K::Constant { expected_value } => {
            format!("{} is not {expected_value}", shown(instance))
        }
        // A fraction where a whole number or a key is wanted (audit 122: issueId 102.5 answered
        // "expected a string, got a number", though 102 is taken).
        K::Type { .. } if instance.as_f64().is_some_and(|x| x.fract() != 0.0) => {
            format!("{} is not a whole number", shown(instance))
        }
        K::Type { kind } => {
            // "expected an integer or null", never the library's debug form.
            let mut names: Vec<String> = match kind {
                jsonschema::error::TypeKind::Single(t) => vec![t.to_string()],
                jsonschema::error::TypeKind::Multiple(set) => {
                    set.into_iter().map(|t| t.to_string()).collect()
                }
            };
            // null last: "an integer or null" reads as "a number, or leave it out".
            names.sort_by_key(|n| n == "null");
            let names: Vec<String> = names.iter().map(|n| a_type(n)).collect();
            format!("expected {}, got {}", names.join(" or "), kind_of(instance))
        }
        K::Required { property } => format!("missing the field {property}"),
        K::AdditionalProperties { unexpected } => format!(
            "unknown field{} {}{}",
            if unexpected.len() == 1 { "" } else { "s" },
            unexpected
                .iter()
                .map(|u| format!("\"{}\"", crate::limits::excerpt(u)))
                .collect::<Vec<_>>()
                .join(", "),
            schema
                .and_then(|s| fields_at(s, &e.schema_path().to_string()))
                .map(|f| format!("; the fields here are {}", f.join(", ")))
                .unwrap_or_default()
        ),
        K::Maximum { limit } => format!("{} is more than the maximum of {limit}", shown(instance)),
        K::Minimum { limit } => format!("{} is less than the minimum of {limit}", shown(instance)),
        // The patterns of issue references, in words.
        K::Pattern { pattern } if pattern.starts_with("^(new:") => format!(
            "{} is not an issue: write owner/repo#N, #N or N (or new:K for the K-th new issue)",
            shown(instance)
        ),
        K::Pattern { pattern } if pattern.ends_with("#|#)?[0-9]+$") => format!(
            "{} is not an issue: write owner/repo#N, #N or N",
            shown(instance)
        ),
        K::Pattern { pattern } => format!("{} does not match {pattern}", shown(instance)),
        K::OneOfNotValid { context } | K::AnyOf { context } => {
            return one_of(&path, instance, context);
        }
        K::OneOfMultipleValid { .. } => {
            "fits more than one of the allowed shapes: give one".to_owned()
        }
        _ => crate::limits::excerpt(&e.to_string()),
    };
    (path, message)
}

/// Why a value fits none of a `oneOf`/`anyOf`'s alternatives. For an op (an object with `op`), the
/// alternative its `op` names is the one meant: say what is wrong with it, or that the op is unknown.
fn one_of(
    path: &str,
    instance: &Value,
    context: &[Vec<jsonschema::ValidationError<'static>>],
) -> (String, String) {
    // An op is `/ops/N` itself, not an object inside one (audit 190: `"issue": {"n": 3}` was told
    // "missing the field op" at `/ops/0/issue/op`).
    let is_op = path
        .strip_prefix("/ops/")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if let Some(obj) = instance.as_object()
        && is_op
    {
        let op_path = format!("{path}/op");
        let names = crate::ops::Op::NAMES.join(", ");
        match obj.get("op") {
            Some(Value::String(op)) if crate::ops::Op::NAMES.contains(&op.as_str()) => {
                // The alternative whose `op` matched is the one without an error at `/op`.
                let meant = context.iter().find(|errs| {
                    !errs
                        .iter()
                        .any(|e| e.instance_path().to_string() == op_path)
                });
                if let Some(first) = meant.and_then(|errs| {
                    errs.iter()
                        .map(|e| describe(e, None))
                        .max_by_key(|(p, _)| p.matches('/').count())
                }) {
                    return first;
                }
            }
            Some(other) => {
                return (
                    op_path,
                    format!("{} is not an op; the ops are {names}", shown(other)),
                );
            }
            None => {
                return (
                    op_path,
                    format!("missing the field \"op\"; the ops are {names}"),
                );
            }
        }
    }
    // A closed set written as one `const` per alternative (a documented enum): list the values.
    let consts: Option<Vec<String>> = context
        .iter()
        .map(|errs| {
            // A value of the wrong type fails an alternative twice (its type and the const): the const
            // says what was meant.
            errs.iter().find_map(|e| match e.kind() {
                jsonschema::error::ValidationErrorKind::Constant { expected_value } => Some(
                    expected_value
                        .as_str()
                        .map_or_else(|| expected_value.to_string(), str::to_owned),
                ),
                _ => None,
            })
        })
        .collect();
    if let Some(values) = consts.filter(|v| !v.is_empty()) {
        return (
            path.to_owned(),
            format!(
                "{} is not one of the valid values: {}",
                shown(instance),
                values.join(", ")
            ),
        );
    }
    // Otherwise the alternative that got furthest; of an optional field's two (the value, or null), the
    // value's: "expected null" would read as if null were the only thing allowed.
    let only_null = |e: &jsonschema::ValidationError<'_>| {
        matches!(
            e.kind(),
            jsonschema::error::ValidationErrorKind::Type {
                kind: jsonschema::error::TypeKind::Single(jsonschema::JsonType::Null)
            }
        )
    };
    // And of the rest, one that took the value's type: its complaint is about the value itself.
    let type_only = |errs: &Vec<jsonschema::ValidationError<'static>>| {
        errs.iter().all(|e| {
            matches!(
                e.kind(),
                jsonschema::error::ValidationErrorKind::Type { .. }
            )
        })
    };
    let best = context
        .iter()
        .filter_map(|errs| {
            let rank = (!errs.iter().any(only_null), !type_only(errs));
            errs.iter()
                .map(|e| describe(e, None))
                .max_by_key(|(p, _)| p.matches('/').count())
                .map(|d| (rank, d))
        })
        .max_by_key(|(rank, (p, _))| (p.matches('/').count(), *rank))
        .map(|(_, d)| d);
    best.unwrap_or_else(|| {
        (
            path.to_owned(),
            format!("{} fits none of the allowed shapes", shown(instance)),
        )
    })
}

/// Reads a checked input into its type; an error names the field.
pub fn read<T: DeserializeOwned>(input: &Value) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(input).map_err(|e| {
        // A JSON pointer (`/ops/0/milestone`), as the schema check names fields; serde's own form
        // (`ops[0].milestone`) is not one.
        let pointer: String = e
            .path()
            .iter()
            .filter_map(|seg| match seg {
                serde_path_to_error::Segment::Seq { index } => Some(format!("/{index}")),
                serde_path_to_error::Segment::Map { key } => Some(format!("/{key}")),
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        let pointer = if pointer.is_empty() {
            "/".to_owned()
        } else {
            pointer
        };
        // serde quotes the value it refuses: keep that to an excerpt.
        let message = crate::prose::serde_message(&e.into_inner().to_string());
        ToolError::invalid(pointer, crate::prose::clip(&message, 200))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{read, whole_numbers};
    use crate::tools::ToolError;

    /// A field serde refuses is named by JSON pointer (`/ops[0]` was none). Inside an op serde cannot say
    /// which field (the op's tag is read first, the rest buffered): the op is named; the schema check names
    /// the field before serde meets any that does not fit.
    #[test]
    fn a_field_serde_refuses_is_named_by_its_pointer() {
        let err = read::<crate::tools::apply::ApplyInput>(&json!({
            "ops": [{"op": "set_milestone", "issue": "acme/api#3", "milestone": "four"}]
        }))
        .unwrap_err();
        match err {
            ToolError::Invalid { path, .. } => assert_eq!(path, "/ops/0"),
            other => panic!("{other}"),
        }
    }

    /// A whole number written with a fraction is the integer; a fraction stays one.
    #[test]
    fn whole_numbers_sent_as_doubles_are_integers() {
        let v = whole_numbers(
            json!({"limit": 5.0, "ops": [{"milestone": 4.0, "hours": 37.5}], "n": -2.0}),
        );
        assert_eq!(
            v,
            json!({"limit": 5, "ops": [{"milestone": 4, "hours": 37.5}], "n": -2})
        );
        let input: crate::tools::apply::ApplyInput = read(&whole_numbers(json!({
            "ops": [{"op": "set_milestone", "issue": "acme/api#3", "milestone": 4.0}]
        })))
        .unwrap();
        assert_eq!(input.ops.len(), 1);
    }
}
