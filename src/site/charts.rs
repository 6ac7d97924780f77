//! Charts as inline SVG, drawn at build time: readable without script, printable, and allowed by the
//! pages' Content-Security-Policy (which forbids inline `style` attributes, so nothing here uses one).
//!
//! Every chart is a string of SVG markup the templates print as it is. Text in it (milestone titles,
//! dates) is escaped here, because the templates' autoescaping does not reach inside. Colours come from
//! classes in `style.css`; every mark also differs in shape or dash, so colour is never the only signal.

use std::fmt::Write as _;

use chrono::{Datelike, Months, NaiveDate};

/// Escapes text for HTML or SVG content and attribute values (control characters dropped).
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in super::text::clean(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A date axis mapped onto `x0..x1` pixels.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scale {
    /// First day.
    pub start: NaiveDate,
    /// Last day.
    pub end: NaiveDate,
    /// Left edge in pixels.
    pub x0: f64,
    /// Right edge in pixels.
    pub x1: f64,
}

impl Scale {
    /// Where a day sits, clamped to the axis, rounded to a tenth of a pixel (so output is stable).
    pub fn x(self, d: NaiveDate) -> f64 {
        let span = (self.end - self.start).num_days().max(1) as f64;
        let share = ((d - self.start).num_days() as f64 / span).clamp(0.0, 1.0);
        ((self.x0 + share * (self.x1 - self.x0)) * 10.0).round() / 10.0
    }

    /// Month ticks: the first day of each month on the axis, thinned to at most about `max` labels.
    pub fn months(self, max: usize) -> Vec<NaiveDate> {
        let mut d = self.start.with_day(1).unwrap_or(self.start);
        if d < self.start {
            d = d + Months::new(1);
        }
        let mut all = Vec::new();
        while d <= self.end {
            all.push(d);
            d = d + Months::new(1);
        }
        let step = all.len().div_ceil(max.max(1)).max(1);
        // Keep January and quarters when thinning, so the labels fall on memorable months.
        let step = match step {
            1 => 1,
            2 => 2,
            3 => 3,
            4..=6 => 6,
            _ => 12,
        };
        // Over many years, every n-th January, so the labels never run into each other.
        let years = all.len().div_ceil(max.max(1) * 12).max(1);
        all.into_iter()
            .filter(|m| (m.month0() as usize).is_multiple_of(step))
            .filter(|m| step < 12 || (m.year().unsigned_abs() as usize).is_multiple_of(years))
            .collect()
    }
}

/// The label of month tick `i` of `months`: `Mar`, or `Jan 2027` for January and for the first label, so
/// the year is known — but a first December right before a January tick stays `Dec`: the two years would
/// run into each other (`Dec 2026Jan 2027`), and January's says it.
fn month_label(months: &[NaiveDate], i: usize) -> String {
    let Some(d) = months.get(i) else {
        return String::new();
    };
    let crowded = d.month() == 12 && months.get(i + 1).is_some_and(|n| n.month() == 1);
    if d.month() == 1 || (i == 0 && !crowded) {
        d.format("%b %Y").to_string()
    } else {
        d.format("%b").to_string()
    }
}

/// One row of a range chart: a label, and the p10–p80 bar with its p50 and due marks.
#[derive(Debug, Clone)]
pub(crate) struct RangeRow {
    /// The row's label (escaped here).
    pub label: String,
    /// Where the label links to, relative to the page.
    pub href: Option<String>,
    /// 10th percentile, when within the horizon.
    pub p10: Option<NaiveDate>,
    /// Median, when within the horizon.
    pub p50: Option<NaiveDate>,
    /// 80th percentile, when within the horizon.
    pub p80: Option<NaiveDate>,
    /// Due date.
    pub due: Option<NaiveDate>,
    /// Whether the due date is hard.
    pub hard: bool,
    /// `on_track`, `at_risk`, `late`, `no_due_date` or `nothing_open`: a class for the bar.
    pub status: String,
    /// What the row says in words (for its `<title>`, read by screen readers).
    pub words: String,
    /// What the row says where its bar would be when it has no p10: see [`undated_words`].
    pub undated: &'static str,
}

/// What a range row without a p10 says: its range is beyond the horizon, or (`dated` false) there is no
/// work to date (a milestone with nothing open).
pub(crate) fn undated_words(dated: bool) -> &'static str {
    if dated {
        "not within the horizon"
    } else {
        "nothing open"
    }
}

/// Layout constants of the range chart, in SVG user units (pixels at scale 1).
const WIDTH: f64 = 960.0;
/// A chart's left axis, drawn last so that it lies over the plot: on a screen narrower than the chart,
/// `charts.js` moves every `sticky` part by how far its box is scrolled, and the background (filled
/// only while scrolled) hides what passes under the labels, so the scale stays in view. Hidden from a
/// screen reader, which hears the chart's title and its points' words.
fn sticky_axis(width: f64, height: f64, ticks: &str) -> String {
    format!(
        "<g class=\"y-axis sticky\" aria-hidden=\"true\"><rect class=\"axis-bg\" x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\"/>{ticks}</g>"
    )
}

const LABEL_W: f64 = 240.0;
const ROW_H: f64 = 30.0;
const AXIS_H: f64 = 28.0;

/// How far back a range chart's axis reaches for a past due date, in days.
const PAST_DAYS: u64 = 182;

/// The last day a range chart of `rows` draws: the latest date of a bar; with a bar beyond the horizon,
/// `open_ended` at least (its bar fades out at the axis' end: stopped at the latest date known, the
/// future was never drawn; not the whole horizon, which would squeeze every dated bar to a sliver). A
/// due date counts up to half a year past that: a "someday" milestone due in 2029 squeezed every bar
/// into the first tenth of the Runway, and a p10 left out ended a milestone's chart before it (audit
/// 176). A due date further out sits at the right edge, its row's words giving the date.
pub(crate) fn ranges_end(rows: &[RangeRow], today: NaiveDate, open_ended: NaiveDate) -> NaiveDate {
    const DUE_REACH_DAYS: u64 = 183;
    let dated = rows
        .iter()
        .flat_map(|r| [r.p80, r.p50, r.p10])
        .flatten()
        .chain([today])
        .max()
        .unwrap_or(today);
    let reach = if rows.iter().any(|r| r.p10.is_some() && r.p80.is_none()) {
        dated.max(open_ended)
    } else {
        dated
    };
    rows.iter()
        .filter_map(|r| r.due)
        .filter(|d| *d <= reach + chrono::Days::new(DUE_REACH_DAYS))
        .chain([reach])
        .max()
        .unwrap_or(reach)
}

/// The range chart: one row per milestone on one shared date axis, month ticks, a today line.
/// `end` is the axis end (the horizon or the latest date shown).
pub(crate) fn ranges(rows: &[RangeRow], today: NaiveDate, end: NaiveDate, title: &str) -> String {
    // A due date long past (a milestone left open for years) does not stretch the axis back to it: its
    // marker sits at the left edge, and the row's words give the date.
    let earliest = today - chrono::Days::new(PAST_DAYS);
    let start = rows
        .iter()
        .flat_map(|r| [r.p10, r.due])
        .flatten()
        .filter(|d| *d >= earliest)
        .chain([today])
        .min()
        .unwrap_or(today);
    let end = end.max(start + chrono::Days::new(14));
    let scale = Scale {
        start,
        end,
        x0: LABEL_W + 10.0,
        x1: WIDTH - 20.0,
    };
    // Room below the rows for the today label, clear of the month labels above.
    let rows_end = AXIS_H + ROW_H * rows.len() as f64 + 4.0;
    let height = rows_end + 20.0;
    // A chart with links is a group of them, not an image (an image's children are not reachable).
    let role = if rows.iter().any(|r| r.href.is_some()) {
        "group"
    } else {
        "img"
    };
    // On a phone the chart opens where the first bar starts (charts.js), not on the empty weeks from
    // today; the row labels stay in view as it scrolls.
    let focus = rows
        .iter()
        .filter_map(|r| r.p10.or(r.p50))
        .min()
        .map(|d| format!(" data-focus=\"{:.3}\"", scale.x(d) / WIDTH))
        .unwrap_or_default();
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart ranges\" viewBox=\"0 0 {WIDTH} {height}\" role=\"{role}\" aria-labelledby=\"rc-t\"{focus} xmlns=\"http://www.w3.org/2000/svg\"><title id=\"rc-t\">{}</title>",
        esc(title)
    );
    // Month grid and labels: hidden from a screen reader, which finds each row's dates in its words
    // (a chart of links is a group, whose every text would be read).
    let months = scale.months(12);
    s.push_str("<g class=\"months\" aria-hidden=\"true\">");
    for (i, m) in months.iter().enumerate() {
        let x = scale.x(*m);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{x}\" y1=\"{AXIS_H}\" x2=\"{x}\" y2=\"{rows_end}\"/><text class=\"tick\" x=\"{x}\" y=\"18\">{}</text>",
            month_label(&months, i)
        );
    }
    s.push_str("</g>");
    // The tracks, then today, then the rows: today crosses the tracks but not a row's label held in
    // view over the bars.
    for i in 0..rows.len() {
        let mid = AXIS_H + ROW_H * i as f64 + ROW_H / 2.0;
        let _ = write!(
            s,
            "<rect class=\"track\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" rx=\"2\"/>",
            scale.x0,
            mid - 6.0,
            scale.x1 - scale.x0
        );
    }
    let tx = scale.x(today);
    let _ = write!(
        s,
        "<line class=\"today\" x1=\"{tx}\" y1=\"{}\" x2=\"{tx}\" y2=\"{rows_end}\"/><text class=\"today-label\" x=\"{tx}\" y=\"{}\" text-anchor=\"middle\">today</text>",
        AXIS_H - 4.0,
        height - 4.0
    );
    for (i, r) in rows.iter().enumerate() {
        let y = AXIS_H + ROW_H * i as f64;
        let mid = y + ROW_H / 2.0;
        let _ = write!(s, "<g class=\"row status-{}\">", esc(&r.status));
        let _ = write!(s, "<title>{}</title>", esc(&r.words));
        match r.p10 {
            Some(p10) => {
                let a = scale.x(p10);
                let b = r.p80.map_or(scale.x1, |d| scale.x(d));
                let open = if r.p80.is_none() { " open-ended" } else { "" };
                let _ = write!(
                    s,
                    "<rect class=\"range{open}\" x=\"{a}\" y=\"{}\" width=\"{}\" height=\"12\" rx=\"2\"/>",
                    mid - 6.0,
                    ((b - a).max(3.0) * 10.0).round() / 10.0
                );
                if let Some(p50) = r.p50 {
                    let x = scale.x(p50);
                    let _ = write!(
                        s,
                        "<line class=\"p50\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>",
                        mid - 10.0,
                        mid + 10.0
                    );
                }
                if r.p80.is_none() {
                    let _ = write!(
                        s,
                        "<text class=\"beyond\" x=\"{}\" y=\"{}\">→ beyond</text>",
                        scale.x1 - 70.0,
                        mid + 5.0
                    );
                }
            }
            None => {
                let _ = write!(
                    s,
                    "<text class=\"beyond\" x=\"{}\" y=\"{}\">{}</text>",
                    scale.x0 + 6.0,
                    mid + 5.0,
                    r.undated
                );
            }
        }
        if let Some(due) = r.due {
            let x = scale.x(due);
            let class = if r.hard { "due hard" } else { "due" };
            let _ = write!(
                s,
                "<path class=\"{class}\" d=\"M{x} {} l-5 -7 h10 z M{x} {} V{}\"/>",
                y + 3.0,
                y + 3.0,
                y + ROW_H - 2.0
            );
        }
        // The label last, over its own background, so that it can stay in view over the bars when the
        // chart scrolls (charts.js sizes the background to the longest label and fills it only then).
        let _ = write!(
            s,
            "<rect class=\"label-bg sticky\" x=\"0\" y=\"{y}\" width=\"{LABEL_W}\" height=\"{ROW_H}\"/>"
        );
        let label = crate::prose::clip(&r.label, 30);
        match &r.href {
            Some(h) => {
                let _ = write!(
                    s,
                    "<a class=\"sticky\" href=\"{}\"><text class=\"label\" x=\"0\" y=\"{}\">{}</text></a>",
                    esc(h),
                    mid + 5.0,
                    esc(&label)
                );
            }
            None => {
                let _ = write!(
                    s,
                    "<text class=\"label sticky\" x=\"0\" y=\"{}\">{}</text>",
                    mid + 5.0,
                    esc(&label)
                );
            }
        }
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    s
}

/// One bar of a weekly chart.
#[derive(Debug, Clone)]
pub(crate) struct WeekBar {
    /// The Monday.
    pub week: NaiveDate,
    /// Hours planned.
    pub planned: f64,
    /// Hours available.
    pub capacity: f64,
}

/// A person's load: planned hours per week as bars, capacity as a step line above them; weeks over
/// capacity are drawn in the warning class and marked with `!`.
pub(crate) fn load(weeks: &[WeekBar], title: &str) -> String {
    let w = 640.0;
    let h = 180.0;
    let (left, bottom, top) = (40.0, 24.0, 10.0);
    let max = weeks
        .iter()
        .map(|x| x.planned.max(x.capacity))
        .fold(1.0_f64, f64::max);
    let band = (w - left - 10.0) / weeks.len().max(1) as f64;
    let y = |v: f64| (((h - bottom) - (v / max) * (h - bottom - top)) * 10.0).round() / 10.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart load\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-labelledby=\"ld-t\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"ld-t\">{}</title>",
        esc(title)
    );
    let axis = format!(
        "<text class=\"tick\" aria-hidden=\"true\" x=\"0\" y=\"{}\">{}</text><text class=\"tick\" aria-hidden=\"true\" x=\"0\" y=\"{}\">0 h</text>",
        y(max) + 5.0,
        format_args!("{:.0} h", max),
        h - bottom
    );
    for (i, wk) in weeks.iter().enumerate() {
        let x = ((left + band * i as f64) * 10.0).round() / 10.0;
        let over = wk.planned > wk.capacity + 0.05;
        let class = if over { "bar over" } else { "bar" };
        let _ = write!(
            s,
            "<g><title>week of {}: {:.0} h planned of {:.0} h available</title><rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            wk.week,
            wk.planned,
            wk.capacity,
            x + 2.0,
            y(wk.planned),
            (band - 4.0).max(1.0),
            ((h - bottom) - y(wk.planned)).max(0.0)
        );
        let _ = write!(
            s,
            "<line class=\"capacity\" x1=\"{x}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            y(wk.capacity),
            x + band,
            y(wk.capacity)
        );
        if over {
            let _ = write!(
                s,
                "<text class=\"over-mark\" x=\"{}\" y=\"{}\">!</text>",
                x + band / 2.0 - 2.0,
                y(wk.planned) - 3.0
            );
        }
        if i % 2 == 0 {
            let _ = write!(
                s,
                "<text class=\"tick\" aria-hidden=\"true\" x=\"{}\" y=\"{}\">{}</text>",
                x + 2.0,
                h - 6.0,
                wk.week.format("%d %b")
            );
        }
        s.push_str("</g>");
    }
    s.push_str(&sticky_axis(left - 2.0, h, &axis));
    s.push_str("</svg>");
    s
}

/// One point of a burn-up.
#[derive(Debug, Clone)]
pub(crate) struct BurnPoint {
    /// The day.
    pub day: NaiveDate,
    /// Issues in scope.
    pub scope: usize,
    /// Of them, done.
    pub done: usize,
}

/// One committed forecast of a milestone.
#[derive(Debug, Clone)]
pub(crate) struct DriftPoint {
    /// That forecast's day 0.
    pub as_of: NaiveDate,
    /// Its p50, when within the horizon.
    pub p50: Option<NaiveDate>,
    /// Its p80, when within the horizon.
    pub p80: Option<NaiveDate>,
}

/// How a milestone's forecast moved: day 0 of each committed forecast across, the date it gave up the
/// side; p80 solid with dots, p50 dashed, the due date a horizontal line, beyond-horizon points as
/// hollow marks on the top edge.
pub(crate) fn drift(points: &[DriftPoint], due: Option<NaiveDate>, title: &str) -> String {
    let (w, h) = (640.0, 220.0);
    let (left, bottom, top, right) = (90.0, 24.0, 12.0, 12.0);
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return String::new();
    };
    let xs = Scale {
        start: first.as_of,
        end: last.as_of.max(first.as_of + chrono::Days::new(7)),
        x0: left,
        x1: w - right,
    };
    let dates: Vec<NaiveDate> = points
        .iter()
        .flat_map(|p| [p.p50, p.p80])
        .flatten()
        .chain(due)
        .collect();
    let (Some(lo), Some(hi)) = (dates.iter().min().copied(), dates.iter().max().copied()) else {
        return String::new();
    };
    // The date axis runs upwards: later dates higher.
    let ys = Scale {
        start: lo,
        end: hi.max(lo + chrono::Days::new(7)),
        x0: h - bottom,
        x1: top + 8.0,
    };
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart drift\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-labelledby=\"dr-t\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"dr-t\">{}</title>",
        esc(title)
    );
    let mut axis = String::new();
    for m in ys.months(5) {
        let y = ys.x(m);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{left}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/>",
            w - right
        );
        let _ = write!(
            axis,
            "<text class=\"tick\" aria-hidden=\"true\" x=\"0\" y=\"{}\">{}</text>",
            y + 5.0,
            m.format("%b %Y")
        );
    }
    let months = xs.months(6);
    for (i, m) in months.iter().enumerate() {
        let _ = write!(
            s,
            "<text class=\"tick\" aria-hidden=\"true\" x=\"{}\" y=\"{}\">{}</text>",
            xs.x(*m),
            h - 6.0,
            month_label(&months, i)
        );
    }
    if let Some(d) = due {
        let y = ys.x(d);
        let _ = write!(
            s,
            "<line class=\"due-line\" x1=\"{left}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/><text class=\"tick\" aria-hidden=\"true\" x=\"{}\" y=\"{}\">due</text>",
            w - right,
            w - right - 30.0,
            y - 4.0
        );
    }
    let line = |pick: &dyn Fn(&DriftPoint) -> Option<NaiveDate>| -> String {
        let mut d = String::new();
        let mut pen = false;
        for p in points {
            match pick(p) {
                Some(v) => {
                    let _ = write!(
                        d,
                        "{}{} {} ",
                        if pen { "L" } else { "M" },
                        xs.x(p.as_of),
                        ys.x(v)
                    );
                    pen = true;
                }
                None => pen = false,
            }
        }
        d.trim_end().to_owned()
    };
    let _ = write!(
        s,
        "<path class=\"p50-line\" d=\"{}\"/><path class=\"p80-line\" d=\"{}\"/>",
        line(&|p| p.p50),
        line(&|p| p.p80)
    );
    for p in points {
        let x = xs.x(p.as_of);
        match p.p80 {
            Some(v) => {
                let _ = write!(
                    s,
                    "<circle class=\"p80-dot\" cx=\"{x}\" cy=\"{}\" r=\"3.5\"><title>{}: p80 {v}</title></circle>",
                    ys.x(v),
                    p.as_of
                );
            }
            None => {
                let _ = write!(
                    s,
                    "<circle class=\"beyond-dot\" cx=\"{x}\" cy=\"{top}\" r=\"4\"><title>{}: p80 beyond the horizon</title></circle>",
                    p.as_of
                );
            }
        }
    }
    s.push_str(&sticky_axis(left - 4.0, h, &axis));
    s.push_str("</svg>");
    s
}

/// A share as a whole percentage for an axis.
fn pct_label(p: f64) -> String {
    format!("{:.0}%", p * 100.0)
}

/// A day and the probability that the milestone is done by then.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FanPoint {
    /// The day.
    pub day: NaiveDate,
    /// P(done by the end of that day).
    pub p: f64,
    /// What the point is (`p10`, `due`…), printed beside it.
    pub label: &'static str,
}

/// The milestone fan chart: the probability that it is done by each date, drawn through the points the
/// forecast stores (p10, p50, p80 and P(on time) at the due date) joined by straight lines — between
/// them the curve is an interpolation, which the page says. `beyond` is P(done within the horizon) when
/// p80 (or more) lies beyond it: the curve then runs flat to the horizon at that height, dashed.
pub(crate) fn fan(
    points: &[FanPoint],
    today: NaiveDate,
    horizon: NaiveDate,
    due: Option<NaiveDate>,
    beyond: Option<f64>,
    title: &str,
) -> String {
    let (w, h) = (960.0, 260.0);
    let (left, right, top, bottom) = (56.0, 60.0, 16.0, 40.0);
    let mut pts: Vec<FanPoint> = points.to_vec();
    pts.sort_by(|a, b| a.day.cmp(&b.day).then(a.p.total_cmp(&b.p)));
    let last = pts.last().map_or(today, |p| p.day);
    let end = if beyond.is_some() {
        horizon
    } else {
        last.max(due.unwrap_or(last))
    }
    .max(today + chrono::Days::new(28));
    let xs = Scale {
        start: today.min(due.unwrap_or(today)),
        end,
        x0: left,
        x1: w - right,
    };
    let y = |p: f64| ((top + (1.0 - p.clamp(0.0, 1.0)) * (h - top - bottom)) * 10.0).round() / 10.0;
    let mut s = String::new();
    // Where the curve starts to rise: a screen narrower than the chart is scrolled there (charts.js).
    let focus = pts.first().map_or(0.0, |p| xs.x(p.day) / w);
    let _ = write!(
        s,
        "<svg class=\"chart fan\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-labelledby=\"fan-t\" data-focus=\"{focus:.3}\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"fan-t\">{}</title>",
        esc(title)
    );
    let mut axis = String::new();
    for p in [0.0, 0.5, 0.8, 1.0] {
        let yy = y(p);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{left}\" y1=\"{yy}\" x2=\"{}\" y2=\"{yy}\"/>",
            w - right
        );
        let _ = write!(
            axis,
            "<text class=\"tick\" aria-hidden=\"true\" x=\"0\" y=\"{}\">{}</text>",
            yy + 5.0,
            pct_label(p)
        );
    }
    let months = xs.months(10);
    for (i, m) in months.iter().enumerate() {
        let x = xs.x(*m);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{}\"/><text class=\"tick\" aria-hidden=\"true\" x=\"{x}\" y=\"{}\">{}</text>",
            h - bottom,
            h - bottom + 20.0,
            month_label(&months, i)
        );
    }
    // The curve: from 0 today through the stored points.
    let mut d = format!("M{} {}", xs.x(today), y(0.0));
    for p in &pts {
        let _ = write!(d, " L{} {}", xs.x(p.day), y(p.p));
    }
    let _ = write!(s, "<path class=\"fan-line\" d=\"{d}\"/>");
    if let Some(b) = beyond {
        let _ = write!(
            s,
            "<path class=\"fan-beyond\" d=\"M{} {} L{} {}\"/><text class=\"beyond\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} within the horizon</text>",
            xs.x(last),
            y(pts.last().map_or(0.0, |p| p.p)),
            xs.x(horizon),
            y(b),
            w - right,
            y(b) - 8.0,
            super::pages::percent(b)
        );
    }
    for p in &pts {
        let (x, yy) = (xs.x(p.day), y(p.p));
        let _ = write!(
            s,
            "<g><title>{}: {} by {}</title><circle class=\"fan-dot\" cx=\"{x}\" cy=\"{yy}\" r=\"4.5\"/><text class=\"label\" x=\"{}\" y=\"{}\">{}</text></g>",
            p.label,
            super::pages::percent(p.p),
            p.day,
            x + 7.0,
            // The due point's name goes below the line, the quantiles' above, so close points stay legible;
            // near 0% below would sit on the month labels, so it goes above there too.
            if p.label == "at due" && yy + 20.0 <= h - bottom - 6.0 {
                yy + 20.0
            } else {
                yy - 7.0
            },
            p.label
        );
    }
    if let Some(due) = due {
        let x = xs.x(due);
        let _ = write!(
            s,
            "<line class=\"due-line\" x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{}\"/><text class=\"tick\" aria-hidden=\"true\" x=\"{}\" y=\"{}\">due</text>",
            h - bottom,
            x + 4.0,
            top + 12.0
        );
    }
    let tx = xs.x(today);
    let _ = write!(
        s,
        "<line class=\"today\" x1=\"{tx}\" y1=\"{top}\" x2=\"{tx}\" y2=\"{}\"/><text class=\"today-label\" x=\"{tx}\" y=\"{}\" text-anchor=\"start\">today</text>",
        h - bottom,
        h - 4.0
    );
    s.push_str(&sticky_axis(left - 6.0, h, &axis));
    s.push_str("</svg>");
    s
}

/// The forecast's continuation of a burn-up: from today's done count, the remaining scope done between
/// p10 and p80 (a shaded cone), p50 a line; a date beyond the horizon runs the cone to the horizon.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BurnCone {
    /// Today.
    pub today: NaiveDate,
    /// The forecast horizon.
    pub horizon: NaiveDate,
    /// Issues in scope today.
    pub scope: usize,
    /// Of them, done today.
    pub done: usize,
    /// p10, p50 and p80 of the milestone (none: beyond the horizon).
    pub p10: Option<NaiveDate>,
    /// Median.
    pub p50: Option<NaiveDate>,
    /// 80%.
    pub p80: Option<NaiveDate>,
    /// Whether the cone is of the work that stays (the issues expected to leave taken out), not of all
    /// the remaining issues.
    pub staying: bool,
}

/// A burn-up continued by the forecast cone to the right of today (see [`BurnCone`]).
pub(crate) fn burnup_with_cone(
    points: &[BurnPoint],
    cone: Option<BurnCone>,
    title: &str,
) -> String {
    let (w, h) = (960.0, 220.0);
    let (left, bottom, top, right) = (40.0, 24.0, 10.0, 16.0);
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return String::new();
    };
    let end = cone.map_or(last.day, |c| {
        [c.p80, c.p50, c.p10]
            .into_iter()
            .flatten()
            .max()
            .map_or(c.horizon, |d| if c.p80.is_none() { c.horizon } else { d })
            .max(last.day)
            .max(c.today)
    });
    let scale = Scale {
        start: first.day,
        end,
        x0: left,
        x1: w - right,
    };
    let max = points
        .iter()
        .map(|p| p.scope)
        .chain(cone.map(|c| c.scope))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let y =
        |v: usize| (((h - bottom) - (v as f64 / max) * (h - bottom - top)) * 10.0).round() / 10.0;
    let path = |f: &dyn Fn(&BurnPoint) -> usize| {
        points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                format!(
                    "{}{} {}",
                    if i == 0 { "M" } else { "L" },
                    scale.x(p.day),
                    y(f(p))
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut s = String::new();
    // Where the forecast starts: a screen narrower than the chart is scrolled there (charts.js), with
    // the last weeks of history to its left.
    let focus = cone.map_or(0.0, |c| scale.x(c.today) / w);
    let _ = write!(
        s,
        "<svg class=\"chart burnup cone\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-labelledby=\"bu-t\" data-focus=\"{focus:.3}\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"bu-t\">{}</title>",
        esc(title)
    );
    let months = scale.months(10);
    for (i, m) in months.iter().enumerate() {
        let x = scale.x(*m);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{}\"/><text class=\"tick\" aria-hidden=\"true\" x=\"{x}\" y=\"{}\">{}</text>",
            h - bottom,
            h - 6.0,
            month_label(&months, i)
        );
    }
    let axis = format!(
        "<text class=\"tick\" aria-hidden=\"true\" x=\"0\" y=\"{}\">{}</text><text class=\"tick\" aria-hidden=\"true\" x=\"0\" y=\"{}\">0</text>",
        y(max as usize) + 5.0,
        max as usize,
        h - bottom
    );
    if let Some(c) = cone {
        let x0 = scale.x(c.today);
        let (y0, y1) = (y(c.done), y(c.scope));
        let at = |d: Option<NaiveDate>| scale.x(d.unwrap_or(c.horizon));
        let _ = write!(
            s,
            "<g><title>Forecast: {} done between p10 {} and p80 {}, half by p50 {}</title><path class=\"cone-area\" d=\"M{x0} {y0} L{} {y1} L{} {y1} Z\"/><path class=\"scope\" d=\"M{x0} {y1} L{} {y1}\"/><path class=\"cone-p50\" d=\"M{x0} {y0} L{} {y1}\"/></g>",
            {
                let remaining =
                    crate::prose::count(c.scope.saturating_sub(c.done), "issue", "issues");
                if c.staying {
                    // The headline leaves out the issues expected never to be done (audit 68: "the
                    // remaining 25 issues done by p80" when about 15 were expected to leave).
                    format!("the work that stays of the remaining {remaining}")
                } else {
                    format!("the remaining {remaining}")
                }
            },
            c.p10
                .map_or_else(|| "beyond the horizon".to_owned(), |d| d.to_string()),
            c.p80
                .map_or_else(|| "beyond the horizon".to_owned(), |d| d.to_string()),
            c.p50
                .map_or_else(|| "beyond the horizon".to_owned(), |d| d.to_string()),
            at(c.p10),
            at(c.p80),
            at(c.p80),
            at(c.p50),
        );
        let _ = write!(
            s,
            "<line class=\"today\" x1=\"{x0}\" y1=\"{top}\" x2=\"{x0}\" y2=\"{}\"/><text class=\"today-label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">today</text>",
            h - bottom,
            x0 - 4.0,
            top + 14.0
        );
    }
    let _ = write!(
        s,
        "<path class=\"scope\" d=\"{}\"/><path class=\"done\" d=\"{}\"/>",
        path(&|p| p.scope),
        path(&|p| p.done)
    );
    s.push_str(&sticky_axis(left - 4.0, h, &axis));
    s.push_str("</svg>");
    s
}

/// One bar of the roadmap: an issue from its planned start to its p50, with a p50–p80 whisker; one whose
/// p50 is beyond the horizon (done within it in under half the futures: never done, or left with someone
/// who leaves) from its planned start to its planned end, drawn apart as unlikely to be done.
#[derive(Debug, Clone)]
pub(crate) struct GanttBar {
    /// `owner/repo#N`.
    pub key: String,
    /// Its title.
    pub title: String,
    /// Its page, relative to the page.
    pub href: Option<String>,
    /// Start in the median plan.
    pub start: NaiveDate,
    /// p50 (none: beyond the horizon).
    pub p50: Option<NaiveDate>,
    /// p80 (none: beyond the horizon).
    pub p80: Option<NaiveDate>,
    /// End in the median plan.
    pub end: Option<NaiveDate>,
    /// The share of futures it is done in within the horizon, where its p50 is beyond it.
    pub done_at_all: Option<f64>,
}

impl GanttBar {
    /// Where the bar ends, and where its whisker does (the same for one unlikely to be done): the p50 and
    /// the p80, or — with a p50 beyond the horizon — the planned end (audit 125: 799 of 892 bars of a
    /// 5,000-issue roadmap ran to the chart's right edge, all alike).
    pub(crate) fn ends(&self, edge: NaiveDate) -> (NaiveDate, NaiveDate) {
        match (self.p50, self.end) {
            (None, Some(end)) => (end.max(self.start), end.max(self.start)),
            _ => (
                self.p50.map_or(edge, |d| d.max(self.start)),
                self.p80.map_or(edge, |d| d.max(self.start)),
            ),
        }
    }

    /// Whether it is drawn as unlikely to be done: its p50 beyond the horizon.
    fn unlikely(&self) -> bool {
        self.p50.is_none() && self.end.is_some()
    }
}

/// One person's lane of the roadmap.
#[derive(Debug, Clone)]
pub(crate) struct Lane {
    /// The person.
    pub person: String,
    /// Their page, relative to the page.
    pub href: Option<String>,
    /// Their issues in planned order.
    pub bars: Vec<GanttBar>,
    /// Their time off, inclusive.
    pub off: Vec<(NaiveDate, NaiveDate)>,
}

/// A milestone's due date on the roadmap.
#[derive(Debug, Clone)]
pub(crate) struct DueMark {
    /// The milestone's title.
    pub title: String,
    /// Its due day.
    pub due: NaiveDate,
    /// Whether the date is hard.
    pub hard: bool,
}

/// The roadmap: the median plan as a Gantt chart, one lane per person (bars packed into as few rows as
/// do not overlap), time off shaded and hatched, milestone due dates as labelled vertical lines, month
/// ticks and today. Every bar links to its issue page.
pub(crate) fn roadmap(
    lanes: &[Lane],
    dues: &[DueMark],
    today: NaiveDate,
    end: NaiveDate,
    title: &str,
) -> String {
    const W: f64 = 1200.0;
    const LABEL: f64 = 130.0;
    const ROW: f64 = 28.0;
    const HEAD: f64 = 30.0;
    let scale = Scale {
        start: today,
        end: end.max(today + chrono::Days::new(28)),
        x0: LABEL + 8.0,
        x1: W - 16.0,
    };
    // Rows per lane: a bar goes into the first row whose last bar (whisker included) ended before it.
    let packed: Vec<Vec<(usize, &GanttBar)>> = lanes
        .iter()
        .map(|l| {
            let mut ends: Vec<f64> = Vec::new();
            l.bars
                .iter()
                .map(|b| {
                    let a = scale.x(b.start);
                    let z = scale.x(b.ends(scale.end).1) + 2.0;
                    let row = match ends.iter().position(|e| *e <= a) {
                        Some(r) => r,
                        None => {
                            ends.push(0.0);
                            ends.len() - 1
                        }
                    };
                    ends[row] = z;
                    (row, b)
                })
                .collect()
        })
        .collect();
    let heights: Vec<f64> = packed
        .iter()
        .map(|p| (p.iter().map(|(r, _)| r + 1).max().unwrap_or(1) as f64) * ROW + 10.0)
        .collect();
    let body = heights.iter().sum::<f64>();
    let dues_h = 20.0 * dues.len().min(4) as f64;
    let height = HEAD + dues_h + body + 24.0;
    let lanes_top = HEAD + dues_h;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart roadmap\" viewBox=\"0 0 {W} {height}\" role=\"group\" aria-labelledby=\"rm-t\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"rm-t\">{}</title>",
        esc(title)
    );
    let _ = write!(
        s,
        "<defs><pattern id=\"rm-off\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><line class=\"off-hatch\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\"/></pattern></defs>"
    );
    let bottom = lanes_top + body;
    let months = scale.months(14);
    // Hidden from a screen reader as on the runway: each bar's words give its dates.
    s.push_str("<g class=\"months\" aria-hidden=\"true\">");
    for (i, m) in months.iter().enumerate() {
        let x = scale.x(*m);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{x}\" y1=\"{HEAD}\" x2=\"{x}\" y2=\"{bottom}\"/><text class=\"tick\" x=\"{x}\" y=\"18\">{}</text>",
            month_label(&months, i)
        );
    }
    s.push_str("</g>");
    // The due dates and today under the lanes, so that a lane's name held in view over the bars is not
    // crossed by them.
    for (i, d) in dues.iter().enumerate() {
        if d.due < scale.start || d.due > scale.end {
            continue;
        }
        let x = scale.x(d.due);
        let ly = HEAD + 14.0 + 20.0 * (i % 4) as f64;
        let class = if d.hard { "due-line hard" } else { "due-line" };
        let _ = write!(
            s,
            "<g><title>{} due {}{}</title><line class=\"{class}\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{bottom}\"/><text class=\"tick\" x=\"{}\" y=\"{ly}\" text-anchor=\"end\">{} ▾</text></g>",
            esc(&d.title),
            d.due,
            if d.hard { " (hard)" } else { "" },
            ly + 4.0,
            x + 4.0,
            esc(&crate::prose::clip(&d.title, 28))
        );
    }
    let tx = scale.x(today);
    let _ = write!(
        s,
        "<line class=\"today\" x1=\"{tx}\" y1=\"{HEAD}\" x2=\"{tx}\" y2=\"{bottom}\"/><text class=\"today-label\" x=\"{tx}\" y=\"{}\">today</text>",
        height - 6.0
    );
    let mut y = lanes_top;
    for ((lane, rows), lh) in lanes.iter().zip(&packed).zip(&heights) {
        let _ = write!(
            s,
            "<g class=\"lane\"><line class=\"grid\" x1=\"0\" y1=\"{y}\" x2=\"{W}\" y2=\"{y}\"/>"
        );
        for (from, to) in &lane.off {
            if *to < scale.start || *from > scale.end {
                continue;
            }
            let a = scale.x(*from);
            let b = scale.x(*to + chrono::Days::new(1));
            let _ = write!(
                s,
                "<rect class=\"off\" x=\"{a}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#rm-off)\"><title>{} off {from} – {to}</title></rect>",
                y + 2.0,
                ((b - a).max(2.0) * 10.0).round() / 10.0,
                lh - 4.0,
                esc(&lane.person)
            );
        }
        for (row, b) in rows {
            let by = y + 6.0 + ROW * *row as f64;
            let a = scale.x(b.start);
            // A forecast earlier than the planned start (futures where work ahead of it is dropped) is
            // drawn at the start; the words below give the forecast's own days.
            let (p50, p80) = b.ends(scale.end);
            let (m, z) = (scale.x(p50).min(scale.x1), scale.x(p80).min(scale.x1));
            let words = if b.unlikely() {
                format!(
                    "{} {}: starts {} in the median plan, ends {} there; its p50 is beyond the horizon \
                     (done within it in {} of the futures)",
                    b.key,
                    b.title,
                    b.start,
                    b.end.map_or_else(String::new, |d| d.to_string()),
                    b.done_at_all
                        .map_or_else(|| "under half".to_owned(), crate::prose::percent),
                )
            } else {
                format!(
                    "{} {}: starts {} in the median plan, p50 {}, p80 {}",
                    b.key,
                    b.title,
                    b.start,
                    b.p50
                        .map_or_else(|| "beyond the horizon".to_owned(), |d| d.to_string()),
                    b.p80
                        .map_or_else(|| "beyond the horizon".to_owned(), |d| d.to_string()),
                )
            };
            let mut g = if b.unlikely() {
                format!(
                    "<title>{}</title><rect class=\"gbar unlikely\" x=\"{a}\" y=\"{by}\" width=\"{}\" height=\"18\" rx=\"2\"/>",
                    esc(&words),
                    ((m - a).max(3.0) * 10.0).round() / 10.0,
                )
            } else {
                format!(
                    "<title>{}</title><rect class=\"gbar\" x=\"{a}\" y=\"{by}\" width=\"{}\" height=\"18\" rx=\"2\"/><path class=\"whisker\" d=\"M{m} {} H{z} M{z} {} V{}\"/>",
                    esc(&words),
                    ((m - a).max(3.0) * 10.0).round() / 10.0,
                    by + 9.0,
                    by + 3.0,
                    by + 15.0
                )
            };
            // The key on the bar when it fits.
            if m - a > 8.5 * b.key.len() as f64 + 6.0 {
                let _ = write!(
                    g,
                    "<text class=\"gkey\" x=\"{}\" y=\"{}\">{}</text>",
                    a + 3.0,
                    by + 14.0,
                    esc(&b.key)
                );
            }
            match &b.href {
                Some(h) => {
                    let _ = write!(s, "<a href=\"{}\">{g}</a>", esc(h));
                }
                None => {
                    let _ = write!(s, "<g>{g}</g>");
                }
            }
        }
        // The lane's name last, over its own background, held in view as the chart scrolls (charts.js).
        let _ = write!(
            s,
            "<rect class=\"label-bg sticky\" x=\"0\" y=\"{y}\" width=\"{}\" height=\"{lh}\"/>",
            scale.x0 - 4.0
        );
        let name = esc(&crate::prose::clip(&lane.person, 16));
        match &lane.href {
            Some(h) => {
                let _ = write!(
                    s,
                    "<a class=\"sticky\" href=\"{}\"><text class=\"label\" x=\"0\" y=\"{}\">{name}</text></a>",
                    esc(h),
                    y + 18.0
                );
            }
            None => {
                let _ = write!(
                    s,
                    "<text class=\"label sticky\" x=\"0\" y=\"{}\">{name}</text>",
                    y + 18.0
                );
            }
        }
        s.push_str("</g>");
        y += lh;
    }
    s.push_str("</svg>");
    s
}

/// One method's coverage: promised p10, p50, p80 against observed (value, low, high of the interval).
#[derive(Debug, Clone)]
pub(crate) struct Reliability {
    /// The method's name as people read it.
    pub name: String,
    /// Observed coverage of p10, p50 and p80 with its interval.
    pub coverage: [Option<[f64; 3]>; 3],
}

/// The reliability diagram: promised coverage across, observed up, the diagonal where they agree; each
/// method a mark of its own shape (circle, square, triangle, diamond) with its interval as a whisker,
/// named in a legend inside the chart.
pub(crate) fn reliability(methods: &[Reliability], title: &str) -> String {
    let (w, h) = (640.0, 420.0);
    let (left, right, top, bottom) = (76.0, 200.0, 16.0, 48.0);
    let x = |p: f64| ((left + p.clamp(0.0, 1.0) * (w - left - right)) * 10.0).round() / 10.0;
    let y = |p: f64| ((top + (1.0 - p.clamp(0.0, 1.0)) * (h - top - bottom)) * 10.0).round() / 10.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart reliability\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-labelledby=\"rl-t\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"rl-t\">{}</title>",
        esc(title)
    );
    // The y scale and its name, held in view as the chart scrolls (drawn last, see [`sticky_axis`]).
    let mut axis = String::new();
    for p in [0.0, 0.1, 0.5, 0.8, 1.0] {
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{left}\" y1=\"{yy}\" x2=\"{}\" y2=\"{yy}\"/><line class=\"grid\" x1=\"{xx}\" y1=\"{top}\" x2=\"{xx}\" y2=\"{}\"/><text class=\"tick\" aria-hidden=\"true\" x=\"{xx}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            w - right,
            h - bottom,
            h - bottom + 20.0,
            pct_label(p),
            yy = y(p),
            xx = x(p)
        );
        let _ = write!(
            axis,
            "<text class=\"tick\" aria-hidden=\"true\" x=\"22\" y=\"{}\">{}</text>",
            y(p) + 5.0,
            pct_label(p)
        );
    }
    let yc = y(0.5);
    let _ = write!(
        axis,
        "<text class=\"tick\" aria-hidden=\"true\" x=\"14\" y=\"{yc}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {yc})\">observed (share done by then)</text>"
    );
    let _ = write!(
        s,
        "<text class=\"tick\" aria-hidden=\"true\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">promised (p10, p50, p80)</text><line class=\"diagonal\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
        x(0.5),
        h - 6.0,
        x(0.0),
        y(0.0),
        x(1.0),
        y(1.0),
    );
    let shape = |i: usize, cx: f64, cy: f64| -> String {
        match i % 4 {
            0 => format!("<circle class=\"mark m{i}\" cx=\"{cx}\" cy=\"{cy}\" r=\"5\"/>"),
            1 => format!(
                "<rect class=\"mark m{i}\" x=\"{}\" y=\"{}\" width=\"10\" height=\"10\"/>",
                cx - 5.0,
                cy - 5.0
            ),
            2 => format!(
                "<path class=\"mark m{i}\" d=\"M{cx} {} l6 10 h-12 z\"/>",
                cy - 6.0
            ),
            _ => format!(
                "<path class=\"mark m{i}\" d=\"M{cx} {} l6 6 l-6 6 l-6 -6 z\"/>",
                cy - 6.0
            ),
        }
    };
    let mut legend_y = top + 20.0;
    for (i, m) in methods.iter().enumerate() {
        let dx = (i as f64 - (methods.len() as f64 - 1.0) / 2.0) * 9.0;
        for (q, c) in [0.1, 0.5, 0.8].iter().zip(&m.coverage) {
            let Some([v, lo, hi]) = c else { continue };
            let cx = x(*q) + dx;
            let _ = write!(
                s,
                "<g><title>{}: p{:.0} promised {}, observed {} ({}–{})</title><path class=\"whisker m{i}\" d=\"M{cx} {} V{} M{} {} h8 M{} {} h8\"/>{}</g>",
                esc(&m.name),
                q * 100.0,
                pct_label(*q),
                pct_label(*v),
                pct_label(*lo),
                pct_label(*hi),
                y(*lo),
                y(*hi),
                cx - 4.0,
                y(*lo),
                cx - 4.0,
                y(*hi),
                shape(i, cx, y(*v))
            );
        }
        // A name longer than the legend's column goes on two lines, split at a space (audit 189:
        // "Throughput Monte Ca…", where the tables say it whole).
        let lines = legend_lines(&m.name, LEGEND_CHARS);
        let lx = w - right + 20.0;
        let _ = write!(
            s,
            "{}<text class=\"label\" x=\"{}\" y=\"{legend_y}\">",
            shape(i, lx, legend_y - 5.0),
            lx + 14.0,
        );
        for (n, line) in lines.iter().enumerate() {
            let _ = write!(
                s,
                "<tspan x=\"{}\" dy=\"{}\">{}</tspan>",
                lx + 14.0,
                if n == 0 { 0.0 } else { 16.0 },
                esc(line)
            );
        }
        s.push_str("</text>");
        legend_y += 26.0 + 16.0 * (lines.len() as f64 - 1.0);
    }
    s.push_str(&sticky_axis(left - 4.0, h - bottom + 6.0, &axis));
    s.push_str("</svg>");
    s
}

/// How many characters of a method's name fit on a line of the reliability diagram's legend.
const LEGEND_CHARS: usize = 18;

/// `name` on at most two lines of `width` characters, split at spaces; what does not fit is clipped.
fn legend_lines(name: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![String::new()];
    for word in name.split_whitespace() {
        let last = lines.last_mut().map_or(0, |l| l.chars().count());
        if last > 0 && last + 1 + word.chars().count() > width && lines.len() < 2 {
            lines.push(String::new());
        }
        if let Some(l) = lines.last_mut() {
            if !l.is_empty() {
                l.push(' ');
            }
            l.push_str(word);
        }
    }
    lines
        .into_iter()
        .map(|l| crate::prose::clip(&l, width + 2))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_method_name_goes_on_two_lines_of_the_legend() {
        assert_eq!(
            legend_lines("Throughput Monte Carlo", LEGEND_CHARS),
            ["Throughput Monte", "Carlo"]
        );
        assert_eq!(legend_lines("CommiTea", LEGEND_CHARS), ["CommiTea"]);
        assert_eq!(legend_lines("EBS", LEGEND_CHARS), ["EBS"]);
    }

    #[test]
    fn month_labels_give_the_year_once_without_crowding_december_into_january() {
        let d = |y, m| NaiveDate::from_ymd_opt(y, m, 1).unwrap();
        let labels = |ms: &[NaiveDate]| {
            (0..ms.len())
                .map(|i| month_label(ms, i))
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(&[d(2026, 10), d(2026, 11)]), ["Oct 2026", "Nov"]);
        assert_eq!(
            labels(&[d(2026, 12), d(2027, 1), d(2027, 2)]),
            ["Dec", "Jan 2027", "Feb"]
        );
        assert_eq!(
            labels(&[d(2026, 12)]),
            ["Dec 2026"],
            "alone, December says its year"
        );
        assert_eq!(labels(&[d(2026, 12), d(2027, 3)]), ["Dec 2026", "Mar"]);
    }

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap_or_default()
    }

    #[test]
    fn months_fall_on_the_first_and_thin_evenly() {
        let s = Scale {
            start: d("2026-01-15"),
            end: d("2026-05-02"),
            x0: 0.0,
            x1: 100.0,
        };
        let m: Vec<String> = s.months(12).iter().map(ToString::to_string).collect();
        assert_eq!(m, ["2026-02-01", "2026-03-01", "2026-04-01", "2026-05-01"]);
        let long = Scale {
            end: d("2028-01-15"),
            ..s
        };
        let m = long.months(12);
        assert!(m.len() <= 12, "{m:?}");
        // 25 months thinned to every other one, all on the same parity, so the labels fall evenly.
        assert!(m.iter().all(|x| x.month0() % 2 == 0), "{m:?}");
        assert_eq!(s.x(d("2026-01-01")), 0.0);
        assert_eq!(s.x(d("2027-01-01")), 100.0);
    }

    #[test]
    fn a_long_axis_labels_every_nth_january_and_a_long_past_due_date_does_not_stretch_it() {
        let fifteen = Scale {
            start: d("2011-10-18"),
            end: d("2026-12-04"),
            x0: 0.0,
            x1: 100.0,
        };
        let m = fifteen.months(12);
        assert!(m.len() <= 12 && m.len() >= 5, "{m:?}");
        assert!(m.iter().all(|x| x.month0() == 0), "{m:?}");
        assert!(
            m.windows(2).all(|w| w[1].year() - w[0].year() == 2),
            "{m:?}"
        );
        // A milestone due in 2011 and still open in 2026: the axis starts half a year back, not in 2011.
        let row = RangeRow {
            label: "fcrepo-3.6".into(),
            href: None,
            p10: Some(d("2026-12-10")),
            p50: Some(d("2027-01-10")),
            p80: Some(d("2027-02-10")),
            due: Some(d("2011-10-18")),
            hard: false,
            status: "late".into(),
            words: "fcrepo-3.6".into(),
            undated: undated_words(true),
        };
        let svg = ranges(&[row], d("2026-12-04"), d("2027-02-10"), "Runway");
        assert!(!svg.contains("2012") && !svg.contains("2011"), "{svg}");
    }

    #[test]
    fn a_far_due_date_does_not_set_the_axis_and_a_dated_p10_does() {
        let row = |p10: &str, p80: Option<&str>, due: &str| RangeRow {
            label: "m".into(),
            href: None,
            p10: Some(d(p10)),
            p50: p80.map(d),
            p80: p80.map(d),
            due: Some(d(due)),
            hard: false,
            status: "on_track".into(),
            words: "m".into(),
            undated: undated_words(true),
        };
        let today = d("2026-11-27");
        let open = d("2027-01-27");
        // A "someday" milestone due in 2029 beside bars ending in 2027 (audit 176): the bars set it.
        let rows = [
            row("2026-12-10", Some("2027-03-01"), "2027-02-01"),
            row("2027-01-10", Some("2027-04-01"), "2029-11-27"),
        ];
        assert_eq!(ranges_end(&rows, today, open), d("2027-04-01"));
        // A due date a few months past the bars still shows where it is.
        let rows = [row("2026-12-10", Some("2027-03-01"), "2027-06-01")];
        assert_eq!(ranges_end(&rows, today, open), d("2027-06-01"));
        // Only p10 dated, due before it: the axis reaches p10, not the due date.
        let rows = [row("2027-07-04", None, "2027-03-31")];
        assert_eq!(ranges_end(&rows, today, open), d("2027-07-04"));
    }

    #[test]
    fn a_range_chart_escapes_titles_and_marks_today_and_the_horizon() {
        let rows = vec![
            RangeRow {
                label: "<script>alert(1)</script>\u{202E}".into(),
                href: Some("milestones/1.html".into()),
                p10: Some(d("2026-02-01")),
                p50: Some(d("2026-02-10")),
                p80: None,
                due: Some(d("2026-02-20")),
                hard: true,
                status: "late".into(),
                words: "x".into(),
                undated: undated_words(true),
            },
            RangeRow {
                label: "far".into(),
                href: None,
                p10: None,
                p50: None,
                p80: None,
                due: None,
                hard: false,
                status: "no_due_date".into(),
                words: "y".into(),
                undated: undated_words(true),
            },
        ];
        let svg = ranges(&rows, d("2026-01-20"), d("2026-06-01"), "Runway");
        assert!(!svg.contains("<script"), "{svg}");
        assert!(!svg.contains('\u{202E}'));
        assert!(svg.contains("&lt;script&gt;"));
        assert!(svg.contains("class=\"today\""));
        assert!(svg.contains("open-ended"));
        assert!(svg.contains("not within the horizon"));
        assert!(svg.contains("class=\"due hard\""));
        assert!(svg.contains(">Feb 2026<"), "{svg}");
        assert!(!svg.contains("style="));
        // A chart of links is a group: its month labels are hidden from a screen reader, the rows' words
        // are not.
        assert!(svg.contains("role=\"group\""));
        assert_eq!(months_hidden(&svg), Some(true), "{svg}");
    }

    /// Whether every axis label (tick) of `svg` is hidden from a screen reader, and it has some: the
    /// chart's title and its points' words carry the figures (audit 115 heard "0% 50% 80% 100% Dec …").
    fn ticks_hidden(svg: &str) -> bool {
        let all = svg.matches("<text class=\"tick\"").count();
        all > 0
            && svg
                .matches("<text class=\"tick\" aria-hidden=\"true\"")
                .count()
                == all
    }

    /// Whether `svg`'s month labels (the ticks that come first) are inside its `aria-hidden` month
    /// group (None: no labels).
    fn months_hidden(svg: &str) -> Option<bool> {
        let first = svg.find("class=\"tick\"")?;
        let group = svg.find("<g class=\"months\" aria-hidden=\"true\">");
        Some(
            group
                .is_some_and(|g| g < first && svg[g..].find("</g>").is_some_and(|e| first < g + e)),
        )
    }

    #[test]
    fn drift_draws_p80_and_marks_the_horizon() {
        let points = vec![
            DriftPoint {
                as_of: d("2026-01-05"),
                p50: Some(d("2026-03-01")),
                p80: Some(d("2026-03-20")),
            },
            DriftPoint {
                as_of: d("2026-01-12"),
                p50: Some(d("2026-03-10")),
                p80: None,
            },
            DriftPoint {
                as_of: d("2026-01-19"),
                p50: Some(d("2026-03-12")),
                p80: Some(d("2026-04-02")),
            },
        ];
        let svg = drift(&points, Some(d("2026-03-31")), "drift");
        assert!(ticks_hidden(&svg), "{svg}");
        assert_eq!(svg.matches("class=\"p80-dot\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"beyond-dot\"").count(), 1);
        // The p80 line breaks where the horizon hid it: two separate moves.
        let p80 = svg.split("class=\"p80-line\" d=\"").nth(1).unwrap_or("");
        assert_eq!(
            p80.split('"').next().unwrap_or("").matches('M').count(),
            2,
            "{svg}"
        );
        assert!(svg.contains("class=\"due-line\""));
        assert!(drift(&[], None, "x").is_empty());
    }

    #[test]
    fn load_marks_weeks_over_capacity() {
        let weeks = vec![
            WeekBar {
                week: d("2026-01-05"),
                planned: 30.0,
                capacity: 30.0,
            },
            WeekBar {
                week: d("2026-01-12"),
                planned: 45.0,
                capacity: 30.0,
            },
        ];
        let svg = load(&weeks, "load");
        assert!(ticks_hidden(&svg), "{svg}");
        assert_eq!(svg.matches("bar over").count(), 1, "{svg}");
        assert_eq!(svg.matches("class=\"capacity\"").count(), 2);
    }

    #[test]
    fn the_fan_rises_through_its_points_and_marks_due_today_and_the_horizon() {
        let pts = [
            FanPoint {
                day: d("2026-03-01"),
                p: 0.1,
                label: "p10",
            },
            FanPoint {
                day: d("2026-03-20"),
                p: 0.5,
                label: "p50",
            },
        ];
        let svg = fan(
            &pts,
            d("2026-02-01"),
            d("2027-02-01"),
            Some(d("2026-03-31")),
            Some(0.62),
            "<b>fan</b>",
        );
        assert!(ticks_hidden(&svg), "{svg}");
        assert_eq!(svg.matches("class=\"fan-dot\"").count(), 2, "{svg}");
        assert!(svg.contains("class=\"fan-beyond\""), "{svg}");
        assert!(svg.contains("62% within the horizon"), "{svg}");
        assert!(svg.contains("class=\"due-line\"") && svg.contains("class=\"today\""));
        assert!(svg.contains("&lt;b&gt;fan"), "{svg}");
        // The curve only rises: its y never grows (SVG y runs down) from one point to the next.
        let path = svg
            .split("class=\"fan-line\" d=\"")
            .nth(1)
            .unwrap_or("")
            .split('"')
            .next()
            .unwrap_or("");
        let ys: Vec<f64> = path
            .split(['M', 'L'])
            .filter_map(|p| p.split_whitespace().nth(1)?.parse().ok())
            .collect();
        assert_eq!(ys.len(), 3, "{path}");
        assert!(ys.windows(2).all(|w| w[1] <= w[0]), "{ys:?}");
    }

    #[test]
    fn the_due_points_label_stays_inside_the_plot_and_off_the_month_labels() {
        let at = |p: f64| {
            let pts = [
                FanPoint {
                    day: d("2026-03-01"),
                    p,
                    label: "at due",
                },
                FanPoint {
                    day: d("2026-04-01"),
                    p: 0.8,
                    label: "p80",
                },
            ];
            let svg = fan(
                &pts,
                d("2026-02-01"),
                d("2027-02-01"),
                Some(d("2026-03-01")),
                None,
                "f",
            );
            let label_y: f64 = svg
                .split("class=\"label\"")
                .nth(1)
                .and_then(|t| t.split("y=\"").nth(1))
                .and_then(|t| t.split('"').next())
                .and_then(|t| t.parse().ok())
                .unwrap_or(f64::NAN);
            let month_y: f64 = svg
                .split(">Mar<")
                .next()
                .and_then(|t| t.rsplit("y=\"").next())
                .and_then(|t| t.split('"').next())
                .and_then(|t| t.parse().ok())
                .unwrap_or(f64::NAN);
            (label_y, month_y)
        };
        // Near 0% the label goes above the curve, clear of the month labels below the axis.
        let (label, months) = at(0.0);
        assert!(
            label < months - 20.0,
            "label at {label}, months at {months}"
        );
        // Higher up it goes below the curve, as before.
        let (label, _) = at(0.5);
        let (above, _) = at(0.0);
        assert!(label < above, "{label} {above}");
    }

    #[test]
    fn the_burnup_cone_spans_p10_to_p80_and_runs_to_the_horizon_when_beyond() {
        let pts = [
            BurnPoint {
                day: d("2026-01-05"),
                scope: 10,
                done: 2,
            },
            BurnPoint {
                day: d("2026-02-02"),
                scope: 12,
                done: 5,
            },
        ];
        let cone = BurnCone {
            today: d("2026-02-02"),
            horizon: d("2027-02-02"),
            scope: 12,
            done: 5,
            p10: Some(d("2026-03-01")),
            p50: Some(d("2026-03-15")),
            p80: None,
            staying: false,
        };
        let svg = burnup_with_cone(&pts, Some(cone), "b");
        assert!(ticks_hidden(&svg), "{svg}");
        assert!(svg.contains("class=\"cone-area\""), "{svg}");
        assert!(
            svg.contains("Forecast: the remaining 7 issues done"),
            "{svg}"
        );
        let staying = burnup_with_cone(
            &pts,
            Some(BurnCone {
                staying: true,
                ..cone
            }),
            "b",
        );
        assert!(
            staying.contains("Forecast: the work that stays of the remaining 7 issues done"),
            "{staying}"
        );
        assert!(svg.contains("p80 beyond the horizon"), "{svg}");
        // Beyond the horizon the axis runs to the horizon.
        assert!(
            svg.contains(">Jan 2027<") || svg.contains(">Feb 2027<"),
            "{svg}"
        );
        assert!(!burnup_with_cone(&pts, None, "b").contains("cone-area"));
    }

    #[test]
    fn the_roadmap_links_every_bar_packs_lanes_and_marks_time_off_and_dues() {
        let bar = |k: &str, s: &str, e: &str| GanttBar {
            key: k.into(),
            title: "t".into(),
            href: Some(format!("issues/{k}.html")),
            start: d(s),
            p50: Some(d(e)),
            p80: None,
            end: Some(d(e)),
            done_at_all: None,
        };
        let lanes = vec![Lane {
            person: "ann\u{202E}".into(),
            href: Some("people/ann.html".into()),
            bars: vec![
                bar("a#1", "2026-01-05", "2026-01-09"),
                bar("a#2", "2026-01-06", "2026-01-20"),
            ],
            off: vec![(d("2026-01-12"), d("2026-01-16"))],
        }];
        let dues = [DueMark {
            title: "M <1>".into(),
            due: d("2026-02-01"),
            hard: true,
        }];
        let svg = roadmap(&lanes, &dues, d("2026-01-05"), d("2026-03-01"), "r");
        assert_eq!(svg.matches("<a href=\"issues/").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"gbar\"").count(), 2);
        // The first bar's whisker runs to the axis end, so the second goes to a row of its own.
        let rows: std::collections::BTreeSet<&str> = svg
            .split("class=\"gbar\" x=\"")
            .skip(1)
            .filter_map(|r| r.split("y=\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(rows.len(), 2, "{svg}");
        assert!(svg.contains("class=\"off\"") && svg.contains("url(#rm-off)"));
        assert_eq!(months_hidden(&svg), Some(true), "{svg}");
        assert!(
            svg.contains("due-line hard") && svg.contains("M &lt;1&gt;"),
            "{svg}"
        );
        assert!(!svg.contains('\u{202E}'));
        assert!(svg.contains("class=\"today\""));
        // A forecast earlier than the planned start is drawn from the start, and said as it is.
        let early = Lane {
            bars: vec![GanttBar {
                p80: Some(d("2026-01-08")),
                ..bar("a#3", "2026-01-20", "2026-01-07")
            }],
            ..lanes[0].clone()
        };
        let svg = roadmap(&[early], &[], d("2026-01-05"), d("2026-03-01"), "r");
        assert!(
            svg.contains("starts 2026-01-20 in the median plan, p50 2026-01-07, p80 2026-01-08"),
            "{svg}"
        );
        let x = |after: &str| -> f64 {
            svg.split(after)
                .nth(1)
                .unwrap()
                .split(['"', ' '])
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        assert!(
            x("class=\"whisker\" d=\"M") >= x("class=\"gbar\" x=\""),
            "{svg}"
        );
        // Work done at all in under half the futures: its planned span, outlined and said so, not a bar
        // to the chart's edge (audit 125).
        let unlikely = Lane {
            bars: vec![GanttBar {
                p50: None,
                p80: None,
                end: Some(d("2026-01-16")),
                done_at_all: Some(0.3),
                ..bar("a#4", "2026-01-12", "2026-01-16")
            }],
            ..lanes[0].clone()
        };
        let svg = roadmap(&[unlikely], &[], d("2026-01-05"), d("2026-03-01"), "r");
        assert!(svg.contains("class=\"gbar unlikely\""), "{svg}");
        assert!(!svg.contains("class=\"whisker\""), "{svg}");
        assert!(
            svg.contains("ends 2026-01-16 there; its p50 is beyond the horizon (done within it in 30% of the futures)"),
            "{svg}"
        );
        let width: f64 = svg
            .split("class=\"gbar unlikely\" x=\"")
            .nth(1)
            .and_then(|r| r.split("width=\"").nth(1))
            .and_then(|r| r.split('"').next())
            .and_then(|w| w.parse().ok())
            .unwrap();
        assert!(width < 200.0, "{width}: {svg}");
    }

    #[test]
    fn the_reliability_diagram_draws_each_method_with_its_own_mark_and_whiskers() {
        let m = |n: &str| Reliability {
            name: n.into(),
            coverage: [Some([0.2, 0.1, 0.3]), Some([0.5, 0.4, 0.6]), None],
        };
        let svg = reliability(&[m("CommiTea"), m("EBS")], "rel");
        assert!(ticks_hidden(&svg), "{svg}");
        assert!(svg.contains("class=\"diagonal\""));
        // Two points each, and one legend mark each.
        assert_eq!(svg.matches("mark m0").count(), 3, "{svg}");
        assert_eq!(svg.matches("mark m1").count(), 3, "{svg}");
        assert_eq!(svg.matches("class=\"whisker m0\"").count(), 2);
        assert!(svg.contains("observed 20% (10%–30%)"), "{svg}");
    }
}
