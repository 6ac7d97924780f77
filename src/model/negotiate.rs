//! Directive negotiation: the PM's words go to the big model, which drafts a directive (kind, target,
//! params, the quote); CommiTea checks the draft and lets the engine compute its consequence.
//!
//! The checks are CommiTea's, never the model's: the quote must be a decision in the PM's words verbatim
//! (whole words of what they said, up to runs of white space, as `ask`'s [`super::agent::decision_in`]),
//! and the draft must pass `record_directive`'s own checks against the state (kind, a target the kind takes that exists, params of the kind's shape). An invalid
//! draft goes back once with the error; a second is a clear failure. The consequence is the engine's,
//! computed exactly as recording would (same seed, nothing written): what the PM sees before they confirm.
//! A rationale that states a number, date or issue the PM did not say is left out.
//! Nothing is recorded here — `commitea directive --say` records on confirmation, a tool caller by calling
//! `record_directive` again with the draft.

use serde_json::Value;

use super::Task;
use crate::ledger::record::{RecordInput, RecordOptions, RecordOutput, RecordTarget};
use crate::tools::{Context, ToolError};

/// A checked draft and what recording it would do.
#[derive(Debug, Clone)]
pub struct Negotiated {
    /// The directive, ready to record.
    pub draft: RecordInput,
    /// Its consequence, computed by the engine; nothing written.
    pub preview: RecordOutput,
}

/// The rules of negotiation; the date, team, repositories, milestones and estimate ladder are appended.
const SYSTEM: &str = "You turn what a project manager says into one directive for CommiTea's ledger. Answer with one JSON object and nothing else:
{\"kind\": \"...\", \"quote\": \"...\", \"target\": {...}, \"params\": {...}, \"rationale\": \"...\"}.
Kinds, their target and params:
- reprioritize: target {\"issue\": \"owner/repo#N\"}; params {\"priority\": 0-3} (0 drop everything, 3 someday)
- reestimate: target {\"issue\": \"owner/repo#N\"}; params {\"estimate\": \"2d\"} (a rung of the estimate ladder below)
- set-deadline: target {\"milestone\": ID} or {\"issue\": ...}; params {\"due\": \"YYYY-MM-DD\", \"hard\": true|false}
- scope: target {\"milestone\": ID} or {\"issue\": ...}; params {\"in\": true|false}
- capacity: target {\"member\": \"username\"}; params {\"from\": \"YYYY-MM-DD\", \"to\": \"YYYY-MM-DD\", \"hours_per_week\": 0} (to optional)
- note: any target or none; no params
Rules: quote is the manager's words copied exactly, the whole sentence that decides; never reword it. Use only usernames, issues and milestone ids that exist (call query_project to look issues up). rationale is one short line. Write no consequence: CommiTea computes it.
When the words do not say which issue, milestone or person, or what to set, do not guess: answer {\"needsMoreInfo\": [\"your question\"]} (at most three questions) instead.";

/// Drafts a directive from `say` on the big model and checks it; see the module documentation.
pub fn negotiate(ctx: &Context, say: &str) -> Result<Negotiated, ToolError> {
    let say = say.trim();
    if say.is_empty() {
        return Err(ToolError::invalid("/say", "say what the PM decided"));
    }
    crate::limits::check_len(say, crate::limits::SAY_CHARS)
        .map_err(|e| ToolError::invalid("/say", e))?;
    let world = super::capture::World::load(ctx)?;
    // The PM's "next Monday" is the calendar's, not the forecast's day (a forecast committed a week
    // ago is as of then); both are said, and due dates before the forecast's day are refused.
    let zone = &world.config.calendar.timezone;
    let as_of = zone.day_of(crate::pipeline::moment(
        &world.layout,
        zone,
        ctx.as_of,
        world.snapshot.meta.synced_at,
    ));
    let now = zone.day_of(ctx.now());
    let today = if as_of == now {
        now.format("%Y-%m-%d (%A)").to_string()
    } else {
        format!(
            "{} (the forecast is as of {})",
            now.format("%Y-%m-%d (%A)"),
            as_of.format("%Y-%m-%d (%A)")
        )
    };
    let team: Vec<&str> = world.config.team.iter().map(|m| m.name.as_str()).collect();
    let system = format!(
        "{SYSTEM}\nToday: {today}\nTeam: {}\n{}\nEstimate ladder: {}",
        if team.is_empty() {
            "none configured".to_owned()
        } else {
            team.join(", ")
        },
        world.context_lines(),
        world.config.estimates.ladder_words()
    );
    let options = RecordOptions {
        clock: ctx.now(),
        env: ctx.env.clone(),
        overrides: ctx.overrides.clone(),
        as_of: ctx.as_of,
        model: true,
        cancel: ctx.cancel.clone(),
    };
    let user = format!("The project manager says:\n{say}");
    let names = Names {
        team: &team,
        milestones: world
            .snapshot
            .milestones
            .values()
            .flatten()
            .map(|m| (m.id, m.title.as_str()))
            .collect(),
    };
    let checked = super::agent::draft(ctx, Task::Negotiate, &system, user, say, |v| {
        check_draft(ctx, &options, say, &names, v)
    })?;
    let (draft, preview) = checked?;
    Ok(Negotiated { draft, preview })
}

/// The result of a check that got as far as the state: the draft and its preview, or a failure of the
/// state repo (not the model's to repair).
type Checked = Result<(RecordInput, RecordOutput), ToolError>;

/// Checks one draft: its shape, the quote, then `record_directive`'s checks (writing nothing).
fn check_draft(
    ctx: &Context,
    options: &RecordOptions,
    say: &str,
    names: &Names<'_>,
    v: &Value,
) -> Result<Checked, String> {
    // The words do not say enough: the model's questions go back to the PM, not a guess to confirm
    // (audit 83: "Push the API stuff back a bit" got a guessed issue and priority, or, asked back in
    // prose, a "not one JSON object" failure).
    if let Some(questions) = v.get("needsMoreInfo") {
        let asked: Vec<String> = questions
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|q| crate::limits::excerpt_long(&crate::prose::one_line(q)))
            .filter(|q| !q.trim().is_empty())
            .take(3)
            .collect();
        if asked.is_empty() {
            return Err("/needsMoreInfo: a list of one to three questions".to_owned());
        }
        return Ok(Err(ToolError::invalid(
            "/say",
            format!(
                "the words do not say enough to draft a directive; the model asks: {} Say it again with \
                 the answer",
                asked.join(" ")
            ),
        )));
    }
    let mut v = v.clone();
    let milestone_title = loosen_target(&mut v, names);
    if let Some(o) = v.as_object_mut() {
        // What CommiTea computes or fills in itself is dropped, never read.
        for k in ["consequence", "summary", "by", "directiveId"] {
            o.remove(k);
        }
        if o.get("params").is_some_and(Value::is_null) {
            o.remove("params");
        }
        if o.get("target").is_some_and(Value::is_null) {
            o.remove("target");
        }
    }
    if let Some(t) = v.get("target") {
        // (serde would read an array as the struct's fields in order.)
        let wrong = match t {
            Value::Object(_) => serde_json::from_value::<RecordTarget>(t.clone())
                .err()
                .map(|e| crate::limits::excerpt_long(&e.to_string())),
            _ => Some(format!(
                "{} is not an object",
                crate::limits::excerpt(&t.to_string())
            )),
        };
        if let Some(e) = wrong {
            return Err(format!(
                "/target: {e}; a target is {{\"issue\": \"owner/repo#N\"}}, {{\"milestone\": ID}} or \
                 {{\"member\": \"username\"}}"
            ));
        }
    }
    let mut draft: RecordInput = serde_json::from_value(v).map_err(|e| format!("/: {e}"))?;
    if let Some(title) = milestone_title {
        draft.target.get_or_insert_default().milestone_title = Some(title);
    }
    // The ledger keeps the PM's words as they wrote them, not the model's copy of them.
    // A decision, as in `ask`: a word of what they said ("first" of "Put the idempotency work first.")
    // would let a steered draft stand for a decision nobody made.
    draft.quote = super::agent::decision_in(draft.quote.trim(), say).map_err(|why| match why {
        super::agent::NotADecision::NotVerbatim => {
            "/quote: the quote must be the manager's words copied exactly from what they said"
                .to_owned()
        }
        other => other.message("quote"),
    })?;
    draft.target = draft.target.filter(|t| *t != RecordTarget::default());
    // The rationale is the model's line of why, shown beside the engine's consequence and recorded: a
    // number, date or issue in it that the PM did not say ("frees about 2 weeks … (P 85%)") would read as
    // a fact CommiTea computed, so such a rationale is left out (audit 83).
    let team: Vec<String> = names.team.iter().map(|m| (*m).to_owned()).collect();
    if let Some(r) = draft.rationale.as_deref()
        && !super::agent::rationale_grounded(r, say, &team)
    {
        tracing::info!(
            "the draft's rationale states a figure, date, issue, person or link the PM did not say: left out"
        );
        draft.rationale = None;
    }
    draft.by.clone_from(&ctx.by);
    match crate::ledger::record::preview_directive(&ctx.state_dir, &draft, options) {
        Ok(preview) => Ok(Ok((draft, preview))),
        Err(crate::ledger::record::RecordError::Invalid { field, message }) => {
            Err(format!("/{field}: {message}"))
        }
        Err(other) => Ok(Err(ToolError::State(Box::new(other)))),
    }
}

/// The names a draft's target may use: the team's usernames and the milestones' titles by id.
struct Names<'a> {
    team: &'a [&'a str],
    milestones: Vec<(u64, &'a str)>,
}

impl Names<'_> {
    /// The id of the milestone titled `title`, case and surrounding spaces aside; none when no milestone
    /// or several (one per repository) are, so that `record_directive` says which there are.
    fn milestone(&self, title: &str) -> Option<u64> {
        let mut titled = self
            .milestones
            .iter()
            .filter(|(_, t)| crate::plan::is_titled(t, title));
        match (titled.next(), titled.next()) {
            (Some((id, _)), None) => Some(*id),
            _ => None,
        }
    }
}

/// Reads the target forms a model writes besides the schema's, as a person would: a string (`"bjorn"`,
/// `"acme/api#12"`, `"member bjorn"`, `"Public API v2"`) and a milestone given as a string (`"4"`, or
/// its title). The draft is shown to the PM before anything is recorded, so reading it kindly costs
/// nothing; what stays unclear fails `record_directive`'s checks with their words. A title that names a
/// milestone becomes its id (the draft shows what is recorded); another is returned, for
/// `record_directive` to refuse with the milestones listed.
fn loosen_target(v: &mut Value, names: &Names<'_>) -> Option<String> {
    let team = names.team;
    let kind = v
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let target = v.get_mut("target")?;
    if let Value::String(s) = target {
        let s = s.trim().to_owned();
        let member = team.iter().find(|m| m.eq_ignore_ascii_case(&s));
        let is_member = member.is_some();
        let has_form = ["issue ", "milestone ", "member "]
            .iter()
            .any(|f| s.starts_with(f));
        let is_issue = s.contains(['#', '/']) || s.parse::<u64>().is_ok();
        let parsed = if is_member || (kind == "capacity" && !has_form && !is_issue) {
            RecordTarget {
                member: Some(member.map_or(s, |m| (*m).to_owned())),
                ..RecordTarget::default()
            }
        } else if has_form || is_issue {
            RecordTarget::parse_cli(&s)
        } else {
            RecordTarget {
                milestone_title: Some(s),
                ..RecordTarget::default()
            }
        };
        if let Some(title) = parsed.milestone_title {
            *target = match names.milestone(&title) {
                Some(id) => serde_json::json!({ "milestone": id }),
                None => Value::Object(serde_json::Map::new()),
            };
            return names.milestone(&title).is_none().then_some(title);
        }
        *target = serde_json::to_value(&parsed).unwrap_or(Value::Null);
        return None;
    }
    let m = target.get_mut("milestone")?;
    let s = m.as_str()?.trim().to_owned();
    if let Some(id) = s.parse::<u64>().ok().or_else(|| names.milestone(&s)) {
        *m = Value::from(id);
        return None;
    }
    if let Some(o) = target.as_object_mut() {
        o.remove("milestone");
    }
    Some(s)
}
