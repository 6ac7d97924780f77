//! The forecast stage: turn the plan into engine input, schedule, simulate, and report ranges.
//!
//! Everything here is deterministic: the same plan, seed and trial count give the same report, byte for
//! byte. The report is written to `forecast/forecast.json` and is what the views are computed from.

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

/// A forecast date: a day, or beyond the forecast horizon ("probably not in the time we look at").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum When {
    /// On this day.
    Date(NaiveDate),
    /// Later than the horizon, or never.
    BeyondHorizon,
}

impl When {
    /// The date, if within the horizon.
    pub fn date(self) -> Option<NaiveDate> {
        match self {
            Self::Date(d) => Some(d),
            Self::BeyondHorizon => None,
        }
    }
}

impl std::fmt::Display for When {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Date(d) => write!(f, "{d}"),
            Self::BeyondHorizon => f.write_str("beyond horizon"),
        }
    }
}

impl<'de> Deserialize<'de> for When {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "beyond horizon" {
            return Ok(Self::BeyondHorizon);
        }
        s.parse::<NaiveDate>()
            .map(Self::Date)
            .map_err(|e| serde::de::Error::custom(format!("\"{s}\": {e}")))
    }
}

impl Serialize for When {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Settings {
    /// The configured settings; without a configured seed, the seed derives from `plan`'s content.
    pub fn from_config(config: &crate::config::Config, plan: &Plan) -> Self {
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

/// The calibration, as the seed's `calibration` view names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CalibrationSummary {
    /// Finished issues with an estimate that calibration learnt from.
    pub n: usize,
    /// Whether the documented prior is used because there is too little history.
    pub cold_start: bool,
    /// Actual effort over estimate at the median, for the team.
    pub global_multiplier: f64,
    /// σ of ln(actual / estimate) once people's and labels' biases are accounted for.
    pub sigma: f64,
    /// Per label: how much longer (> 1) or shorter its work takes than the team's figure.
    pub by_label_bias: Vec<LabelBias>,
    /// Per person: the same.
    pub by_person_bias: Vec<PersonBias>,
}

/// One label's bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelBias {
    /// The label.
    pub label: String,
    /// Samples.
    pub n: usize,
    /// Multiplier relative to the team.
    pub bias: f64,
}

/// One person's bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonBias {
    /// The person.
    pub person: String,
    /// Samples.
    pub n: usize,
    /// Multiplier relative to the team.
    pub bias: f64,
}

impl CalibrationSummary {
    fn of(c: &Calibration) -> Self {
        Self {
            n: c.n,
            cold_start: c.cold_start,
            global_multiplier: round3(c.global_multiplier),
            sigma: round3(c.sigma),
            by_label_bias: c
                .by_label
                .iter()
                .map(|b| LabelBias {
                    label: b.key.clone(),
                    n: b.n,
                    bias: round3(b.bias),
                })
                .collect(),
            by_person_bias: c
                .by_person
                .iter()
                .map(|b| PersonBias {
                    person: b.key.clone(),
                    n: b.n,
                    bias: round3(b.bias),
                })
                .collect(),
        }
    }
}

/// The forecast of one open issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IssueForecast {
    /// `owner/repo#N`.
    pub issue: IssueKey,
    /// Title.
    pub title: String,
    /// Lifecycle column now.
    pub lifecycle: Lifecycle,
    /// Who it is assigned to.
    pub assignee: Option<String>,
    /// Who the plan gives it to (the assignee, or whoever finishes it first).
    pub planned_assignee: Option<String>,
    /// Its priority level.
    pub priority: u8,
    /// Its priority after inheriting from what waits for it.
    pub effective_priority: u8,
    /// Milestone id.
    pub milestone: Option<u64>,
    /// Estimate label (`2d`), if any.
    pub estimate: Option<String>,
    /// Where the estimate came from.
    pub estimate_source: EstimateSource,
    /// Remaining effort, median, in working hours.
    pub remaining_hours: f64,
    /// Start in the deterministic (median) plan.
    pub planned_start: When,
    /// End in the deterministic (median) plan.
    pub planned_end: When,
    /// 10% of simulated futures end by this day.
    pub p10: When,
    /// Half of them.
    pub p50: When,
    /// 80% of them.
    pub p80: When,
    /// Share of simulated futures in which it is done by its milestone's due date, if it has one.
    pub probability_by_due: Option<f64>,
    /// The probability it is done within the forecast horizon (the share of simulated futures), when the
    /// abandonment model has enough history (absent: every open issue is assumed done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_done: Option<f64>,
    /// Anything a reader should know about the issue's forecast.
    pub flags: Vec<Flag>,
}

/// Something a reader should know about one issue's forecast.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// It has no estimate: one was imputed.
    ImputedEstimate,
    /// It depends on an issue that is not in the snapshot.
    UnknownDependency,
    /// Its assignee is not on the team: planned for the team instead.
    AssigneeNotInTeam,
    /// It is part of a dependency cycle (cut to schedule it).
    DependencyCycle,
    /// It waits on a dependency cycle.
    WaitsOnCycle,
}

/// The forecast of one milestone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MilestoneForecast {
    /// Gitea id.
    pub id: u64,
    /// Repository.
    pub repo: String,
    /// Title.
    pub title: String,
    /// Open or closed.
    pub state: OpenState,
    /// Due day.
    pub due: Option<NaiveDate>,
    /// Whether the due date cannot move.
    pub hard: bool,
    /// Open issues in it.
    pub open_issues: usize,
    /// Closed issues in it.
    pub closed_issues: usize,
    /// Remaining effort (medians) in working hours.
    pub remaining_hours: f64,
    /// The cone: when its last open issue ends.
    pub p10: When,
    /// Median.
    pub p50: When,
    /// 80%.
    pub p80: When,
    /// Share of simulated futures that finish by the due day.
    pub probability_on_time: Option<f64>,
    /// Working days between p80 and the due day (negative: p80 is late).
    pub slack_days: Option<i64>,
    /// For a hard deadline that p80 misses: the smallest set of lowest-priority issues to take out of the
    /// milestone so that p80 meets it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_line: Option<CutLine>,
    /// When the work that will stay in it is done (issues the abandonment model expects to leave taken
    /// out, trial by trial), when the model has enough history; `p10`/`p50`/`p80` above are for all the work
    /// planned in it today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staying: Option<Range>,
    /// How many of its open issues are expected to leave it (not done within the abandonment window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_leaving: Option<f64>,
    /// The probability that everything planned in it today is done within the horizon, when the
    /// abandonment model has enough history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_done: Option<f64>,
}

/// Three quantiles of a date.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Range {
    /// 10th percentile.
    pub p10: When,
    /// Median.
    pub p50: When,
    /// 80th percentile.
    pub p80: When,
}

/// What the abandonment model learnt from the state's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbandonmentSummary {
    /// Closes in the recent history it learnt from.
    pub events: usize,
    /// True with too little history: every open issue is assumed done.
    pub cold_start: bool,
    /// The window, in days.
    pub window_days: u32,
    /// The team's closing rate per open issue per day.
    pub team_rate: f64,
    /// Open issues now, and how many of them the model expects to be done within the window.
    pub open: usize,
    /// The expected number done (sum of the probabilities).
    pub expected_done: f64,
    /// Per stratum (`column/age`): issues, closes, days exposed, shrunk rate per day.
    pub strata: Vec<FateGroupSummary>,
}

/// One group of the abandonment model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FateGroupSummary {
    /// The group.
    pub key: String,
    /// Distinct issues.
    pub issues: usize,
    /// Closes.
    pub events: usize,
    /// Days exposed.
    pub days: f64,
    /// The shrunk closing rate per day.
    pub rate: f64,
}

/// What would have to leave a hard-deadline milestone for its p80 to meet the deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CutLine {
    /// The issues to take out, lowest priority first.
    pub issues: Vec<IssueKey>,
    /// Remaining hours (medians) they account for.
    pub hours: f64,
    /// The milestone's p80 without them.
    pub p80: When,
    /// P(on time) without them.
    pub probability_on_time: f64,
    /// False when even cutting every issue that can be cut does not meet the deadline.
    pub meets_deadline: bool,
}

/// Trials for each step of the cut-line search (the search runs the simulation a few times).
const CUT_LINE_TRIALS: u32 = 2_000;

/// Finds the cut line of group `g` (a hard-deadline milestone due on `due_day`).
///
/// Candidates are the milestone's open issues, lowest effective priority first and, within a priority,
/// latest in the scheduling order first — so an issue is never cut before the milestone work that waits
/// for it. A cut issue leaves the milestone (it loses the hard deadline's rank and due date) but stays in
/// the backlog. The number to cut is found by bisection, each step a smaller simulation with the same seed.
fn cut_line(
    project: &Project,
    prep: &Prepared,
    dists: &[Distribution],
    group: &[usize],
    due_day: u32,
    mc: &MonteCarlo,
) -> Option<(Vec<usize>, Option<u32>, f64, bool)> {
    let pos: HashMap<u32, usize> = prep
        .order
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, k))
        .collect();
    let mut cands: Vec<usize> = group.to_vec();
    cands.sort_by_key(|&i| {
        (
            std::cmp::Reverse(prep.effective_priority[i]),
            std::cmp::Reverse(pos.get(&(i as u32)).copied().unwrap_or(0)),
        )
    });
    let small = MonteCarlo {
        trials: CUT_LINE_TRIALS.min(mc.trials),
        ..*mc
    };
    let eval = |k: usize| -> Option<(Option<u32>, f64)> {
        let cut: std::collections::HashSet<usize> = cands[..k].iter().copied().collect();
        let mut p = project.clone();
        for &i in &cut {
            p.tasks[i].hard = false;
            p.tasks[i].due = None;
        }
        let prep = Prepared::new(&p).ok()?;
        let kept: Vec<usize> = group.iter().copied().filter(|i| !cut.contains(i)).collect();
        if kept.is_empty() {
            return Some((Some(0), 1.0));
        }
        let sim = small.run(&prep, dists, &[kept]);
        Some((sim.group(0).p80, sim.group_by(0, due_day)))
    };
    let meets = |r: &(Option<u32>, f64)| r.0.is_some_and(|d| d <= due_day);
    let all = eval(cands.len())?;
    if !meets(&all) {
        return Some((cands, all.0, all.1, false));
    }
    let (mut lo, mut hi) = (0usize, cands.len());
    let mut best = all;
    while lo < hi {
        let mid = (lo + hi) / 2;
        let r = eval(mid)?;
        if meets(&r) {
            hi = mid;
            best = r;
        } else {
            lo = mid + 1;
        }
    }
    cands.truncate(hi);
    Some((cands, best.0, best.1, true))
}

/// One person's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonPlan {
    /// Gitea username.
    pub name: String,
    /// Hours in a full week.
    pub hours_per_week: f64,
    /// Their open work in planned order.
    pub queue: Vec<IssueKey>,
    /// Remaining hours planned for them.
    pub planned_hours: f64,
    /// When their queue empties in the median plan.
    pub busy_until: When,
}

/// `forecast/forecast.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForecastReport {
    /// Day 0.
    pub as_of: NaiveDate,
    /// The last day forecast.
    pub horizon: NaiveDate,
    /// The seed.
    pub seed: u64,
    /// Trials.
    pub trials: u32,
    /// What calibration learnt from the history.
    pub calibration: CalibrationSummary,
    /// Open issues, by key.
    pub issues: Vec<IssueForecast>,
    /// Milestones, by id.
    pub milestones: Vec<MilestoneForecast>,
    /// The team, in config order.
    pub people: Vec<PersonPlan>,
    /// Problems a reader should know about.
    pub warnings: Vec<String>,
    /// The abandonment model, when there was history to learn from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandonment: Option<AbandonmentSummary>,
}

/// Share of the estimate still to do for an issue in review.
const IN_REVIEW_REMAINING: f64 = 0.2;
/// The least share of the estimate assumed to remain for started work, however much time was tracked.
const STARTED_MIN_REMAINING: f64 = 0.25;

/// A seed derived from the plan's content: the same state always gets the same seed.
pub fn content_seed(plan: &Plan) -> u64 {
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

/// Imputed estimates: the median estimate of issues sharing a label, else of all estimated issues.
fn imputed_estimates(plan: &Plan) -> (HashMap<&str, f64>, f64) {
    let mut by_label: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut all = Vec::new();
    for i in &plan.issues {
        if let (
            Some(h),
            EstimateSource::Label | EstimateSource::Native | EstimateSource::Directive,
        ) = (i.estimate_hours, i.estimate_source)
        {
            all.push(h);
            for l in &i.labels {
                if !l.starts_with("est/") && !l.starts_with("p/") {
                    by_label.entry(l.as_str()).or_default().push(h);
                }
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let fallback = if all.is_empty() {
        plan.workday_hours
    } else {
        median(&mut all)
    };
    let map = by_label
        .into_iter()
        .filter(|(_, v)| v.len() >= 3)
        .map(|(k, mut v)| (k, median(&mut v)))
        .collect();
    (map, fallback)
}

/// Runs the forecast on a plan.
/// What the history says about how long estimated work really took: one sample per finished issue that had
/// an estimate and evidence of work (tracked time, or a merged pull request).
///
/// The actual effort is the tracked time where any was logged; otherwise the working time (on the
/// assignee's calendar) from when the issue entered its last stretch of `steeping`/`in_review` — or was
/// given to its final assignee, if later — until it was closed.
pub fn calibration_samples(plan: &Plan) -> Vec<Sample> {
    let team: HashMap<&str, &crate::plan::PlannedMember> =
        plan.team.iter().map(|m| (m.name.as_str(), m)).collect();
    let mut out = Vec::new();
    for i in plan.issues.iter().filter(|i| i.state == OpenState::Closed) {
        let (Some(estimate), Some(closed)) = (i.estimate_hours, i.closed_at) else {
            continue;
        };
        if i.estimate_source == EstimateSource::Imputed {
            continue;
        }
        let actual = if i.tracked_hours > 0.0 {
            i.tracked_hours
        } else if i.merged_pull {
            let mut start = None;
            for span in i.timeline.iter().rev() {
                match span.column {
                    Lifecycle::Done => {}
                    Lifecycle::Steeping | Lifecycle::InReview => start = Some(span.since),
                    _ => break,
                }
            }
            let Some(mut start) = start else { continue };
            if let Some(a) = i.assigned_at {
                start = start.max(a);
            }
            let spec = i
                .assignee
                .as_deref()
                .and_then(|a| team.get(a))
                .map_or(&plan.team_calendar, |m| &m.calendar);
            working_hours_between(spec, start, closed)
        } else {
            continue;
        };
        out.push(Sample {
            estimate,
            actual,
            person: i.assignee.clone(),
            labels: i
                .labels
                .iter()
                .filter(|l| !l.starts_with("est/") && !l.starts_with("p/"))
                .cloned()
                .collect(),
        });
    }
    out
}

/// The engine's input built from a plan: the open issues as tasks, their effort distributions and the
/// milestone groups, with the calibration and the flags and warnings found on the way.
#[derive(Debug, Clone)]
pub struct Built<'a> {
    /// What calibration learnt.
    pub calibration: Calibration,
    /// The open issues, in task order.
    pub open: Vec<&'a PlannedIssue>,
    /// Per task: flags for the report.
    pub flags: Vec<Vec<Flag>>,
    /// Warnings for the report.
    pub warnings: Vec<String>,
    /// The engine's project.
    pub project: Project,
    /// The project prepared for scheduling.
    pub prep: Prepared,
    /// Median remaining effort per task.
    pub medians: Vec<f64>,
    /// Effort distribution per task.
    pub dists: Vec<Distribution>,
    /// Every milestone, by id.
    pub milestones: Vec<&'a crate::plan::PlannedMilestone>,
    /// Per milestone: its tasks that are forecast.
    pub groups: Vec<Vec<usize>>,
    /// What the abandonment model learnt.
    pub fate: FateModel,
    /// Per task: the probability it is done within the abandonment window, and when if it is.
    pub fates: Vec<Fate>,
}

/// Builds the engine's input from a plan, with calendars to `horizon_days`.
pub fn build(plan: &Plan, horizon_days: u32) -> Result<Built<'_>, crate::engine::ScheduleError> {
    let calibration = calibrate::fit(&calibration_samples(plan));
    let as_of = plan.as_of;
    let days = horizon_days;
    let (by_label, fallback) = imputed_estimates(plan);
    let mut warnings: Vec<String> = plan.warnings.iter().map(ToString::to_string).collect();

    let open: Vec<&PlannedIssue> = plan
        .issues
        .iter()
        .filter(|i| i.state == OpenState::Open)
        .collect();
    let index: HashMap<&IssueKey, usize> =
        open.iter().enumerate().map(|(n, i)| (&i.key, n)).collect();
    let closed: std::collections::HashSet<&IssueKey> = plan
        .issues
        .iter()
        .filter(|i| i.state == OpenState::Closed)
        .map(|i| &i.key)
        .collect();
    let people: HashMap<&str, usize> = plan
        .team
        .iter()
        .enumerate()
        .map(|(n, m)| (m.name.as_str(), n))
        .collect();

    let mut flags: Vec<Vec<Flag>> = vec![Vec::new(); open.len()];
    let mut tasks = Vec::with_capacity(open.len());
    for (n, i) in open.iter().enumerate() {
        let base = match i.estimate_hours {
            Some(h) => h,
            None => {
                flags[n].push(Flag::ImputedEstimate);
                i.labels
                    .iter()
                    .find_map(|l| by_label.get(l.as_str()).copied())
                    .unwrap_or(fallback)
            }
        };
        let labels: Vec<String> = i
            .labels
            .iter()
            .filter(|l| !l.starts_with("est/") && !l.starts_with("p/"))
            .cloned()
            .collect();
        let total = base * calibration.multiplier(i.assignee.as_deref(), &labels);
        let remaining = if i.lifecycle == Lifecycle::InReview {
            total * IN_REVIEW_REMAINING
        } else if i.tracked_hours > 0.0 {
            (total - i.tracked_hours).max(total * STARTED_MIN_REMAINING)
        } else {
            total
        };
        let mut deps = Vec::new();
        for d in &i.depends_on {
            match index.get(d) {
                Some(&j) => deps.push(j),
                None if closed.contains(d) => {}
                None => {
                    flags[n].push(Flag::UnknownDependency);
                    warnings.push(format!(
                        "{}: depends on {d}, which is not in the snapshot; that wait is ignored",
                        i.key
                    ));
                }
            }
        }
        let assignee = i.assignee.as_deref().and_then(|a| {
            let p = people.get(a).copied();
            if p.is_none() {
                flags[n].push(Flag::AssigneeNotInTeam);
            }
            p
        });
        let eligible = plan
            .team
            .iter()
            .enumerate()
            .filter(|(_, m)| m.repositories.is_empty() || m.repositories.contains(&i.key.repo))
            .map(|(p, _)| p)
            .collect();
        let ms = i.milestone.and_then(|id| plan.milestone(id));
        tasks.push(Task {
            name: i.key.to_string(),
            effort: remaining,
            assignee,
            eligible,
            deps,
            priority: i.priority.level(),
            hard: ms.is_some_and(|m| m.hard && m.state == OpenState::Open),
            due: ms
                .and_then(|m| m.due)
                .map(|d| (d - as_of).num_days().max(0) as u32),
            started: i.started,
        });
    }
    let assignees_unknown: std::collections::BTreeSet<&str> = open
        .iter()
        .filter_map(|i| i.assignee.as_deref())
        .filter(|a| !people.contains_key(a))
        .collect();
    for a in assignees_unknown {
        warnings.push(format!(
            "{a} has open issues assigned but is not in the team in commitea.yaml; their work goes to the team"
        ));
    }
    let calendars: Vec<Calendar> = plan
        .team
        .iter()
        .map(|m| Calendar::new(&m.calendar, as_of, days))
        .collect();
    let project = Project {
        tasks,
        people: calendars,
    };
    let prep = Prepared::new(&project)?;
    for c in &prep.cycles {
        let names: Vec<&str> = c.iter().map(|&i| project.tasks[i].name.as_str()).collect();
        warnings.push(format!(
            "dependency cycle: {} depend on each other; they are left out of the forecast until the cycle is broken",
            names.join(", ")
        ));
        for &i in c {
            flags[i].push(Flag::DependencyCycle);
        }
    }
    for (i, lost) in prep.lost_deps.iter().enumerate() {
        if *lost {
            flags[i].push(Flag::WaitsOnCycle);
        }
    }
    let medians: Vec<f64> = project.tasks.iter().map(|t| t.effort).collect();
    let dists: Vec<Distribution> = medians
        .iter()
        .zip(&open)
        .map(|(&m, i)| {
            let own = i
                .assignee
                .as_deref()
                .and_then(|a| calibration.person_ratios.get(a));
            match own {
                _ if m <= 0.0 => Distribution::Fixed(0.0),
                Some(ratios) => Distribution::Resample {
                    base: m,
                    ratios: ratios.clone(),
                },
                None => Distribution::LogNormal {
                    median: m,
                    sigma: calibration.sigma,
                },
            }
        })
        .collect();

    let milestones: Vec<&crate::plan::PlannedMilestone> = plan.milestones.iter().collect();
    let groups: Vec<Vec<usize>> = milestones
        .iter()
        .map(|m| {
            open.iter()
                .enumerate()
                .filter(|(n, i)| i.milestone == Some(m.id) && !prep.excluded[*n])
                .map(|(n, _)| n)
                .collect()
        })
        .collect();
    let window = plan.abandonment_days.min(horizon_days);
    let history = history_days(plan, plan.now);
    // Too short a history keeps the model cold; the exposures are not even counted.
    let mut fate = if history < i64::from(window) {
        FateModel::cold(0, window)
    } else {
        fate::fit(&fate_exposures(plan), history, window)
    };
    if !fate.cold_start
        && let Some(theta) = choose_frailty(plan, window)
    {
        fate.frailty = theta;
    }
    let fates: Vec<Fate> = open
        .iter()
        .map(|i| {
            let f = fate_features(i, plan.now);
            Fate {
                p: fate.p_done(&f),
                lead: fate.lead(&f),
            }
        })
        .collect();
    Ok(Built {
        fate,
        fates,
        calibration,
        open,
        flags,
        warnings,
        project,
        prep,
        medians,
        dists,
        milestones,
        groups,
    })
}

/// Runs the forecast on a plan.
pub fn run(plan: &Plan, settings: &Settings) -> ForecastReport {
    let as_of = plan.as_of;
    let days = settings.horizon_days;
    let date_of = |d: f64| -> When {
        if d.is_finite() && d < f64::from(days) {
            When::Date(as_of + Days::new(d as u64))
        } else {
            When::BeyondHorizon
        }
    };
    let Built {
        calibration,
        open,
        flags,
        mut warnings,
        project,
        prep,
        medians,
        dists,
        milestones: open_ms,
        groups,
        fate,
        fates,
    } = match build(plan, days) {
        Ok(b) => b,
        Err(e) => {
            // References are built from existing indices, so this is a bug, not bad input.
            let mut warnings: Vec<String> = plan.warnings.iter().map(ToString::to_string).collect();
            warnings.push(format!("internal error preparing the schedule: {e}"));
            return ForecastReport {
                as_of,
                horizon: as_of + Days::new(u64::from(days)),
                seed: settings.seed,
                trials: settings.trials,
                calibration: CalibrationSummary::of(&Calibration::prior()),
                issues: Vec::new(),
                milestones: Vec::new(),
                people: Vec::new(),
                warnings,
                abandonment: None,
            };
        }
    };
    let plan_sched = prep.schedule(&medians);
    let mc = MonteCarlo {
        trials: settings.trials,
        seed: settings.seed,
        horizon_days: days,
    };
    let sim = mc.run_with_fates(&prep, &dists, &groups, &fates);

    let when = |d: Option<u32>| d.map_or(When::BeyondHorizon, |d| date_of(f64::from(d)));
    let issues: Vec<IssueForecast> = open
        .iter()
        .enumerate()
        .map(|(n, i)| {
            let excluded = prep.excluded[n];
            let pc = sim.task(n);
            let person = plan_sched.person[n].map(|p| plan.team[p as usize].name.clone());
            IssueForecast {
                issue: i.key.clone(),
                title: i.title.clone(),
                lifecycle: i.lifecycle,
                assignee: i.assignee.clone(),
                planned_assignee: person,
                priority: i.priority.level(),
                effective_priority: prep.effective_priority[n],
                milestone: i.milestone,
                estimate: i.estimate_label.clone(),
                estimate_source: i.estimate_source,
                remaining_hours: round2(medians[n]),
                planned_start: if excluded {
                    When::BeyondHorizon
                } else {
                    date_of(start_day(plan_sched.start[n]))
                },
                planned_end: if excluded {
                    When::BeyondHorizon
                } else {
                    date_of(end_day(plan_sched.end[n]))
                },
                p10: if excluded {
                    When::BeyondHorizon
                } else {
                    when(pc.p10)
                },
                p50: if excluded {
                    When::BeyondHorizon
                } else {
                    when(pc.p50)
                },
                p80: if excluded {
                    When::BeyondHorizon
                } else {
                    when(pc.p80)
                },
                probability_by_due: i
                    .milestone
                    .and_then(|id| plan.milestone(id))
                    .and_then(|m| m.due)
                    .filter(|_| !excluded)
                    .map(|due| {
                        let day = (due - as_of).num_days();
                        if day < 0 {
                            0.0
                        } else {
                            round3(sim.task_by(n, day as u32))
                        }
                    }),
                // Done at all within the horizon: the fate draw and the timing together.
                probability_done: (!fate.cold_start && !excluded)
                    .then(|| round3(sim.task_by(n, days.saturating_sub(1)))),
                flags: flags[n].clone(),
            }
        })
        .collect();

    let team_cal = Calendar::new(&plan.team_calendar, as_of, days);
    let milestones = open_ms
        .iter()
        .enumerate()
        .map(|(g, m)| {
            let in_ms = plan.issues.iter().filter(|i| i.milestone == Some(m.id));
            let (mut open_n, mut closed_n) = (0, 0);
            for i in in_ms {
                if i.state == OpenState::Open {
                    open_n += 1
                } else {
                    closed_n += 1
                }
            }
            let remaining: f64 = groups[g].iter().map(|&n| medians[n]).sum();
            let (p10, p50, p80, prob) = if groups[g].is_empty() {
                let done = When::Date(as_of);
                (done, done, done, m.due.map(|_| 1.0))
            } else {
                let pc = sim.group(g);
                let prob = m.due.map(|d| {
                    let day = (d - as_of).num_days();
                    if day < 0 {
                        0.0
                    } else {
                        round3(sim.group_by(g, day as u32))
                    }
                });
                (when(pc.p10), when(pc.p50), when(pc.p80), prob)
            };
            let slack = m.due.map(|due| match p80 {
                When::Date(d) => working_days_between(&team_cal, as_of, d, due),
                When::BeyondHorizon => {
                    -working_days_between(&team_cal, as_of, due, as_of + Days::new(u64::from(days)))
                }
            });
            let late = matches!((m.due, p80), (Some(d), When::Date(p)) if p > d)
                || matches!((m.due, p80), (Some(_), When::BeyondHorizon));
            let cut_line = if m.hard && m.state == OpenState::Open && late && !groups[g].is_empty() {
                m.due.and_then(|d| {
                    let due_day = (d - as_of).num_days().max(0) as u32;
                    cut_line(&project, &prep, &dists, &groups[g], due_day, &mc).map(|(cut, p80, prob, ok)| CutLine {
                        hours: round2(cut.iter().map(|&n| medians[n]).sum()),
                        issues: cut.iter().map(|&n| open[n].key.clone()).collect(),
                        p80: when(p80),
                        probability_on_time: round3(prob),
                        meets_deadline: ok,
                    })
                })
            } else {
                None
            };
            if let Some(c) = &cut_line {
                warnings.push(if c.meets_deadline {
                    format!(
                        "{}: the hard deadline {} is not met at p80; taking out {} issue(s) ({} h) would meet it",
                        m.title,
                        m.due.map(|d| d.to_string()).unwrap_or_default(),
                        c.issues.len(),
                        c.hours
                    )
                } else {
                    format!(
                        "{}: the hard deadline {} cannot be met at p80 even with every issue that can be cut taken out",
                        m.title,
                        m.due.map(|d| d.to_string()).unwrap_or_default()
                    )
                });
            }
            let staying = sim.group_staying(g).filter(|_| !groups[g].is_empty()).map(|pc| Range {
                p10: when(pc.p10),
                p50: when(pc.p50),
                p80: when(pc.p80),
            });
            let expected_leaving = (!fate.cold_start && m.state == OpenState::Open)
                .then(|| round2(groups[g].iter().map(|&n| 1.0 - fates[n].p).sum()));
            let probability_done = (!fate.cold_start && !groups[g].is_empty())
                .then(|| round3(sim.group_by(g, days.saturating_sub(1))));
            MilestoneForecast {
                staying,
                expected_leaving,
                probability_done,
                cut_line,
                id: m.id,
                repo: m.repo.to_string(),
                title: m.title.clone(),
                state: m.state,
                due: m.due,
                hard: m.hard,
                open_issues: open_n,
                closed_issues: closed_n,
                remaining_hours: round2(remaining),
                p10,
                p50,
                p80,
                probability_on_time: if m.state == OpenState::Closed {
                    None
                } else {
                    prob
                },
                slack_days: if m.state == OpenState::Closed {
                    None
                } else {
                    slack
                },
            }
        })
        .collect();

    let mut queues: Vec<Vec<usize>> = vec![Vec::new(); plan.team.len()];
    for &i in &prep.order {
        if let Some(p) = plan_sched.person[i as usize] {
            queues[p as usize].push(i as usize);
        }
    }
    let people = plan
        .team
        .iter()
        .zip(queues)
        .map(|(m, q)| {
            let busy = q.iter().map(|&i| plan_sched.end[i]).fold(0.0f64, f64::max);
            PersonPlan {
                name: m.name.clone(),
                hours_per_week: round2(m.hours_per_week),
                planned_hours: round2(q.iter().map(|&i| medians[i]).sum()),
                queue: q.iter().map(|&i| open[i].key.clone()).collect(),
                busy_until: if q.is_empty() {
                    When::Date(as_of)
                } else {
                    date_of(end_day(busy))
                },
            }
        })
        .collect();

    ForecastReport {
        as_of,
        horizon: as_of + Days::new(u64::from(days)),
        seed: settings.seed,
        trials: settings.trials,
        calibration: CalibrationSummary::of(&calibration),
        issues,
        milestones,
        people,
        warnings,
        abandonment: (!fate.cold_start).then(|| AbandonmentSummary {
            events: fate.events,
            cold_start: fate.cold_start,
            window_days: fate.window_days,
            team_rate: round6(fate.team_rate),
            open: fates.len(),
            expected_done: round2(fates.iter().map(|f| f.p).sum()),
            strata: fate
                .strata
                .iter()
                .map(|g| FateGroupSummary {
                    key: g.key.clone(),
                    issues: g.issues,
                    events: g.events,
                    days: round2(g.days),
                    rate: round6(g.value),
                })
                .collect(),
        }),
    }
}

/// An issue's abandonment-model features at `at`: its column then, its age, labels and assignee.
pub fn fate_features(i: &PlannedIssue, at: chrono::DateTime<chrono::Utc>) -> FateFeatures {
    let column = i
        .timeline
        .iter()
        .rev()
        .find(|s| s.since <= at)
        .map_or(i.lifecycle, |s| s.column);
    FateFeatures {
        column: column.as_str().to_owned(),
        age_days: (at - i.created_at).num_days().max(0),
        labels: i.labels.clone(),
        // Only someone assigned by then: trackers often assign an issue as it is closed, and that must
        // not teach the model that assigned issues get done.
        person: i
            .assignee
            .clone()
            .filter(|_| i.assigned_at.is_none_or(|a| a <= at)),
    }
}

/// The abandonment model's evidence: every issue open in each step of the recent history, how long it
/// stayed open in the step and whether it closed. Nothing after `plan.now` is read.
pub fn fate_exposures(plan: &Plan) -> Vec<Exposure> {
    fate_exposures_at(plan, plan.now)
}

/// The abandonment model's evidence as it was at `at`: closes after `at` are not seen.
fn fate_exposures_at(plan: &Plan, at: chrono::DateTime<chrono::Utc>) -> Vec<Exposure> {
    let step = chrono::Duration::days(fate::STEP_DAYS);
    let mut out = Vec::new();
    let mut t = at - chrono::Duration::days(fate::RECENT_DAYS);
    while t < at {
        let end = (t + step).min(at);
        for (n, i) in plan.issues.iter().enumerate() {
            let open_at_t = i.created_at <= t && i.closed_at.is_none_or(|c| c > t);
            if !open_at_t {
                continue;
            }
            let closed = i.closed_at.filter(|c| *c <= end);
            let until = closed.unwrap_or(end);
            out.push(Exposure {
                features: fate_features(i, t),
                issue: n as u64,
                days: (until - t).num_seconds() as f64 / 86_400.0,
                closed: closed.is_some(),
                ago_days: (at - t).num_seconds() as f64 / 86_400.0,
            });
        }
        t = end;
    }
    out
}

/// Days of history the plan's issues cover, up to `at`.
fn history_days(plan: &Plan, at: chrono::DateTime<chrono::Utc>) -> i64 {
    plan.issues
        .iter()
        .map(|i| i.created_at)
        .min()
        .map_or(0, |first| (at - first).num_days())
}

/// Past cuts the frailty is chosen on, and the days between them.
const FRAILTY_CUTS: i64 = 8;
const FRAILTY_CUT_EVERY: i64 = 45;

/// The frailty the state's own history supports best: the model is fitted at past cuts whose window has
/// passed, and each candidate is scored by how often its p50 and p80 would have been met (with a
/// beyond-the-window quantile met as the randomised PIT says, as the backtest scores it): the candidate
/// closest to 50% and 80% wins. `None` when the history is too short for any such cut.
pub fn choose_frailty(plan: &Plan, window_days: u32) -> Option<f64> {
    let window = chrono::Duration::days(i64::from(window_days));
    let levels = [0.5, 0.8];
    let mut hits = [[0.0f64; 2]; fate::FRAILTIES.len()];
    let mut scored = 0usize;
    for k in 0..FRAILTY_CUTS {
        let cut = plan.now - window - chrono::Duration::days(k * FRAILTY_CUT_EVERY);
        let model = fate::fit(
            &fate_exposures_at(plan, cut),
            history_days(plan, cut),
            window_days,
        );
        if model.cold_start {
            continue;
        }
        for i in &plan.issues {
            let open_at_cut = i.created_at <= cut && i.closed_at.is_none_or(|c| c > cut);
            if !open_at_cut {
                continue;
            }
            let h = model.cumulative(&fate_features(i, cut));
            let total = h.last().copied().unwrap_or(0.0);
            let closed = i
                .closed_at
                .filter(|c| *c <= cut + window)
                .map(|c| (c - cut).num_days().clamp(0, i64::from(window_days)) as usize);
            for (row, &theta) in hits.iter_mut().zip(fate::FRAILTIES.iter()) {
                let p = fate::done_by(total, theta);
                for (slot, tau) in row.iter_mut().zip(levels) {
                    *slot += match closed {
                        // Met when the share done by the close is at most tau.
                        Some(d) => f64::from(u8::from(
                            fate::done_by(h.get(d).copied().unwrap_or(total), theta) <= tau,
                        )),
                        None => fate::beyond_horizon_met(tau, p),
                    };
                }
            }
            scored += 1;
        }
    }
    (scored > 0).then(|| {
        let n = scored as f64;
        let err = |row: &[f64; 2]| (row[0] / n - 0.5).powi(2) + (row[1] / n - 0.8).powi(2);
        let best = hits
            .iter()
            .enumerate()
            .min_by(|a, b| err(a.1).total_cmp(&err(b.1)))
            .map_or(0, |(n, _)| n);
        fate::FRAILTIES[best]
    })
}

/// Working days (on the team calendar) from `a` to `b`, negative when `b` is before `a`.
fn working_days_between(team: &Calendar, day0: NaiveDate, a: NaiveDate, b: NaiveDate) -> i64 {
    let idx = |d: NaiveDate| (d - day0).num_days();
    let count = |from: i64, to: i64| -> i64 {
        (from.max(0)..to.max(0))
            .filter(|d| team.capacity(*d as u32) > 0.0)
            .count() as i64
            + (from.min(0)..to.min(0)).count() as i64 * 5 / 7
    };
    let (x, y) = (idx(a), idx(b));
    if y >= x {
        count(x + 1, y + 1)
    } else {
        -count(y + 1, x + 1)
    }
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

/// The deterministic (median) plan as a TaskJuggler 3 project: every open issue with its remaining median
/// effort, the person the plan gives it to, its dependencies, and a priority that follows our order.
/// Issues in a dependency cycle are left out, as in the forecast. `report` names the CSV report it asks for.
pub fn export_tjp(
    plan: &Plan,
    horizon_days: u32,
    title: &str,
    report: &str,
) -> Result<String, crate::engine::ScheduleError> {
    use crate::engine::tjp::{TjpPerson, TjpTask, export};
    let built = build(plan, horizon_days)?;
    let sched = built.prep.schedule(&built.medians);
    let rank: HashMap<u32, usize> = built
        .prep
        .order
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, k))
        .collect();
    let kept: Vec<usize> = (0..built.open.len())
        .filter(|&i| !built.prep.excluded[i])
        .collect();
    let new_index: HashMap<usize, usize> = kept.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let tasks: Vec<TjpTask> = kept
        .iter()
        .map(|&i| TjpTask {
            name: built.open[i].key.to_string(),
            effort: built.medians[i],
            person: sched.person[i].map(|p| p as usize),
            deps: built
                .prep
                .deps(i)
                .iter()
                .filter_map(|&d| new_index.get(&(d as usize)).copied())
                .collect(),
            rank: rank.get(&(i as u32)).copied().unwrap_or(usize::MAX / 2),
        })
        .collect();
    let people: Vec<TjpPerson<'_>> = plan
        .team
        .iter()
        .map(|m| TjpPerson {
            name: &m.name,
            spec: &m.calendar,
        })
        .collect();
    Ok(export(
        title,
        plan.as_of,
        horizon_days,
        &people,
        &tasks,
        report,
    ))
}
