//! Replaying the directive ledger over the snapshot: the effective [`Plan`].
//!
//! The plan starts as the snapshot leaves it ([`Plan::from_snapshot`]); the active directives are then folded
//! over it in ledger order. Superseded and withdrawn directives are skipped.
//!
//! - `reprioritize` sets the issue's priority (and `priority_set`).
//! - `reestimate` sets the estimate: hours from the label text with `workday_hours`, the label text, source
//!   `Directive`.
//! - `set-deadline` on a milestone sets its due day, and makes it hard when `hard` is true (`hard: false` or
//!   absent leaves it as it is). On an issue it sets the issue's own `due` / `due_hard`, which the engine does
//!   not use yet.
//! - `scope` `{"in": false}` on an issue takes it out of its milestone; `{"in": true}` puts it back in the
//!   milestone Gitea gives it. `{"in": false}` on a milestone takes every issue out of it; `{"in": true}` on a
//!   milestone means nothing without an issue and is a problem.
//! - `capacity` gives the member `hours_per_week` (spread over their working days; 0 = away) from `from` to
//!   `to` (open-ended without one), as a [`CapacityOverride`] on their calendar; where periods overlap the
//!   later directive wins. A member not in the team config is a new hire: they join the team, working the
//!   team's days at that capacity, from `from` (to `to`, if given). A capacity of 0 for someone not in the
//!   team adds nobody and is a problem.
//! - `note` changes nothing.
//!
//! A later directive on the same target and field simply wins; the earlier one's provenance record is marked
//! replaced (for capacity the field is the period, so only a directive on the same period replaces another).
//! A directive that asks for what Gitea already has changes nothing but is recorded as agreeing with Gitea.
//! Every field a directive sets records `(field, directive id)` in the target's `provenance` and a
//! [`ProvenanceRecord`] in its `provenance_log`. A directive about an issue, milestone or member the snapshot
//! does not have (except a capacity directive, which adds the member) is a problem naming its line and is
//! skipped; the ledger's parse problems are passed through; every other directive still applies.

use chrono::{DateTime, NaiveDate, Utc};

use super::format::{DirectiveEntry, Ledger, Params, Status, Target};
use crate::config::Config;
use crate::domain::IssueKey;
use crate::engine::calendar::CapacityOverride;
use crate::plan::{
    At, Plan, PlannedMember, Problem, ProblemKind, ProvenanceEffect, ProvenanceRecord,
};
use crate::state::Snapshot;

/// The effective plan and what was wrong in the ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    /// The plan with every active directive applied.
    pub plan: Plan,
    /// Problems with the ledger (malformed entries, unknown targets …), in ledger order.
    pub problems: Vec<Problem>,
    /// Directives in force that set a field Gitea holds to what Gitea does not have, in ledger order.
    pub not_on_gitea: Vec<NotOnGitea>,
    /// The ledger as parsed (none without one), for what else reads it: which op file is whose.
    pub ledger: Option<super::parse::ParsedLedger>,
}

/// A directive in force whose change Gitea does not carry: it sets a field Gitea holds (a `p/*` or `est/*`
/// label, an issue's milestone, a milestone's due date or `deadline/hard`) to a value Gitea's differs from.
/// Right after it is recorded that is expected (its op file carries the change to Gitea once approved);
/// with no op file left to carry it, the plan and Gitea disagree until someone acts.
#[derive(Debug, Clone, PartialEq)]
pub struct NotOnGitea {
    /// The directive's id.
    pub directive: String,
    /// Its ledger line.
    pub line: usize,
    /// What differs, in words: `acme/api#102 is p/0 by it and p/1 on Gitea`.
    pub differs: Vec<String>,
    /// The Gitea changes that would make Gitea carry it, in `apply_changes`' shapes.
    pub carry: Vec<crate::ops::Op>,
}

impl Replayed {
    /// The plan with the ledger's problems added to its warnings (so they reach the run's summary).
    pub fn into_plan(self) -> Plan {
        let mut plan = self.plan;
        plan.warnings.extend(self.problems);
        plan
    }
}

/// Folds the ledger text (`None`: no ledger, so no directives) over the snapshot.
pub fn replay(
    snapshot: &Snapshot,
    config: &Config,
    ledger_text: Option<&str>,
    now: DateTime<Utc>,
) -> Replayed {
    let mut plan = Plan::from_snapshot(snapshot, config, now);
    let Some(text) = ledger_text else {
        return Replayed {
            plan,
            problems: Vec::new(),
            not_on_gitea: Vec::new(),
            ledger: None,
        };
    };
    let parsed = super::parse::parse(text);
    let mut problems: Vec<Problem> = parsed.problems.iter().map(Problem::from).collect();
    let base = plan.clone();
    problems.extend(apply(&mut plan, &base, &parsed.ledger, &config.estimates));
    problems.extend(dates_out_of_order(&plan, &parsed.ledger));
    // Parse problems and replay problems are both on a line: report them in ledger order.
    problems.sort_by(|a, b| a.at.cmp(&b.at));
    let not_on_gitea = not_on_gitea(&plan, &base, &parsed.ledger);
    Replayed {
        plan,
        problems,
        not_on_gitea,
        ledger: Some(parsed),
    }
}

/// What the headings' dates say against the ledger's order (audit 167): an entry that takes another's
/// place for coming after it in the file, though it was given before it (a hand-inserted or back-dated
/// entry). Replay goes by the order; the date only says when it was given. (A date after the forecast's
/// day is no sign of a typo: a directive recorded today on a snapshot of last week is one.)
fn dates_out_of_order(plan: &Plan, ledger: &Ledger) -> Vec<Problem> {
    let by_id: std::collections::HashMap<String, &crate::ledger::format::DirectiveEntry> =
        ledger.directives().map(|d| (d.id.to_string(), d)).collect();
    let mut out = Vec::new();
    for (old, new) in plan.replaced_directives() {
        let (Some(o), Some(n)) = (by_id.get(&old), by_id.get(&new)) else {
            continue;
        };
        if n.at < o.at {
            // The time too where the day is the same (audit 173: one date said twice).
            let form = if n.at.date_naive() == o.at.date_naive() {
                "%Y-%m-%d %H:%M UTC"
            } else {
                "%Y-%m-%d"
            };
            out.push(Problem {
                at: At::Ledger { line: n.line },
                kind: ProblemKind::Data(format!(
                    "{new} (given {}) takes the place of {old} (given {}) for coming after it in the \
                     ledger, though it was given before it; if {old} should stand, withdraw {new} \
                     (status: withdrawn)",
                    n.at.format(form),
                    o.at.format(form)
                )),
            });
        }
    }
    out
}

/// The fields Gitea holds, by the name replay records them under.
const ISSUE_FIELDS_ON_GITEA: [&str; 3] = ["priority", "estimate", "milestone"];
const MILESTONE_FIELDS_ON_GITEA: [&str; 2] = ["due", "hard"];

/// Every active directive with a field in force (`Applied`: not agreeing with Gitea, not replaced) that
/// Gitea holds; `base` is the plan before any directive (Gitea's values).
fn not_on_gitea(plan: &Plan, base: &Plan, ledger: &Ledger) -> Vec<NotOnGitea> {
    let in_force = |r: &&ProvenanceRecord, fields: &[&str]| {
        r.effect == ProvenanceEffect::Applied && fields.contains(&r.field.as_str())
    };
    // A milestone's title, with its repository where another has the same title (audit 123: "Public API
    // v2 is due …" of one of two).
    let names = plan.milestone_names();
    let name = |id: u64| {
        names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("milestone {id}"))
    };
    let place = |id: Option<u64>| {
        id.filter(|id| plan.milestone(*id).is_some()).map_or_else(
            || "in no milestone".to_owned(),
            |id| format!("in {}", name(id)),
        )
    };
    use crate::ops::Op;
    let mut by_directive: std::collections::HashMap<&str, (Vec<String>, Vec<Op>)> =
        std::collections::HashMap::new();
    // A closed issue's priority, estimate or milestone plans nothing any more: no one need settle them.
    for (now, was) in plan
        .issues
        .iter()
        .zip(&base.issues)
        .filter(|(i, _)| i.state == crate::domain::OpenState::Open)
    {
        for r in now
            .provenance_log
            .iter()
            .filter(|r| in_force(r, &ISSUE_FIELDS_ON_GITEA))
        {
            let issue = crate::domain::IssueRef::Key(now.key.to_string());
            let (ours, theirs, op) = match r.field.as_str() {
                "priority" => (
                    now.priority.label(),
                    if was.priority_set {
                        was.priority.label()
                    } else {
                        "no p/ label".to_owned()
                    },
                    Some(Op::SetPriority {
                        issue,
                        priority: now.priority.label(),
                    }),
                ),
                "estimate" => (
                    now.estimate_label
                        .as_ref()
                        .map(|l| format!("est/{l}"))
                        .unwrap_or_default(),
                    was.estimate_label
                        .as_ref()
                        .map_or_else(|| "no est/ label".to_owned(), |l| format!("est/{l}")),
                    now.estimate_label.as_ref().map(|l| Op::SetEstimate {
                        issue,
                        estimate: format!("est/{l}"),
                    }),
                ),
                _ => (
                    place(now.milestone),
                    place(was.milestone),
                    Some(Op::SetMilestone {
                        issue,
                        milestone: now.milestone,
                    }),
                ),
            };
            let (differs, carry) = by_directive.entry(r.directive.as_str()).or_default();
            differs.push(format!("{} is {ours} by it and {theirs} on Gitea", now.key));
            carry.extend(op);
        }
    }
    // A closed milestone's due date plans nothing any more either: carrying it out would be refused
    // (audit 132: `--carry-out` was advised for a milestone closed on Gitea, and refused there).
    for (now, was) in plan
        .milestones
        .iter()
        .zip(&base.milestones)
        .filter(|(m, _)| m.state == crate::domain::OpenState::Open)
    {
        for r in now
            .provenance_log
            .iter()
            .filter(|r| in_force(r, &MILESTONE_FIELDS_ON_GITEA))
        {
            let (differs, carry) = by_directive.entry(r.directive.as_str()).or_default();
            let due = now.due.map(|d| d.to_string()).unwrap_or_default();
            carry.push(if r.field == "due" {
                Op::SetMilestoneDue {
                    milestone: now.id,
                    due: due.clone(),
                }
            } else {
                Op::SetDeadlineHard {
                    milestone: now.id,
                    hard: true,
                }
            });
            differs.push(if r.field == "due" {
                format!(
                    "{} is due {} by it and {} on Gitea",
                    name(now.id),
                    due,
                    was.due
                        .map_or_else(|| "has no due date".to_owned(), |d| format!("due {d}"))
                )
            } else {
                format!(
                    "{} is a hard deadline by it and not marked deadline/hard on Gitea",
                    name(now.id)
                )
            });
        }
    }
    ledger
        .directives()
        .filter(|d| d.status == Status::Active)
        .filter_map(|d| {
            let id = d.id.to_string();
            let (differs, carry) = by_directive.remove(id.as_str())?;
            Some(NotOnGitea {
                directive: id,
                line: d.line,
                differs,
                carry,
            })
        })
        .collect()
}

/// Applies the ledger's active directives to `plan` in order; returns the problems found.
///
/// `base` holds "Gitea's values": the plan before any directive (`plan` as it was, fresh from the snapshot).
/// A reestimate must name a rung of `estimates`' ladder, as `record_directive` holds it to.
pub fn apply(
    plan: &mut Plan,
    base: &Plan,
    ledger: &Ledger,
    estimates: &crate::config::EstimatesConfig,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for d in ledger.directives().filter(|d| d.status == Status::Active) {
        if let Err(p) = apply_one(plan, base, d, estimates) {
            problems.push(Problem {
                at: At::Ledger { line: d.line },
                kind: ProblemKind::NotApplied(p),
            });
        } else if let Some(said) = stranger(base, ledger, d) {
            problems.push(Problem {
                at: At::Ledger { line: d.line },
                kind: ProblemKind::Data(said),
            });
        }
    }
    problems
}

/// What to say of a capacity period for a period's end that adds someone the team config does not name
/// and no synced issue does: a contractor, or a member renamed on Gitea, whose every issue now names the
/// new login (audit 146: bjorn's on-call cut to 10 h became a second person working 10 h beside
/// bkarlsson's 30).
fn stranger(
    base: &Plan,
    ledger: &Ledger,
    d: &crate::ledger::format::DirectiveEntry,
) -> Option<String> {
    let (
        Params::Capacity {
            from,
            to: Some(to),
            hours_per_week,
        },
        Some(Target::Member(name)),
    ) = (&d.params, &d.target)
    else {
        return None;
    };
    // A period over before the forecast's day changes nothing the plan works.
    if *to < base.as_of {
        return None;
    }
    // A hire in force over the whole period knows them: a holiday of the hire's adds nobody (audit 182).
    // Asked last: it reads the whole ledger, for each such period.
    let hired = || {
        ledger.directives().any(|h| {
            h.id != d.id
                && h.status == Status::Active
                && matches!(&h.target, Some(Target::Member(m)) if m.eq_ignore_ascii_case(name))
                && matches!(&h.params, Params::Capacity { from: f, to: t, hours_per_week: hours }
                    if *hours > 0.0 && f <= from && t.is_none_or(|t| t >= *to))
        })
    };
    let known = base.member_named(name).is_some()
        || base
            .issues
            .iter()
            .any(|i| i.assignees.iter().any(|a| a.eq_ignore_ascii_case(name)))
        || hired();
    (!known).then(|| {
        format!(
            "{} adds {name}, whom neither the team in commitea.yaml nor any synced issue names, as a \
             person of their own working {hours_per_week} h a week from {from} to {to}: right for \
             someone joining for that time; if {name} is a member renamed on Gitea, write their name as it \
             is now in this directive's target, or their hours count twice",
            d.id
        )
    })
}

fn missing(target: &Target) -> String {
    format!("target {target} does not exist in the snapshot")
}

fn issue_index(plan: &Plan, key: &IssueKey) -> Result<usize, String> {
    // Gitea's names ignore case: an entry written `acme/api#57` is `Acme/API#57` where the config spells
    // it so (audit 156: an active directive skipped as "not synced").
    let same_repo = |a: &crate::domain::RepoName| {
        a.owner.eq_ignore_ascii_case(&key.repo.owner) && a.name.eq_ignore_ascii_case(&key.repo.name)
    };
    plan.issues
        .iter()
        .position(|i| &i.key == key)
        .or_else(|| {
            plan.issues
                .iter()
                .position(|i| i.key.number == key.number && same_repo(&i.key.repo))
        })
        .or_else(|| {
            // Written before the repository was renamed on Gitea: the issue keeps its number under the
            // new name (audit 168: every directive on it was "not synced").
            let now = plan.now_named(&key.repo)?;
            plan.issues
                .iter()
                .position(|i| i.key.number == key.number && &i.key.repo == now)
        })
        .ok_or_else(|| {
            // A repository taken out of the config is not the issue's deletion.
            if plan.issues.iter().any(|i| same_repo(&i.key.repo)) {
                missing(&Target::Issue(key.clone()))
            } else if let Some(now) = plan.now_named(&key.repo) {
                // Synced under its new name: the issue is what is missing, not the repository (audit 179).
                format!(
                    "target issue {key} does not exist in the snapshot ({} is {now} on Gitea now, which has \
                     no issue {})",
                    key.repo, key.number
                )
            } else {
                format!(
                    "target issue {key}: no issue of {} is synced (is it in commitea.yaml's \
                     repositories?); the directive counts again once it is",
                    key.repo
                )
            }
        })
}

fn milestone_index(plan: &Plan, id: u64) -> Result<usize, String> {
    plan.milestones
        .iter()
        .position(|m| m.id == id)
        .ok_or_else(|| {
            // Deleted on Gitea, most likely (audit 132: "does not exist in the snapshot" with "fix the
            // entry" beside it, for an entry that was right when written).
            format!(
                "target milestone {id} is not on Gitea (deleted there, or of a repository no longer \
                 synced): the directive changes nothing; withdraw it (status: withdrawn) if the milestone \
                 is gone for good"
            )
        })
}

fn apply_one(
    plan: &mut Plan,
    base: &Plan,
    d: &DirectiveEntry,
    estimates: &crate::config::EstimatesConfig,
) -> Result<(), String> {
    let id = d.id.to_string();
    match (&d.params, &d.target) {
        (Params::Reprioritize { priority }, Some(Target::Issue(key))) => {
            let n = issue_index(plan, key)?;
            let gitea = &base.issues[n];
            let agrees = gitea.priority_set && gitea.priority == *priority;
            let issue = &mut plan.issues[n];
            issue.priority = *priority;
            issue.priority_set = true;
            record(
                &mut issue.provenance,
                &mut issue.provenance_log,
                "priority",
                &id,
                agrees,
            );
        }
        (Params::Reestimate { estimate }, Some(Target::Issue(key))) => {
            // Written by hand, an estimate off the ladder drove the forecast that `record_directive`
            // refuses (audit 120); left out, it is said, and the other directives count.
            if !estimates.ladder.contains(estimate) {
                let nearest = estimates
                    .nearest(estimate, plan.workday_hours)
                    .map_or_else(String::new, |r| format!(" ({r})"));
                return Err(format!(
                    "{id}'s estimate \"{estimate}\" is not on the estimate ladder ({}), so the directive \
                     is left out; write the nearest rung{nearest} instead",
                    estimates.ladder_words()
                ));
            }
            let n = issue_index(plan, key)?;
            let hours = estimate.hours(plan.workday_hours);
            let gitea = &base.issues[n];
            let agrees = gitea.estimate_hours == Some(hours)
                && gitea.estimate_source != crate::plan::EstimateSource::Imputed;
            let (label, source) = if agrees {
                (gitea.estimate_label.clone(), gitea.estimate_source)
            } else {
                (
                    Some(estimate.to_string()),
                    crate::plan::EstimateSource::Directive,
                )
            };
            let issue = &mut plan.issues[n];
            issue.estimate_hours = Some(hours);
            issue.estimate_label = label;
            issue.estimate_source = source;
            record(
                &mut issue.provenance,
                &mut issue.provenance_log,
                "estimate",
                &id,
                agrees,
            );
        }
        (Params::SetDeadline { due, hard }, Some(Target::Milestone(mid))) => {
            let n = milestone_index(plan, *mid)?;
            let gitea = &base.milestones[n];
            let (due_agrees, hard_agrees) = (gitea.due == Some(*due), gitea.hard);
            let m = &mut plan.milestones[n];
            m.due = Some(*due);
            record(
                &mut m.provenance,
                &mut m.provenance_log,
                "due",
                &id,
                due_agrees,
            );
            if *hard {
                m.hard = true;
                record(
                    &mut m.provenance,
                    &mut m.provenance_log,
                    "hard",
                    &id,
                    hard_agrees,
                );
            }
        }
        (Params::SetDeadline { due, hard }, Some(Target::Issue(key))) => {
            let n = issue_index(plan, key)?;
            let issue = &mut plan.issues[n];
            issue.due = Some(*due);
            record(
                &mut issue.provenance,
                &mut issue.provenance_log,
                "due",
                &id,
                false,
            );
            if *hard {
                issue.due_hard = true;
                record(
                    &mut issue.provenance,
                    &mut issue.provenance_log,
                    "hard",
                    &id,
                    false,
                );
            }
        }
        (Params::Scope { included }, Some(Target::Issue(key))) => {
            let n = issue_index(plan, key)?;
            // Out: the issue leaves its milestone. In: it goes back to the milestone Gitea gives it.
            let gitea_milestone = base.issues[n].milestone;
            let milestone = if *included { gitea_milestone } else { None };
            let issue = &mut plan.issues[n];
            issue.milestone = milestone;
            record(
                &mut issue.provenance,
                &mut issue.provenance_log,
                "milestone",
                &id,
                milestone == gitea_milestone,
            );
        }
        (Params::Scope { included: true }, Some(Target::Milestone(mid))) => {
            milestone_index(plan, *mid)?;
            return Err(format!(
                "scope {{\"in\": true}} on milestone {mid} is not meaningful: put an issue in scope instead (target issue owner/repo#N)"
            ));
        }
        (Params::Scope { included: false }, Some(Target::Milestone(mid))) => {
            // The milestone is dropped: every issue Gitea puts in it leaves it.
            let n = milestone_index(plan, *mid)?;
            let m = &mut plan.milestones[n];
            record(
                &mut m.provenance,
                &mut m.provenance_log,
                "scope",
                &id,
                false,
            );
            for issue in plan.issues.iter_mut().filter(|i| i.milestone == Some(*mid)) {
                issue.milestone = None;
                record(
                    &mut issue.provenance,
                    &mut issue.provenance_log,
                    "milestone",
                    &id,
                    false,
                );
            }
        }
        (
            Params::Capacity {
                from,
                to,
                hours_per_week,
            },
            Some(Target::Member(name)),
        ) => capacity(plan, name, *from, *to, *hours_per_week, &id)?,
        (Params::Note, target) => {
            // A note changes nothing, but one about something that does not exist is still worth a word.
            match target {
                Some(Target::Issue(key)) => {
                    issue_index(plan, key)?;
                }
                Some(Target::Milestone(mid)) => {
                    milestone_index(plan, *mid)?;
                }
                Some(Target::Member(name)) if plan.member_named(name).is_none() => {
                    return Err(plan.not_in_team(name));
                }
                Some(Target::Member(_)) | None => {}
            }
        }
        (params, target) => {
            // The parser only lets through targets the kind allows, so this is a ledger built by hand.
            let target = target
                .as_ref()
                .map_or_else(|| "no target".to_owned(), ToString::to_string);
            return Err(format!(
                "{} cannot apply to {target}; it needs {}",
                params.kind(),
                params.kind().target_help()
            ));
        }
    }
    Ok(())
}

/// A member's hours per week from `from` to `to`. A member not in the team config is a new hire: they join
/// the team from `from` (their calendar starts that day), working the team's days.
fn capacity(
    plan: &mut Plan,
    name: &str,
    from: NaiveDate,
    to: Option<NaiveDate>,
    hours_per_week: f64,
    id: &str,
) -> Result<(), String> {
    let field = crate::plan::capacity_field(from, to);
    let name = plan
        .member_named(name)
        .map_or(name, |m| m.name.as_str())
        .to_owned();
    let name = name.as_str();
    if let Some(m) = plan.team.iter_mut().find(|m| m.name == name) {
        let days = m.calendar.working_days.len();
        let hours_per_day = if days == 0 {
            0.0
        } else {
            hours_per_week / days as f64
        };
        // A period covering every day of an earlier one replaces it (the last listed wins each day): its
        // hours count nowhere, and its directive is no longer in force (audit 145: a replaced 10 h was
        // shown under the later directive's id, and an April leave inside a re-stated period read as in
        // force while the plan worked April).
        let covers = |o: &CapacityOverride| {
            from <= o.from
                && match (to, o.to) {
                    (None, _) => true,
                    (Some(t), Some(ot)) => ot <= t,
                    (Some(_), None) => false,
                }
        };
        let covered: Vec<String> = m
            .calendar
            .overrides
            .iter()
            .filter(|o| covers(o))
            .map(|o| crate::plan::capacity_field(o.from, o.to))
            .filter(|f| *f != field)
            .collect();
        m.calendar.overrides.retain(|o| !covers(o));
        for f in &covered {
            for r in m
                .provenance_log
                .iter_mut()
                .filter(|r| &r.field == f && !matches!(r.effect, ProvenanceEffect::Replaced { .. }))
            {
                r.effect = ProvenanceEffect::Replaced { by: id.to_owned() };
            }
            m.provenance.retain(|(pf, _)| pf != f);
        }
        m.calendar.overrides.push(CapacityOverride {
            from,
            to,
            hours_per_day,
        });
        record(&mut m.provenance, &mut m.provenance_log, &field, id, false);
        return Ok(());
    }
    if hours_per_week <= 0.0 {
        return Err(format!(
            "{}, and a capacity of 0 hours a week does not add them",
            plan.not_in_team(name)
        ));
    }
    if let Some(refused) = plan.not_a_new_hire(name) {
        return Err(refused);
    }
    // A new hire works only in the periods directives give them: this one, and any later (audit 123: a
    // second period from after this one's end was never worked, the first's end being their last day).
    let mut calendar = plan.team_calendar.clone();
    let days = calendar.working_days.len();
    calendar.hours_per_day = 0.0;
    calendar.overrides.push(CapacityOverride {
        from,
        to,
        hours_per_day: if days == 0 {
            0.0
        } else {
            hours_per_week / days as f64
        },
    });
    calendar.starts = Some(from);
    let mut member = PlannedMember {
        name: name.to_owned(),
        hours_per_week,
        calendar,
        repositories: Vec::new(),
        from_directive: true,
        provenance: Vec::new(),
        provenance_log: Vec::new(),
    };
    record(
        &mut member.provenance,
        &mut member.provenance_log,
        &field,
        id,
        false,
    );
    plan.team.push(member);
    Ok(())
}

/// Records that directive `id` set `field`: any earlier directive in force on it is marked replaced.
fn record(
    provenance: &mut Vec<(String, String)>,
    log: &mut Vec<ProvenanceRecord>,
    field: &str,
    id: &str,
    agrees_with_gitea: bool,
) {
    for r in log
        .iter_mut()
        .filter(|r| r.field == field && !matches!(r.effect, ProvenanceEffect::Replaced { .. }))
    {
        r.effect = ProvenanceEffect::Replaced { by: id.to_owned() };
    }
    provenance.retain(|(f, _)| f != field);
    provenance.push((field.to_owned(), id.to_owned()));
    log.push(ProvenanceRecord {
        field: field.to_owned(),
        directive: id.to_owned(),
        effect: if agrees_with_gitea {
            ProvenanceEffect::AgreesWithGitea
        } else {
            ProvenanceEffect::Applied
        },
    });
}
