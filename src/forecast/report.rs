//! The forecast report, `forecast/forecast.json`: what the engine said about every open issue, milestone
//! and person, as plain serialisable data.

use super::*;

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

impl CalibrationSummary {
    /// Whether `other` is another fit than this one. Two priors are the same calibration whatever their
    /// counts: nothing a forecast uses differs between them.
    pub fn refitted(&self, other: &Self) -> bool {
        self != other && !(self.cold_start && other.cold_start)
    }
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
    pub(super) fn of(c: &Calibration) -> Self {
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
    /// What it waits on, as the plan has it (what a sync read, with the ledger's changes): a change of
    /// them is a change of its own between two forecasts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<IssueKey>,
    /// Estimate label (`2d`), or Gitea's own time estimate in hours (`2h`, `estimate_source` native), if
    /// any (audit 110: a native estimate was null here while the issue page showed it).
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
    /// abandonment model gives one (absent while the history is too short: every open issue is then
    /// assumed done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_done: Option<f64>,
    /// Anything a reader should know about the issue's forecast.
    pub flags: Vec<Flag>,
    /// The other issues of the dependency cycle it is in (flag `dependency_cycle`): nothing in a cycle can
    /// start, so it is left out of the forecast — its dates above are only placeholders — until one of
    /// the cycle's dependencies is removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cycle: Vec<IssueKey>,
}

impl IssueForecast {
    /// Whether it is left out of the forecast, in a dependency cycle: it has no range.
    pub fn in_cycle(&self) -> bool {
        self.flags.contains(&Flag::DependencyCycle)
    }
}

/// Something a reader should know about one issue's forecast.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// It has no estimate: one was imputed.
    ImputedEstimate,
    /// It depends on an issue not in the snapshot, or open in another repository: not waited for.
    UnknownDependency,
    /// It depends on an issue the token may not read: not waited for.
    HiddenDependency,
    /// Its assignee is not on the team: planned for the team instead.
    AssigneeNotInTeam,
    /// It is part of a dependency cycle: left out of the forecast until the cycle is broken.
    DependencyCycle,
    /// It waits on a dependency cycle.
    WaitsOnCycle,
}

impl Flag {
    /// The flag as a sentence (without its full stop), for a page.
    pub fn words(self) -> &'static str {
        match self {
            Self::ImputedEstimate => {
                "It has no estimate: its effort is imputed from what similar closed issues took (or, until five \
                 have closed, from the other issues' estimates)"
            }
            Self::UnknownDependency => {
                "It waits for work outside the synced issues (listed below): its dates assume that wait is \
                 over"
            }
            Self::HiddenDependency => {
                "It waits for an issue the token may not read: its dates assume that wait is over"
            }
            Self::AssigneeNotInTeam => {
                "Its assignee is not on the team in commitea.yaml: it is planned for the team instead"
            }
            Self::DependencyCycle => {
                "It is in a dependency cycle, so it is left out of the forecast until one of the cycle's \
                 dependencies is removed on Gitea"
            }
            Self::WaitsOnCycle => "It waits on a dependency cycle",
        }
    }
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
    /// The day a closed milestone closed on Gitea (its cone is that day).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<NaiveDate>,
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
    /// Its open issues with no estimate: their effort is imputed from what similar closed issues took (or,
    /// until five have closed, from the other issues' estimates),
    /// so its dates are only as good as that guess.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unestimated_issues: usize,
    /// The headline cone: when the milestone's work is done. While the abandonment model says which open
    /// issues are probably never done, that is the work that stays in it (the issues that leave taken out,
    /// trial by trial: a milestone closes when what stays is done); otherwise, when its last open issue
    /// ends. `planned` then holds the cone of all the work planned in it today.
    pub p10: When,
    /// Median.
    pub p50: When,
    /// 80%.
    pub p80: When,
    /// Share of simulated futures in which the headline work is done by the due day.
    pub probability_on_time: Option<f64>,
    /// Working days between the headline p80 and the due day (negative: p80 is late).
    pub slack_days: Option<i64>,
    /// For a hard deadline that the headline misses (p80 late, or met in under 80% of the futures): few
    /// issues, lowest priority first, to take out of the milestone so that the schedule meets it in 80% (the work kept is committed: assumed done,
    /// whatever the abandonment model expects to leave).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_line: Option<CutLine>,
    /// When everything planned in it today is done (never, in a future where any of it is never done),
    /// while the abandonment model says which issues leave; the headline cone above is then the work that
    /// stays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Range>,
    /// The probability that the work that stays is done within the horizon, given with `planned` (the
    /// headline's counterpart of `probability_done`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staying_done: Option<f64>,
    /// Only read, from a forecast committed before the headline was the work that stays: its cone above
    /// was then the planned scope and this the work that stays. Reading moves both into today's places
    /// (see [`upgraded_milestones`]), so the standup and the drift charts do not see every milestone
    /// jump on the day a state is first forecast by this version.
    #[serde(default, skip_serializing, rename = "staying")]
    pub(crate) earlier_staying: Option<Range>,
    /// How many of its open issues are expected to leave it (not done within the abandonment window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_leaving: Option<f64>,
    /// The probability that everything planned in it today is done within the horizon, when the
    /// abandonment model has enough history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability_done: Option<f64>,
    /// Its open issues in a dependency cycle: its dates leave them out until the cycle is broken (audit
    /// 101: the milestone's page showed an ordinary range and said nothing of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<IssueKey>,
}

impl MilestoneForecast {
    /// The slack as a figure worth stating: none when p80 is beyond the horizon (it would be counted to
    /// the horizon, falsely exact) or nothing is open (no work to be early or late with).
    pub fn stated_slack(&self) -> Option<i64> {
        self.slack_days
            .filter(|_| matches!(self.p80, When::Date(_)) && self.open_issues > 0)
    }

    /// Whether its p10/p50/p80 are dates worth stating: it is closed (the day it closed), or work is open
    /// in it. An open milestone with nothing open has none: its "dates" are the forecast's own day, read
    /// as "done today" (audits 101, 102, 106).
    pub fn has_dates(&self) -> bool {
        self.state == OpenState::Closed || self.open_issues > 0
    }

    /// Whether it is open with work open and its due date before `as_of` (day 0).
    pub fn overdue(&self, as_of: NaiveDate) -> bool {
        self.state == OpenState::Open && self.open_issues > 0 && self.due.is_some_and(|d| d < as_of)
    }
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

/// What the abandonment model learnt from the state's history, or that it had too few closes to learn
/// from (absent while the history is too short for it at all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbandonmentSummary {
    /// Closes in the recent history it learnt from.
    pub events: usize,
    /// True with too few closes in the history to learn from: every open issue then has even odds of
    /// being closed within the window.
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
    /// The schedule's p80 for the milestone without them (the work kept assumed done).
    pub p80: When,
    /// The schedule's P(on time) without them, as `p80` (the work kept assumed done): not the headline's,
    /// which takes out what the abandonment model expects to leave.
    pub probability_on_time: f64,
    /// False when even cutting every issue that can be cut does not meet the deadline (done by it in
    /// 80% of the futures).
    pub meets_deadline: bool,
    /// True when the cut was too long to try putting each of its issues back: its least valuable ones are
    /// listed as the search found them, and may not all be needed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untrimmed: bool,
    /// True when it takes every open issue: only emptying the milestone meets the deadline, which is no
    /// cut a PM can make (move the date, or decide what must ship).
    #[serde(default)]
    pub empties_milestone: bool,
}

/// One person's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonPlan {
    /// Gitea username.
    pub name: String,
    /// Hours in a full week.
    pub hours_per_week: f64,
    /// Their open work in the order the scheduler takes it up (priority, due date, age; work that waits
    /// on other work after it): the order "queue of PERSON" reads. The person page lists it by planned
    /// start instead, which differs where work waits on others (audit 110).
    pub queue: Vec<IssueKey>,
    /// Remaining hours planned for them.
    pub planned_hours: f64,
    /// When their queue empties in the median plan.
    pub busy_until: When,
    /// Their last working day, where it comes before the horizon's end (they leave): a later forecast
    /// where it is later, or gone, shares the unassigned work out again ([`super::people_to_keep`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_day: Option<NaiveDate>,
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
    #[serde(deserialize_with = "upgraded_milestones")]
    pub milestones: Vec<MilestoneForecast>,
    /// The team, in config order.
    pub people: Vec<PersonPlan>,
    /// Problems a reader should know about.
    pub warnings: Vec<String>,
    /// The abandonment model, when there was history to learn from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandonment: Option<AbandonmentSummary>,
    /// The key of everything the forecast is a function of (see `forecast::key`): a reader whose inputs
    /// have this key reuses this forecast instead of computing it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<String>,
    /// A digest of the ledger entries it replayed (`forecast::key::ledger_entries`); none in a forecast
    /// written before 2026-12-06.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<String>,
    /// The engine that made it ([`super::ENGINE`]); none in a forecast written before 2026-12-05.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
}

/// A forecast's milestones as read, those of an earlier format (the planned scope as the cone, the work
/// that stays beside it as `staying`) turned into today's (the work that stays as the cone, the planned
/// scope as `planned`). P(on time) and slack stay as they were written: the planned scope's.
pub(crate) fn upgraded_milestones<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<MilestoneForecast>, D::Error> {
    let mut milestones = Vec::<MilestoneForecast>::deserialize(d)?;
    for m in &mut milestones {
        let cone = Range {
            p10: m.p10,
            p50: m.p50,
            p80: m.p80,
        };
        let (headline, planned) = upgraded_cones(cone, m.planned.take(), m.earlier_staying.take());
        (m.p10, m.p50, m.p80) = (headline.p10, headline.p50, headline.p80);
        m.planned = planned;
    }
    Ok(milestones)
}

/// A milestone's headline cone and planned-scope cone as today's format has them, from the cones a
/// forecast wrote: `cone`, `planned` and, in the earlier format only, `staying` — which was then the
/// headline, while `cone` was the planned scope. The one definition of that upgrade, for every reader
/// of committed forecasts, whatever part of a cone it reads.
pub(crate) fn upgraded_cones<C>(cone: C, planned: Option<C>, staying: Option<C>) -> (C, Option<C>) {
    match (staying, planned) {
        (Some(stays), None) => (stays, Some(cone)),
        (_, planned) => (cone, planned),
    }
}

/// Serde's test for a count left out of a file when it is nothing.
fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_milestone_of_an_earlier_format_reads_with_the_work_that_stays_as_its_headline() {
        let earlier = r#"{"id": 2, "repo": "acme/web", "title": "EAA", "state": "open", "due": "2027-01-29",
            "hard": true, "open_issues": 25, "closed_issues": 6, "remaining_hours": 487.6,
            "p10": "beyond horizon", "p50": "beyond horizon", "p80": "beyond horizon",
            "probability_on_time": 0.0, "slack_days": null,
            "staying": {"p10": "2027-06-18", "p50": "2027-09-16", "p80": "2027-11-02"},
            "expected_leaving": 6.33, "probability_done": 0.001}"#;
        let read = |json: &str| {
            let mut d = serde_json::Deserializer::from_str(json);
            upgraded_milestones(&mut d).unwrap().remove(0)
        };
        let m = read(&format!("[{earlier}]"));
        let day = |s: &str| When::Date(s.parse().unwrap());
        assert_eq!(
            (m.p10, m.p50, m.p80),
            (day("2027-06-18"), day("2027-09-16"), day("2027-11-02"))
        );
        assert_eq!(
            m.planned.map(|p| p.p80),
            Some(When::BeyondHorizon),
            "the planned scope moves beside it"
        );
        assert_eq!(m.earlier_staying, None);
        // Written again, it is today's format, and reads back the same.
        let json = serde_json::to_string(&m).unwrap();
        assert!(
            !json.contains("staying") && json.contains("\"planned\""),
            "{json}"
        );
        assert_eq!(read(&format!("[{json}]")), m);
    }
}
