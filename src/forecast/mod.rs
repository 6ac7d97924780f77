//! The forecast stage: turn the plan into engine input, schedule, simulate, and report ranges.
//!
//! Everything here is deterministic: the same plan, seed and trial count give the same report, byte for
//! byte. The report is written to `forecast/forecast.json` and is what the views are computed from.

//!
//! One file per job: [`input`] (the plan as engine input), [`run`](mod@run) (the forecast), [`report`] (what it
//! says), [`cut_line`] (what a missed hard deadline would have to drop), [`abandonment`] (the
//! abandonment model's input), [`key`] (the key of a forecast's inputs, for reusing the committed one) and
//! [`tjp`] (the TaskJuggler export).

mod abandonment;
mod cut_line;
mod input;
mod key;
mod report;
mod run;
mod tjp;

use std::collections::{BTreeMap, HashMap};

use chrono::{Days, NaiveDate};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::domain::{IssueKey, Lifecycle, OpenState};
use crate::engine::calendar::working_hours_between;
use crate::engine::calendar::{end_day, start_day};
use crate::engine::schedule::Schedule;
use crate::engine::{
    Adaptive, Calendar, Calibration, Distribution, Exposure, Fate, FateFeatures, FateModel,
    MonteCarlo, Prepared, Project, Sample, Task, calibrate, fate,
};
use crate::plan::{EstimateSource, Plan, PlannedIssue};

use abandonment::history_at;
pub use abandonment::{FateTuning, choose_frailty, fate_exposures, fate_features};
use cut_line::cut_line;
pub use input::{Built, build, calibration_samples};
pub(crate) use key::ledger_entries;
pub use report::*;
pub use run::{run, run_or_reuse, run_unkeyed, run_with};
pub use tjp::export_tjp;

impl Settings {
    /// The configured settings; without a configured seed, [`DEFAULT_SEED`].
    pub(crate) fn from_config(config: &crate::config::Config) -> Self {
        Self {
            trials: config.forecast.trials.0,
            seed: config.forecast.seed.unwrap_or(DEFAULT_SEED),
            horizon_days: config.forecast.horizon_days.0,
        }
    }
}

/// How a forecast is run, beyond the settings that fix its numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mode {
    /// Stop the Monte Carlo early once every percentile is stable to a working day
    /// (`forecast.adaptive_trials`; see [`crate::engine::Adaptive`]), with [`ADAPTIVE_FLOOR`] trials at
    /// least and the configured trials at most.
    pub adaptive_trials: bool,
    /// Leave out the cut lines of hard deadlines (several smaller simulations each): a what-if's
    /// forecast after the change, whose consequence does not report them.
    pub skip_cut_lines: bool,
}

impl Mode {
    /// The configured mode.
    pub(crate) fn from_config(config: &crate::config::Config) -> Self {
        Self {
            adaptive_trials: config.forecast.adaptive_trials,
            skip_cut_lines: false,
        }
    }
}

/// The trials of every batch of adaptive trials (at least two batches run).
pub const ADAPTIVE_FLOOR: u32 = 1_000;

/// The engine a forecast is made by: the crate's version and a hash of the source it was built from
/// (`build.rs`). Recorded in every forecast (`ForecastReport::engine`) and part of its reuse key.
pub const ENGINE: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("ENGINE_SOURCE_HASH"));

/// The settings the forecast runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Monte Carlo trials.
    pub trials: u32,
    /// The seed.
    pub seed: u64,
    /// Calendar days forecast.
    pub horizon_days: u32,
}

/// A seed in words: `seed 7`, or `the default seed` for [`DEFAULT_SEED`], a number nobody set (audit 179:
/// "not the settings' 4859222839642056033").
pub(crate) fn seed_words(seed: u64) -> String {
    if seed == DEFAULT_SEED {
        "the default seed".to_owned()
    } else {
        format!("seed {seed}")
    }
}

/// The seed when the config names none ("CommiTea" in ASCII). A constant, not a hash of the state: a
/// seed that changed with every edit would redraw every issue's numbers, and plans would jump with
/// nothing changed.
pub(crate) const DEFAULT_SEED: u64 = 0x436f_6d6d_6954_6561;

/// What a plan keeps of the forecasts before it: whom each unassigned open issue is planned for
/// ([`Plan::planned_for`]) and the cut lines tried first ([`Plan::cut_before`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Kept {
    /// Whom each unassigned open issue is kept with.
    pub planned_for: BTreeMap<IssueKey, String>,
    /// The cut line of each hard-deadline milestone, by id.
    pub cut_before: BTreeMap<u64, Vec<IssueKey>>,
}

/// Who a forecast planned each unassigned open issue for: what the next forecast keeps
/// ([`Plan::planned_for`]).
pub fn planned_people(report: &ForecastReport) -> BTreeMap<IssueKey, String> {
    report
        .issues
        .iter()
        .filter(|f| f.assignee.is_none())
        .filter_map(|f| Some((f.issue.clone(), f.planned_assignee.clone()?)))
        .collect()
}

/// The cut line `report` gave each hard-deadline milestone, by id: the next forecast tries those issues
/// first ([`Plan::cut_before`]).
pub fn cut_lines(report: &ForecastReport) -> BTreeMap<u64, Vec<IssueKey>> {
    report
        .milestones
        .iter()
        .filter_map(|m| Some((m.id, m.cut_line.as_ref()?.issues.clone())))
        .collect()
}

/// Who of `team` the forecast `report` did not plan for: people who joined since (in `commitea.yaml`,
/// or hired by a capacity directive) and work on or after `as_of`. A hire whose every hour is before the
/// forecast's day plans nothing, and shares nothing out again (audit 189: a past hire written by hand
/// moved three milestones).
pub fn joined_since(
    team: &[crate::plan::PlannedMember],
    as_of: NaiveDate,
    report: &ForecastReport,
) -> Vec<String> {
    team.iter()
        .filter(|m| !report.people.iter().any(|p| p.name == m.name))
        .filter(|m| m.calendar.last_working_day().is_none_or(|d| d >= as_of))
        .map(|m| m.name.clone())
        .collect()
}

/// Who of `team` stays longer than the forecast `report` had them: their last day then came within its
/// horizon, and now it is later, or gone (a leave withdrawn, or put back), with that last day.
pub fn staying_longer<'a>(
    team: &'a [crate::plan::PlannedMember],
    report: &ForecastReport,
) -> Vec<(&'a str, NaiveDate)> {
    team.iter()
        .filter_map(|m| {
            let then = report.people.iter().find(|p| p.name == m.name)?.last_day?;
            m.calendar
                .last_working_day()
                .is_none_or(|now| now > then)
                .then_some((m.name.as_str(), then))
        })
        .collect()
}

/// What a plan of `team` keeps of the people `report` planned unassigned work for
/// ([`planned_people`]): all of it while the team is the one the report planned, nothing once someone
/// joined or stays longer — a PM who adds a person, or takes back a leave, expects the work shared out
/// again; kept, the newcomer would get only work never planned before, and the work moved off a leaver
/// would never come back (audit 124: withdrawing a mistaken leave left Public API v2 where it had put it).
pub fn people_to_keep(
    team: &[crate::plan::PlannedMember],
    as_of: NaiveDate,
    report: &ForecastReport,
) -> BTreeMap<IssueKey, String> {
    if joined_since(team, as_of, report).is_empty() && staying_longer(team, report).is_empty() {
        planned_people(report)
    } else {
        BTreeMap::new()
    }
}

// `+ 0.0` turns a negative zero (the sum of nothing is -0.0) into 0, which the JSON prints as `0.0`,
// not `-0.0`.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0 + 0.0
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6 + 0.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0 + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_never_gives_a_negative_zero() {
        let nothing: f64 = std::iter::empty::<f64>().sum();
        assert!(nothing.is_sign_negative(), "the sum of nothing is -0.0");
        for r in [
            round2(nothing),
            round3(nothing),
            round6(nothing),
            round2(-0.001),
        ] {
            assert!(r == 0.0 && r.is_sign_positive(), "{r:?}");
        }
    }
}
