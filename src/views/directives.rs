//! The `directives` view: the pending consequence diff and the recent ledger entries.
//!
//! Computed from the ledger text and the proposed op files under `ops/pending/` (written by
//! [`record_directive`](crate::ledger::record::record_directive)); no forecast is run.

use std::collections::BTreeMap;

use chrono::SecondsFormat;
use serde::{Deserialize, Serialize};

use crate::ledger::format::{DirectiveId, Target};
use crate::ledger::parse;
use crate::ledger::record::ConsequencePair;
use crate::ops::{Op, OpFile, Source};
use crate::state::{Layout, Snapshot, StateError};

/// How many recent directives the view lists.
pub(crate) const RECENT_LIMIT: usize = 20;

/// The `directives` view payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Directives {
    /// The newest proposed op file, if any.
    pub pending: Option<Pending>,
    /// The older directives' op files awaiting approval too, newest first: each one's id and summary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_pending: Vec<AlsoPending>,
    /// How many older op files awaiting approval `alsoPending` leaves out, when it is cut.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub also_pending_omitted: usize,
    /// `apply_changes`' own op files awaiting approval (`C-NNNN`), newest first (audit 140: an agent in a
    /// new session learnt of one only by retrying its op and reading the rejection).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proposed_changes: Vec<ProposedChange>,
    /// How many of those `proposedChanges` leaves out, when it is cut.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub proposed_changes_omitted: usize,
    /// The newest directives first, at most [`RECENT_LIMIT`].
    pub recent: Vec<RecentDirective>,
    /// Older directives that still change the plan (active, and not a note), newest first: a directive
    /// given long ago and in force is never out of sight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_in_force: Vec<RecentDirective>,
    /// How many older entries neither list shows (notes, withdrawn and superseded ones): they are in
    /// `pm-state.md`.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub earlier_omitted: usize,
    /// What is wrong in the ledger, one line each: entries left out of the plan.
    pub problems: Vec<String>,
    /// How many problems `problems` leaves out, when it is cut.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub problems_omitted: usize,
    /// What is worth a look about directives in force, one line each (one that takes another's place
    /// though given before it, a period that adds someone no config names): they apply all the same.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// How many notices `notices` leaves out, when it is cut.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub notices_omitted: usize,
}

impl Directives {
    /// Cuts every listed quote and rationale to `chars` characters, counting what it left out: how an
    /// answer over its budget fits before its lists are cut (audit 105: one quote of 2,000 CJK characters
    /// put the view over its 8 KB at every limit).
    pub fn cut_texts(&mut self, chars: usize) {
        for d in self.recent.iter_mut().chain(&mut self.earlier_in_force) {
            let (quote, cut) = super::issue::cut(&d.quote, chars);
            d.quote = quote;
            d.quote_cut += cut;
            if let Some(r) = d.rationale.as_mut() {
                let (rationale, cut) = super::issue::cut(r, chars);
                *r = rationale;
                d.rationale_cut += cut;
            }
        }
    }

    /// The view with at most `limit` directives in each list. A directive `recent` cuts that is still in
    /// force moves to `earlierInForce` (audit 91: cut, a hard deadline in force was in no list and no
    /// count); whatever a list leaves out is counted.
    pub fn cut(&mut self, limit: usize) {
        // The older op files awaiting approval too (audit 93: 1,173 of them filled 117 KB of an 8 KB
        // answer, and pushed what is in force out).
        let pending = self.also_pending.len();
        self.also_pending.truncate(limit);
        self.also_pending_omitted += pending - self.also_pending.len();
        let proposed = self.proposed_changes.len();
        self.proposed_changes.truncate(limit);
        self.proposed_changes_omitted += proposed - self.proposed_changes.len();
        self.keep_recent(limit);
        let earlier = self.earlier_in_force.len();
        self.earlier_in_force.truncate(limit);
        self.earlier_omitted += earlier - self.earlier_in_force.len();
    }
}

impl Directives {
    /// `recent` cut to `limit`: what it cuts in force moves to `earlierInForce`, the rest is counted.
    fn keep_recent(&mut self, limit: usize) {
        let older = self.recent.split_off(self.recent.len().min(limit));
        let (in_force, omitted): (Vec<_>, Vec<_>) = older.into_iter().partition(in_force);
        self.earlier_omitted += omitted.len();
        // Newer than every earlier one: first, newest first.
        self.earlier_in_force.splice(0..0, in_force);
    }
}

/// Whether a listed directive still changes the plan: active, not a note, not replaced by a later one.
fn in_force(d: &RecentDirective) -> bool {
    d.status == crate::ledger::format::Status::Active.to_string()
        && d.kind != crate::ledger::format::DirectiveKind::Note.to_string()
        && d.replaced_by.is_none()
        && d.ended.is_none()
}

/// A directive's proposed Gitea changes, awaiting approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    /// The directive's id.
    pub id: String,
    /// The consequence in one line, as it was computed when the directive was recorded.
    pub summary: String,
    /// The day it was recorded (`2026-12-07`): its consequence is against that day's forecast, which
    /// today's may have left (audit 148: the page said "May 24 → May 20" beside an index saying May 25).
    #[serde(default)]
    pub recorded_on: String,
    /// The consequence, subject by subject: milestones first, then moved issues (cut to the limit).
    pub consequence: Vec<ConsequencePair>,
    /// Subjects of the consequence left out by the limit.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub consequence_omitted: usize,
    /// The proposed changes.
    pub ops: Vec<Op>,
    /// Whether its op file is on the branch already: approved (its pull request merged), carried out at the
    /// next run that reaches Gitea with a token. Known to a run; false elsewhere.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub approved: bool,
    /// Why the run's replay left its directive out (its target is not on Gitea, say): then carrying it out
    /// changes nothing either (audit 133: a deleted milestone's directive was "carried out at the next
    /// run"). Known to a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// An older directive's op file awaiting approval beside the newest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlsoPending {
    /// The directive's id.
    pub id: String,
    /// Its consequence in one line, as it was recorded (after the directives before it).
    pub summary: String,
    /// Why the run's replay left its directive out, as [`Pending::skipped`] (audit 137: one on a
    /// milestone closed on Gitea was listed as awaiting approval without a word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// An `apply_changes` op file awaiting approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposedChange {
    /// `C-0006`.
    pub id: String,
    /// Its consequence in one line, as it was computed when the file was written.
    pub summary: String,
    /// When it was written (RFC 3339, UTC).
    pub created_at: String,
    /// How many ops it holds.
    pub ops: usize,
    /// Whether any op is destructive (it then goes through a pull request).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub destructive: bool,
    /// The directives in force given after it was written (but notes), newest first, at most
    /// [`SINCE_NAMED`]: its `summary` was computed without them, so it may no longer be what merging it
    /// does (audit 140: one read "p80 unchanged (Apr 8)" while the forecast, after a capacity directive,
    /// said Feb 25).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directives_since: Vec<String>,
    /// How many more directives were given since than `directivesSince` names.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub directives_since_omitted: usize,
}

/// The most directives a pending change's `directivesSince` names (audit 145: a year's 2,000 filled the
/// answer ten times over).
pub(crate) const SINCE_NAMED: usize = 3;

/// One ledger entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentDirective {
    /// `D-0007`.
    pub id: String,
    /// The kind.
    pub kind: String,
    /// When it was given (RFC 3339, UTC).
    pub at: String,
    /// The later directive that took over every field it set, when one did (the ledger keeps it active,
    /// but it changes nothing; known to a run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<String>,
    /// The PM's words.
    pub quote: String,
    /// `issue owner/repo#N`, `milestone ID` or `member USERNAME`.
    pub target: Option<String>,
    /// The target's kind: `issue`, `milestone` or `member`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kind: Option<String>,
    /// The target's bare id: the issue key, the milestone id or the username.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_id: Option<String>,
    /// The title of the issue or milestone it targets, from the snapshot, when it is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_title: Option<String>,
    /// What it sets, in words (`priority p/0`, `due 2027-01-29, hard`); none for a note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// Why, when the PM said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// Characters of `quote` an answer left out to keep within its budget (the ledger has them all).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub quote_cut: usize,
    /// Characters of `rationale` left out the same way.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub rationale_cut: usize,
    /// `active`, `superseded` or `withdrawn`.
    pub status: String,
    /// For a directive in force whose change Gitea does not carry (and no op file is pending to carry it):
    /// what differs, `acme/api#57 is p/0 by it and p/2 on Gitea`. The forecast follows the directive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_on_gitea: Vec<String>,
    /// Who gave it.
    pub by: Option<String>,
    /// Why the run's replay left it out, when it did (`target issue acme/api#9999 does not exist in the
    /// snapshot`): well-formed, but it changes nothing until fixed. Known to a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// For a capacity period that ended before the forecast's day, its last day: it changes the plan no
    /// more, and is not listed as in force (audit 145: 217 of 537 "still in force" had ended). Known to a
    /// run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}

/// What a run's replay knows of the directives, for the view: why it left one out (`skipped`, by ledger
/// line) and which later directive took over every field of one (`replaced`, by id). Empty elsewhere.
#[derive(Debug, Clone, Default)]
pub struct Replayed {
    /// Why replay left a well-formed directive out, by its ledger line.
    pub skipped: BTreeMap<usize, String>,
    /// The directive that replaced one, by the replaced one's id.
    pub replaced: BTreeMap<String, String>,
    /// The forecast's day: a capacity period that ended before it changes the plan no more.
    pub as_of: Option<chrono::NaiveDate>,
    /// The team's time zone, the days are said in (UTC where not known).
    pub zone: Option<crate::config::Zone>,
}

/// The view from the ledger text (`None`: no ledger) and the pending op files, newest first — in ledger
/// order, the order they were merged and replay reads them, not the order they were recorded in (audit
/// 104: of two directives on one issue merged the other way round, the one that lost was listed as the
/// newest); `snapshot`, when given, names each target issue or milestone by its title.
pub fn directives(
    ledger: Option<&str>,
    pending: Vec<OpFile>,
    changes: Vec<OpFile>,
    snapshot: Option<&Snapshot>,
    replayed: &Replayed,
) -> Directives {
    let parsed = parse::parse(ledger.unwrap_or(""));
    let mut all: Vec<_> = parsed.ledger.directives().collect();
    // The file of a directive withdrawn or superseded is carried out no more: not "approved, carried
    // out at the next run" (audit 175); the Changes page and the run's warnings say to delete it.
    let in_force: Vec<OpFile> = pending
        .into_iter()
        .filter(|f| {
            !all.iter().any(|d| {
                d.id.to_string() == f.id && d.status != crate::ledger::format::Status::Active
            })
        })
        .collect();
    let mut pending = in_force.into_iter();
    let newest = pending.next();
    all.sort_by_key(|d| std::cmp::Reverse(d.line));
    let skipped = |id: &str| {
        all.iter()
            .find(|d| d.id.to_string() == id)
            .and_then(|d| replayed.skipped.get(&d.line).cloned())
    };
    let also_pending = pending
        .map(|f| AlsoPending {
            skipped: skipped(&f.id),
            id: f.id,
            summary: f.summary,
        })
        .collect();
    let entry = |d: &crate::ledger::format::DirectiveEntry| {
        let (target_kind, target_id) = d.target.as_ref().map(|t| t.parts()).unzip();
        RecentDirective {
            id: d.id.to_string(),
            kind: d.kind.to_string(),
            at: d.at.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            quote: d.quote.clone(),
            target: d.target.as_ref().map(ToString::to_string),
            target_kind: target_kind.map(str::to_owned),
            target_id,
            target_title: snapshot
                .zip(d.target.as_ref())
                .and_then(|(s, t)| title(s, t)),
            effect: d.params.describe(),
            rationale: d.rationale.clone(),
            quote_cut: 0,
            rationale_cut: 0,
            status: d.status.to_string(),
            by: d.by.clone(),
            // Known only to a run, which compares the plan with Gitea and the pending op files.
            not_on_gitea: Vec::new(),
            skipped: replayed.skipped.get(&d.line).cloned(),
            replaced_by: replayed.replaced.get(&d.id.to_string()).cloned(),
            ended: match (&d.params, replayed.as_of) {
                (crate::ledger::format::Params::Capacity { to: Some(to), .. }, Some(day))
                    if *to < day =>
                {
                    Some(to.to_string())
                }
                _ => None,
            },
        }
    };
    let recent: Vec<RecentDirective> = all.iter().map(|d| entry(d)).collect();
    let proposed_changes = changes
        .into_iter()
        .map(|f| {
            let written = chrono::DateTime::parse_from_rfc3339(&f.created_at).ok();
            let mut since: Vec<String> = all
                .iter()
                .filter(|d| {
                    written.is_some_and(|w| d.at > w)
                        && d.kind != crate::ledger::format::DirectiveKind::Note
                        && d.status == crate::ledger::format::Status::Active
                })
                .map(|d| d.id.to_string())
                .collect();
            let omitted = since.len().saturating_sub(SINCE_NAMED);
            since.truncate(SINCE_NAMED);
            ProposedChange {
                directives_since: since,
                directives_since_omitted: omitted,
                ops: f.ops.len(),
                destructive: f.destructive,
                created_at: f.created_at,
                summary: f.summary,
                id: f.id,
            }
        })
        .collect();
    let mut view = Directives {
        proposed_changes,
        proposed_changes_omitted: 0,
        earlier_in_force: Vec::new(),
        earlier_omitted: 0,
        problems_omitted: 0,
        notices: Vec::new(),
        notices_omitted: 0,
        also_pending_omitted: 0,
        also_pending,
        pending: newest.map(|p| Pending {
            // The team's day, not UTC's (audit 149: a directive recorded on the 9th in Auckland read
            // the 8th).
            recorded_on: match (
                chrono::DateTime::parse_from_rfc3339(&p.created_at),
                &replayed.zone,
            ) {
                (Ok(at), Some(zone)) => zone.date_of(at.with_timezone(&chrono::Utc)).to_string(),
                _ => p.created_at.get(..10).unwrap_or(&p.created_at).to_owned(),
            },
            skipped: skipped(&p.id),
            id: p.id,
            summary: p.summary,
            consequence: p.consequence,
            consequence_omitted: 0,
            ops: p.ops,
            approved: false,
        }),
        recent,
        problems: parsed
            .problems
            .iter()
            .map(|p| crate::plan::Problem::from(p).to_string())
            .collect(),
    };
    // The page lists the newest and every older one in force; `earlierInForce` is not cut here.
    view.keep_recent(RECENT_LIMIT);
    view
}

/// The directives' op files among `pending` (those under `ops/pending/` that read), newest first (by
/// directive id), leaving out those whose ids are in `done` (applied by the run drawing the view: its commit
/// moves them after the view).
fn pending_newest_first(pending: &[OpFile], done: &[&str]) -> Vec<OpFile> {
    let mut files: Vec<(DirectiveId, &OpFile)> = pending
        .iter()
        .filter(|f| f.source == Source::Directive && !done.contains(&f.id.as_str()))
        .filter_map(|f| f.id.parse::<DirectiveId>().ok().map(|id| (id, f)))
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    files.into_iter().map(|(_, f)| f.clone()).collect()
}

/// The other op files among `pending` (`apply_changes`' and captures', `C-NNNN`), newest first (by their
/// number), but for those in `done`.
fn changes_newest_first(pending: &[OpFile], done: &[&str]) -> Vec<OpFile> {
    let number = |f: &OpFile| {
        f.id.strip_prefix("C-")
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let mut files: Vec<&OpFile> = pending
        .iter()
        .filter(|f| f.source != Source::Directive && !done.contains(&f.id.as_str()))
        .collect();
    files.sort_by_key(|f| {
        (
            std::cmp::Reverse(number(f)),
            std::cmp::Reverse(f.id.clone()),
        )
    });
    files.into_iter().cloned().collect()
}

/// The title of the issue or milestone a directive targets, when the snapshot has it.
fn title(snapshot: &Snapshot, target: &Target) -> Option<String> {
    match target {
        Target::Issue(key) => snapshot.issues.get(key).map(|i| i.title.clone()),
        Target::Milestone(id) => snapshot.milestone(*id).map(|(_, m)| m.title.clone()),
        Target::Member(_) => None,
    }
}

/// The view of the state repo: its checkout's ledger and its newest pending op file; `snapshot` names the
/// targets.
pub fn load(layout: &Layout, snapshot: Option<&Snapshot>) -> Result<Directives, StateError> {
    let ledger = crate::ledger::read(&layout.ledger())?;
    // Quietly: whoever reports on the state says which op files do not read.
    let pending = crate::ops::read_pending(layout)?.0;
    Ok(of_ledger(
        ledger.as_deref(),
        &pending,
        snapshot,
        &[],
        &Replayed::default(),
    ))
}

/// The view of `ledger` (the text a forecast replayed, which a run takes from the branch) and the state
/// repo's pending op files (`pending`, those that read), but for those applied by the run drawing it
/// (`done`); `replayed` as [`directives`] takes it.
pub fn of_ledger(
    ledger: Option<&str>,
    pending: &[OpFile],
    snapshot: Option<&Snapshot>,
    done: &[&str],
    replayed: &Replayed,
) -> Directives {
    directives(
        ledger,
        pending_newest_first(pending, done),
        changes_newest_first(pending, done),
        snapshot,
        replayed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_directive_is_said_recorded_on_the_teams_day() {
        let text = "id: D-0001\nsource: directive\ncreated_at: 2026-12-08T20:00:00Z\napproved: false\n\
                    destructive: false\nops:\n- op: set_priority\n  issue: acme/api#1\n  priority: p/0\n\
                    summary: hand-written\nconsequence: []\n";
        let file = OpFile::parse(text, std::path::Path::new("D-0001.yaml")).unwrap();
        let at = |zone: Option<&str>| {
            let replayed = Replayed {
                zone: zone.map(|z| crate::config::Zone::parse(z).unwrap()),
                ..Replayed::default()
            };
            directives(None, vec![file.clone()], Vec::new(), None, &replayed)
                .pending
                .unwrap()
                .recorded_on
        };
        assert_eq!(at(None), "2026-12-08");
        // In Auckland that evening is the next day (audit 149).
        assert_eq!(at(Some("+13:00")), "2026-12-09");
    }

    #[test]
    fn a_capacity_period_that_ended_is_not_in_force() {
        let entry = |id: u32, to: &str| {
            format!(
                "## D-{id:04} · capacity · 2026-11-{:02}T10:00:00Z\n\n> Away.\n\n- target: member ann\n\
                 - params: {{\"from\": \"2026-11-02\", \"to\": \"{to}\", \"hours_per_week\": 0}}\n\n",
                id
            )
        };
        let ledger = entry(1, "2026-11-13") + &entry(2, "2026-12-18");
        let replayed = Replayed {
            as_of: chrono::NaiveDate::from_ymd_opt(2026, 11, 30),
            ..Replayed::default()
        };
        let mut view = directives(Some(&ledger), Vec::new(), Vec::new(), None, &replayed);
        let ended: Vec<(&str, Option<&str>)> = view
            .recent
            .iter()
            .map(|d| (d.id.as_str(), d.ended.as_deref()))
            .collect();
        assert_eq!(ended, [("D-0002", None), ("D-0001", Some("2026-11-13"))]);
        // Cut to one, the period still running stays in sight and the one that ended is counted.
        view.cut(1);
        view.keep_recent(0);
        let in_force: Vec<&str> = view
            .earlier_in_force
            .iter()
            .map(|d| d.id.as_str())
            .collect();
        assert_eq!(in_force, ["D-0002"]);
        assert_eq!(view.earlier_omitted, 1);
    }

    #[test]
    fn a_cut_view_keeps_what_is_in_force_in_sight_and_counts_the_rest() {
        let entry = |n: usize, kind: &str| RecentDirective {
            id: format!("D-{n:04}"),
            kind: kind.to_owned(),
            at: String::new(),
            quote: String::new(),
            target: None,
            target_kind: None,
            target_id: None,
            target_title: None,
            effect: None,
            rationale: None,
            quote_cut: 0,
            rationale_cut: 0,
            status: "active".to_owned(),
            not_on_gitea: Vec::new(),
            by: None,
            skipped: None,
            replaced_by: None,
            ended: None,
        };
        // Newest first: notes and deadlines, every other one.
        let recent: Vec<RecentDirective> = (1..=30)
            .rev()
            .map(|n| entry(n, if n % 2 == 0 { "note" } else { "set-deadline" }))
            .collect();
        let mut d = Directives {
            pending: None,
            also_pending: (1..=40)
                .map(|n| AlsoPending {
                    id: format!("D-{n:04}"),
                    summary: String::new(),
                    skipped: None,
                })
                .collect(),
            also_pending_omitted: 0,
            proposed_changes: (1..=12)
                .map(|n| ProposedChange {
                    id: format!("C-{n:04}"),
                    summary: String::new(),
                    created_at: String::new(),
                    ops: 1,
                    destructive: false,
                    directives_since: Vec::new(),
                    directives_since_omitted: 0,
                })
                .collect(),
            proposed_changes_omitted: 0,
            recent,
            earlier_in_force: Vec::new(),
            earlier_omitted: 0,
            problems: Vec::new(),
            problems_omitted: 0,
            notices: Vec::new(),
            notices_omitted: 0,
        };
        d.cut(5);
        assert_eq!(d.also_pending.len(), 5);
        assert_eq!(d.also_pending_omitted, 35);
        assert_eq!(d.proposed_changes.len(), 5);
        assert_eq!(d.proposed_changes_omitted, 7);
        assert_eq!(d.recent.len(), 5);
        // The first in force that `recent` cut leads the earlier ones.
        assert_eq!(d.earlier_in_force.len(), 5);
        assert_eq!(d.earlier_in_force[0].id, "D-0025");
        assert_eq!(
            d.recent.len() + d.earlier_in_force.len() + d.earlier_omitted,
            30
        );
    }
}
