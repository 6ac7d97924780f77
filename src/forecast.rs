//! The forecast stage: turn the plan into engine input, schedule, simulate, and report ranges.
//!
//! Everything here is deterministic: the same plan, seed and trial count give the same report, byte for
//! byte. The report is written to `forecast/forecast.json` and is what the views are computed from.

use std::collections::{BTreeMap, HashMap};

use chrono::{Days, NaiveDate};
use serde::{Serialize, Serializer};

use crate::domain::{IssueKey, Lifecycle, OpenState};
use crate::engine::calendar::{end_day, start_day};
use crate::engine::{Calendar, Distribution, MonteCarlo, Prepared, Project, Task};
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

impl Serialize for When {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
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

/// How efforts are spread around estimates before any calibration (see `docs/forecasting.md`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Method {
    /// Closed issues with an estimate that calibration could learn from.
    pub n: usize,
    /// Whether the documented prior is used because there is too little history.
    pub cold_start: bool,
    /// Actual effort over estimate, the median.
    pub global_multiplier: f64,
    /// σ of ln(actual/estimate).
    pub sigma: f64,
}

/// The forecast of one open issue.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// Anything a reader should know: `imputed_estimate`, `dependency_cycle`, `waits_on_cycle`,
    /// `unknown_dependency`, `assignee_not_in_team`.
    pub flags: Vec<String>,
}

/// The forecast of one milestone.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// One person's plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForecastReport {
    /// Day 0.
    pub as_of: NaiveDate,
    /// The last day forecast.
    pub horizon: NaiveDate,
    /// The seed.
    pub seed: u64,
    /// Trials.
    pub trials: u32,
    /// How efforts were modelled.
    pub method: Method,
    /// Open issues, by key.
    pub issues: Vec<IssueForecast>,
    /// Milestones, by id.
    pub milestones: Vec<MilestoneForecast>,
    /// The team, in config order.
    pub people: Vec<PersonPlan>,
    /// Problems a reader should know about.
    pub warnings: Vec<String>,
}

/// The prior used until there is history to calibrate on: estimates are medians, σ of ln(actual/estimate)
/// is 0.6 (a p10 : p90 ratio of about 1 : 4.7, in line with published estimation-error studies).
pub const PRIOR: Method = Method {
    n: 0,
    cold_start: true,
    global_multiplier: 1.0,
    sigma: 0.6,
};

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
pub fn run(plan: &Plan, settings: &Settings) -> ForecastReport {
    let method = PRIOR;
    let as_of = plan.as_of;
    let days = settings.horizon_days;
    let date_of = |d: f64| -> When {
        if d.is_finite() && d < f64::from(days) {
            When::Date(as_of + Days::new(d as u64))
        } else {
            When::BeyondHorizon
        }
    };
    let (by_label, fallback) = imputed_estimates(plan);
    let mut warnings = plan.warnings.clone();

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

    let mut flags: Vec<Vec<String>> = vec![Vec::new(); open.len()];
    let mut tasks = Vec::with_capacity(open.len());
    for (n, i) in open.iter().enumerate() {
        let base = match i.estimate_hours {
            Some(h) => h,
            None => {
                flags[n].push("imputed_estimate".into());
                i.labels
                    .iter()
                    .find_map(|l| by_label.get(l.as_str()).copied())
                    .unwrap_or(fallback)
            }
        };
        let remaining = if i.lifecycle == Lifecycle::InReview {
            base * IN_REVIEW_REMAINING
        } else if i.tracked_hours > 0.0 {
            (base - i.tracked_hours).max(base * STARTED_MIN_REMAINING)
        } else {
            base
        } * method.global_multiplier;
        let mut deps = Vec::new();
        for d in &i.depends_on {
            match index.get(d) {
                Some(&j) => deps.push(j),
                None if closed.contains(d) => {}
                None => {
                    flags[n].push("unknown_dependency".into());
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
                flags[n].push("assignee_not_in_team".into());
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
    let prep = match Prepared::new(&project) {
        Ok(p) => p,
        Err(e) => {
            // References are built above from existing indices, so this is a bug, not bad input.
            warnings.push(format!("internal error preparing the schedule: {e}"));
            return ForecastReport {
                as_of,
                horizon: as_of + Days::new(u64::from(days)),
                seed: settings.seed,
                trials: settings.trials,
                method,
                issues: Vec::new(),
                milestones: Vec::new(),
                people: Vec::new(),
                warnings,
            };
        }
    };
    for c in &prep.cycles {
        let names: Vec<&str> = c.iter().map(|&i| project.tasks[i].name.as_str()).collect();
        warnings.push(format!(
            "dependency cycle: {} depend on each other; they are left out of the forecast until the cycle is broken",
            names.join(", ")
        ));
        for &i in c {
            flags[i].push("dependency_cycle".into());
        }
    }
    for (i, lost) in prep.lost_deps.iter().enumerate() {
        if *lost {
            flags[i].push("waits_on_cycle".into());
        }
    }
    let medians: Vec<f64> = project.tasks.iter().map(|t| t.effort).collect();
    let plan_sched = prep.schedule(&medians);
    let dists: Vec<Distribution> = medians
        .iter()
        .map(|&m| {
            if m > 0.0 {
                Distribution::LogNormal {
                    median: m,
                    sigma: method.sigma,
                }
            } else {
                Distribution::Fixed(0.0)
            }
        })
        .collect();

    let open_ms: Vec<&crate::plan::PlannedMilestone> = plan.milestones.iter().collect();
    let groups: Vec<Vec<usize>> = open_ms
        .iter()
        .map(|m| {
            open.iter()
                .enumerate()
                .filter(|(n, i)| i.milestone == Some(m.id) && !prep.excluded[*n])
                .map(|(n, _)| n)
                .collect()
        })
        .collect();
    let mc = MonteCarlo {
        trials: settings.trials,
        seed: settings.seed,
        horizon_days: days,
    };
    let sim = mc.run(&prep, &dists, &groups);

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
            MilestoneForecast {
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
        method,
        issues,
        milestones,
        people,
        warnings,
    }
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

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
