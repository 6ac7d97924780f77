//! Writing a deterministic plan as a TaskJuggler 3 project (`.tjp`), so an independent scheduler can check
//! ours and a PM can open the plan in TaskJuggler's reports.
//!
//! The mapping: the project starts on day 0; every person is a resource whose working hours on each of
//! their working days run from 09:00 for their hours per day (rounded to TaskJuggler's 15-minute
//! resolution); holidays are project-wide leaves; time off, days before a start date and after an end date
//! are the resource's leaves. Each task has its effort in hours, its person, its dependencies, and a
//! TaskJuggler priority that follows our scheduling order (earlier: higher), so TaskJuggler resolves
//! contention the way our scheduler ranks work.

use std::fmt::Write as _;

use chrono::{Days, NaiveDate, Weekday};

use super::calendar::PersonCalendarSpec;

/// The hour every working day starts at in the exported project.
pub const DAY_START_HOUR: u32 = 9;

/// One person in the export.
#[derive(Debug, Clone)]
pub struct TjpPerson<'a> {
    /// A display name (the Gitea username).
    pub name: &'a str,
    /// Their calendar.
    pub spec: &'a PersonCalendarSpec,
}

/// One task in the export.
#[derive(Debug, Clone)]
pub struct TjpTask {
    /// A display name (the issue key and its title).
    pub name: String,
    /// Effort in hours.
    pub effort: f64,
    /// Index of the person doing it; `None` leaves it unallocated (TaskJuggler then reports it).
    pub person: Option<usize>,
    /// Indices of the tasks it waits for.
    pub deps: Vec<usize>,
    /// Position in our scheduling order (0 first).
    pub rank: usize,
}

/// One milestone in the export: a TaskJuggler milestone that waits for its tasks, so TaskJuggler's reports
/// give its date.
#[derive(Debug, Clone)]
pub struct TjpMilestone {
    /// A display name (the repository and the milestone's title).
    pub name: String,
    /// Indices of its tasks.
    pub tasks: Vec<usize>,
    /// A note TaskJuggler keeps with it (its due date), if any.
    pub note: Option<String>,
}

/// A TaskJuggler string's text. TaskJuggler reads `\"` as a quote and every other backslash as itself, and
/// expands `${…}` as a macro and `$(…)` as an environment variable anywhere, strings too (a title with
/// `${x}` or `$(X)` failed the whole project, and a known variable put the tj3 user's environment in
/// the reports): so a quote is escaped, `${` and `$(` are written `$ {` and `$ (`, the text is one line
/// (a control character a space, a bidirectional override gone, as in logs), and a trailing backslash,
/// which would escape the closing quote, is dropped.
fn quote(s: &str) -> String {
    crate::prose::one_line(s)
        .trim_end_matches('\\')
        .replace('"', "\\\"")
        .replace("${", "$ {")
        .replace("$(", "$ (")
}

/// Quarter hours in a working day of `hours`, at most until midnight.
fn quarters(hours: f64) -> u32 {
    ((hours * 4.0).round().max(0.0) as u32).min((24 - DAY_START_HOUR) * 4)
}

/// The `workinghours` of a person (or a shift of theirs) working `q` quarter hours on each of their
/// working days from the start of the day: none at all when `q` is 0.
fn working_hours(out: &mut String, spec: &PersonCalendarSpec, q: u32) {
    let _ = writeln!(out, "  workinghours mon, tue, wed, thu, fri, sat, sun off");
    let mut wd = spec.working_days.clone();
    wd.sort_by_key(Weekday::num_days_from_monday);
    wd.dedup();
    let days: Vec<&str> = wd.iter().map(|w| crate::domain::weekday_name(*w)).collect();
    if q > 0 && !days.is_empty() {
        let stop = DAY_START_HOUR * 60 + q * 15;
        let _ = writeln!(
            out,
            "  workinghours {} {DAY_START_HOUR}:00 - {}:{:02}",
            days.join(", "),
            stop / 60,
            stop % 60
        );
    }
}

/// A person's quarter hours on each working day, period by period from `from` to `to`: (first day, the
/// day after the last, quarters), each period as long as its hours hold.
fn hour_periods(
    spec: &PersonCalendarSpec,
    from: NaiveDate,
    to: NaiveDate,
) -> Vec<(NaiveDate, NaiveDate, u32)> {
    let mut out: Vec<(NaiveDate, NaiveDate, u32)> = Vec::new();
    for d in from.iter_days().take_while(|d| *d < to) {
        let q = quarters(spec.hours_per_working_day(d));
        match out.last_mut() {
            Some(last) if last.2 == q => last.1 = d + Days::new(1),
            _ => out.push((d, d + Days::new(1), q)),
        }
    }
    out
}

/// The `.tjp` text. `report` names the CSV report file (without extension) with each task's and each
/// milestone's start and end; a milestone with no task is left out (TaskJuggler would put it on day 0).
pub fn export(
    title: &str,
    day0: NaiveDate,
    days: u32,
    people: &[TjpPerson<'_>],
    tasks: &[TjpTask],
    milestones: &[TjpMilestone],
    report: &str,
) -> String {
    let mut out = String::new();
    let end = day0 + Days::new(u64::from(days));
    let _ = writeln!(
        out,
        "project commitea \"{}\" {day0} - {end} {{",
        quote(title)
    );
    let _ = writeln!(out, "  timezone \"UTC\"");
    let _ = writeln!(out, "  timeformat \"%Y-%m-%d %H:%M\"");
    let _ = writeln!(out, "  timingresolution 15min");
    let _ = writeln!(out, "}}\n");

    let mut holidays: Vec<NaiveDate> = people
        .iter()
        .flat_map(|p| p.spec.holidays.iter().copied())
        .collect();
    holidays.sort();
    holidays.dedup();
    for h in holidays.iter().filter(|h| **h >= day0 && **h < end) {
        let _ = writeln!(out, "leaves holiday \"holiday\" {h}");
    }
    if !holidays.is_empty() {
        out.push('\n');
    }

    // Capacity directives give a person other hours for a while: each such period is a shift of that
    // person's working days at those hours (a shift, not a daily cap: a cap lets TaskJuggler work the
    // hours anywhere in a longer day, later than the plan does), a period of none a leave.
    let periods: Vec<Vec<(NaiveDate, NaiveDate, u32)>> = people
        .iter()
        .map(|p| hour_periods(p.spec, day0, end))
        .collect();
    let base: Vec<u32> = people
        .iter()
        .map(|p| quarters(p.spec.hours_per_day))
        .collect();
    for (n, p) in people.iter().enumerate() {
        let mut shifts: Vec<u32> = periods[n]
            .iter()
            .map(|(_, _, q)| *q)
            .filter(|q| *q > 0 && *q != base[n])
            .collect();
        shifts.sort_unstable();
        shifts.dedup();
        for q in shifts {
            let _ = writeln!(
                out,
                "shift r{n}q{q} \"{} at {}h\" {{",
                quote(p.name),
                f64::from(q) / 4.0
            );
            working_hours(&mut out, p.spec, q);
            let _ = writeln!(out, "}}");
        }
    }
    for (n, p) in people.iter().enumerate() {
        let _ = writeln!(out, "resource r{n} \"{}\" {{", quote(p.name));
        working_hours(&mut out, p.spec, base[n]);
        for (a, b, q) in &periods[n] {
            if *q > 0 && *q != base[n] {
                let _ = writeln!(out, "  shifts r{n}q{q} {a} - {b}");
            }
        }
        // TaskJuggler's leave intervals end before their second date.
        let mut leaves: Vec<(NaiveDate, NaiveDate)> = p
            .spec
            .time_off
            .iter()
            .map(|(a, b)| (*a, *b + Days::new(1)))
            .collect();
        if let Some(s) = p.spec.starts.filter(|s| *s > day0) {
            leaves.push((day0, s));
        }
        if let Some(e) = p.spec.ends.filter(|e| *e < end) {
            leaves.push((e + Days::new(1), end));
        }
        leaves.extend(
            periods[n]
                .iter()
                .filter(|(_, _, q)| *q == 0 && base[n] > 0)
                .map(|(a, b, _)| (*a, *b)),
        );
        leaves.sort();
        for (a, b) in leaves {
            let (a, b) = (a.max(day0), b.min(end));
            if a < b {
                let _ = writeln!(out, "  leaves annual {a} - {b}");
            }
        }
        let _ = writeln!(out, "}}");
    }
    out.push('\n');

    let n = tasks.len().max(1);
    for (i, t) in tasks.iter().enumerate() {
        let _ = writeln!(out, "task t{i} \"{}\" {{", quote(&t.name));
        let effort = (t.effort * 4.0).round() / 4.0;
        if effort > 0.0 {
            let _ = writeln!(out, "  effort {effort}h");
        } else {
            let _ = writeln!(out, "  milestone");
        }
        if let Some(p) = t.person.filter(|_| effort > 0.0) {
            let _ = writeln!(out, "  allocate r{p}");
        }
        if !t.deps.is_empty() {
            let deps: Vec<String> = t.deps.iter().map(|d| format!("t{d}")).collect();
            let _ = writeln!(out, "  depends {}", deps.join(", "));
        }
        // 1000 for the first task in our order down to 1 for the last.
        let priority = 1000 - (t.rank * 999 / n).min(999);
        let _ = writeln!(out, "  priority {priority}");
        let _ = writeln!(out, "}}");
    }
    for (k, m) in milestones.iter().enumerate() {
        let mut deps: Vec<usize> = m
            .tasks
            .iter()
            .copied()
            .filter(|&t| t < tasks.len())
            .collect();
        deps.sort_unstable();
        deps.dedup();
        if deps.is_empty() {
            continue;
        }
        let _ = writeln!(out, "task m{k} \"{}\" {{", quote(&m.name));
        let _ = writeln!(out, "  milestone");
        let deps: Vec<String> = deps.iter().map(|d| format!("t{d}")).collect();
        let _ = writeln!(out, "  depends {}", deps.join(", "));
        if let Some(note) = &m.note {
            let _ = writeln!(out, "  note \"{}\"", quote(note));
        }
        let _ = writeln!(out, "}}");
    }
    let _ = writeln!(out, "\ntaskreport {report} \"{report}\" {{");
    let _ = writeln!(out, "  formats csv");
    let _ = writeln!(out, "  columns id, name, start, end");
    let _ = writeln!(out, "  timeformat \"%Y-%m-%d %H:%M\"");
    let _ = writeln!(out, "}}");
    out
}

/// Our time (hours since day 0) as TaskJuggler prints it, `YYYY-MM-DD HH:MM`.
pub fn format_time(day0: NaiveDate, t: f64) -> String {
    let day = (t / 24.0).floor();
    let minutes = ((t - 24.0 * day) * 60.0).round() as u32 + DAY_START_HOUR * 60;
    let date = day0 + Days::new(day.max(0.0) as u64);
    format!("{date} {:02}:{:02}", minutes / 60, minutes % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_is_one_line_of_text_tj3_reads_as_written() {
        // An escape sequence, a right-to-left override (audit 87: kept, it reordered the task's name in a
        // terminal), a quote, a macro and a trailing backslash.
        assert_eq!(
            quote("a\u{1b}[2J\u{202e}b \"c\" ${x} $(HOME)\\"),
            "a[2Jb \\\"c\\\" $ {x} $ (HOME)"
        );
    }

    #[test]
    fn export_names_resources_leaves_and_dependencies() {
        let d = |m, day| NaiveDate::from_ymd_opt(2026, m, day).unwrap();
        let spec = PersonCalendarSpec {
            hours_per_day: 4.8,
            working_days: vec![Weekday::Mon, Weekday::Tue],
            holidays: vec![d(12, 25)],
            time_off: vec![(d(12, 7), d(12, 8))],
            starts: Some(d(12, 2)),
            ends: None,
            overrides: vec![],
        };
        let people = [TjpPerson {
            name: "ann \"the\" dev",
            spec: &spec,
        }];
        let tasks = [
            TjpTask {
                name: "acme/api#1".into(),
                effort: 6.1,
                person: Some(0),
                deps: vec![],
                rank: 0,
            },
            TjpTask {
                name: "acme/api#2".into(),
                effort: 2.0,
                person: Some(0),
                deps: vec![0],
                rank: 1,
            },
        ];
        let milestones = [
            TjpMilestone {
                name: "acme/api: v1".into(),
                tasks: vec![1, 0, 1],
                note: Some("due 2026-12-31, a hard deadline".into()),
            },
            TjpMilestone {
                name: "acme/api: nothing open".into(),
                tasks: vec![],
                note: None,
            },
        ];
        let tjp = export("Demo", d(11, 30), 60, &people, &tasks, &milestones, "plan");
        assert!(
            tjp.contains("project commitea \"Demo\" 2026-11-30 - 2027-01-29 {"),
            "{tjp}"
        );
        assert!(tjp.contains("leaves holiday \"holiday\" 2026-12-25"));
        assert!(tjp.contains("resource r0 \"ann \\\"the\\\" dev\""));
        assert!(tjp.contains("workinghours mon, tue 9:00 - 13:45"), "{tjp}");
        assert!(tjp.contains("leaves annual 2026-11-30 - 2026-12-02"));
        assert!(tjp.contains("leaves annual 2026-12-07 - 2026-12-09"));
        assert!(tjp.contains("effort 6h") && tjp.contains("depends t0"));
        assert!(tjp.contains("priority 1000") && tjp.contains("priority 501"));
        // A milestone waits for each of its tasks once; one with nothing to wait for is left out.
        assert!(
            tjp.contains(
                "task m0 \"acme/api: v1\" {\n  milestone\n  depends t0, t1\n  note \"due 2026-12-31, a \
                 hard deadline\"\n}"
            ),
            "{tjp}"
        );
        assert!(!tjp.contains("task m1"), "{tjp}");
    }

    #[test]
    fn times_print_from_nine_in_the_morning() {
        let d0 = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap();
        assert_eq!(format_time(d0, 0.0), "2026-11-30 09:00");
        assert_eq!(format_time(d0, 24.0 + 6.0), "2026-12-01 15:00");
        assert_eq!(format_time(d0, 48.0 + 0.75), "2026-12-02 09:45");
    }
}
