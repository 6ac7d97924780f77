//! Per-person working calendars: hours available on each day, and converting work done into points in time.

use chrono::{Datelike, NaiveDate, Weekday};

/// A day as an offset from day 0 of the forecast.
pub type DayIndex = u32;

/// What makes up one person's calendar.
#[derive(Debug, Clone, PartialEq)]
pub struct PersonCalendarSpec {
    /// Hours on each working day.
    pub hours_per_day: f64,
    /// The weekdays this person works.
    pub working_days: Vec<Weekday>,
    /// Days nobody works.
    pub holidays: Vec<NaiveDate>,
    /// This person's days off (inclusive ranges).
    pub time_off: Vec<(NaiveDate, NaiveDate)>,
    /// First working day, if they join later.
    pub starts: Option<NaiveDate>,
    /// Last working day, if they leave.
    pub ends: Option<NaiveDate>,
    /// Periods with different hours on each working day (capacity directives); where several cover a day,
    /// the last one in the list wins. Holidays, time off, `starts` and `ends` still apply.
    pub overrides: Vec<CapacityOverride>,
}

/// Hours on each working day for a period, instead of [`PersonCalendarSpec::hours_per_day`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapacityOverride {
    /// First day it applies.
    pub from: NaiveDate,
    /// Last day it applies (inclusive); open-ended when `None`.
    pub to: Option<NaiveDate>,
    /// Hours on each working day in the period (0: away).
    pub hours_per_day: f64,
}

impl PersonCalendarSpec {
    /// Hours this person works on `date` (0 on days they do not work).
    pub(crate) fn hours_on(&self, date: NaiveDate) -> f64 {
        let works = self.working_days.contains(&date.weekday())
            && !self.holidays.contains(&date)
            && !self.time_off.iter().any(|(a, b)| *a <= date && date <= *b)
            && self.starts.is_none_or(|s| date >= s)
            && self.ends.is_none_or(|e| date <= e);
        if !works {
            return 0.0;
        }
        self.hours_per_working_day(date)
    }

    /// The last day this person works before their hours stop for good: [`Self::ends`], or the day
    /// before an open-ended capacity period of no hours takes over (someone who leaves through a
    /// directive); `None` while they work on (or where no date is named at all). Someone who never has a
    /// working hour gets the day before the first date their calendar names (audit 123: work kept with a
    /// member a directive took to 0 hours a week could never be done, and nothing said so).
    pub fn last_working_day(&self) -> Option<NaiveDate> {
        // The hours of a working day after every dated period: the final period's, or the usual ones.
        let eventual = self
            .final_period()
            .map_or(self.hours_per_day, |o| o.hours_per_day);
        if eventual > 0.0 && !self.working_days.is_empty() {
            // `ends` on a day they do not work (a Friday of a four-day week, a holiday): the working day
            // before it (audit 126: "works until 2027-02-26" of someone whose last day was the 25th).
            return self.ends.map(|e| {
                e.iter_days()
                    .rev()
                    .take(31)
                    .find(|d| self.hours_on(*d) > 0.0)
                    .unwrap_or(e)
            });
        }
        let named = self
            .overrides
            .iter()
            .flat_map(|o| [Some(o.from), o.to])
            .chain([self.starts, self.ends])
            .chain(self.time_off.iter().map(|(_, to)| Some(*to)))
            .flatten();
        let (first, last) = named.fold(None, |acc: Option<(NaiveDate, NaiveDate)>, d| {
            Some(acc.map_or((d, d), |(a, b)| (a.min(d), b.max(d))))
        })?;
        // Past the last date named every day is like the last; before the first, a week shows whether
        // the usual hours give any.
        let mut day = last;
        let stop = first
            .checked_sub_days(chrono::Days::new(7))
            .unwrap_or(first);
        while day >= stop {
            if self.hours_on(day) > 0.0 {
                return Some(day);
            }
            day = day.pred_opt()?;
        }
        first.pred_opt()
    }

    /// The open-ended capacity period that holds from its day on, for good: the last one listed (where
    /// several cover a day, the last listed wins), if any.
    pub fn final_period(&self) -> Option<&CapacityOverride> {
        self.overrides.iter().rev().find(|o| o.to.is_none())
    }

    /// Hours this person works on each working day about `date`: [`Self::hours_per_day`], or the
    /// capacity directive's that covers `date` (the last one listed), whatever the day's leave.
    pub(crate) fn hours_per_working_day(&self, date: NaiveDate) -> f64 {
        self.overrides
            .iter()
            .rev()
            .find(|o| o.from <= date && o.to.is_none_or(|t| date <= t))
            .map_or(self.hours_per_day, |o| o.hours_per_day)
    }
}

/// One person's hours per day from day 0 to the horizon, with running sums for fast conversion.
#[derive(Debug, Clone, PartialEq)]
pub struct Calendar {
    cap: Vec<f64>,
    /// `cum[d]` is the working hours available before day `d`; `cum.len() == cap.len() + 1`.
    cum: Vec<f64>,
    /// Average hours per day, used to extrapolate past the horizon.
    rate: f64,
    /// `by_hour[h]`: the first day `d` with `cum[d+1] >= h`, so finding the day of any position is a
    /// lookup and a step or two instead of a search.
    by_hour: Vec<u32>,
    /// The rules the hours came from, for days outside them (before day 0, past the horizon); none for a
    /// calendar of explicit hours.
    spec: Option<Box<PersonCalendarSpec>>,
}

impl Calendar {
    /// Builds the calendar of `days` days starting at `day0`.
    pub fn new(spec: &PersonCalendarSpec, day0: NaiveDate, days: u32) -> Self {
        let mut cap = Vec::with_capacity(days as usize);
        for d in 0..days {
            let date = day0 + chrono::Days::new(u64::from(d));
            cap.push(spec.hours_on(date).clamp(0.0, 24.0));
        }
        Self {
            spec: Some(Box::new(spec.clone())),
            ..Self::from_capacity(cap)
        }
    }

    /// A calendar from explicit hours per day (tests and callers with their own rules).
    pub fn from_capacity(cap: Vec<f64>) -> Self {
        let mut cum = Vec::with_capacity(cap.len() + 1);
        let mut acc = 0.0;
        cum.push(0.0);
        for c in &cap {
            acc += c;
            cum.push(acc);
        }
        let rate = if cap.is_empty() {
            0.0
        } else {
            acc / cap.len() as f64
        };
        let hours = acc.ceil() as usize;
        let mut by_hour = Vec::with_capacity(hours + 1);
        let mut d = 0usize;
        for h in 0..=hours {
            while d + 1 < cum.len() && cum[d + 1] < h as f64 {
                d += 1;
            }
            by_hour.push(d as u32);
        }
        Self {
            cap,
            cum,
            rate,
            by_hour,
            spec: None,
        }
    }

    /// Days covered.
    pub fn days(&self) -> u32 {
        self.cap.len() as u32
    }

    /// Hours available on day `d` (zero past the horizon).
    pub fn capacity(&self, d: DayIndex) -> f64 {
        self.cap.get(d as usize).copied().unwrap_or(0.0)
    }

    /// Working days in `(a, b]` — days with capacity — negative when `b` is before `a`; `day0` is the date
    /// of day 0. Before day 0 and past the horizon the calendar's last week repeats (a due date years out
    /// once counted no day past the horizon; an overdue one counted five of every seven days). The one definition of "working
    /// days between two dates" that slack, moves and the consequence diff use.
    pub(crate) fn working_days_between(&self, day0: NaiveDate, a: NaiveDate, b: NaiveDate) -> i64 {
        let idx = |d: NaiveDate| (d - day0).num_days();
        let horizon = self.cap.len() as i64;
        // Past the horizon, and before day 0, the calendar's last week repeats (its holidays aside, a
        // week is a week): a milestone overdue since a Friday is not late by a weekend's days (audit 90:
        // five of every seven days before day 0 counted, whichever they were).
        // Where the calendar knows its rules, a day outside the horizon is read from them: holidays
        // before day 0 were working days in the repeated week (audit 157: a year-end's four holidays in
        // an overdue milestone's slack).
        let works = |d: i64| {
            if (d >= horizon || d < 0)
                && let Some(spec) = &self.spec
            {
                return day0
                    .checked_add_signed(chrono::TimeDelta::days(d))
                    .is_some_and(|date| spec.hours_on(date) > 0.0);
            }
            let d = if (d >= horizon || d < 0) && horizon >= 7 {
                horizon - 7 + (d - horizon).rem_euclid(7)
            } else {
                d
            };
            u32::try_from(d).is_ok_and(|d| self.capacity(d) > 0.0)
        };
        let count = |from: i64, to: i64| -> i64 { (from..to).filter(|d| works(*d)).count() as i64 };
        let (x, y) = (idx(a), idx(b));
        if y >= x {
            count(x + 1, y + 1)
        } else {
            -count(y + 1, x + 1)
        }
    }

    /// A milestone's slack: the working days from its p80 to its due date, negative when the p80 is
    /// later. A p80 after the due date on a day the calendar does not work (a weekend shift's Saturday
    /// after a Friday due date) is a day late, not none (audit 157: "slack 0" beside a late p80).
    pub(crate) fn slack(&self, day0: NaiveDate, p80: NaiveDate, due: NaiveDate) -> i64 {
        match self.working_days_between(day0, p80, due) {
            0 if p80 > due => -1,
            n => n,
        }
    }

    /// The date `n` working days after `from` (before it when `n` is negative): the inverse of
    /// [`working_days_between`](Self::working_days_between) within the calendar. It never steps before
    /// day 0 (`day0`'s date) and is `None` past the calendar's last day.
    pub(crate) fn add_working_days(
        &self,
        day0: NaiveDate,
        from: NaiveDate,
        n: i64,
    ) -> Option<NaiveDate> {
        let mut d = from;
        let mut left = n.unsigned_abs();
        while left > 0 {
            d = if n > 0 {
                d + chrono::Days::new(1)
            } else if d > day0 {
                d - chrono::Days::new(1)
            } else {
                break;
            };
            // Days before day 0 (a `from` before it) count nothing, as in the count this inverts within
            // the calendar.
            let Ok(idx) = u32::try_from((d - day0).num_days()) else {
                continue;
            };
            if idx >= self.days() {
                return None;
            }
            if self.capacity(idx) > 0.0 {
                left -= 1;
            }
        }
        Some(d)
    }

    /// Total hours available from day 0 to the horizon.
    pub fn total(&self) -> f64 {
        self.cum.last().copied().unwrap_or(0.0)
    }

    /// Working hours this person has done by time `t` if they worked every available hour since day 0.
    pub(crate) fn work_at(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        // Multiplying by 1/24 may put an exact day boundary on the previous day; the result is the same
        // there because work done is continuous in time.
        // `as` truncates, which is floor for the positive `t` here (and saturates for huge ones).
        let di = (t * (1.0 / 24.0)) as usize;
        let n = self.cap.len();
        if di >= n {
            return self.total() + (t - 24.0 * n as f64) / 24.0 * self.rate;
        }
        self.cum[di] + (t - 24.0 * di as f64).min(self.cap[di])
    }

    /// The earliest time by which `w` hours of work can be done (the end of a task finishing at work `w`).
    pub(crate) fn time_done(&self, w: f64) -> f64 {
        if w <= 0.0 {
            return 0.0;
        }
        let total = self.total();
        if w > total {
            return self.extrapolate(w - total);
        }
        // First day d with cum[d+1] >= w, i.e. cum[d] < w <= cum[d+1].
        let mut d = self.by_hour.get(w as usize).map_or(0, |d| *d as usize);
        while self.cum[d + 1] < w {
            d += 1;
        }
        24.0 * d as f64 + (w - self.cum[d])
    }

    /// The time work position `w` actually begins: the next hour that is available at or after it.
    pub(crate) fn time_start(&self, w: f64) -> f64 {
        let total = self.total();
        if w >= total {
            return self.extrapolate(w - total);
        }
        // First day d with cum[d+1] > w, i.e. cum[d] <= w < cum[d+1].
        let mut d = self.by_hour.get(w as usize).map_or(0, |d| *d as usize);
        while self.cum[d + 1] <= w {
            d += 1;
        }
        24.0 * d as f64 + (w - self.cum[d])
    }

    /// [`Calendar::time_done`] for callers whose positions only grow: `hint` is the day the last answer
    /// fell on and is moved forward, so a sequence of calls costs the days passed, not a search each.
    #[cfg(test)]
    #[inline]
    pub(crate) fn time_done_hinted(&self, w: f64, hint: &mut u32) -> f64 {
        self.done_hinted(w, hint).0
    }

    /// `time_done` with a `hint` (the day the last answer fell on, moved forward) and the day the work ends on (see [`end_day`]), which the search
    /// finds anyway: the Monte Carlo counts days without converting times back.
    #[inline]
    pub(crate) fn done_hinted(&self, w: f64, hint: &mut u32) -> (f64, u32) {
        if w <= 0.0 {
            return (0.0, 0);
        }
        let n = self.cap.len();
        let mut d = *hint as usize;
        if d >= n || self.cum[d] >= w {
            // Out of order or past the horizon: look it up afresh.
            let (t, day) = self.done(w);
            if (day as usize) < n {
                *hint = day;
            }
            return (t, day);
        }
        // Look at the next eight days at once, counting those already passed without a branch per day:
        // how far a task reaches is unpredictable, and a mispredicted loop exit costs more than the
        // loads. Work that reaches further than that starts again from the lookup table.
        if d + 8 <= n {
            let window = &self.cum[d + 1..d + 9];
            let passed: usize = window.iter().map(|c| usize::from(*c < w)).sum();
            d += passed;
            if passed == 8 {
                d = d.max(self.by_hour.get(w as usize).map_or(n, |x| *x as usize));
                while d < n && self.cum[d + 1] < w {
                    d += 1;
                }
            }
        } else {
            while d < n && self.cum[d + 1] < w {
                d += 1;
            }
        }
        if d == n {
            let t = self.extrapolate(w - self.total());
            return (t, end_day(t).min(f64::from(u32::MAX)) as u32);
        }
        *hint = d as u32;
        (24.0 * d as f64 + (w - self.cum[d]), d as u32)
    }

    /// [`Calendar::time_done`] with the day the work ends on.
    pub fn done(&self, w: f64) -> (f64, u32) {
        let t = self.time_done(w);
        (t, end_day(t).min(f64::from(u32::MAX)) as u32)
    }

    fn extrapolate(&self, beyond: f64) -> f64 {
        let n = self.cap.len() as f64;
        if self.rate <= 0.0 {
            f64::INFINITY
        } else {
            24.0 * n + beyond / self.rate * 24.0
        }
    }
}

/// Working hours on `spec`'s calendar between two wall-clock times of the team (its zone's, so a day is the
/// team's day): each working day counts its hours times the share of that day the interval covers.
pub(crate) fn working_hours_between(
    spec: &PersonCalendarSpec,
    from: chrono::NaiveDateTime,
    to: chrono::NaiveDateTime,
) -> f64 {
    if to <= from {
        return 0.0;
    }
    let mut total = 0.0;
    let mut day = from.date();
    let last = to.date();
    while day <= last {
        let hours = spec.hours_on(day);
        if hours > 0.0 {
            let start = day.and_time(chrono::NaiveTime::MIN);
            let end = start + chrono::Duration::days(1);
            let covered = (to.min(end) - from.max(start)).num_seconds().max(0) as f64 / 86_400.0;
            total += hours * covered;
        }
        day = day + chrono::Days::new(1);
    }
    total
}

/// The day a task ending at time `t` ends on (work ending exactly at midnight belongs to the day before).
pub(crate) fn end_day(t: f64) -> f64 {
    if t <= 0.0 {
        return 0.0;
    }
    if !t.is_finite() {
        return t;
    }
    // ceil(x) − 1 without a libm call or a division: this is the Monte Carlo's per-task bookkeeping.
    // Multiplying by 1/24 can only misplace an end less than a nanosecond after midnight.
    let x = t * (1.0 / 24.0);
    let whole = x as u64 as f64;
    if whole == x { whole - 1.0 } else { whole }
}

/// The day a task starting at time `t` starts on.
pub(crate) fn start_day(t: f64) -> f64 {
    (t / 24.0).floor().max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_counts_the_calendar_before_day_0_and_a_late_day_off_as_a_day_late() {
        // Holidays before day 0 were working days in the repeated last week (audit 157).
        let mut team = on_weekdays(8.0);
        team.holidays = vec![date(2026, 12, 28), date(2026, 12, 29)];
        let day0 = date(2027, 1, 4);
        let cal = Calendar::new(&team, day0, 60);
        // (Thu Dec 24, Tue Jan 5]: Dec 25, 30, 31, Jan 1, 4, 5 — the 28th and 29th are holidays.
        assert_eq!(cal.slack(day0, date(2027, 1, 5), date(2026, 12, 24)), -6);
        // A p80 on a Saturday after a Friday due date is a day late, not on time (audit 157).
        assert_eq!(cal.slack(day0, date(2027, 1, 16), date(2027, 1, 15)), -1);
        assert_eq!(cal.slack(day0, date(2027, 1, 15), date(2027, 1, 15)), 0);
        assert_eq!(cal.slack(day0, date(2027, 1, 16), date(2027, 1, 18)), 1);
    }

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn on_weekdays(hours_per_day: f64) -> PersonCalendarSpec {
        PersonCalendarSpec {
            hours_per_day,
            working_days: weekdays(),
            holidays: Vec::new(),
            time_off: Vec::new(),
            starts: None,
            ends: None,
            overrides: Vec::new(),
        }
    }

    fn period(from: NaiveDate, to: Option<NaiveDate>, hours_per_day: f64) -> CapacityOverride {
        CapacityOverride {
            from,
            to,
            hours_per_day,
        }
    }

    #[test]
    fn the_last_working_day_is_where_hours_stop_for_good() {
        let mut spec = on_weekdays(6.0);
        assert_eq!(spec.last_working_day(), None);
        // Time off, however long, is not leaving.
        spec.time_off.push((date(2027, 1, 4), date(2027, 6, 30)));
        assert_eq!(spec.last_working_day(), None);
        spec.ends = Some(date(2027, 9, 30));
        assert_eq!(spec.last_working_day(), Some(date(2027, 9, 30)));
        // Ending on a Saturday is ending on the Friday before.
        spec.ends = Some(date(2027, 10, 2));
        assert_eq!(spec.last_working_day(), Some(date(2027, 10, 1)));
        spec.ends = None;
        // No hours from Monday 2027-08-02 on: the Friday before is the last day.
        spec.overrides.push(period(date(2027, 8, 2), None, 0.0));
        assert_eq!(spec.last_working_day(), Some(date(2027, 7, 30)));
        // A later period with hours brings them back, for as long as it lasts.
        spec.overrides
            .push(period(date(2027, 9, 1), Some(date(2027, 9, 10)), 3.0));
        assert_eq!(spec.last_working_day(), Some(date(2027, 9, 10)));
        spec.overrides.push(period(date(2027, 10, 1), None, 4.0));
        assert_eq!(spec.last_working_day(), None);
        // A new hire's first period, then an open-ended one: they work on.
        let mut hire = on_weekdays(3.0);
        hire.starts = Some(date(2027, 1, 4));
        hire.overrides.push(period(date(2027, 2, 1), None, 0.0));
        assert_eq!(hire.last_working_day(), Some(date(2027, 1, 29)));
        hire.overrides.push(period(date(2027, 2, 1), None, 6.0));
        assert_eq!(hire.last_working_day(), None);
        // Never a working hour: the day before the first date named.
        let mut never = on_weekdays(0.0);
        never.starts = Some(date(2027, 1, 4));
        assert_eq!(never.last_working_day(), Some(date(2027, 1, 3)));
    }

    #[test]
    fn adding_working_days_inverts_counting_them() {
        // Weekdays of 8 hours from Monday 2026-12-07, weekends off, for four weeks.
        let day0 = date(2026, 12, 7);
        let cap: Vec<f64> = (0..28).map(|d| if d % 7 < 5 { 8.0 } else { 0.0 }).collect();
        let cal = Calendar::from_capacity(cap);
        let friday = date(2026, 12, 11);
        assert_eq!(
            cal.add_working_days(day0, friday, 1),
            Some(date(2026, 12, 14))
        );
        assert_eq!(
            cal.add_working_days(day0, date(2026, 12, 14), -1),
            Some(friday)
        );
        assert_eq!(cal.add_working_days(day0, friday, 0), Some(friday));
        for from in 0..20u64 {
            let from = day0 + chrono::Days::new(from);
            for n in -8..=8i64 {
                if let Some(to) = cal.add_working_days(day0, from, n)
                    && to > day0
                    && cal.capacity((to - day0).num_days() as u32) > 0.0
                    && cal.capacity((from - day0).num_days() as u32) > 0.0
                {
                    assert_eq!(cal.working_days_between(day0, from, to), n, "{from} + {n}");
                }
            }
        }
        // Past the calendar's last day (day 27, Sunday 2027-01-03) its last week repeats.
        assert_eq!(
            cal.working_days_between(day0, date(2027, 1, 1), date(2027, 1, 15)),
            10
        );
        assert_eq!(
            cal.working_days_between(day0, date(2026, 12, 31), date(2027, 1, 4)),
            2
        );
        assert_eq!(
            cal.working_days_between(day0, date(2027, 1, 4), date(2026, 12, 31)),
            -2
        );
        // Before day 0 too (Monday 2026-12-07): an overdue Friday is one working day before it, not
        // three days' five-sevenths (audit 90).
        assert_eq!(
            cal.working_days_between(day0, date(2026, 12, 7), date(2026, 12, 4)),
            -1
        );
        assert_eq!(
            cal.working_days_between(day0, date(2026, 12, 7), date(2026, 11, 23)),
            -10
        );
        // Never before day 0; past the calendar's last day, none.
        assert_eq!(
            cal.add_working_days(day0, date(2026, 12, 8), -5),
            Some(day0)
        );
        assert_eq!(cal.add_working_days(day0, date(2026, 12, 30), 10), None);
    }

    fn weekdays() -> Vec<Weekday> {
        vec![
            Weekday::Mon,
            Weekday::Tue,
            Weekday::Wed,
            Weekday::Thu,
            Weekday::Fri,
        ]
    }

    #[test]
    fn weekends_holidays_and_time_off_have_no_hours() {
        // 2026-11-30 is a Monday.
        let spec = PersonCalendarSpec {
            hours_per_day: 6.0,
            working_days: weekdays(),
            holidays: vec![date(2026, 12, 1)],
            time_off: vec![(date(2026, 12, 3), date(2026, 12, 4))],
            starts: None,
            ends: Some(date(2026, 12, 9)),
            overrides: vec![],
        };
        let c = Calendar::new(&spec, date(2026, 11, 30), 14);
        let caps: Vec<f64> = (0..14).map(|d| c.capacity(d)).collect();
        assert_eq!(
            caps,
            vec![
                6.0, 0.0, 6.0, 0.0, 0.0, 0.0, 0.0, 6.0, 6.0, 6.0, 0.0, 0.0, 0.0, 0.0
            ]
        );
        assert_eq!(c.total(), 30.0);
    }

    #[test]
    fn work_and_time_convert_both_ways() {
        let c = Calendar::from_capacity(vec![6.0, 0.0, 6.0, 6.0]);
        assert_eq!(c.time_done(6.0), 6.0); // end of day 0, not the start of day 2
        assert_eq!(c.time_start(6.0), 48.0); // next work begins on day 2
        assert_eq!(c.time_done(7.0), 49.0);
        assert_eq!(c.work_at(49.0), 7.0);
        assert_eq!(c.work_at(30.0), 6.0); // day 1 has nothing
        assert_eq!(end_day(c.time_done(12.0)), 2.0);
        assert_eq!(end_day(c.time_done(6.0)), 0.0);
        assert_eq!(start_day(c.time_start(6.0)), 2.0);
        // Past the horizon: extrapolated at the average rate (18h over 4 days = 4.5h a day).
        assert_eq!(c.time_done(18.0 + 9.0), 24.0 * 4.0 + 48.0);
        assert!(c.time_done(18.0 + 9.0) > c.time_done(18.0));
    }

    #[test]
    fn hinted_lookups_agree_with_the_search() {
        let caps: Vec<f64> = (0..60)
            .map(|d| [6.0, 0.0, 3.0, 6.0, 0.0, 0.0, 2.0][d % 7])
            .collect();
        let c = Calendar::from_capacity(caps);
        let mut hint = 0;
        let mut w = 0.0;
        while w < c.total() + 20.0 {
            assert_eq!(c.time_done_hinted(w, &mut hint), c.time_done(w), "at {w}");
            w += 0.75;
        }
        // Going backwards still answers correctly.
        let mut hint = 40;
        assert_eq!(c.time_done_hinted(1.0, &mut hint), c.time_done(1.0));
    }

    #[test]
    fn working_hours_between_counts_partial_days() {
        use chrono::TimeZone;
        let spec = PersonCalendarSpec {
            hours_per_day: 6.0,
            working_days: weekdays(),
            holidays: vec![date(2026, 12, 1)],
            time_off: vec![],
            starts: None,
            ends: None,
            overrides: vec![],
        };
        let at = |d: u32, h: u32| {
            chrono::Utc
                .with_ymd_and_hms(2026, 11, d, h, 0, 0)
                .unwrap()
                .naive_utc()
        };
        // Mon noon to Wed noon, with Tue a holiday: half of Monday and half of Wednesday.
        let wed = chrono::Utc
            .with_ymd_and_hms(2026, 12, 2, 12, 0, 0)
            .unwrap()
            .naive_utc();
        assert_eq!(working_hours_between(&spec, at(30, 12), wed), 6.0);
        // Sat to Sun: nothing.
        assert_eq!(working_hours_between(&spec, at(28, 0), at(29, 23)), 0.0);
        assert_eq!(working_hours_between(&spec, wed, at(30, 12)), 0.0);
    }

    #[test]
    fn lookups_agree_with_a_plain_search_on_irregular_calendars() {
        let caps: Vec<f64> = (0..200)
            .map(|d| [6.0, 0.0, 0.5, 7.25, 0.0, 3.0, 24.0, 0.25][d % 8])
            .collect();
        let c = Calendar::from_capacity(caps);
        let done = |w: f64| {
            let d = c.cum[1..].partition_point(|x| *x < w);
            24.0 * d as f64 + (w - c.cum[d])
        };
        let start = |w: f64| {
            let d = c.cum[1..].partition_point(|x| *x <= w);
            24.0 * d as f64 + (w - c.cum[d])
        };
        let mut hint = 0;
        let mut w = 0.01;
        while w < c.total() {
            assert_eq!(c.time_done(w), done(w), "done at {w}");
            assert_eq!(c.time_start(w), start(w), "start at {w}");
            assert_eq!(c.time_done_hinted(w, &mut hint), done(w), "hinted at {w}");
            w += 0.37;
        }
        for t in [0.5, 23.99, 24.0, 24.01, 48.0, 100.0] {
            assert_eq!(end_day(t), (t / 24.0).ceil() - 1.0, "end day of {t}");
        }
    }

    #[test]
    fn capacity_overrides_change_working_days_hours_and_the_last_wins() {
        use chrono::TimeZone;
        // 2026-11-30 is a Monday.
        let spec = PersonCalendarSpec {
            hours_per_day: 6.0,
            working_days: weekdays(),
            holidays: vec![date(2026, 12, 2)],
            time_off: vec![],
            starts: None,
            ends: None,
            overrides: vec![
                CapacityOverride {
                    from: date(2026, 12, 1),
                    to: None,
                    hours_per_day: 4.0,
                },
                CapacityOverride {
                    from: date(2026, 12, 3),
                    to: Some(date(2026, 12, 3)),
                    hours_per_day: 0.0,
                },
            ],
        };
        let c = Calendar::new(&spec, date(2026, 11, 30), 8);
        let caps: Vec<f64> = (0..8).map(|d| c.capacity(d)).collect();
        assert_eq!(caps, vec![6.0, 4.0, 0.0, 0.0, 4.0, 0.0, 0.0, 4.0]);
        let at = |d: u32| {
            chrono::Utc
                .with_ymd_and_hms(2026, 12, d, 0, 0, 0)
                .unwrap()
                .naive_utc()
        };
        assert_eq!(working_hours_between(&spec, at(1), at(5)), 8.0);
    }

    #[test]
    fn nobody_available_never_finishes() {
        let c = Calendar::from_capacity(vec![0.0; 10]);
        assert!(c.time_done(1.0).is_infinite());
    }
}
