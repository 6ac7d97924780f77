//! The `standup` view: what moved since the last forecast, each person's next working days, and the
//! blockers nobody has touched.
//!
//! Drift compares today's forecast with the newest committed `forecast/forecast.json` that differs from it
//! (found by the caller in the state repo's git history, named by the commit that wrote it), with the
//! consequence module's working-day arithmetic and reasons: each moved issue says why, each moved
//! milestone how many of its issues moved and the biggest mover's reason, and the drift says what
//! changed in the inputs since (directives recorded, issues closed and new, settings). A stale blocker is an open issue that other open issues wait on and that has had no activity
//! (any change Gitea records: comment, label, push…) for `standup.stale_days` calendar days.

use std::collections::{BTreeMap, HashMap};

use chrono::Days;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Inputs, Selection};
use crate::domain::IssueKey;
use crate::engine::Calendar;
use crate::forecast::{ForecastReport, When};
use crate::state::Snapshot;

/// A forecast committed earlier, to measure drift against.
#[derive(Debug, Clone)]
pub struct Previous {
    /// The commit that wrote it (short id).
    pub commit: String,
    /// The directives recorded on the branch since that commit (`D-0004`), in id order.
    pub recorded: Vec<String>,
    /// Directives in force at that commit and no longer (`D-0010 withdrawn`, `D-0004 superseded`, `D-0006
    /// removed from the ledger`), or edited by a commit since (`D-0005 edited`), in id order.
    pub ended: Vec<String>,
    /// What each directive recorded or ended since is about, with how it is said (`D-0008`, `D-0010
    /// withdrawn`): a moved issue, its person or its milestone names the directives behind the move.
    pub touched: Vec<(crate::ledger::format::Target, String)>,
    /// Whether `commitea.yaml` on the branch differs from that commit's (the team, the calendar, the
    /// forecast's settings).
    pub settings_changed: bool,
    /// The settings that shape every forecast and changed since, in words: the keys of `commitea.yaml`
    /// (`commitea.yaml: forecast.abandonment_min_history_days`), and what the forecasts record that a
    /// flag or a `COMMITEA_*` variable set (`forecast.trials 100 then, 10000 now, …`): every move is then
    /// theirs as much as the project's.
    pub forecast_settings: Vec<String>,
    /// Today's forecast without the directives recorded or ended since, where there are any: a directive
    /// is named on a move only where it changed the figure.
    pub without_directives: Option<WithoutDirectives>,
    /// The op files applied since, in id order.
    pub applied: Vec<AppliedSince>,
    /// The ids of the directives recorded or ended since (`D-0008`).
    pub since_ids: std::collections::BTreeSet<String>,
    /// The team as that forecast planned it, and the team's calendar (its holidays), where either differs
    /// from today's (another `commitea.yaml`, a directive about a person since): whose capacity changed,
    /// from which day, and whether the holidays did it.
    pub team: Option<(
        Vec<crate::plan::PlannedMember>,
        crate::engine::PersonCalendarSpec,
    )>,
    /// Whether another CommiTea made that forecast (an upgrade since, or a colleague's other version):
    /// the moves are then the engine's, not the project's.
    pub engine_changed: bool,
    /// The repositories synced at that commit (its `meta.yaml`); none where it does not read.
    pub synced: Option<Vec<crate::domain::RepoName>>,
    /// The forecast.
    pub report: ForecastReport,
}

/// An op file the apply stage recorded since a forecast: a move of an issue it changed on Gitea is its.
#[derive(Debug, Clone)]
pub struct AppliedSince {
    /// Its id, `C-0003`.
    pub id: String,
    /// The issues its ops changed (or found so) on Gitea: not those Gitea refused.
    pub changed: std::collections::BTreeSet<IssueKey>,
    /// What of it Gitea did not take (`partly applied`), from [`crate::apply::shortfall`].
    pub shortfall: Option<&'static str>,
}

impl AppliedSince {
    /// The record of one applied file.
    pub fn of(a: &crate::apply::AppliedFile) -> Self {
        use crate::apply::Outcome;
        let changed = a
            .proposal
            .ops
            .iter()
            .zip(&a.applied.results)
            .filter(|(_, o)| matches!(o, Outcome::Applied { .. } | Outcome::AlreadySo))
            .filter_map(|(op, _)| op.issue()?.key())
            .collect();
        Self {
            id: a.proposal.id.clone(),
            changed,
            shortfall: crate::apply::shortfall(&a.applied.results),
        }
    }
}

/// The figures of today's forecast made without the directives recorded or ended since.
#[derive(Debug, Clone, Default)]
pub struct WithoutDirectives {
    /// Each open issue's p80.
    pub issues: HashMap<IssueKey, When>,
    /// Each milestone's p80, P(on time) and due date.
    pub milestones: HashMap<u64, (When, Option<f64>, Option<chrono::NaiveDate>)>,
}

impl WithoutDirectives {
    /// The figures of `report`.
    pub fn of(report: &ForecastReport) -> Self {
        Self {
            issues: report
                .issues
                .iter()
                .map(|f| (f.issue.clone(), f.p80))
                .collect(),
            milestones: report
                .milestones
                .iter()
                .map(|m| (m.id, (m.p80, m.probability_on_time, m.due)))
                .collect(),
        }
    }
}

/// Why a move no directive explains happened when another CommiTea made the forecast compared with.
const ENGINE_CHANGED: &str = "CommiTea itself changed since that forecast (another version made it): \
                              the move is the new engine's, not the project's";

/// The engine's change, said beside a reason that stands.
const ENGINE_ALSO: &str =
    "CommiTea itself changed since that forecast too (another version made it)";

/// The standup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Standup {
    /// Day 0 of today's forecast.
    pub as_of: String,
    /// What moved since the last committed forecast that differs from today's.
    pub drift: Drift,
    /// Each person's plan for the next working days.
    pub people: Vec<PersonDay>,
    /// Open issues others wait on with no activity for a while, longest idle first (cut to half the
    /// limit).
    pub stale_blockers: Vec<StaleBlocker>,
    /// How many there are, before the cut: a longer plan (`standup.plan_days`) leaves less room in the
    /// answer, and the list shrank without a word (audit 153).
    #[serde(default)]
    pub stale_blockers_total: usize,
}

/// The drift report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    /// The commit of the forecast compared with, or null when there is none to compare with.
    pub since: Option<String>,
    /// That forecast's day 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_as_of: Option<String>,
    /// One line for a person.
    pub summary: String,
    /// Milestones whose p80 moved, or whose due date, chance of meeting it or cut line changed.
    pub milestones: Vec<Moved>,
    /// Issues whose p80 moved, biggest move first (cut to half the limit).
    pub issues: Vec<Moved>,
    /// Issues that moved, in all.
    pub issues_moved: usize,
    /// What changed in the inputs since that forecast, the context of the moves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_then: Option<SinceThen>,
}

/// A repository no longer synced, and the open issues that left the plan with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepositoryOut {
    /// `owner/repo`.
    pub repository: String,
    /// Its issues open in the forecast compared with.
    pub open_issues: usize,
}

/// A repository synced now that was not then (put in `commitea.yaml`), with its open issues: they
/// joined the plan with it, and are not "new".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepositoryIn {
    /// `owner/repo`.
    pub repository: String,
    /// Its open issues in today's forecast.
    pub open_issues: usize,
}

/// What changed in a forecast's inputs since the one compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SinceThen {
    /// Directives recorded on the branch since (`D-0004`), in id order: the newest [`SINCE_NAMED`].
    pub directives: Vec<String>,
    /// How many more were recorded since than `directives` names (audit 145: 1,993 ids put the
    /// standup at 42 KB against its 8 KB).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub directives_omitted: usize,
    /// Directives whose standing changed since other than by being recorded: in force then and no longer
    /// (`D-0010 withdrawn`, `D-0006 removed from the ledger`), made to ask otherwise by a commit (`D-0004
    /// edited`), or back in force (`D-0003 back in force`), in id order: the newest [`SINCE_NAMED`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ended: Vec<String>,
    /// How many more ended than `ended` names.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub ended_omitted: usize,
    /// Issues open in that forecast and closed now.
    pub closed: usize,
    /// Open issues that forecast did not have (opened or reopened since).
    pub new: usize,
    /// Of those, the ones reopened: made before that forecast's day and reopened on Gitea (audit 92: a
    /// reopened issue was only "new").
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub reopened: usize,
    /// Issues open in that forecast that Gitea no longer has in the synced repositories (deleted, or
    /// moved to another repository).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub gone: usize,
    /// Repositories that had open issues in that forecast and are not synced now (taken out of
    /// `commitea.yaml`), with how many open issues left the plan with each: not "gone from Gitea".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repositories_out: Vec<RepositoryOut>,
    /// Repositories synced now and not then (put in `commitea.yaml`), with how many open issues joined the
    /// plan with each; those are not counted as `new` (audit 168: "51 new" of a repository added).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repositories_in: Vec<RepositoryIn>,
    /// Op files applied to Gitea whole since (`C-0003`), in id order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied: Vec<String>,
    /// Op files the apply stage recorded since that Gitea did not take whole, with what came of them
    /// (`C-0004 (partly applied)`), in id order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_whole: Vec<String>,
    /// Open issues then and now whose estimate, priority, assignee or milestone changed on Gitea (no
    /// directive since is about them and no op file applied since names them), by what changed; absent
    /// when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited: Option<Edited>,
    /// Working days from that forecast's day 0 to today's, on the team calendar (negative when today's
    /// is earlier); absent when the same. Work not recorded done in them moves what waits behind it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_days_passed: Option<i64>,
    /// Whether `commitea.yaml` changed since (the team, the calendar, the forecast's settings).
    #[serde(default)]
    pub settings_changed: bool,
    /// The settings that shape every forecast and changed since, in words: `commitea.yaml`'s keys, and
    /// a seed, trial count or horizon a flag or a `COMMITEA_*` variable set (`forecast.seed 7 then, the
    /// default now, set by a flag`), which `settingsChanged` does not count (audit 177: the summary put
    /// the moves down to a seed the boolean said nothing of); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forecast_settings: Vec<String>,
    /// Whether another CommiTea made that forecast (an upgrade since): the moves are its, not the project's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub engine_changed: bool,
    /// The engine that made that forecast, when another did (`0.1.0+664220ac388df001`; none for one
    /// written before forecasts recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_then: Option<String>,
    /// The calibration, where it was fitted again on other closed issues since: every estimate's effort
    /// and spread moved with it, in every repository (audit 104: closing one 4-hour issue moved three
    /// other repositories' milestones, and nothing said why); absent when it is the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recalibrated: Option<Recalibrated>,
    /// The abandonment model, where it learnt from other closes since: which open issues are expected
    /// done at all moved with it, and the milestones with them (audit 163: a milestone 86 working days
    /// later, and nothing said the model had been fitted again); absent when the same closes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refitted: Option<Refitted>,
    /// Where this forecast read nothing from Gitea (an offline run, a preview), the moment of the snapshot
    /// it read: "0 issues closed" is then the snapshot's, not the project's (audit 193: a day with the
    /// server down read word for word as a quiet day); absent when it read Gitea.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_read_since: Option<String>,
}

/// The abandonment model then and now, where it learnt from other closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Refitted {
    /// Closes in the recent history it learnt from then.
    pub closes_before: usize,
    /// Closes it learns from now.
    pub closes: usize,
    /// Open issues then, and how many it expected done within its window (the sum of their chances).
    pub open_before: usize,
    /// The expected number done then.
    pub expected_done_before: f64,
    /// Open issues now.
    pub open: usize,
    /// The expected number done now.
    pub expected_done: f64,
}

impl Refitted {
    /// The change between two forecasts' abandonment models, where it learnt from other closes.
    pub fn between(
        then: Option<&crate::forecast::AbandonmentSummary>,
        now: Option<&crate::forecast::AbandonmentSummary>,
    ) -> Option<Self> {
        let (then, now) = (then?, now?);
        (then.events != now.events).then_some(Self {
            closes_before: then.events,
            closes: now.events,
            open_before: then.open,
            expected_done_before: then.expected_done,
            open: now.open,
            expected_done: now.expected_done,
        })
    }

    /// In words: `the closing-rate model learnt from 161 closes (160 before): 51.8 of the 159 open issues
    /// expected done within its window (35.6 of 160 before)`.
    pub fn words(&self) -> String {
        format!(
            "the closing-rate model learnt from {} ({} before): {:.1} of the {} open expected done within \
             its window ({:.1} of {} before)",
            crate::prose::count(self.closes, "close", "closes"),
            self.closes_before,
            self.expected_done,
            self.open,
            self.expected_done_before,
            self.open_before
        )
    }
}

/// The calibration then and now, where it changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Recalibrated {
    /// Closed issues it learnt from then.
    pub samples_before: usize,
    /// Closed issues it learns from now.
    pub samples: usize,
    /// The team's actual/estimate multiplier then (1.0 under the prior).
    pub multiplier_before: f64,
    /// The team's multiplier now.
    pub multiplier: f64,
    /// The spread, σ of ln(actual / estimate), then.
    pub sigma_before: f64,
    /// The spread now.
    pub sigma: f64,
    /// Whether it was the prior then (too few closed issues to learn from).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cold_before: bool,
    /// Whether it is the prior now.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cold: bool,
}

impl Recalibrated {
    /// The change between two forecasts' calibrations, if there is one.
    pub fn between(
        then: &crate::forecast::CalibrationSummary,
        now: &crate::forecast::CalibrationSummary,
    ) -> Option<Self> {
        then.refitted(now).then_some(Self {
            samples_before: then.n,
            samples: now.n,
            multiplier_before: then.global_multiplier,
            multiplier: now.global_multiplier,
            sigma_before: then.sigma,
            sigma: now.sigma,
            cold_before: then.cold_start,
            cold: now.cold_start,
        })
    }

    /// In words: `calibration fitted again on 62 closed issues (61 before): effort ×1.32 → ×1.37,
    /// spread σ 0.50 → 0.58`; a change from or to the prior is said so.
    pub fn words(&self) -> String {
        let on = |n: usize| crate::prose::count(n, "closed issue", "closed issues");
        match (self.cold_before, self.cold) {
            (true, false) => format!(
                "calibration learnt from {} now, no longer the prior: effort ×{:.2}, spread σ {:.2}",
                on(self.samples),
                self.multiplier,
                self.sigma
            ),
            (_, true) => format!(
                "calibration back to the prior ({} left to learn from, {} before)",
                on(self.samples),
                self.samples_before
            ),
            (false, false) => format!(
                "calibration fitted again on {} ({} before): effort ×{:.2} → ×{:.2}, spread σ {:.2} → {:.2}",
                on(self.samples),
                self.samples_before,
                self.multiplier_before,
                self.multiplier,
                self.sigma_before,
                self.sigma
            ),
        }
    }
}

/// How many open issues had each of their planning fields changed on Gitea (one issue may count twice).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Edited {
    /// Their estimate.
    pub reestimated: usize,
    /// Their priority.
    pub reprioritised: usize,
    /// Their assignee.
    pub reassigned: usize,
    /// Their milestone, to another.
    pub milestone: usize,
    /// Their milestone, to none (taken out of it, or it was deleted).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub out_of_milestone: usize,
    /// What they wait on (audit 112: a dependency added on Gitea made a commit that said nothing).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub dependencies: usize,
    /// Their lifecycle column, open then and now (a `needs-info` label sends one to diagnosis, where
    /// work is seldom done; audit 163: an issue's chance of being done fell 32% → 2% and "since then"
    /// said nothing of it).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub columns: usize,
    /// The estimate, priority and assignee changes one by one (`acme/web#111 re-estimated 1d → 2w`),
    /// where there are at most [`EDITS_NAMED`] of them: a PM's own change is named with its issue,
    /// moved or not (audit 193: "1 issue re-estimated", and the issue, its p80 beyond the horizon both
    /// sides, nowhere).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named: Vec<String>,
}

/// How many changes on Gitea the standup names one by one, past which it counts them.
const EDITS_NAMED: usize = 5;

impl Edited {
    /// In words: `on Gitea, 1 issue re-estimated and 2 reassigned`, or the changes one by one where
    /// they are few and of estimates, priorities and assignees only.
    fn words(&self) -> String {
        let counted = self.reestimated + self.reprioritised + self.reassigned;
        let others = self.milestone + self.out_of_milestone + self.dependencies + self.columns;
        if !self.named.is_empty() && self.named.len() == counted && others == 0 {
            return format!("on Gitea, {}", crate::prose::and_list(&self.named));
        }
        let mut parts = Vec::new();
        for (n, what) in [
            (self.reestimated, "re-estimated"),
            (self.reprioritised, "reprioritised"),
            (self.reassigned, "reassigned"),
            (self.milestone, "moved to another milestone"),
            (self.out_of_milestone, "left with no milestone"),
            (self.dependencies, "given other dependencies"),
            (self.columns, "moved to another column"),
        ] {
            if n > 0 {
                let noun = if parts.is_empty() {
                    crate::prose::count(n, "issue ", "issues ")
                } else {
                    format!("{n} ")
                };
                parts.push(format!("{noun}{what}"));
            }
        }
        format!("on Gitea, {}", crate::prose::and_list(&parts))
    }
}

/// One thing that moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Moved {
    /// `owner/repo#N` or the milestone's title.
    pub subject: String,
    /// `{p50, p80}` before; null when it is new.
    pub before: Option<super::Band>,
    /// `{p50, p80}` now; null when it is gone (closed).
    pub after: Option<super::Band>,
    /// Working days the p80 moved, later positive.
    /// Where the p80 crossed the horizon (one side `beyond horizon`) the count runs to the horizon, not
    /// to the work: say it left or came within the horizon.
    pub moved: i64,
    /// Why it moved. For an issue, the consequence diff's words: `own change` (its estimate, priority,
    /// milestone, assignee or remaining work changed), `imputed estimate`, `calibration`, `blocks KEY`,
    /// `waits on KEY`, `queue of PERSON`, `capacity of PERSON` (their hours changed before it ends),
    /// `planned for PERSON, not PERSON`, `chance of being done 80.3% → 79.6% (a p80 needs 80%)` (its
    /// p80 entered or left the horizon as that chance crossed 80%), `chance of being done 90% → 85%`,
    /// `1 working day passed with no progress recorded` (the days of the person it is planned for; `2
    /// working days passed, none of them PERSON's working days` where they had none), `range of PERSON's
    /// queue` (its plan held, the futures of its queue moved it), `team capacity`,
    /// `new`, `closed` or `gone` (deleted, moved to another repository). For a milestone, the issues that joined or left it (`KEY, KEY
    /// joined it; KEY left it`; `KEY left it (gone from Gitea)` for one deleted or moved to another
    /// repository) and `nothing open in it any more` when that is so, then how many of its issues moved
    /// each way and the biggest move the milestone's way, with its reason (`5 of its issues moved later,
    /// 1 earlier; the most: KEY, +13 working days: waits on KEY`; none the milestone's way: `… none its
    /// way: the spread of its futures moved, not one issue's date`); `closed on Gitea` for one closed
    /// since; absent when none of that happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// For a milestone, what changed besides its p80: `due 2027-04-30 → 2027-05-28, P(on time) 56% →
    /// 89%`, a hard deadline's cut line (`cut line 8 → 9 issues (acme/web#29 joined)`); absent when
    /// nothing did, and for an issue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<String>,
    /// The directives recorded or ended since that are behind the move, as `sinceThen` says them
    /// (`D-0008`, `D-0010 withdrawn`): those about it — the issue itself, the person it is planned for
    /// (now or then), or the milestone — and those behind the moves it came from (what it waits on or
    /// blocks, the moved work ahead of it in its person's queue; for a milestone, its biggest mover);
    /// absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directives: Vec<String>,
    /// For an issue, who works on it: its assignee, else the person the plan gives it to — for one closed
    /// or gone since, as the forecast compared with had it (audit 108: a closed issue was listed under
    /// "nobody planned"); absent for a milestone and for work planned for no one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
}

/// What a PM reads a milestone by — its p80 (with `p80`), its due date and its chance of meeting it —
/// where it changed from `old` to `new`: `p80 2027-03-18 → 2027-03-03`, `due 2027-04-30 → 2027-05-28`,
/// `P(on time) 56% → 89%` (whole percents).
pub(crate) fn milestone_changes(
    old: &crate::forecast::MilestoneForecast,
    new: &crate::forecast::MilestoneForecast,
    p80: bool,
) -> Vec<String> {
    let mut changes = Vec::new();
    // Renamed, and reopened, on Gitea are news of their own (audit 132: neither was said, and a reopened
    // milestone's "p80" moved from the day it had closed).
    if old.title != new.title {
        changes.push(format!("renamed from \"{}\"", old.title));
    }
    let reopened = old.state == crate::domain::OpenState::Closed
        && new.state == crate::domain::OpenState::Open;
    if reopened {
        changes.push("reopened on Gitea".to_owned());
    }
    // With nothing open on either side there is no date: its "p80" is each forecast's day.
    let dated = old.open_issues > 0 || new.open_issues > 0;
    if p80 && reopened && new.open_issues > 0 {
        changes.push(format!("p80 {}", new.p80));
    } else if reopened {
        // Its p80 was the day it closed; with nothing open now it has none.
    } else if p80 && dated && old.p80 != new.p80 {
        changes.push(format!("p80 {} → {}", old.p80, new.p80));
    }
    if old.due != new.due {
        let day =
            |d: Option<chrono::NaiveDate>| d.map_or_else(|| "none".to_owned(), |d| d.to_string());
        changes.push(format!("due {} → {}", day(old.due), day(new.due)));
    }
    if old.hard != new.hard {
        changes.push(
            if new.hard {
                "now a hard deadline"
            } else {
                "no longer a hard deadline"
            }
            .to_owned(),
        );
    }
    let percent = |p: Option<f64>| p.map(crate::prose::percent);
    if let (Some(was), Some(is)) = (
        percent(old.probability_on_time),
        percent(new.probability_on_time),
    ) && was != is
    {
        changes.push(format!("P(on time) {was} → {is}"));
    }
    if let Some(cut) = cut_line_change(old.cut_line.as_ref(), new.cut_line.as_ref()) {
        changes.push(cut);
    }
    changes
}

/// A hard deadline's cut line where it changed: `cut line 8 → 9 issues (acme/web#29 joined)`, `cut
/// line: 8 issues` where there was none, `no cut line any more` (audit 112: a run that grew the cut said
/// nothing of it).
fn cut_line_change(
    old: Option<&crate::forecast::CutLine>,
    new: Option<&crate::forecast::CutLine>,
) -> Option<String> {
    let issues = |n: usize| crate::prose::count(n, "issue", "issues");
    match (old, new) {
        (None, None) => None,
        (None, Some(n)) => Some(format!("cut line: {}", issues(n.issues.len()))),
        (Some(_), None) => Some("no cut line any more".to_owned()),
        (Some(o), Some(n)) => {
            let named = |keys: Vec<&crate::domain::IssueKey>, what: &str| {
                const SHOWN: usize = 3;
                (!keys.is_empty()).then(|| {
                    let mut list: Vec<String> =
                        keys.iter().take(SHOWN).map(ToString::to_string).collect();
                    if keys.len() > SHOWN {
                        list.push(format!("{} more", keys.len() - SHOWN));
                    }
                    format!("{} {what}", crate::prose::and_list(&list))
                })
            };
            let joined = named(
                n.issues.iter().filter(|k| !o.issues.contains(k)).collect(),
                "joined",
            );
            let left = named(
                o.issues.iter().filter(|k| !n.issues.contains(k)).collect(),
                "left",
            );
            // The same issues in another order is the same cut.
            let why: Vec<String> = joined.into_iter().chain(left).collect();
            if why.is_empty() {
                return None;
            }
            Some(format!(
                "cut line {} → {} ({})",
                o.issues.len(),
                issues(n.issues.len()),
                why.join("; ")
            ))
        }
    }
}

/// One person's next working days.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonDay {
    /// Gitea username.
    pub person: String,
    /// The issues the median plan has them on, in order: `{issue, title, from, to}`.
    pub plan: Vec<PlannedWork>,
    /// True when nothing is planned for them in the window though they work in it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle: bool,
    /// Their first working day, when they have not started yet (a new hire): why they may be idle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts: Option<String>,
    /// Their next working day, when they have none in the window (time off, hours set to 0): away, not
    /// idle (audit 92: someone on approved leave was "nothing planned").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub away_until: Option<String>,
}

/// An issue in a person's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedWork {
    /// `owner/repo#N`.
    pub issue: String,
    /// Title.
    pub title: String,
    /// Planned start (median plan).
    pub from: String,
    /// Planned end (median plan).
    pub to: String,
}

/// A blocker nobody has touched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StaleBlocker {
    /// `owner/repo#N`.
    pub issue: String,
    /// Title.
    pub title: String,
    /// Calendar days since its last activity.
    pub idle_days: i64,
    /// The open issues waiting on it.
    pub blocks: Vec<String>,
    /// Assignee, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    /// Whether it is in a dependency cycle: touching it will not unblock anything until the cycle is
    /// broken (audit 101: a blocker said to block the issue it waits on, with no word of the cycle).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_cycle: bool,
}

/// The standup settings, from `commitea.yaml`'s `standup:`.
#[derive(Debug, Clone, Copy)]
pub struct StandupSettings {
    /// Days without activity before a blocker is stale.
    pub stale_days: u32,
    /// Working days each person's plan covers.
    pub plan_days: u32,
}

/// Half a limit, at least one.
fn half(limit: usize) -> usize {
    limit.div_ceil(2).max(1)
}

fn band(p50: When, p80: When) -> super::Band {
    super::Band {
        p50: p50.to_string(),
        p80: p80.to_string(),
    }
}

/// The directives recorded or ended since `prev` whose target `is` picks, as they are said.
fn about(prev: &Previous, is: impl Fn(&crate::ledger::format::Target) -> bool) -> Vec<String> {
    prev.touched
        .iter()
        .filter(|(t, _)| is(t))
        .map(|(_, said)| said.clone())
        .collect()
}

/// The directives behind each moved issue, by key, as they are said: those about it (`is`: the issue
/// itself, a person it is planned for), and those behind the moves it came from, followed through
/// `upstream` (what it waits on or blocks, the moved work ahead of it in its queue). An issue that moved
/// because the one it waits on was reprioritised names that directive. Empty when nothing was recorded or
/// ended since.
fn behind(
    prev: &Previous,
    changes: &[crate::consequence::IssueChange],
    is: impl Fn(&crate::consequence::IssueChange, &crate::ledger::format::Target) -> bool,
) -> HashMap<String, Vec<String>> {
    use std::collections::BTreeSet;
    if prev.touched.is_empty() {
        return HashMap::new();
    }
    let index: HashMap<&str, usize> = changes
        .iter()
        .enumerate()
        .map(|(n, c)| (c.issue.as_str(), n))
        .collect();
    // Indices into `prev.touched`, so that every list keeps the ledger's order.
    let mut sets: Vec<BTreeSet<usize>> = changes
        .iter()
        .map(|c| {
            prev.touched
                .iter()
                .enumerate()
                .filter(|(_, (t, _))| is(c, t))
                .map(|(n, _)| n)
                .collect()
        })
        .collect();
    let edges: Vec<Vec<usize>> = changes
        .iter()
        .map(|c| {
            c.upstream
                .iter()
                .filter_map(|k| index.get(k.as_str()).copied())
                .collect()
        })
        .collect();
    // Propagate to a fixed point: chains of waits and queues are short, and the sets only grow.
    loop {
        let mut grew = false;
        for (n, ups) in edges.iter().enumerate() {
            let add: Vec<usize> = ups
                .iter()
                .filter_map(|u| sets.get(*u))
                .flatten()
                .copied()
                .collect();
            if let Some(set) = sets.get_mut(n) {
                for a in add {
                    grew |= set.insert(a);
                }
            }
        }
        if !grew {
            break;
        }
    }
    changes
        .iter()
        .zip(sets)
        .filter(|(_, set)| !set.is_empty())
        .map(|(c, set)| {
            let said = set
                .into_iter()
                .filter_map(|n| prev.touched.get(n).map(|(_, said)| said.clone()))
                .collect();
            (c.issue.clone(), said)
        })
        .collect()
}

/// The issues whose own inputs changed between `prev` and today's `report`: their estimate, priority,
/// assignee, milestone or dependencies, or an op file applied since changed them on Gitea.
fn own_changes(prev: &Previous, report: &ForecastReport) -> std::collections::HashSet<String> {
    let was: HashMap<&IssueKey, &crate::forecast::IssueForecast> =
        prev.report.issues.iter().map(|f| (&f.issue, f)).collect();
    report
        .issues
        .iter()
        .filter(|f| {
            was.get(&f.issue).is_some_and(|old| {
                old.estimate != f.estimate
                    || old.priority != f.priority
                    || old.assignee != f.assignee
                    || old.milestone != f.milestone
                    || old.depends_on != f.depends_on
            })
        })
        .map(|f| &f.issue)
        .chain(prev.applied.iter().flat_map(|a| &a.changed))
        .map(ToString::to_string)
        .collect()
}

/// The most directive ids `sinceThen` names in each of its lists.
pub(crate) const SINCE_NAMED: usize = 10;

/// The last [`SINCE_NAMED`] of `ids` (in id order, so the newest).
fn newest(ids: &[String]) -> Vec<String> {
    ids[ids.len().saturating_sub(SINCE_NAMED)..].to_vec()
}

/// `ids` as prose, with how many more there are: `D-0008, D-0009 and 3 more`.
fn and_more(ids: &[String], more: usize) -> String {
    let mut named = ids.to_vec();
    if more > 0 {
        named.insert(0, format!("{more} earlier"));
    }
    crate::prose::and_list(&named)
}

/// What changed in the inputs between `prev` and today's forecast `report` of `snapshot`.
pub fn since_then(
    prev: &Previous,
    report: &ForecastReport,
    plan: &crate::plan::Plan,
    snapshot: &Snapshot,
) -> SinceThen {
    let then: std::collections::HashSet<&IssueKey> =
        prev.report.issues.iter().map(|f| &f.issue).collect();
    let synced = snapshot.synced_repositories();
    // Repositories put in the config since: their issues joined the plan, and are not "new".
    let added: std::collections::BTreeSet<&crate::domain::RepoName> = prev
        .synced
        .as_ref()
        .map(|then| {
            synced
                .iter()
                .copied()
                .filter(|r| !then.contains(r))
                .collect()
        })
        .unwrap_or_default();
    let mut joined: BTreeMap<String, usize> = added.iter().map(|r| (r.to_string(), 0)).collect();
    for f in report
        .issues
        .iter()
        .filter(|f| added.contains(&f.issue.repo))
    {
        *joined.entry(f.issue.repo.to_string()).or_default() += 1;
    }
    let arrived = |f: &&crate::forecast::IssueForecast| {
        !then.contains(&f.issue) && !added.contains(&f.issue.repo)
    };
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    for f in prev
        .report
        .issues
        .iter()
        .filter(|f| !synced.contains(&f.issue.repo))
    {
        *out.entry(f.issue.repo.to_string()).or_default() += 1;
    }
    // Issues a directive recorded or ended since is about, or touched (a scope directive about a
    // milestone moves its issues), changed for it, not on Gitea.
    let mut directed: std::collections::HashSet<&IssueKey> = prev
        .touched
        .iter()
        .filter_map(|(t, _)| match t {
            crate::ledger::format::Target::Issue(k) => Some(k),
            _ => None,
        })
        .collect();
    directed.extend(prev.applied.iter().flat_map(|a| &a.changed));
    directed.extend(
        plan.issues
            .iter()
            .filter(|i| {
                i.provenance_log
                    .iter()
                    .any(|r| prev.since_ids.contains(&r.directive))
            })
            .map(|i| &i.key),
    );
    let was: HashMap<&IssueKey, &crate::forecast::IssueForecast> =
        prev.report.issues.iter().map(|f| (&f.issue, f)).collect();
    let mut edited = Edited::default();
    let mut named: Vec<String> = Vec::new();
    for (old, f) in report
        .issues
        .iter()
        .filter(|f| !directed.contains(&f.issue))
        .filter_map(|f| Some((*was.get(&f.issue)?, f)))
    {
        edited.reestimated += usize::from(old.estimate != f.estimate);
        edited.reprioritised += usize::from(old.priority != f.priority);
        edited.reassigned += usize::from(old.assignee != f.assignee);
        let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_owned());
        if old.estimate != f.estimate {
            named.push(format!(
                "{} re-estimated {} → {}",
                f.issue,
                or_none(&old.estimate),
                or_none(&f.estimate)
            ));
        }
        if old.priority != f.priority {
            named.push(format!(
                "{} reprioritised p/{} → p/{}",
                f.issue, old.priority, f.priority
            ));
        }
        if old.assignee != f.assignee {
            named.push(match &f.assignee {
                Some(a) => format!("{} assigned to {a}", f.issue),
                None => format!("{} unassigned", f.issue),
            });
        }
        // A milestone deleted on Gitea leaves its issues in none: not "moved to another" (audit 132).
        edited.milestone += usize::from(old.milestone != f.milestone && f.milestone.is_some());
        edited.out_of_milestone += usize::from(old.milestone.is_some() && f.milestone.is_none());
        edited.dependencies += usize::from(old.depends_on != f.depends_on);
        // Not where an assignment alone moved it (out of diagnosis, into triage): "reassigned" says that.
        // Any other move is a column's, reassigned or not (audit 165: one reassigned and sent to
        // diagnosis by a label was only "reassigned").
        let by_assignment = old.assignee != f.assignee
            && old.lifecycle == crate::domain::Lifecycle::Diagnosis
            && f.lifecycle == crate::domain::Lifecycle::Triage;
        edited.columns += usize::from(old.lifecycle != f.lifecycle && !by_assignment);
    }
    if named.len() <= EDITS_NAMED {
        edited.named = named;
    }
    SinceThen {
        edited: (edited != Edited::default()).then_some(edited),
        applied: prev
            .applied
            .iter()
            .filter(|a| a.shortfall.is_none())
            .map(|a| a.id.clone())
            .collect(),
        not_whole: prev
            .applied
            .iter()
            .filter_map(|a| Some(format!("{} ({})", a.id, a.shortfall?)))
            .collect(),
        working_days_passed: {
            let (then, now) = (prev.report.as_of, report.as_of);
            let day0 = then.min(now);
            let span = u32::try_from((then.max(now) - day0).num_days() + 1).unwrap_or(u32::MAX);
            // The old day 0 up to the day before the new one, as the moves' reasons count them.
            let n = Calendar::new(&plan.team_calendar, day0, span).working_days_between(
                day0,
                then - chrono::Days::new(1),
                now - chrono::Days::new(1),
            );
            (n != 0).then_some(n)
        },
        directives: newest(&prev.recorded),
        directives_omitted: prev.recorded.len().saturating_sub(SINCE_NAMED),
        ended: newest(&prev.ended),
        ended_omitted: prev.ended.len().saturating_sub(SINCE_NAMED),
        closed: prev
            .report
            .issues
            .iter()
            .filter(|f| snapshot.issues.get(&f.issue).is_some_and(|i| i.is_closed()))
            .count(),
        new: report.issues.iter().filter(arrived).count(),
        reopened: report
            .issues
            .iter()
            .filter(arrived)
            .filter_map(|f| snapshot.issues.get(&f.issue))
            .filter(|i| {
                i.created_at.date_naive() < prev.report.as_of
                    && i.timeline
                        .iter()
                        .any(|e| e.kind == crate::domain::EventKind::Reopen)
            })
            .count(),
        gone: prev
            .report
            .issues
            .iter()
            .filter(|f| synced.contains(&f.issue.repo) && !snapshot.issues.contains_key(&f.issue))
            .count(),
        repositories_out: out
            .into_iter()
            .map(|(repository, open_issues)| RepositoryOut {
                repository,
                open_issues,
            })
            .collect(),
        repositories_in: joined
            .into_iter()
            .map(|(repository, open_issues)| RepositoryIn {
                repository,
                open_issues,
            })
            .collect(),
        settings_changed: prev.settings_changed,
        forecast_settings: prev.forecast_settings.clone(),
        engine_changed: prev.engine_changed,
        engine_then: prev.report.engine.clone().filter(|_| prev.engine_changed),
        recalibrated: Recalibrated::between(&prev.report.calibration, &report.calibration),
        refitted: Refitted::between(
            prev.report.abandonment.as_ref(),
            report.abandonment.as_ref(),
        ),
        not_read_since: None,
    }
}

impl SinceThen {
    /// Whether nothing changed: no directive, no issue closed or new, the same settings.
    pub fn is_empty(&self) -> bool {
        self.directives.is_empty()
            && self.ended.is_empty()
            && self.closed == 0
            && self.new == 0
            && self.gone == 0
            && self.repositories_out.is_empty()
            && self.repositories_in.is_empty()
            && self.edited.is_none()
            && self.applied.is_empty()
            && self.not_whole.is_empty()
            && self.working_days_passed.is_none()
            && !self.settings_changed
            && !self.engine_changed
            && self.recalibrated.is_none()
            && self.refitted.is_none()
            && self.not_read_since.is_none()
    }

    /// In words: `4 directives recorded (D-0004, D-0005, D-0006 and D-0007); D-0002 withdrawn; 2 issues
    /// closed; 1 new`, then `; commitea.yaml changed` when it did.
    pub fn words(&self) -> String {
        let said = self.said();
        match &self.not_read_since {
            Some(at) => format!("Gitea not read (the snapshot of {at}): {said}"),
            None => said,
        }
    }

    fn said(&self) -> String {
        use crate::prose::count;
        let directives = if self.directives.is_empty() {
            "no directive recorded".to_owned()
        } else {
            format!(
                "{} ({})",
                count(
                    self.directives.len() + self.directives_omitted,
                    "directive recorded",
                    "directives recorded"
                ),
                and_more(&self.directives, self.directives_omitted)
            )
        };
        let ended = if self.ended.is_empty() {
            String::new()
        } else {
            format!("; {}", and_more(&self.ended, self.ended_omitted))
        };
        let gone = if self.gone > 0 {
            format!(
                "; {} gone from Gitea (deleted, or moved to another repository)",
                count(self.gone, "issue", "issues")
            )
        } else {
            String::new()
        };
        let out: String = self
            .repositories_out
            .iter()
            .map(|r| {
                format!(
                    "; {} no longer synced ({} left the plan with it)",
                    r.repository,
                    count(r.open_issues, "open issue", "open issues")
                )
            })
            .chain(self.repositories_in.iter().map(|r| {
                format!(
                    "; {} now synced ({} joined the plan with it)",
                    r.repository,
                    count(r.open_issues, "open issue", "open issues")
                )
            }))
            .collect();
        let mut edited = self
            .edited
            .as_ref()
            .map(|e| format!("; {}", e.words()))
            .unwrap_or_default();
        if !self.applied.is_empty() {
            edited.push_str(&format!(
                "; {} applied",
                crate::prose::and_list(&self.applied)
            ));
        }
        if !self.not_whole.is_empty() {
            edited.push_str(&format!(
                "; not whole on Gitea: {}",
                crate::prose::and_list(&self.not_whole)
            ));
        }
        if let Some(r) = &self.recalibrated {
            edited.push_str(&format!("; {}", r.words()));
        }
        if let Some(r) = &self.refitted {
            edited.push_str(&format!("; {}", r.words()));
        }
        match self.working_days_passed {
            Some(n) if n > 0 => edited.push_str(&format!(
                "; {} passed",
                count(n, "working day", "working days")
            )),
            Some(n) => edited.push_str(&format!(
                "; day 0 moved back {}",
                count(-n, "working day", "working days")
            )),
            None => {}
        }
        format!(
            "{directives}{ended}; {} closed; {} new{}{gone}{out}{edited}{}",
            count(self.closed, "issue", "issues"),
            self.new,
            if self.reopened > 0 {
                format!(" ({} reopened)", self.reopened)
            } else {
                String::new()
            },
            if self.settings_changed {
                "; commitea.yaml changed"
            } else {
                ""
            },
        ) + &if self.engine_changed {
            // Both builds named (audit 144: the commit message said only "another version").
            format!(
                "; CommiTea itself changed ({} made that forecast, {} this one)",
                self.engine_then
                    .as_deref()
                    .unwrap_or("a version before 2026-12-05"),
                crate::forecast::ENGINE
            )
        } else {
            String::new()
        }
    }
}

/// The standup view.
pub fn standup(
    inputs: Inputs<'_>,
    snapshot: &Snapshot,
    previous: Option<&Previous>,
    settings: StandupSettings,
    selection: &Selection,
) -> Standup {
    let report = inputs.report;
    let plan = inputs.plan;
    let drift = match previous {
        None => Drift {
            since: None,
            since_as_of: None,
            summary: "no earlier committed forecast to compare with".to_owned(),
            milestones: Vec::new(),
            issues: Vec::new(),
            issues_moved: 0,
            since_then: None,
        },
        Some(prev) => {
            // The plan then, as far as the standup can tell: today's issues with the team of then.
            // (Holidays too: audit 124 found "holidays … added" never said, the plan then taking today's.)
            let then_plan = prev
                .team
                .as_ref()
                .map(|(team, calendar)| crate::plan::Plan {
                    team: team.clone(),
                    team_calendar: calendar.clone(),
                    ..plan.clone()
                });
            let c = crate::consequence::diff(
                &prev.report,
                report,
                then_plan.as_ref().unwrap_or(plan),
                plan,
            );
            let before: HashMap<&IssueKey, (When, When)> = prev
                .report
                .issues
                .iter()
                .map(|f| (&f.issue, (f.p50, f.p80)))
                .collect();
            let after: HashMap<&IssueKey, (When, When)> = report
                .issues
                .iter()
                .map(|f| (&f.issue, (f.p50, f.p80)))
                .collect();
            let keys: HashMap<String, &IssueKey> = before
                .keys()
                .chain(after.keys())
                .map(|k| (k.to_string(), *k))
                .collect();
            let wanted = |k: &IssueKey| {
                plan.issue(k).is_some_and(|i| {
                    let planned = report
                        .issues
                        .iter()
                        .find(|f| &f.issue == k)
                        .and_then(|f| f.planned_assignee.as_deref());
                    Selection {
                        state: None,
                        ..selection.clone()
                    }
                    .matches(i, planned)
                })
            };
            use crate::ledger::format::Target;
            let mut behind = behind(prev, &c.issues, |i, t| match t {
                Target::Issue(k) => k.to_string() == i.issue,
                // A directive about a person is behind the moves their change made (their capacity, the
                // plan giving their work to another), and those that follow from them: not every move of
                // their work (a capacity directive for June named as the cause of a re-estimate's slip).
                Target::Member(m) => i.people.iter().any(|p| p == m),
                Target::Milestone(_) => false,
            });
            // Only where they changed the figure: an issue whose p80 is the same without them moved for
            // something else. A directive about the issue itself stays: its op file may have carried it
            // to Gitea already, and the forecast without the ledger's entry still has it.
            if let Some(without) = &prev.without_directives {
                for (key, said) in behind.iter_mut() {
                    let Some(k) = keys.get(key) else { continue };
                    let same = matches!(
                        (after.get(k), without.issues.get(*k)),
                        (Some((_, now)), Some(then)) if now == then
                    );
                    if same {
                        said.retain(|s| {
                            prev.touched
                                .iter()
                                .any(|(t, x)| x == s && *t == Target::Issue((*k).clone()))
                        });
                    }
                }
                behind.retain(|_, said| !said.is_empty());
                // One directive since, and the issue's p80 is another without it: the move is that
                // directive's (partly at least), wherever the chain of strong pushes lost it (audit 108: 6
                // of the 22 moves the only change made did not name it, "queue of ines" among them).
                let only = (prev.since_ids.len() == 1)
                    .then(|| prev.touched.first().map(|(_, said)| said))
                    .flatten();
                if let Some(only) = only {
                    for i in &c.issues {
                        let Some(k) = keys.get(&i.issue) else {
                            continue;
                        };
                        let changed = matches!(
                            (after.get(k), without.issues.get(*k)),
                            (Some((_, now)), Some(then)) if now != then
                        );
                        if changed {
                            let said = behind.entry(i.issue.clone()).or_default();
                            if !said.contains(only) {
                                said.push(only.clone());
                            }
                        }
                    }
                }
            }
            // Who works on each issue: today's forecast's, else (closed or gone since) the one compared with.
            let mut person_of: HashMap<String, Option<&String>> = HashMap::new();
            for f in prev.report.issues.iter().chain(&report.issues) {
                person_of.insert(
                    f.issue.to_string(),
                    f.assignee.as_ref().or(f.planned_assignee.as_ref()),
                );
            }
            let issues: Vec<Moved> = c
                .issues
                .iter()
                .filter(|i| keys.get(&i.issue).is_some_and(|k| wanted(k)))
                .map(|i| {
                    let k = keys.get(&i.issue).copied();
                    Moved {
                        person: person_of.get(&i.issue).copied().flatten().cloned(),
                        subject: i.issue.clone(),
                        before: k.and_then(|k| before.get(k)).map(|(a, b)| band(*a, *b)),
                        after: k.and_then(|k| after.get(k)).map(|(a, b)| band(*a, *b)),
                        moved: i.moved_working_days,
                        why: Some(i.why.clone()),
                        changed: None,
                        directives: behind.get(i.issue.as_str()).cloned().unwrap_or_default(),
                    }
                })
                .collect();
            // A milestone moves with its issues: how many of them moved each way, and the biggest move
            // the way the milestone went, with its reason.
            // Today's milestone of an issue, else (a closed one) the one it had then.
            let mut milestone_of: HashMap<String, Option<u64>> = prev
                .report
                .issues
                .iter()
                .map(|f| (f.issue.to_string(), f.milestone))
                .collect();
            milestone_of.extend(
                report
                    .issues
                    .iter()
                    .map(|f| (f.issue.to_string(), f.milestone)),
            );
            // Issues that joined or left a milestone between the two forecasts (open in both, or new):
            // a change of scope moves a milestone without any of its issues moving.
            let was_in: HashMap<&IssueKey, Option<u64>> = prev
                .report
                .issues
                .iter()
                .map(|f| (&f.issue, f.milestone))
                .collect();
            // The issues that joined it, left it, or left Gitea while in it.
            // The repositories synced now: an issue of another left with its repository, not Gitea.
            let synced = snapshot.synced_repositories();
            let scope_keys = |id: u64| -> [Vec<String>; 4] {
                let joined: Vec<String> = report
                    .issues
                    .iter()
                    .filter(|f| f.milestone == Some(id))
                    .filter(|f| was_in.get(&f.issue).is_none_or(|m| *m != Some(id)))
                    .map(|f| f.issue.to_string())
                    .collect();
                let left: Vec<String> = report
                    .issues
                    .iter()
                    .filter(|f| f.milestone != Some(id))
                    .filter(|f| was_in.get(&f.issue) == Some(&Some(id)))
                    .map(|f| f.issue.to_string())
                    .collect();
                // Open in it then, and no longer on Gitea (deleted, or moved to another repository),
                // or of a repository no longer synced.
                let (gone, out): (Vec<&crate::forecast::IssueForecast>, Vec<_>) = prev
                    .report
                    .issues
                    .iter()
                    .filter(|f| f.milestone == Some(id) && !snapshot.issues.contains_key(&f.issue))
                    .partition(|f| synced.contains(&f.issue.repo));
                let keys = |fs: Vec<&crate::forecast::IssueForecast>| -> Vec<String> {
                    fs.iter().map(|f| f.issue.to_string()).collect()
                };
                [joined, left, keys(gone), keys(out)]
            };
            let scope_change = |id: u64| -> Option<String> {
                let [joined, left, gone, out] = scope_keys(id);
                let said = |keys: &[String], verb: &str| {
                    const SHOWN: usize = 3;
                    let mut named = keys[..keys.len().min(SHOWN)].join(", ");
                    if keys.len() > SHOWN {
                        named.push_str(&format!(" and {} more", keys.len() - SHOWN));
                    }
                    format!("{named} {verb} it")
                };
                let mut parts = Vec::new();
                if !joined.is_empty() {
                    parts.push(said(&joined, "joined"));
                }
                if !left.is_empty() {
                    parts.push(said(&left, "left"));
                }
                if !gone.is_empty() {
                    let mut s = said(&gone, "left");
                    s.push_str(" (gone from Gitea)");
                    parts.push(s);
                }
                if !out.is_empty() {
                    let mut s = said(&out, "left");
                    s.push_str(" (their repository no longer synced)");
                    parts.push(s);
                }
                // Nothing open in it any more (its work closed, or moved out): its date is today's.
                let emptied = |r: &ForecastReport| {
                    r.milestones
                        .iter()
                        .find(|m| m.id == id)
                        .map(|m| m.open_issues)
                };
                if emptied(&prev.report).is_some_and(|n| n > 0) && emptied(report) == Some(0) {
                    parts.push("nothing open in it any more".to_owned());
                }
                (!parts.is_empty()).then(|| parts.join("; "))
            };
            // The words, and the biggest mover's key (its directives are the milestone's too).
            let issues_moved_in = |id: u64, direction: i64| {
                let moved: Vec<&crate::consequence::IssueChange> = c
                    .issues
                    .iter()
                    .filter(|i| i.moved_working_days != 0)
                    .filter(|i| milestone_of.get(&i.issue) == Some(&Some(id)))
                    .collect();
                movers_words(&moved, direction)
            };
            // A milestone whose due date or chance of meeting it changed is news even where its p80
            // held (a PM moved the due date).
            let changed = |id: u64| -> Option<String> {
                let old = prev.report.milestones.iter().find(|m| m.id == id)?;
                let new = report.milestones.iter().find(|m| m.id == id)?;
                let changes = milestone_changes(old, new, false);
                (!changes.is_empty()).then(|| changes.join(", "))
            };
            let names = crate::consequence::names_of(&c.milestones);
            let milestones: Vec<Moved> = c
                .milestones
                .iter()
                .filter(|m| selection.milestone.is_none_or(|id| id == m.milestone))
                .map(|m| (m, changed(m.milestone)))
                .filter(|(m, changed)| {
                    m.moved_working_days != 0
                        || m.before.is_none()
                        || m.after.is_none()
                        || changed.is_some()
                })
                .map(|(m, changed)| {
                    let way = way_moved(
                        m.moved_working_days,
                        prev.report.milestones.iter().find(|f| f.id == m.milestone),
                        report.milestones.iter().find(|f| f.id == m.milestone),
                    );
                    (m, changed, issues_moved_in(m.milestone, way))
                })
                .map(|(m, changed, moved_in)| Moved {
                    person: None,
                    changed,
                    directives: {
                        // Directives about it, about the issues that joined or left it (a scope
                        // directive is about its issue), and those behind its biggest mover.
                        let scope: Vec<String> =
                            scope_keys(m.milestone).into_iter().flatten().collect();
                        let mut d = about(prev, |t| match t {
                            Target::Milestone(id) => *id == m.milestone,
                            Target::Issue(k) => scope.contains(&k.to_string()),
                            Target::Member(_) => false,
                        });
                        let top = moved_in.as_ref().and_then(|(_, top)| behind.get((*top)?));
                        for said in top.into_iter().flatten() {
                            if !d.contains(said) {
                                d.push(said.clone());
                            }
                        }
                        d.sort_by_key(|said| prev.touched.iter().position(|(_, s)| s == said));
                        // Not where the milestone's figures are the same without them.
                        let today = report
                            .milestones
                            .iter()
                            .find(|x| x.id == m.milestone)
                            .map(|x| (x.p80, x.probability_on_time, x.due));
                        let without = prev
                            .without_directives
                            .as_ref()
                            .and_then(|w| w.milestones.get(&m.milestone).copied());
                        // Gone from Gitea: the deletion is why, not a directive about the issues
                        // that left with it (audit 132: a one-issue scope directive was named for a
                        // deleted milestone's 45).
                        if today.is_none() || today == without {
                            d.clear();
                        }
                        d
                    },
                    subject: names.get(&m.milestone).unwrap_or(&m.title).clone(),
                    before: m.before.as_ref().map(|s| super::Band {
                        p50: s.p50.clone(),
                        p80: s.p80.clone(),
                    }),
                    after: m.after.as_ref().map(|s| super::Band {
                        p50: s.p50.clone(),
                        p80: s.p80.clone(),
                    }),
                    moved: m.moved_working_days,
                    // Closed on Gitea: that is why it left the forecast, not its issues' moves. A change
                    // of scope comes first: it moves the milestone whatever its issues did.
                    why: if m.closed {
                        Some("closed on Gitea".to_owned())
                    } else if m.after.is_none()
                        && !m.emptied
                        && synced.iter().any(|r| r.to_string() == m.repo)
                    {
                        // Gone while its repository is synced: deleted there (audit 133: the row said
                        // only which issues left it).
                        Some("deleted on Gitea".to_owned())
                    } else {
                        let scope = scope_change(m.milestone);
                        let moves = moved_in.map(|(words, _)| words);
                        match (scope, moves) {
                            (Some(s), Some(w)) => Some(format!("{s}; {w}")),
                            (s, w) => s.or(w),
                        }
                    },
                })
                .collect();
            let since_then = since_then(prev, report, plan, snapshot);
            // Another engine made that forecast: a move no directive recorded since explains is not put
            // down to a queue or a wait (an audit's first run after an upgrade blamed 97 moves on them);
            // one a directive explains keeps it, the engine's change said beside it (audit 86: a capacity
            // directive's two-month slip was "the new engine's, not the project's").
            let (mut milestones, mut issues, mut summary) = (milestones, issues, c.summary.clone());
            if prev.engine_changed {
                for m in milestones.iter_mut() {
                    m.why = Some(match (m.directives.is_empty(), m.why.take()) {
                        (false, Some(w)) => format!("{w}; {ENGINE_ALSO}"),
                        _ => ENGINE_CHANGED.to_owned(),
                    });
                }
                // An issue's own change (its estimate or priority set, an op applied to it, closed,
                // new) is the project's whatever the engine (audit 141: after an upgrade, every row of
                // the standup was the engine's, the issue an approved op changed too).
                let own = own_changes(prev, report);
                for m in &mut issues {
                    m.why = Some(match (m.directives.is_empty(), m.why.take()) {
                        (false, Some(w)) => format!("{w}; {ENGINE_ALSO}"),
                        (true, Some(w)) if crate::consequence::of_its_own(&w) => {
                            format!("{w}; {ENGINE_ALSO}")
                        }
                        _ if own.contains(m.subject.as_str()) => {
                            format!("{}; {ENGINE_ALSO}", crate::consequence::WHY_OWN)
                        }
                        _ => ENGINE_CHANGED.to_owned(),
                    });
                }
                // Both versions named: with two runners on two versions taking turns, which one ran is
                // what a PM needs to see (audit 141).
                let versions = format!(
                    "{} made it, {} made this one",
                    prev.report
                        .engine
                        .as_deref()
                        .unwrap_or("a version before 2026-12-05"),
                    crate::forecast::ENGINE
                );
                summary = if milestones.is_empty() && issues.is_empty() {
                    format!(
                        "CommiTea itself changed since that forecast ({versions}); no forecast change"
                    )
                } else {
                    format!(
                        "CommiTea itself changed since that forecast ({versions}): a move no directive \
                         since explains is the new engine's, not the project's. {summary}"
                    )
                };
            } else if !prev.forecast_settings.is_empty() {
                // The forecast's own settings changed (the abandonment model switched on, a workday's
                // hours): a queue or a day passed is no reason for a move they made (audit 68: 150 moves
                // put down to queues after the model was switched on).
                let keys = prev.forecast_settings.join("; ");
                // One sentence, said as a reason and, capitalised, at the head of the summary.
                let said = |the: &str| {
                    format!(
                        "{the} forecast's settings changed since that forecast ({keys}): the \
                         move is theirs more than the project's"
                    )
                };
                let why = said("the");
                // The directives named stay: they are named only where today's forecast without them
                // differs, on today's settings.
                for m in milestones.iter_mut().chain(issues.iter_mut()) {
                    m.why = Some(why.clone());
                }
                summary = format!("{}. {summary}", said("The"));
            }
            Drift {
                since: Some(prev.commit.clone()),
                since_as_of: Some(prev.report.as_of.to_string()),
                summary,
                milestones,
                issues_moved: issues.len(),
                // Half the limit each for moved issues and stale blockers keeps the payload small.
                issues: issues.into_iter().take(half(selection.limit)).collect(),
                since_then: Some(since_then),
            }
        }
    };

    // The window: day 0 and the next working days, on the team calendar.
    let cal = Calendar::new(&plan.team_calendar, report.as_of, 60);
    let mut last = report.as_of;
    let mut seen = 0;
    for d in 0..60u32 {
        if cal.capacity(d) > 0.0 {
            seen += 1;
            last = report.as_of + Days::new(u64::from(d));
            if seen >= settings.plan_days {
                break;
            }
        }
    }
    let forecasts: HashMap<&IssueKey, &crate::forecast::IssueForecast> =
        report.issues.iter().map(|f| (&f.issue, f)).collect();
    let people = report
        .people
        .iter()
        .filter(|p| {
            selection
                .assignee
                .as_deref()
                .is_none_or(|a| p.name.eq_ignore_ascii_case(a))
        })
        .map(|p| {
            let plan: Vec<PlannedWork> = p
                .queue
                .iter()
                .filter_map(|k| forecasts.get(k))
                .filter(|f| f.planned_start.date().is_some_and(|s| s <= last))
                .take(selection.limit)
                .map(|f| PlannedWork {
                    issue: f.issue.to_string(),
                    title: f.title.clone(),
                    from: f.planned_start.to_string(),
                    to: f.planned_end.to_string(),
                })
                .collect();
            let member = inputs.plan.member(&p.name);
            let starts = member.and_then(|m| m.starts_after(report.as_of));
            // Away: no working hour of their own in the window, and not yet to start.
            let window = u32::try_from((last - report.as_of).num_days() + 1).unwrap_or(0);
            let away_until = member
                .filter(|_| starts.is_none() && plan.is_empty())
                .map(|m| Calendar::new(&m.calendar, report.as_of, window + 366))
                .filter(|own| (0..window).all(|d| own.capacity(d) <= 0.0))
                .and_then(|own| {
                    (window..window + 366)
                        .find(|d| own.capacity(*d) > 0.0)
                        .map(|d| (report.as_of + Days::new(u64::from(d))).to_string())
                });
            PersonDay {
                person: p.name.clone(),
                idle: plan.is_empty() && away_until.is_none(),
                plan,
                starts: starts.map(|s| s.to_string()),
                away_until,
            }
        })
        .collect();

    let blocked = super::focus::blocked_by_map(inputs);
    let in_cycle: std::collections::HashSet<&crate::domain::IssueKey> = inputs
        .report
        .issues
        .iter()
        .filter(|f| f.flags.contains(&crate::forecast::Flag::DependencyCycle))
        .map(|f| &f.issue)
        .collect();
    let mut stale: Vec<StaleBlocker> = plan
        .issues
        .iter()
        .filter(|i| i.closed_at.is_none())
        .filter_map(|i| {
            let waiting = blocked.get(&i.key)?;
            let last_touch = snapshot
                .issues
                .get(&i.key)
                .map_or(i.updated_at, |r| r.updated_at);
            let idle = (plan.now - last_touch).num_days();
            (idle >= i64::from(settings.stale_days)).then(|| StaleBlocker {
                issue: i.key.to_string(),
                title: i.title.clone(),
                idle_days: idle,
                blocks: waiting.iter().map(ToString::to_string).collect(),
                assignee: i.assignee.clone(),
                in_cycle: in_cycle.contains(&i.key),
            })
        })
        .filter(|b| {
            selection.assignee.as_deref().is_none_or(|a| {
                b.assignee
                    .as_deref()
                    .is_some_and(|x| x.eq_ignore_ascii_case(a))
            })
        })
        .collect();
    stale.sort_by(|a, b| b.idle_days.cmp(&a.idle_days).then(a.issue.cmp(&b.issue)));
    let stale_blockers_total = stale.len();
    stale.truncate(half(selection.limit));
    Standup {
        as_of: report.as_of.to_string(),
        drift,
        people,
        stale_blockers: stale,
        stale_blockers_total,
    }
}

/// Which way a milestone moved: its p80's working days, else the sign of its p50's move. A milestone whose p80 held can still have got worse (audit
/// 165: p50 six days later and P(on time) halved, put down to an issue one day earlier).
fn way_moved(
    p80_moved: i64,
    before: Option<&crate::forecast::MilestoneForecast>,
    after: Option<&crate::forecast::MilestoneForecast>,
) -> i64 {
    if p80_moved != 0 {
        return p80_moved;
    }
    // With nothing open on a side there is no date to compare.
    let (Some(old), Some(new)) = (before, after) else {
        return 0;
    };
    if old.open_issues == 0 || new.open_issues == 0 {
        return 0;
    }
    // A date is earlier than "beyond horizon". Only the dates: a chance of being on time that moved
    // with the due date is no move of the work (audit 170: a deadline moved read "what moved is its
    // futures as a whole").
    let rank = |w: crate::forecast::When| w.date().map_or((1, None), |d| (0, Some(d)));
    match rank(new.p50).cmp(&rank(old.p50)) {
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
    }
}

/// How many of a milestone's issues moved each way and the biggest move its way (`moved`, biggest move
/// first), with that issue's key; the milestone moved `direction` working days (only its sign counts
/// where the p80 held: [`way_moved`]).
fn movers_words<'a>(
    moved: &[&'a crate::consequence::IssueChange],
    direction: i64,
) -> Option<(String, Option<&'a str>)> {
    if moved.is_empty() {
        // Audit 165: a milestone three working days later with no word of why.
        return (direction != 0).then(|| {
            (
                "none of its issues' own p80 moved: what moved is its futures as a whole, how many of \
                 its issues are done at all and together"
                    .to_owned(),
                None,
            )
        });
    }
    let later = moved.iter().filter(|i| i.moved_working_days > 0).count();
    let earlier = moved.len() - later;
    // Biggest move first, so the first one the milestone's way is the biggest. None its way: no issue is
    // named as its reason (audit 92: a milestone three days earlier was put down to an issue five days
    // later).
    let Some(top) = moved
        .iter()
        .find(|i| direction == 0 || i.moved_working_days.signum() == direction.signum())
    else {
        return Some((
            format!(
                "{later} of its issues moved later, {earlier} earlier, none its way: the spread of its \
                 futures moved, not one issue's date"
            ),
            None,
        ));
    };
    // A p80 that went between a date and beyond the horizon is said so, not counted.
    let how = match (&top.before, &top.after) {
        (Some(b), Some(a)) => crate::prose::p80_moved(&b.p80, &a.p80, top.moved_working_days),
        _ => crate::prose::working_days_moved(top.moved_working_days),
    };
    // A mover that is a small part of the milestone's move is not its reason: the rest is which of its
    // issues are done at all in the futures (audit 163: a milestone 86 working days later was put down
    // to "acme/mobile#101, +13 working days: queue of amara").
    let part = if direction != 0 && top.moved_working_days.abs() * 2 < direction.abs() {
        "; that is less than half the milestone's move: the rest is in how many of its issues are \
         done at all, in its futures, not in one issue's date"
            .to_owned()
    } else {
        String::new()
    };
    Some((
        format!(
            "{later} of its issues moved later, {earlier} earlier; the most: {}, {how}: {}{part}",
            top.issue, top.why
        ),
        Some(top.issue.as_str()),
    ))
}

#[cfg(test)]
mod tests {
    use super::{Edited, Recalibrated, SinceThen, newest};

    #[test]
    fn a_milestone_is_not_put_down_to_an_issue_that_moved_the_other_way() {
        let change = |issue: &str, moved: i64| crate::consequence::IssueChange {
            issue: issue.into(),
            title: String::new(),
            before: None,
            after: None,
            moved_working_days: moved,
            why: "waits on acme/api#1".into(),
            upstream: Vec::new(),
            people: Vec::new(),
        };
        let (later, earlier) = (change("acme/api#6", 5), change("acme/api#7", -2));
        let (words, top) = super::movers_words(&[&later, &earlier], -3).unwrap();
        assert_eq!(top, Some("acme/api#7"));
        assert!(
            words.ends_with("the most: acme/api#7, \u{2212}2 working days: waits on acme/api#1"),
            "{words}"
        );
        // A small part of the milestone's move is named as such (audit 163: +13 of +86).
        let (words, _) = super::movers_words(&[&later], 86).unwrap();
        assert!(
            words.ends_with(
                "the most: acme/api#6, +5 working days: waits on acme/api#1; that is less than half the \
                 milestone's move: the rest is in how many of its issues are done at all, in its futures, \
                 not in one issue's date"
            ),
            "{words}"
        );
        let (words, top) = super::movers_words(&[&later], -3).unwrap();
        assert_eq!(top, None);
        assert!(words.contains("none its way"), "{words}");
        assert!(super::movers_words(&[], 0).is_none());
        let (words, top) = super::movers_words(&[], 4).unwrap();
        assert!(
            words.starts_with("none of its issues' own p80 moved"),
            "{words}"
        );
        assert_eq!(top, None);
        // An issue whose p80 left the horizon is said so, not counted to it (audit 101: "+451").
        let mut gone = change("acme/api#8", 451);
        gone.before = Some(crate::consequence::IssueSide {
            p50: "2027-03-01".into(),
            p80: "2027-04-01".into(),
            probability_done: None,
            in_cycle: false,
        });
        gone.after = Some(crate::consequence::IssueSide {
            p50: "beyond horizon".into(),
            p80: "beyond horizon".into(),
            probability_done: None,
            in_cycle: false,
        });
        let (words, _) = super::movers_words(&[&gone], 400).unwrap();
        assert!(
            words.ends_with("the most: acme/api#8, left the horizon: waits on acme/api#1"),
            "{words}"
        );
    }

    #[test]
    fn a_milestone_whose_p80_held_moves_the_way_its_p50_or_chance_did() {
        let side = |p50: &str, on_time: f64| -> crate::forecast::MilestoneForecast {
            serde_json::from_value(serde_json::json!({
                "id": 3, "repo": "acme/api", "title": "Public API v2", "state": "open",
                "due": "2027-11-01", "hard": false, "open_issues": 12, "closed_issues": 4,
                "remaining_hours": 80.0, "p10": "2027-09-01", "p50": p50, "p80": "2027-11-19",
                "probability_on_time": on_time, "slack_days": -13,
            }))
            .unwrap()
        };
        let way = |a: &crate::forecast::MilestoneForecast,
                   b: &crate::forecast::MilestoneForecast| {
            super::way_moved(0, Some(a), Some(b))
        };
        // Audit 165: p50 six days later and P(on time) 4% → 2%, the p80 held.
        let before = side("2027-10-13", 0.04);
        assert_eq!(way(&before, &side("2027-10-19", 0.02)), 1);
        assert_eq!(way(&before, &side("beyond horizon", 0.02)), 1);
        assert_eq!(way(&before, &side("2027-10-01", 0.04)), -1);
        assert_eq!(
            way(&before, &side("2027-10-13", 0.02)),
            0,
            "only the chance moved"
        );
        assert_eq!(way(&before, &side("2027-10-13", 0.04)), 0);
        assert_eq!(
            super::way_moved(-4, Some(&before), None),
            -4,
            "the p80's move wins"
        );
        // So an issue one day earlier is not named as the reason it got worse.
        let earlier = crate::consequence::IssueChange {
            issue: "acme/api#175".into(),
            title: String::new(),
            before: None,
            after: None,
            moved_working_days: -1,
            why: "queue of amara".into(),
            upstream: Vec::new(),
            people: Vec::new(),
        };
        let (words, top) =
            super::movers_words(&[&earlier], way(&before, &side("2027-10-19", 0.02))).unwrap();
        assert_eq!(top, None);
        assert!(words.contains("none its way"), "{words}");
    }

    #[test]
    fn what_changed_says_the_days_that_passed_the_files_applied_and_the_edits() {
        let mut since = SinceThen {
            directives: vec![],
            directives_omitted: 0,
            ended: vec![],
            ended_omitted: 0,
            closed: 0,
            new: 0,
            reopened: 0,
            gone: 0,
            repositories_out: vec![],
            repositories_in: vec![],
            applied: vec!["C-0003".into()],
            not_whole: vec![],
            edited: Some(Edited {
                reassigned: 1,
                ..Edited::default()
            }),
            working_days_passed: Some(1),
            settings_changed: false,
            forecast_settings: vec![],
            engine_changed: false,
            engine_then: None,
            recalibrated: None,
            refitted: None,
            not_read_since: None,
        };
        assert_eq!(
            since.words(),
            "no directive recorded; 0 issues closed; 0 new; on Gitea, 1 issue reassigned; C-0003 applied; \
             1 working day passed"
        );
        assert!(!since.is_empty());
        // Read from no server: said first (audit 193: a day with the server down read as a quiet day).
        let mut offline = since.clone();
        offline.not_read_since = Some("2026-12-16 17:00 UTC".into());
        assert!(
            offline.words().starts_with(
                "Gitea not read (the snapshot of 2026-12-16 17:00 UTC): no directive recorded"
            ),
            "{}",
            offline.words()
        );
        // A year of directives since is named by its newest, the rest counted (audit 145).
        let ids: Vec<String> = (1..=12).map(|n| format!("D-{n:04}")).collect();
        let mut many = since.clone();
        many.directives = newest(&ids);
        many.directives_omitted = ids.len() - many.directives.len();
        assert!(
            many.words()
                .starts_with("12 directives recorded (2 earlier, D-0003, D-0004, D-0005, "),
            "{}",
            many.words()
        );
        assert!(
            many.words().contains("D-0011 and D-0012); "),
            "{}",
            many.words()
        );
        since.working_days_passed = Some(-2);
        assert!(since.words().ends_with("; day 0 moved back 2 working days"));
        since.new = 2;
        since.reopened = 1;
        assert!(
            since.words().contains("; 2 new (1 reopened);"),
            "{}",
            since.words()
        );
        since.new = 0;
        since.reopened = 0;
        let cal = |n, m, sigma, cold| crate::forecast::CalibrationSummary {
            n,
            cold_start: cold,
            global_multiplier: m,
            sigma,
            by_label_bias: vec![],
            by_person_bias: vec![],
        };
        // The same calibration, or two priors however many samples each counted: nothing moved by it.
        assert_eq!(
            Recalibrated::between(&cal(61, 1.318, 0.503, false), &cal(61, 1.318, 0.503, false)),
            None
        );
        assert_eq!(
            Recalibrated::between(&cal(3, 1.0, 0.6, true), &cal(4, 1.0, 0.6, true)),
            None
        );
        since.recalibrated =
            Recalibrated::between(&cal(61, 1.318, 0.503, false), &cal(62, 1.372, 0.581, false));
        assert!(!since.is_empty());
        assert!(
            since.words().ends_with(
                "; calibration fitted again on 62 closed issues (61 before): effort ×1.32 → ×1.37, \
                 spread σ 0.50 → 0.58; day 0 moved back 2 working days"
            ),
            "{}",
            since.words()
        );
        since.recalibrated =
            Recalibrated::between(&cal(5, 1.0, 0.6, true), &cal(6, 1.2, 0.4, false));
        assert!(
            since.words().contains(
                "; calibration learnt from 6 closed issues now, no longer the prior: effort ×1.20, spread σ 0.40;"
            ),
            "{}",
            since.words()
        );
        since.recalibrated =
            Recalibrated::between(&cal(6, 1.2, 0.4, false), &cal(5, 1.0, 0.6, true));
        assert!(
            since.words().contains(
                "; calibration back to the prior (5 closed issues left to learn from, 6 before);"
            ),
            "{}",
            since.words()
        );
        since.recalibrated = None;
        // A file Gitea refused is not said applied (it was, for any file the apply stage recorded).
        since.applied.clear();
        since.not_whole = vec!["C-0004 (nothing applied)".into()];
        since.working_days_passed = None;
        assert!(
            since
                .words()
                .ends_with("1 issue reassigned; not whole on Gitea: C-0004 (nothing applied)"),
            "{}",
            since.words()
        );
    }

    #[test]
    fn a_cut_line_that_changed_is_said_with_who_joined_and_left() {
        let cut = |keys: &[&str]| crate::forecast::CutLine {
            issues: keys.iter().map(|k| k.parse().unwrap()).collect(),
            hours: 10.0,
            p80: crate::forecast::When::BeyondHorizon,
            probability_on_time: 0.8,
            meets_deadline: true,
            untrimmed: false,
            empties_milestone: false,
        };
        let (a, b) = (
            cut(&["acme/web#1", "acme/web#2"]),
            cut(&["acme/web#2", "acme/web#1"]),
        );
        assert_eq!(
            super::cut_line_change(Some(&a), Some(&b)),
            None,
            "the same issues"
        );
        let c = cut(&["acme/web#2", "acme/web#3", "acme/web#4"]);
        assert_eq!(
            super::cut_line_change(Some(&a), Some(&c)).as_deref(),
            Some("cut line 2 → 3 issues (acme/web#3 and acme/web#4 joined; acme/web#1 left)")
        );
        assert_eq!(
            super::cut_line_change(None, Some(&c)).as_deref(),
            Some("cut line: 3 issues")
        );
        assert_eq!(
            super::cut_line_change(Some(&c), None).as_deref(),
            Some("no cut line any more")
        );
        assert_eq!(super::cut_line_change(None, None), None);
    }

    #[test]
    fn the_abandonment_model_learning_from_other_closes_is_said() {
        let summary =
            |events: usize, open: usize, expected_done: f64| crate::forecast::AbandonmentSummary {
                events,
                cold_start: false,
                window_days: 365,
                team_rate: 0.01,
                open,
                expected_done,
                strata: Vec::new(),
            };
        let (then, now) = (summary(160, 160, 35.57), summary(161, 159, 51.76));
        let r = super::Refitted::between(Some(&then), Some(&now)).expect("a refit");
        assert_eq!(
            r.words(),
            "the closing-rate model learnt from 161 closes (160 before): 51.8 of the 159 open expected \
             done within its window (35.6 of 160 before)"
        );
        // The same closes, a day older: not a refit; and no model on either side, nothing to say.
        assert!(super::Refitted::between(Some(&then), Some(&summary(160, 160, 30.0))).is_none());
        assert!(super::Refitted::between(None, Some(&now)).is_none());
    }

    #[test]
    fn edits_on_gitea_are_said_by_what_changed() {
        let e = Edited {
            reestimated: 1,
            reprioritised: 0,
            reassigned: 2,
            milestone: 1,
            out_of_milestone: 0,
            dependencies: 0,
            columns: 1,
            named: vec![],
        };
        assert_eq!(
            e.words(),
            "on Gitea, 1 issue re-estimated, 2 reassigned, 1 moved to another milestone and 1 moved to \
             another column"
        );
        let e = Edited {
            dependencies: 1,
            ..Edited::default()
        };
        assert_eq!(e.words(), "on Gitea, 1 issue given other dependencies");
        let e = Edited {
            reprioritised: 3,
            ..Edited::default()
        };
        assert_eq!(e.words(), "on Gitea, 3 issues reprioritised");
        // Few, and of estimates, priorities and assignees: one by one (audit 193).
        let e = Edited {
            reestimated: 1,
            reassigned: 1,
            named: vec![
                "acme/web#111 re-estimated 1d → 2w".into(),
                "acme/web#146 assigned to dana".into(),
            ],
            ..Edited::default()
        };
        assert_eq!(
            e.words(),
            "on Gitea, acme/web#111 re-estimated 1d → 2w and acme/web#146 assigned to dana"
        );
    }
}
