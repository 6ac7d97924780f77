//! Estimate labels (`est/2d`) and priority labels (`p/0`..`p/3`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The unit of an estimate label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EstimateUnit {
    /// Working hours.
    Hour,
    /// Working days of `workday_hours` each.
    Day,
    /// Working weeks of five working days.
    Week,
}

/// An estimate such as `2d`: a median effort, never a promise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Estimate {
    /// How many units.
    pub amount: u32,
    /// Which unit.
    pub unit: EstimateUnit,
}

/// Why an estimate or priority could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseEstimateError {
    /// Not `<n><h|d|w>`.
    #[error("estimate \"{0}\" is not of the form <n><unit> with unit h, d or w (e.g. 4h, 2d, 1w)")]
    Estimate(String),
    /// `0h`: an estimate is at least one of its unit.
    #[error("estimate \"{0}\" is zero: an estimate is at least 1 of its unit (1h, 1d, 1w)")]
    Zero(String),
    /// More than [`Estimate::MAX_AMOUNT`] of its unit.
    #[error(
        "estimate \"{0}\" is more than {max} of its unit, more than CommiTea plans: split the work{larger}",
        max = Estimate::MAX_AMOUNT,
        larger = if .0.trim_end().ends_with('w') { "" } else { ", or estimate it in a larger unit" }
    )]
    TooLarge(String),
    /// Gitea's native time estimate, in hours, over what CommiTea plans.
    #[error(
        "Gitea's time estimate of {0} hours is more than CommiTea plans ({max:.0} hours): split the work, or correct the estimate",
        max = Estimate::MAX_NATIVE_HOURS
    )]
    NativeTooLarge(u64),
    /// Not `p/0`..`p/3`.
    #[error("priority \"{0}\" is not one of p/0, p/1, p/2, p/3")]
    Priority(String),
}

impl Estimate {
    /// The label prefix CommiTea owns for estimates.
    pub(crate) const LABEL_PREFIX: &'static str = "est/";

    /// The most of one unit an estimate may be (`9999w`, about two centuries of one person's work): far
    /// past any plan, and short of where the scheduler's arithmetic stops holding (audit 66).
    pub const MAX_AMOUNT: u32 = 9999;

    /// The most hours Gitea's native time estimate may give an issue: [`Self::MAX_AMOUNT`] weeks of 40
    /// hours.
    pub const MAX_NATIVE_HOURS: f64 = Self::MAX_AMOUNT as f64 * 40.0;

    /// The effort in working hours, with a day of `workday_hours` and a week of five days.
    pub fn hours(&self, workday_hours: f64) -> f64 {
        let n = f64::from(self.amount);
        match self.unit {
            EstimateUnit::Hour => n,
            EstimateUnit::Day => n * workday_hours,
            EstimateUnit::Week => n * 5.0 * workday_hours,
        }
    }

    /// Parses an `est/…` label; `None` for any other label.
    pub(crate) fn from_label(label: &str) -> Option<Result<Self, ParseEstimateError>> {
        label.strip_prefix(Self::LABEL_PREFIX).map(str::parse)
    }

    /// The label text, `est/2d`.
    pub fn label(&self) -> String {
        format!("{}{}", Self::LABEL_PREFIX, self)
    }
}

impl FromStr for Estimate {
    type Err = ParseEstimateError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseEstimateError::Estimate(s.to_owned());
        let s2 = s.trim();
        let (num, unit) = s2.split_at(s2.len().saturating_sub(1));
        let unit = match unit {
            "h" => EstimateUnit::Hour,
            "d" => EstimateUnit::Day,
            "w" => EstimateUnit::Week,
            _ => return Err(err()),
        };
        if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        match num.parse::<u32>() {
            Ok(0) => Err(ParseEstimateError::Zero(s.to_owned())),
            Ok(amount) if amount <= Self::MAX_AMOUNT => Ok(Self { amount, unit }),
            // More than MAX_AMOUNT, or more than a u32 holds: the digits are right, the size is not.
            _ => Err(ParseEstimateError::TooLarge(s.to_owned())),
        }
    }
}

impl fmt::Display for Estimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let u = match self.unit {
            EstimateUnit::Hour => 'h',
            EstimateUnit::Day => 'd',
            EstimateUnit::Week => 'w',
        };
        write!(f, "{}{}", self.amount, u)
    }
}

/// A priority, `p/0` (drop everything) to `p/3` (someday); an issue without one is `p/2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(u8);

impl Priority {
    /// The label prefix CommiTea owns for priorities.
    pub(crate) const LABEL_PREFIX: &'static str = "p/";
    /// The priority of an issue that has no `p/*` label.
    pub(crate) const DEFAULT: Priority = Priority(2);

    /// A priority from its level, 0 to 3.
    pub fn new(level: u8) -> Option<Self> {
        (level <= 3).then_some(Self(level))
    }

    /// The level, 0 (highest) to 3.
    pub fn level(self) -> u8 {
        self.0
    }

    /// Parses a `p/…` label; `None` for any other label.
    pub(crate) fn from_label(label: &str) -> Option<Result<Self, ParseEstimateError>> {
        // One digit: `p/00` and `p/+1` are no level `u8` should read (audit 82).
        label.strip_prefix(Self::LABEL_PREFIX).map(|rest| {
            Some(rest)
                .filter(|r| r.len() == 1)
                .and_then(|r| r.parse::<u8>().ok())
                .and_then(Self::new)
                .ok_or_else(|| ParseEstimateError::Priority(label.to_owned()))
        })
    }

    /// A priority as a person or an agent gives one: its label `p/1` or its level `1`, as a capture proposal
    /// takes it (audit 91: `set_priority` refused the `1` a capture had just accepted).
    pub fn from_said(s: &str) -> Option<Self> {
        let t = s.trim();
        if t.starts_with(Self::LABEL_PREFIX) {
            Self::from_label(t).and_then(Result::ok)
        } else {
            Self::from_label(&format!("{}{t}", Self::LABEL_PREFIX)).and_then(Result::ok)
        }
    }

    /// The label text, `p/1`.
    pub fn label(self) -> String {
        format!("{}{}", Self::LABEL_PREFIX, self.0)
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "p/{}", self.0)
    }
}

impl Serialize for Estimate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Estimate {
    /// An estimate as a person or an agent gives one: `2d`, or its label `est/2d`, which `apply_changes`
    /// takes (audit 91: a reestimate directive refused the label an agent had just used).
    pub fn from_said(s: &str) -> Result<Self, ParseEstimateError> {
        let t = s.trim();
        t.strip_prefix(Self::LABEL_PREFIX).unwrap_or(t).parse()
    }
}

impl<'de> Deserialize<'de> for Estimate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::from_said(&s).map_err(serde::de::Error::custom)
    }
}

/// Whether `hours` is more than twice the largest rung of `ladder`: its nearest rung is then no estimate
/// of it (the Jira import says so, a refused estimate is told to split the work).
pub fn far_past_the_ladder(hours: f64, ladder: &[Estimate], workday_hours: f64) -> bool {
    ladder
        .iter()
        .map(|e| e.hours(workday_hours))
        .reduce(f64::max)
        .is_some_and(|top| hours > 2.0 * top)
}

/// The rung of `ladder` nearest to `hours` on a log scale (ties go to the larger rung): one definition for
/// the Jira import's snapping and the rung a refused estimate is told to write (audit 181: the two
/// rounded 3h apart); `None` for no positive amount or an empty ladder.
pub fn nearest_rung(hours: f64, ladder: &[Estimate], workday_hours: f64) -> Option<Estimate> {
    if hours.is_nan() || hours <= 0.0 {
        return None;
    }
    let mut best: Option<(f64, Estimate)> = None;
    for e in ladder {
        let d = (hours / e.hours(workday_hours)).ln().abs();
        if best.is_none_or(|(bd, _)| d <= bd + 1e-12) {
            best = Some((d, *e));
        }
    }
    best.map(|(_, e)| e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_convert_with_the_workday() {
        let e: Estimate = "2d".parse().unwrap();
        assert_eq!(e.hours(6.0), 12.0);
        assert_eq!("1w".parse::<Estimate>().unwrap().hours(6.0), 30.0);
        assert_eq!("4h".parse::<Estimate>().unwrap().hours(8.0), 4.0);
        assert_eq!(
            Estimate::from_label("est/3d").unwrap().unwrap().label(),
            "est/3d"
        );
        assert!(Estimate::from_label("bug").is_none());
        for bad in ["0d", "2x", "d", "", "-1h", "1.5d", "+2d"] {
            assert!(bad.parse::<Estimate>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_zero_or_enormous_estimate_is_named_for_what_it_is() {
        assert_eq!("9999w".parse::<Estimate>().map(|e| e.amount), Ok(9999));
        for (text, want) in [
            ("0h", ParseEstimateError::Zero("0h".into())),
            ("10000w", ParseEstimateError::TooLarge("10000w".into())),
            (
                "99999999999999999999w",
                ParseEstimateError::TooLarge("99999999999999999999w".into()),
            ),
        ] {
            assert_eq!(text.parse::<Estimate>(), Err(want), "{text}");
        }
        let issue = |seconds: u64| crate::domain::Issue {
            time_estimate: seconds,
            ..crate::domain::Issue::bare(1, chrono::DateTime::UNIX_EPOCH)
        };
        assert_eq!(issue(7200).estimate_hours(6.0), Some(Ok(2.0)));
        assert!(matches!(
            issue(3_600_000_000_000_000).estimate_hours(6.0),
            Some(Err(ParseEstimateError::NativeTooLarge(1_000_000_000_000)))
        ));
    }

    #[test]
    fn priorities_parse_only_in_range() {
        assert_eq!(Priority::from_label("p/0").unwrap().unwrap().level(), 0);
        assert!(Priority::from_label("p/4").unwrap().is_err());
        assert!(Priority::from_label("p/x").unwrap().is_err());
        assert!(Priority::from_label("prio").is_none());
        assert!(Priority::new(1).unwrap() < Priority::DEFAULT);
    }
}
