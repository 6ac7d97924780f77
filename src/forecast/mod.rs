//! The forecast stage: turn the plan into engine input, schedule, simulate, and report ranges.
//!
//! Everything here is deterministic: the same plan, seed and trial count give the same report, byte for
//! byte. The report is written to `forecast/forecast.json` and is what the views are computed from.

//!
//! One file per job: [`input`] (the plan as engine input), [`run`](mod@run) (the forecast), [`report`] (what it
//! says), [`cut_line`] (what a missed hard deadline would have to drop), [`abandonment`] (the
//! abandonment model's input) and [`tjp`] (the TaskJuggler export).

mod abandonment;
mod cut_line;
mod input;
mod report;
mod run;
mod tjp;

use std::collections::{BTreeMap, HashMap};

use chrono::{Days, NaiveDate};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::domain::{IssueKey, Lifecycle, OpenState};
use crate::engine::calendar::working_hours_between;
use crate::engine::calendar::{end_day, start_day};
use crate::engine::{
    Calendar, Calibration, Distribution, Exposure, Fate, FateFeatures, FateModel, MonteCarlo,
    Prepared, Project, Sample, Task, calibrate, fate,
};
use crate::plan::{EstimateSource, Plan, PlannedIssue};

use abandonment::history_days;
pub use abandonment::{choose_frailty, fate_exposures, fate_features};
use cut_line::cut_line;
pub use input::{Built, build, calibration_samples};
pub use report::*;
pub use run::run;
pub use tjp::export_tjp;

impl Settings {
    /// The configured settings; without a configured seed, the seed derives from `plan`'s content.
    pub(crate) fn from_config(config: &crate::config::Config, plan: &Plan) -> Self {
        Self {
            trials: config.forecast.trials.0,
            seed: config.forecast.seed.unwrap_or_else(|| content_seed(plan)),
            horizon_days: config.forecast.horizon_days.0,
        }
    }
}

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

/// A seed derived from the plan's content: the same state always gets the same seed.
pub(crate) fn content_seed(plan: &Plan) -> u64 {
    // FNV-1a over what identifies the state: each issue's key, state and last change, and the day.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(plan.as_of.to_string().as_bytes());
    for i in &plan.issues {
        feed(i.key.to_string().as_bytes());
        feed(i.updated_at.to_rfc3339().as_bytes());
        feed(if i.state == OpenState::Open {
            b"o"
        } else {
            b"c"
        });
    }
    h
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
