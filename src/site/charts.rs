//! Charts as inline SVG, drawn at build time: readable without script, printable, and allowed by the
//! pages' Content-Security-Policy (which forbids inline `style` attributes, so nothing here uses one).
//!
//! Every chart is a string of SVG markup the templates print as it is. Text in it (milestone titles,
//! dates) is escaped here, because the templates' autoescaping does not reach inside. Colours come from
//! classes in `style.css`; every mark also differs in shape or dash, so colour is never the only signal.

use std::fmt::Write as _;

use chrono::{Datelike, Months, NaiveDate};

/// Escapes text for SVG content and attribute values.
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
        all.into_iter()
            .filter(|m| (m.month0() as usize).is_multiple_of(step))
            .collect()
    }
}

/// A month tick label: `Mar` or `Jan 2027` for January (and for the first label, so the year is known).
fn month_label(d: NaiveDate, first: bool) -> String {
    if first || d.month() == 1 {
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
    /// `on_track`, `at_risk`, `late` or `no_due_date`: a class for the bar.
    pub status: String,
    /// What the row says in words (for its `<title>`, read by screen readers).
    pub words: String,
}

/// Layout constants of the range chart, in SVG user units (pixels at scale 1).
const WIDTH: f64 = 960.0;
const LABEL_W: f64 = 240.0;
const ROW_H: f64 = 30.0;
const AXIS_H: f64 = 28.0;

/// The range chart: one row per milestone on one shared date axis, month ticks, a today line.
/// `end` is the axis end (the horizon or the latest date shown).
pub(crate) fn ranges(rows: &[RangeRow], today: NaiveDate, end: NaiveDate, title: &str) -> String {
    let start = rows
        .iter()
        .flat_map(|r| [r.p10, r.due])
        .flatten()
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
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart ranges\" viewBox=\"0 0 {WIDTH} {height}\" role=\"{role}\" aria-labelledby=\"rc-t\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"rc-t\">{}</title>",
        esc(title)
    );
    // Month grid and labels.
    let months = scale.months(12);
    for (i, m) in months.iter().enumerate() {
        let x = scale.x(*m);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{x}\" y1=\"{AXIS_H}\" x2=\"{x}\" y2=\"{rows_end}\"/><text class=\"tick\" x=\"{x}\" y=\"18\">{}</text>",
            month_label(*m, i == 0)
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = AXIS_H + ROW_H * i as f64;
        let mid = y + ROW_H / 2.0;
        let _ = write!(s, "<g class=\"row status-{}\">", esc(&r.status));
        let _ = write!(s, "<title>{}</title>", esc(&r.words));
        let label = truncate(&r.label, 30);
        match &r.href {
            Some(h) => {
                let _ = write!(
                    s,
                    "<a href=\"{}\"><text class=\"label\" x=\"0\" y=\"{}\">{}</text></a>",
                    esc(h),
                    mid + 5.0,
                    esc(&label)
                );
            }
            None => {
                let _ = write!(
                    s,
                    "<text class=\"label\" x=\"0\" y=\"{}\">{}</text>",
                    mid + 5.0,
                    esc(&label)
                );
            }
        }
        let _ = write!(
            s,
            "<rect class=\"track\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" rx=\"2\"/>",
            scale.x0,
            mid - 6.0,
            scale.x1 - scale.x0
        );
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
                    "<text class=\"beyond\" x=\"{}\" y=\"{}\">not within the horizon</text>",
                    scale.x0 + 6.0,
                    mid + 5.0
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
        s.push_str("</g>");
    }
    let tx = scale.x(today);
    let _ = write!(
        s,
        "<line class=\"today\" x1=\"{tx}\" y1=\"{}\" x2=\"{tx}\" y2=\"{rows_end}\"/><text class=\"today-label\" x=\"{tx}\" y=\"{}\" text-anchor=\"middle\">today</text>",
        AXIS_H - 4.0,
        height - 4.0
    );
    s.push_str("</svg>");
    s
}

/// Text cut to `max` characters with an ellipsis.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let kept: String = s.chars().take(max - 1).collect();
        format!("{}…", kept.trim_end())
    }
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
    let _ = write!(
        s,
        "<text class=\"tick\" x=\"0\" y=\"{}\">{}</text><text class=\"tick\" x=\"0\" y=\"{}\">0 h</text>",
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
                "<text class=\"tick\" x=\"{}\" y=\"{}\">{}</text>",
                x + 2.0,
                h - 6.0,
                wk.week.format("%d %b")
            );
        }
        s.push_str("</g>");
    }
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

/// A burn-up: scope (dashed) and done (solid) per week.
pub(crate) fn burnup(points: &[BurnPoint], title: &str) -> String {
    let (w, h) = (640.0, 200.0);
    let (left, bottom, top, right) = (40.0, 24.0, 10.0, 10.0);
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return String::new();
    };
    let scale = Scale {
        start: first.day,
        end: last.day,
        x0: left,
        x1: w - right,
    };
    let max = points.iter().map(|p| p.scope).max().unwrap_or(1).max(1) as f64;
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
    let _ = write!(
        s,
        "<svg class=\"chart burnup\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-labelledby=\"bu-t\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"bu-t\">{}</title>",
        esc(title)
    );
    for (i, m) in scale.months(6).iter().enumerate() {
        let x = scale.x(*m);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{}\"/><text class=\"tick\" x=\"{x}\" y=\"{}\">{}</text>",
            h - bottom,
            h - 6.0,
            month_label(*m, i == 0)
        );
    }
    let _ = write!(
        s,
        "<text class=\"tick\" x=\"0\" y=\"{}\">{}</text><text class=\"tick\" x=\"0\" y=\"{}\">0</text>",
        y(max as usize) + 5.0,
        max as usize,
        h - bottom
    );
    let _ = write!(
        s,
        "<path class=\"scope\" d=\"{}\"/><path class=\"done\" d=\"{}\"/>",
        path(&|p| p.scope),
        path(&|p| p.done)
    );
    s.push_str("</svg>");
    s
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
    for m in ys.months(5) {
        let y = ys.x(m);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{left}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/><text class=\"tick\" x=\"0\" y=\"{}\">{}</text>",
            w - right,
            y + 5.0,
            m.format("%b %Y")
        );
    }
    for (i, m) in xs.months(6).iter().enumerate() {
        let _ = write!(
            s,
            "<text class=\"tick\" x=\"{}\" y=\"{}\">{}</text>",
            xs.x(*m),
            h - 6.0,
            month_label(*m, i == 0)
        );
    }
    if let Some(d) = due {
        let y = ys.x(d);
        let _ = write!(
            s,
            "<line class=\"due-line\" x1=\"{left}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/><text class=\"tick\" x=\"{}\" y=\"{}\">due</text>",
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
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(svg.matches("bar over").count(), 1, "{svg}");
        assert_eq!(svg.matches("class=\"capacity\"").count(), 2);
    }
}
