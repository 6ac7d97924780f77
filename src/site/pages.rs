//! Page-level view structs: the views plus what the templates should not compute.
//!
//! Templates do no date arithmetic and no number formatting. Everything they need beyond the plain views
//! (percentages, labels, the runway cone's positions along a shared date axis) is computed here.

use chrono::NaiveDate;
use serde::Serialize;

use super::SiteData;
use crate::views::{Capacity, Overview, Runway, RunwayMilestone};

/// What every page template receives.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageContext<'a> {
    /// The site title.
    pub title: &'a str,
    /// The overview view.
    pub overview: &'a Overview,
    /// The board view, with the Done column cut to the recent weeks (see [`DONE_DAYS`]) and every other
    /// column to [`COLUMN_CARDS`]; each column's count stays whole, so the page says "showing N of M".
    pub board: crate::views::Board,
    /// The runway view.
    pub runway: &'a Runway,
    /// The directives view.
    pub directives: &'a crate::views::directives::Directives,
    /// The recent directives, then the earlier ones still in force, with their targets as links and
    /// their moments as labels.
    pub directive_rows: Vec<DirectiveRow<'a>>,
    /// The runway's milestones with display labels and cone positions.
    pub milestones: Vec<MilestoneRow<'a>>,
    /// The shared date axis of the runway cones, when any milestone has a date within the horizon.
    pub axis: Option<Axis>,
    /// The runway's capacity rows with display labels.
    pub capacity: Vec<CapacityRow<'a>>,
    /// The calibration view.
    pub calibration: &'a crate::views::calibration::CalibrationView,
    /// The backtest's rows with display labels, CommiTea's first.
    pub hit_rates: Vec<HitRateRow>,
    /// Whether a row scores the cone of the work that stays in a milestone (the note explains it only
    /// then).
    pub has_staying: bool,
    /// The backtest's check of the probabilities of being done, by tenths.
    pub reliability: Vec<ReliabilityRow>,
    /// CommiTea's hit-rates where the team kept its pace after the cut, and where it slowed.
    pub pace: Vec<PaceRow>,
    /// How far the dates held when the forecast was replayed on this project's history, where that is
    /// far from what they claim (empty otherwise): said where the dates are read, not only on the
    /// Calibration page (an audit read "80% by p80" beside p80s that held 29% of the time).
    pub trust: String,
    /// What those rows say, read from their figures (empty without them).
    pub pace_note: String,
    /// Whether the probability check has milestone rows (their note is shown only then).
    pub reliability_milestones: bool,
    /// The calibration's spread in words: how much longer than its median one issue in six takes.
    pub spread_words: String,
    /// Whether the per-issue, milestone and person pages exist, so links to them may be drawn.
    pub linked: bool,
    /// The prefix that leads from this page to the site root (empty on the summary pages).
    pub root: &'static str,
    /// The runway chart: every open milestone on one date axis (SVG).
    pub runway_chart: String,
    /// The calibration page's reliability diagram (SVG), empty without a backtest.
    pub reliability_chart: String,
}

/// The reliability diagram of the backtest's issue targets: CommiTea and the baselines.
fn reliability_chart(c: &crate::views::calibration::CalibrationView) -> String {
    let Some(b) = &c.backtest else {
        return String::new();
    };
    let methods: Vec<super::charts::Reliability> = ["commitea", "throughput", "ebs"]
        .iter()
        .filter_map(|name| b.methods.iter().find(|m| m.method == *name))
        .map(|m| super::charts::Reliability {
            // The tables' names: a legend saying "throughput" beside rows saying "Throughput Monte
            // Carlo — issues" read as two methods (audits 171, 183).
            name: method_name(&m.method).to_owned(),
            coverage: [0, 1, 2].map(|i| m.coverage.get(i).copied().flatten()),
        })
        .filter(|m| m.coverage.iter().any(Option::is_some))
        .collect();
    if methods.is_empty() {
        return String::new();
    }
    super::charts::reliability(
        &methods,
        "Reliability: promised against observed coverage of p10, p50 and p80 on past issues",
    )
}

/// One method's backtest figures, formatted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HitRateRow {
    /// The method and target kind.
    pub method: String,
    /// The same in words ([`method_words`]).
    pub label: String,
    /// Whether it is CommiTea's own.
    pub ours: bool,
    /// Targets scored.
    pub n: usize,
    /// Coverage of p10, p50, p80 as `81% (78–84%)`.
    pub coverage: Vec<String>,
    /// Pinball loss at 0.8, resolved targets, as `94 d (86–103)`.
    pub pinball80: String,
    /// Its censored lower bound.
    pub pinball80_censored: String,
    /// Coverage of p10, p50, p80 over the targets given a date, as `45% (38–52%)`.
    pub dated_coverage: Vec<String>,
    /// How many targets were given a date at the p80.
    pub n_dated80: usize,
}

/// A backtest group's name in words for a table's row header: `commitea` → `CommiTea — issues`,
/// `ebs milestone closed` → `EBS — milestones, against their close`. The raw names wrapped one word a
/// line on a phone and said nothing to a PM (audit 115).
pub(crate) fn method_words(method: &str) -> String {
    use crate::backtest::run::{MILESTONE_CLOSED, PLANNED_SHIPPED, STAYING_CLOSED};
    if method == STAYING_CLOSED {
        return "CommiTea — milestones, the work that stays, against their close".to_owned();
    }
    let (name, what) = if let Some(m) = method.strip_suffix(PLANNED_SHIPPED) {
        (m.trim(), "milestones, against their planned scope shipped")
    } else if let Some(m) = method.strip_suffix(MILESTONE_CLOSED) {
        (m.trim(), "milestones, against their close")
    } else {
        (method, "issues")
    };
    format!("{} — {what}", method_name(name))
}

/// A method's name as the calibration page says it: `CommiTea`, `Throughput Monte Carlo`, `EBS`.
fn method_name(method: &str) -> &str {
    match method {
        "commitea" => "CommiTea",
        "throughput" => "Throughput Monte Carlo",
        "ebs" => "EBS",
        other => other,
    }
}

/// One tenth of CommiTea's promised probabilities of being done, as the calibration page shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReliabilityRow {
    /// The method and target kind.
    pub method: String,
    /// The same in words ([`method_words`]).
    pub label: String,
    /// The bin, as `80–90%`.
    pub bin: String,
    /// Forecasts in it.
    pub n: usize,
    /// The mean promised, as `85%`.
    pub promised: String,
    /// The share done within the horizon, as `62% (55–69%)`.
    pub observed: String,
}

fn reliability_rows(c: &crate::views::calibration::CalibrationView) -> Vec<ReliabilityRow> {
    let Some(b) = &c.backtest else {
        return Vec::new();
    };
    b.methods
        .iter()
        .flat_map(|m| {
            m.reliability.iter().map(|r| ReliabilityRow {
                method: m.method.clone(),
                label: method_words(&m.method),
                bin: format!("{:.0}–{:.0}%", r.lo * 100.0, r.hi * 100.0),
                n: r.n,
                promised: format!("{:.0}%", r.promised * 100.0),
                observed: share_of(&Some(r.observed), r.n),
            })
        })
        .collect()
}

/// `[value, lo, hi]` as `27% (17–27%)`, each rounded once to a whole percent; `—` for none.
pub(crate) fn interval_pct(m: &Option<[f64; 3]>) -> String {
    m.map_or_else(
        || "—".to_owned(),
        |[v, lo, hi]| format!("{:.0}% ({:.0}–{:.0}%)", v * 100.0, lo * 100.0, hi * 100.0),
    )
}

/// Fewer forecasts than this and a share is said as a count: a bootstrap over one forecast said
/// "100% (100–100%)", which reads as certain.
const FEW: usize = 10;

/// A share of `n` forecasts: its interval, or under [`FEW`] the count it is (`2 of 3`).
pub(super) fn share_of(m: &Option<[f64; 3]>, n: usize) -> String {
    match m {
        Some([v, ..]) if n < FEW => format!("{} of {n}", (v * n as f64).round() as usize),
        _ => interval_pct(m),
    }
}

/// A loss in days with its interval; in tenths where the interval is under two days wide, which whole
/// days would print as no width at all (`4 d (4–4)` for 3.5–4.2).
fn interval_days(m: &Option<[f64; 3]>) -> String {
    m.map_or_else(
        || "—".to_owned(),
        |[v, lo, hi]| {
            if hi - lo < 2.0 {
                format!("{v:.1} d ({lo:.1}–{hi:.1})")
            } else {
                format!("{v:.0} d ({lo:.0}–{hi:.0})")
            }
        },
    )
}

/// A loss over `n` targets at `cuts` cuts: with its interval, or under [`FEW`] targets, or at one cut,
/// the loss and what it is over (an interval over so few, or over one cut, has no width that means
/// anything; audit 173: "3.8 d (3.8–3.8)" of a one-cut backtest).
pub(super) fn loss_over(m: &Option<[f64; 3]>, n: usize, cuts: usize) -> String {
    match m {
        Some([v, ..]) if n < FEW || cuts < 2 => format!(
            "{v:.1} d (over {n}{})",
            if cuts < 2 { ", one cut" } else { "" }
        ),
        _ => interval_days(m),
    }
}

fn hit_rates(c: &crate::views::calibration::CalibrationView) -> Vec<HitRateRow> {
    let Some(b) = &c.backtest else {
        return Vec::new();
    };
    let mut rows: Vec<HitRateRow> = b
        .methods
        .iter()
        .map(|m| HitRateRow {
            method: m.method.clone(),
            label: method_words(&m.method),
            ours: m.method.starts_with("commitea"),
            n: m.n,
            // Under ten forecasts a share is a count, as the page says (audit 171: "100% (44–100%)"
            // over 3), and a loss says how few it is over rather than a point interval ("68.2 d
            // (68.2–68.2)" over one resolved target).
            coverage: m.coverage.iter().map(|c| share_of(c, m.n)).collect(),
            pinball80: loss_over(&m.pinball80, m.n_resolved, b.cuts),
            pinball80_censored: loss_over(&m.pinball80_censored, m.n, b.cuts),
            dated_coverage: m
                .dated_coverage
                .iter()
                .zip(m.n_dated.iter().copied().chain(std::iter::repeat(0)))
                .map(|(c, n)| share_of(c, n))
                .collect(),
            n_dated80: m.n_dated.get(2).copied().unwrap_or(0),
        })
        .collect();
    // Issues first, then milestones; within each, CommiTea first.
    rows.sort_by_key(|r| (r.method.contains("milestone"), !r.ours, r.method.clone()));
    rows
}

/// CommiTea's hit-rates at the cuts after which the team kept its pace, or slowed, formatted.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaceRow {
    /// What the team did after those cuts, in words.
    pub after: &'static str,
    /// How many cuts.
    pub cuts: usize,
    /// Issue forecasts scored.
    pub n: usize,
    /// Coverage of the p80, as `81% (78–84%)`.
    pub coverage80: String,
    /// How many forecasts gave a date at the p80.
    pub n_dated80: usize,
    /// Coverage of the dated p50 and p80.
    pub dated_coverage: Vec<String>,
}

pub(super) fn pace_rows(c: &crate::views::calibration::CalibrationView) -> Vec<PaceRow> {
    let Some(b) = &c.backtest else {
        return Vec::new();
    };
    b.by_pace
        .iter()
        .map(|p| PaceRow {
            after: match p.pace {
                crate::backtest::Pace::Held => "kept its pace",
                crate::backtest::Pace::Fell => "slowed by more than a quarter",
            },
            cuts: p.cuts,
            n: p.score.n,
            // Under ten forecasts a share is its count, as in every other table of the page (audit 118:
            // "100% (44–100%)" over 3).
            coverage80: share_of(&p.score.coverage.get(2).copied().flatten(), p.score.n),
            n_dated80: p.score.n_dated.get(2).copied().unwrap_or(0),
            dated_coverage: p
                .score
                .dated_coverage
                .iter()
                .enumerate()
                .skip(1)
                .map(|(i, c)| share_of(c, p.score.n_dated.get(i).copied().unwrap_or(0)))
                .collect(),
        })
        .collect()
}

/// How often a method's dated p80s held (`[value, lo, hi]`) and over how many forecasts, where there are
/// at least [`FEW`] of them to say it of.
fn dated_p80(m: &crate::views::calibration::MethodScore) -> Option<([f64; 3], usize)> {
    let n = m.n_dated.get(2).copied().unwrap_or(0);
    let held = m.dated_coverage.get(2).copied().flatten()?;
    (n >= FEW).then_some((held, n))
}

/// How far CommiTea's dated p80s held in the backtest, in words, where the interval of how often they held
/// is under 70% or over 90%, of at least [`FEW`] forecasts; empty otherwise (or without a backtest).
fn trust(c: &crate::views::calibration::CalibrationView) -> String {
    let Some(b) = &c.backtest else {
        return String::new();
    };
    let Some(m) = b
        .methods
        .iter()
        .find(|m| m.method == crate::backtest::run::COMMITEA)
    else {
        return String::new();
    };
    let Some(([held, lo, hi], n)) = dated_p80(m) else {
        return String::new();
    };
    // Said only where the whole interval is outside 70–90%: a figure that could be 80% says nothing.
    if hi >= 0.7 && lo <= 0.9 {
        return String::new();
    }
    let what = if held < 0.7 {
        "read them as later than they say"
    } else {
        "the ranges are wider than they need be"
    };
    format!(
        "Replayed on this project's history, the p80 dates of forecasts {} ahead held {} of the time \
         ({n} dated forecasts, {}; 80% is the aim): {what}. The Calibration page says why.",
        super::text::horizon_words(b.horizon_days),
        crate::prose::percent(held),
        crate::prose::count(b.cuts, "cut", "cuts")
    )
}

/// What the pace rows say, from their dated p80s: whether the misses follow the team's slowing down or
/// are the forecast's own. A fixed sentence put the misses down to a slowdown where every cut kept its
/// pace, or where the slowed cuts' dates held better (an audit's finding).
pub(super) fn pace_note(c: &crate::views::calibration::CalibrationView) -> String {
    let Some(b) = &c.backtest else {
        return String::new();
    };
    // The dated p80's share and count after cuts of one pace, when there are enough to compare.
    let dated80 = |pace: crate::backtest::Pace| {
        b.by_pace
            .iter()
            .find(|p| p.pace == pace)
            .and_then(|p| dated_p80(&p.score))
    };
    let pct = |v: f64| format!("{:.0}%", v * 100.0);
    let (held, fell) = (
        dated80(crate::backtest::Pace::Held),
        dated80(crate::backtest::Pace::Fell),
    );
    let has = |pace| b.by_pace.iter().any(|p| p.pace == pace);
    match (held, fell) {
        _ if !has(crate::backtest::Pace::Fell) => {
            "The team kept its pace after every cut: where these \
            dates missed, the misses are the forecast's own, not a slowdown's."
                .to_owned()
        }
        _ if !has(crate::backtest::Pace::Held) => "The team slowed after every cut: each forecast \
            learnt a pace that did not last, and its dates are as late as the slowdown made them."
            .to_owned(),
        // Both sides held as promised: no miss to put down to anything (audit 111: "fewer held where the
        // team slowed (82% of 66, against 90% of 77)" blamed a slowdown for misses that were not there).
        (Some(([h, ..], hn)), Some(([f, ..], fnn))) if h >= 0.8 && f >= 0.8 => format!(
            "Dated p80s held at least as often as promised either way ({} of {hn} after the cuts that kept \
             the pace, {} of {fnn} after those that slowed).",
            pct(h),
            pct(f)
        ),
        // A difference is said only where the two intervals do not overlap.
        (Some(([h, hlo, _], hn)), Some(([f, _, fhi], fnn))) if fhi < hlo => format!(
            "Fewer dated p80s held where the team slowed ({} of {fnn}, against {} of {hn}): a forecast \
             learns its pace from the past, and there the pace it learnt did not last.",
            pct(f),
            pct(h)
        ),
        (Some(([h, _, hhi], hn)), Some(([f, flo, _], fnn))) if hhi < flo => format!(
            "Dated p80s held more often where the team slowed ({} of {fnn}, against {} of {hn}): the \
             misses are not the slowdown's; they are where the team kept its pace, and the forecast's own.",
            pct(f),
            pct(h)
        ),
        // Overlapping intervals say the forecasts are too few to tell the two apart, not that they are
        // alike (audit 171: "about as often either way" of 90% of 10 and 43% of 28).
        (Some(([h, ..], hn)), Some(([f, ..], fnn))) if (h - f).abs() < 0.1 => format!(
            "Dated p80s held about as often either way ({} of {hn} after the cuts that kept the pace, {} \
             of {fnn} after those that slowed): the misses are the forecast's own, not a slowdown's.",
            pct(h),
            pct(f)
        ),
        (Some(([h, ..], hn)), Some(([f, ..], fnn))) => format!(
            "Dated p80s held {} of {hn} after the cuts that kept the pace and {} of {fnn} after those that \
             slowed, but their intervals overlap: too few forecasts to tell whether the misses are the \
             forecast's own or a slowdown's.",
            pct(h),
            pct(f)
        ),
        _ => "Too few dated p80s on one side to compare the two (fewer than ten).".to_owned(),
    }
}

/// One milestone with labels and its cone, as the overview and runway pages show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneRow<'a> {
    /// The runway view's fields, unchanged.
    #[serde(flatten)]
    pub milestone: &'a RunwayMilestone,
    /// P(on time) as a whole percentage such as `83%`, when there is a due date.
    pub on_time: Option<String>,
    /// Slack in working days with its sign, such as `+3`, `0` or `−2`, when there is a due date.
    pub slack_label: Option<String>,
    /// `overdue since 2011-09-27`, for an open milestone with open work whose due date passed and whose
    /// p80 gives no slack (beyond the horizon): said where the slack would be (audit 101: "—" beside a due
    /// date three years gone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overdue_since: Option<String>,
    /// The status in words: `on track`, `at risk`, `late` or `no due date`.
    pub status_label: String,
    /// Remaining hours, formatted.
    pub remaining: String,
    /// Where the cone is drawn, when its p10 is within the horizon.
    pub cone: Option<Cone>,
    /// How many open issues are expected to leave it, such as `about 3`, when the abandonment model says.
    pub leaving_label: Option<String>,
    /// The cut line's hours, rounded as people read them.
    pub cut_hours: Option<String>,
    /// The cut line's P(on time), as a percentage.
    pub cut_on_time: Option<String>,
    /// p50 – p80 in words: two dates, or "not within the horizon" for what lies beyond it, said once.
    pub band_label: String,
    /// When the headline's p80 is beyond the horizon: the chance that the work that stays is done within
    /// it, such as `35% chance within 2 years`.
    pub headline_chance: Option<String>,
    /// Beside a headline of the work that stays: when all the work planned in it is done, such as
    /// `all planned work: not within the horizon (2% chance within 2 years)`.
    pub planned_label: Option<String>,
}

/// A milestone's cone: positions in percent of the axis width (0 = axis start, 100 = axis end).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cone {
    /// Where p10 sits.
    pub p10: f64,
    /// Where p50 sits (100 when beyond the horizon).
    pub p50: f64,
    /// Where p80 sits (100 when beyond the horizon).
    pub p80: f64,
    /// The bar's width from p10 to p80.
    pub width: f64,
    /// Whether p80 is beyond the horizon, so the bar runs off the axis end.
    pub open_ended: bool,
    /// Where the due date sits, when there is one.
    pub due: Option<f64>,
}

/// The runway's shared date axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Axis {
    /// The first day (the forecast's day 0, or an earlier due date).
    pub start: String,
    /// The last day: the latest date any milestone shows.
    pub end: String,
    /// Where day 0 of the forecast sits.
    pub today: f64,
    /// Labelled dates along the axis, left to right.
    pub ticks: Vec<Tick>,
}

/// One labelled date on the axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tick {
    /// The date.
    pub date: String,
    /// Where it sits.
    pub pct: f64,
}

/// One person's load with labels.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityRow<'a> {
    /// The runway view's fields, unchanged.
    #[serde(flatten)]
    pub capacity: &'a Capacity,
    /// Hours per week, formatted.
    pub hours_per_week_label: String,
    /// Planned hours, formatted.
    pub planned_hours_label: String,
    /// The person's page, relative to the site's root; none for a name no page is written for.
    pub page: Option<String>,
}

/// One recent directive with labels.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectiveRow<'a> {
    /// The view's fields, unchanged.
    #[serde(flatten)]
    pub directive: &'a crate::views::directives::RecentDirective,
    /// Its target, named by title where the snapshot has one, linked where the site has its page.
    pub target_link: Option<super::detail::Link>,
    /// When it was given: `2026-11-25 10:00 UTC`.
    pub at_label: String,
    /// Whether it is the first of the earlier directives in force (the page starts their list there).
    pub first_earlier: bool,
}

/// The recent directives, then the earlier ones in force, as the Directives page shows them: each target
/// linked as the Changes page links it, or named in plain text when the site has no detail pages.
fn directive_rows(data: &SiteData) -> Vec<DirectiveRow<'_>> {
    let ledger = data.detail.as_ref().map(|d| &d.changes.directives);
    let recent = data.directives.recent.len();
    data.directives
        .recent
        .iter()
        .chain(&data.directives.earlier_in_force)
        .enumerate()
        .map(|(i, d)| {
            let linked = ledger
                .and_then(|l| l.iter().find(|r| r.directive.id == d.id))
                .and_then(|r| r.target_link.clone());
            let plain = || {
                let id = d.target_id.clone()?;
                Some(match d.target_kind.as_deref() {
                    Some("issue") => super::detail::Link {
                        text: id,
                        title: d.target_title.clone(),
                        href: None,
                    },
                    _ => super::detail::Link {
                        text: d.target_title.clone().unwrap_or(id),
                        title: None,
                        href: None,
                    },
                })
            };
            DirectiveRow {
                directive: d,
                target_link: linked.or_else(plain),
                at_label: super::text::moment(&d.at),
                first_earlier: i == recent,
            }
        })
        .collect()
}

/// The shortest axis, in days, so that a near-empty runway does not stretch a day across the page.
const MIN_SPAN_DAYS: i64 = 7;

/// Builds the context every page is rendered with.
pub(crate) fn page_context(data: &SiteData) -> PageContext<'_> {
    let axis = DateAxis::new(&data.runway);
    let milestones = data
        .runway
        .milestones
        .iter()
        .map(|m| {
            let p80 = m.band.as_ref().and_then(|b| date(&b.p80));
            MilestoneRow {
                milestone: m,
                on_time: m.probability_on_time.map(percent),
                // A slack counted to the horizon would be falsely exact: only when p80 is a date.
                slack_label: m.slack.filter(|_| p80.is_some()).map(signed),
                overdue_since: m
                    .due
                    .as_deref()
                    .filter(|_| m.overdue && p80.is_none())
                    .map(|d| format!("overdue since {d}")),
                status_label: status_words(m),
                remaining: hours(m.remaining_hours),
                // A milestone with nothing open has no band: no work to draw.
                cone: axis.as_ref().and_then(|a| a.cone(m)),
                leaving_label: m.expected_leaving.map(|n| leaving_words(n, m.open_issues)),
                cut_hours: m.cut_line.as_ref().map(|c| cut_hours(c.hours)),
                cut_on_time: m.cut_line.as_ref().map(|c| percent(c.probability_on_time)),
                band_label: m.band.as_ref().map_or_else(
                    || m.status.label().to_owned(),
                    |b| band_label(&b.p50, &b.p80),
                ),
                headline_chance: m
                    .staying_done
                    .filter(|_| m.band.is_some() && p80.is_none())
                    .map(|p| chance(p, data.horizon_days)),
                planned_label: m.planned.as_ref().map(|b| {
                    let within = m
                        .probability_done
                        .filter(|_| date(&b.p80).is_none())
                        .map(|p| format!(" ({})", chance(p, data.horizon_days)))
                        .unwrap_or_default();
                    format!("all planned work: {}{within}", band_label(&b.p50, &b.p80))
                }),
            }
        })
        .collect();
    let capacity = data
        .runway
        .capacity
        .iter()
        .map(|c| CapacityRow {
            capacity: c,
            hours_per_week_label: hours(c.hours_per_week),
            planned_hours_label: hours(c.planned_hours),
            page: super::detail::person_path(&c.person),
        })
        .collect();
    let reliability = reliability_rows(&data.calibration);
    let reliability_milestones = reliability.iter().any(|r| r.method.contains("milestone"));
    PageContext {
        title: &data.title,
        overview: &data.overview,
        board: board_shown(&data.board),
        runway: &data.runway,
        directives: &data.directives,
        directive_rows: directive_rows(data),
        milestones,
        axis: axis.map(|a| a.describe()),
        capacity,
        calibration: &data.calibration,
        hit_rates: hit_rates(&data.calibration),
        has_staying: data.calibration.backtest.as_ref().is_some_and(|b| {
            b.methods
                .iter()
                .any(|m| m.method == crate::backtest::run::STAYING_CLOSED)
        }),
        reliability,
        pace: pace_rows(&data.calibration),
        pace_note: pace_note(&data.calibration),
        trust: trust(&data.calibration),
        reliability_milestones,
        // A log-normal is above its median × e^σ one time in six (one σ above the mean of the log).
        spread_words: format!(
            "about one issue in six takes more than {:.1}× that",
            data.calibration.sigma.exp()
        ),
        linked: data.detail.is_some(),
        root: "",
        runway_chart: runway_chart(&data.runway, data.detail.is_some(), data.horizon_days),
        reliability_chart: reliability_chart(&data.calibration),
    }
}

/// Done cards the board shows: those closed within this many days before day 0.
pub(crate) const DONE_DAYS: i64 = 28;

/// Cards an open column shows at most: beyond that a page grows past what a browser shows comfortably,
/// and the milestone and person pages, and the search, list everything.
pub(crate) const COLUMN_CARDS: usize = 200;

/// The cards of `col` the board page shows: Done's of the recent weeks (`day0` the board's day), at most
/// [`COLUMN_CARDS`].
fn shown_cards(
    col: &crate::views::BoardColumn,
    day0: Option<chrono::NaiveDate>,
) -> impl Iterator<Item = &crate::views::BoardCard> {
    let done = col.state == crate::domain::Lifecycle::Done.as_str();
    col.issues
        .iter()
        .filter(move |c| {
            !done
                || match (c.closed.as_deref().and_then(date), day0) {
                    (Some(closed), Some(d)) => (d - closed).num_days() <= DONE_DAYS,
                    _ => true,
                }
        })
        .take(COLUMN_CARDS)
}

/// The board as the page shows it: Done collapsed to the recent weeks, long columns cut.
fn board_shown(board: &crate::views::Board) -> crate::views::Board {
    let day0 = date(&board.as_of);
    crate::views::Board {
        as_of: board.as_of.clone(),
        columns: board
            .columns
            .iter()
            .map(|col| crate::views::BoardColumn {
                issues: shown_cards(col, day0).cloned().collect(),
                state: col.state.clone(),
                title: col.title.clone(),
                count: col.count,
            })
            .collect(),
    }
}

/// The keys of the issues the board page shows a card of ([`board_shown`]).
pub(crate) fn shown_on_board(board: &crate::views::Board) -> std::collections::HashSet<String> {
    let day0 = date(&board.as_of);
    board
        .columns
        .iter()
        .flat_map(|col| shown_cards(col, day0))
        .map(|c| c.issue.clone())
        .collect()
}

/// The least future a range chart with a bar beyond the horizon draws, in days.
pub(super) const OPEN_ENDED_DAYS: u32 = 61;

/// The runway as one SVG: a row per open milestone, one date axis, month ticks and today; with a bar
/// beyond the horizon, the axis reaches at least [`OPEN_ENDED_DAYS`] past today.
fn runway_chart(runway: &Runway, linked: bool, horizon_days: u32) -> String {
    let Some(today) = date(&runway.as_of) else {
        return String::new();
    };
    if runway.milestones.is_empty() {
        return String::new();
    }
    // A title two repositories share is named with its repository (audit 168).
    let names = crate::plan::milestone_names(
        runway
            .milestones
            .iter()
            .map(|m| (m.milestone, m.title.as_str(), m.repo.clone())),
    );
    let name = |m: &crate::views::runway::RunwayMilestone| {
        names
            .get(&m.milestone)
            .cloned()
            .unwrap_or_else(|| m.title.clone())
    };
    let rows: Vec<super::charts::RangeRow> = runway
        .milestones
        .iter()
        .map(|m| super::charts::RangeRow {
            label: name(m),
            href: linked.then(|| super::detail::milestone_path(m.milestone)),
            p10: m.p10.as_deref().and_then(date),
            p50: m.band.as_ref().and_then(|b| date(&b.p50)),
            p80: m.band.as_ref().and_then(|b| date(&b.p80)),
            due: m.due.as_deref().and_then(date),
            hard: m.hard,
            status: super::detail::status_class(m.status).to_owned(),
            undated: super::charts::undated_words(m.band.is_some()),
            words: format!(
                "{}: {}{}",
                name(m),
                match (&m.p10, &m.band) {
                    (Some(p10), Some(b)) => format!("p10 {p10}, p50 {}, p80 {}", b.p50, b.p80),
                    _ => m.status.label().to_owned(),
                },
                m.due
                    .as_deref()
                    .filter(|_| m.band.is_some())
                    .map(|d| format!(", due {d}: {}", m.status.label()))
                    .unwrap_or_default()
            ),
        })
        .collect();
    let end = super::charts::ranges_end(
        &rows,
        today,
        today + chrono::Days::new(u64::from(horizon_days.min(OPEN_ENDED_DAYS))),
    );
    super::charts::ranges(
        &rows,
        today,
        end,
        "Runway: when each open milestone is done",
    )
}

/// The date axis in days, before it is turned into labels.
#[derive(Debug, Clone, Copy)]
struct DateAxis {
    start: NaiveDate,
    end: NaiveDate,
    today: NaiveDate,
}

impl DateAxis {
    /// The axis from day 0 (or an earlier due date) to the latest date shown; `None` when no date is known.
    fn new(runway: &Runway) -> Option<Self> {
        let dates: Vec<NaiveDate> = runway
            .milestones
            .iter()
            .flat_map(|m| {
                [
                    m.p10.as_deref(),
                    m.band.as_ref().map(|b| b.p50.as_str()),
                    m.band.as_ref().map(|b| b.p80.as_str()),
                    m.due.as_deref(),
                ]
            })
            .flatten()
            .filter_map(date)
            .collect();
        let today = date(&runway.as_of).or_else(|| dates.iter().min().copied())?;
        let start = dates.iter().copied().chain([today]).min().unwrap_or(today);
        let latest = dates.iter().copied().chain([today]).max().unwrap_or(today);
        let end = latest.max(start + chrono::Days::new(MIN_SPAN_DAYS.unsigned_abs()));
        Some(Self { start, end, today })
    }

    /// Days from start to end (at least [`MIN_SPAN_DAYS`]).
    fn span(self) -> i64 {
        (self.end - self.start).num_days().max(1)
    }

    /// Where a date sits, in percent, rounded to a tenth and clamped to the axis.
    fn pos(self, d: NaiveDate) -> f64 {
        let share = (d - self.start).num_days() as f64 / self.span() as f64;
        ((share * 1000.0).round() / 10.0).clamp(0.0, 100.0)
    }

    /// A milestone's cone; `None` when even its p10 is beyond the horizon, or nothing is open in it.
    fn cone(self, m: &RunwayMilestone) -> Option<Cone> {
        let band = m.band.as_ref()?;
        let p10 = self.pos(date(m.p10.as_deref()?)?);
        let p50 = date(&band.p50).map_or(100.0, |d| self.pos(d)).max(p10);
        let p80_date = date(&band.p80);
        let p80 = p80_date.map_or(100.0, |d| self.pos(d)).max(p50);
        Some(Cone {
            p10,
            p50,
            p80,
            width: ((p80 - p10) * 10.0).round() / 10.0,
            open_ended: p80_date.is_none(),
            due: m.due.as_deref().and_then(date).map(|d| self.pos(d)),
        })
    }

    /// The labels: the ends and the middle of the axis.
    fn describe(self) -> Axis {
        let mut ticks: Vec<Tick> = Vec::new();
        for share in [0, 1, 2] {
            let days = (self.span() * share + 1) / 2;
            let d = self.start + chrono::Days::new(days.unsigned_abs());
            if ticks.last().is_none_or(|t| t.date != d.to_string()) {
                ticks.push(Tick {
                    date: d.to_string(),
                    pct: self.pos(d),
                });
            }
        }
        Axis {
            start: self.start.to_string(),
            end: self.end.to_string(),
            today: self.pos(self.today),
            ticks,
        }
    }
}

/// A p50 – p80 range in words, saying "not within the horizon" once rather than twice, and one date
/// when both ends are the same day.
pub(crate) fn band_label(p50: &str, p80: &str) -> String {
    match (date(p50), date(p80)) {
        (Some(a), Some(b)) if a == b => p80.to_owned(),
        (Some(_), Some(_)) => format!("{p50} – {p80}"),
        (Some(_), None) => format!("{p50} – {NOT_WITHIN}"),
        _ => NOT_WITHIN.to_owned(),
    }
}

/// A probability of being done within the horizon in words: `35% chance within 2 years`.
fn chance(p: f64, horizon_days: u32) -> String {
    format!(
        "{} chance within {}",
        percent(p),
        super::text::horizon_words(horizon_days)
    )
}

/// What the site says for a date beyond the forecast horizon.
pub(crate) const NOT_WITHIN: &str = "not within the horizon";

/// A view date (`YYYY-MM-DD`), or `None` for `beyond horizon` and anything else.
fn date(s: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
}

pub(crate) use crate::prose::percent;

pub(crate) use crate::prose::signed;

/// A cut line's hours, in whole hours as the run's warning says them ("about 226 h"): the runway and the
/// milestone page both.
pub(crate) fn cut_hours(h: f64) -> String {
    hours(h.round())
}

/// Hours: whole numbers without decimals, others with one.
pub(crate) use crate::prose::hours;

/// Open issues expected to leave a milestone, of its `open` ones, in words: `about 6 of 8 open issues
/// expected to leave` (it said "about 1 open issues", audit 92, and no "of 8", audit 166); where less than
/// one is expected to stay, its headline is the day of a single close that may not come, and that is said.
pub(crate) fn leaving_words(n: f64, open: usize) -> String {
    let leaving = n.round() as i64;
    let noun = if open == 1 {
        "open issue"
    } else {
        "open issues"
    };
    // Rounded, 0.03 read "about 0 of 2" and 6.7 of 7 "about 7 of 7" beside "under one is expected to
    // stay" (audit 176).
    let words = if leaving == 0 {
        format!("under one of {open} {noun} expected to leave")
    } else if leaving >= open as i64 && open > 1 && open as f64 - n > 0.0 {
        format!("nearly all of {open} {noun} expected to leave")
    } else if leaving == 1 && open == 1 {
        "about 1 open issue expected to leave".to_owned()
    } else {
        format!("about {leaving} of {open} {noun} expected to leave")
    };
    if open as f64 - n < 1.0 {
        format!(
            "{words}: under one is expected to stay, so its dates are those of one close that may not come"
        )
    } else {
        words
    }
}

/// A milestone's status where most of its open work is expected to leave: what the status is of (audit 166:
/// "91% · on track" beside 6 of 8 open issues expected never to be done).
fn status_words(m: &crate::views::runway::RunwayMilestone) -> String {
    let label = m.status.label();
    match m.expected_leaving {
        Some(n) if m.open_issues > 0 && n * 2.0 > m.open_issues as f64 => {
            let stay = m.open_issues as f64 - n;
            let of = if m.open_issues == 1 {
                "its 1 open issue".to_owned()
            } else {
                format!("its {} open issues", m.open_issues)
            };
            if stay < 1.0 {
                format!("{label}, for under one of {of}")
            } else {
                format!("{label}, for about {} of {of}", stay.round() as i64)
            }
        }
        _ => label.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_expected_to_leave_are_counted_in_words() {
        assert_eq!(
            super::leaving_words(1.2, 5),
            "about 1 of 5 open issues expected to leave"
        );
        assert_eq!(
            super::leaving_words(0.03, 2),
            "under one of 2 open issues expected to leave"
        );
        assert!(
            super::leaving_words(6.68, 7)
                .starts_with("nearly all of 7 open issues expected to leave: under one")
        );
        assert_eq!(
            super::leaving_words(2.6, 8),
            "about 3 of 8 open issues expected to leave"
        );
        // Under one expected to stay (audit 166: 18.3 of 19, its p50 one uncertain close's day).
        assert_eq!(
            super::leaving_words(18.3, 19),
            "about 18 of 19 open issues expected to leave: under one is expected to stay, so its dates \
             are those of one close that may not come"
        );
    }

    #[test]
    fn a_narrow_interval_of_days_keeps_its_width() {
        assert_eq!(interval_days(&Some([3.86, 3.51, 4.2])), "3.9 d (3.5–4.2)");
        assert_eq!(interval_days(&Some([12.0, 10.0, 14.0])), "12 d (10–14)");
        assert_eq!(interval_days(&None), "—");
    }

    #[test]
    fn a_runway_whose_every_p80_is_beyond_the_horizon_still_draws_the_future() {
        let runway: Runway = serde_json::from_value(serde_json::json!({
            "asOf": "2026-12-04",
            "milestones": [{
                "milestone": 1, "title": "3.x", "repo": "acme/app", "due": "2011-10-18", "hard": false,
                "band": {"p50": "beyond horizon", "p80": "beyond horizon"}, "p10": "2026-12-04",
                "openIssues": 56, "closedIssues": 3, "remainingHours": 1420.0, "status": "late"
            }],
            "capacity": []
        }))
        .unwrap();
        let svg = runway_chart(&runway, false, 730);
        // The axis reaches two months on (a January tick), not today alone.
        assert!(svg.contains("Jan 2027"), "{svg}");
        assert!(
            !svg.contains("Jan 2012"),
            "the axis starts near today: {svg}"
        );
    }

    #[test]
    fn labels_are_formatted_without_false_certainty() {
        assert_eq!(percent(0.834), "83%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.999), ">99%");
        assert_eq!(percent(0.001), "<1%");
        assert_eq!(percent(0.0), "0%");
        assert_eq!(signed(3), "+3");
        assert_eq!(signed(0), "0");
        assert_eq!(signed(-2), "\u{2212}2");
        assert_eq!(hours(12.0), "12");
        assert_eq!(hours(12.54), "12.5");
        assert_eq!(hours(0.04), "0");
        assert_eq!(hours(-0.04), "0");
        assert_eq!(
            band_label("2027-01-02", "2027-02-03"),
            "2027-01-02 – 2027-02-03"
        );
        assert_eq!(band_label("2027-01-02", "2027-01-02"), "2027-01-02");
        assert_eq!(
            band_label("2027-01-02", "beyond horizon"),
            "2027-01-02 – not within the horizon"
        );
        assert_eq!(
            band_label("beyond horizon", "beyond horizon"),
            "not within the horizon"
        );
        assert_eq!(
            crate::views::runway::MilestoneStatus::AtRisk.label(),
            "at risk"
        );
    }
}
