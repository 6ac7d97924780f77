//! Plain domain types shared by every stage: issue keys, estimates, priorities and the lifecycle.
//!
//! Nothing here does I/O; the types are small, `Ord` where a stable order matters, and serialise to the
//! same text the state repo and the views use.

mod estimate;
pub mod issue;
mod key;
pub mod lifecycle;

pub use estimate::{
    Estimate, EstimateUnit, ParseEstimateError, Priority, far_past_the_ladder, nearest_rung,
};
pub use issue::{
    Comment, EventKind, Issue, Label, LinkedPull, Milestone, OpenState, OutsideBlocker,
    TimelineEvent, TrackedTime,
};
pub use key::{IssueKey, IssueRef, ParseKeyError, RepoName};
pub use lifecycle::{Lifecycle, LifecycleSpan};

/// A day written `YYYY-MM-DD`, or what is wrong with it in words (chrono says "input is out of range" of a
/// 30 February): the one reading of a hand-typed date, in the ledger's params and in `commitea.yaml`.
///
/// The year has four digits: chrono alone reads `26-12-21` as the year 26, which took effect at once.
pub(crate) fn parse_day(text: &str) -> Result<chrono::NaiveDate, String> {
    let shaped = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    shaped
        .then(|| chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
        .flatten()
        .ok_or_else(|| {
            format!(
                "\"{}\" is not a date: expected a real day as YYYY-MM-DD, e.g. 2027-01-29",
                crate::limits::excerpt(text)
            )
        })
}

/// The last second of `day`, in UTC: how CommiTea keeps a due date (Gitea stores the end of the day).
pub fn end_of_day(day: chrono::NaiveDate) -> chrono::DateTime<chrono::Utc> {
    (day.and_time(chrono::NaiveTime::MIN) + chrono::TimeDelta::seconds(86_399)).and_utc()
}

/// The short lowercase name of a weekday (`mon` … `sun`), as the config and TaskJuggler write it.
pub(crate) fn weekday_name(w: chrono::Weekday) -> &'static str {
    match w {
        chrono::Weekday::Mon => "mon",
        chrono::Weekday::Tue => "tue",
        chrono::Weekday::Wed => "wed",
        chrono::Weekday::Thu => "thu",
        chrono::Weekday::Fri => "fri",
        chrono::Weekday::Sat => "sat",
        chrono::Weekday::Sun => "sun",
    }
}

/// Whether a label is one of CommiTea's: `est/*`, `p/*` or `deadline/hard` — the only labels it ever adds
/// or removes (the label namespaces, defined here once).
pub fn in_own_namespace(label: &str) -> bool {
    is_plan_label(label) || label == Milestone::HARD_MARKER
}

/// Whether a label carries the plan itself (`est/*` or `p/*`) rather than describing the work: such labels
/// are left out when issues are grouped by their labels.
pub(crate) fn is_plan_label(label: &str) -> bool {
    label.starts_with(Estimate::LABEL_PREFIX) || label.starts_with(Priority::LABEL_PREFIX)
}

/// Whether `login` is no person but a placeholder Gitea (or Forgejo) shows in a person's place: `Ghost`, a
/// deleted user (`user_model.NewGhostUser`, id -1), or the Actions bot (`gitea-actions`,
/// `forgejo-actions`, id -2). Their names are reserved, so no one signs up as them.
pub fn is_placeholder_user(login: &str) -> bool {
    ["ghost", "gitea-actions", "forgejo-actions"]
        .iter()
        .any(|p| login.eq_ignore_ascii_case(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_has_a_four_digit_year_and_exists() {
        assert_eq!(
            parse_day("2026-12-21"),
            Ok(chrono::NaiveDate::from_ymd_opt(2026, 12, 21).unwrap_or_default())
        );
        // chrono alone reads these as the year 26, 226 and 12026.
        for bad in [
            "26-12-21",
            "226-12-21",
            "12026-12-21",
            "2026-2-21",
            "2026-12-1",
            "2027-02-29",
        ] {
            let err = parse_day(bad).unwrap_err();
            assert!(
                err.contains("expected a real day as YYYY-MM-DD"),
                "{bad}: {err}"
            );
        }
        assert_eq!(
            end_of_day(chrono::NaiveDate::from_ymd_opt(2026, 12, 18).unwrap_or_default())
                .to_rfc3339(),
            "2026-12-18T23:59:59+00:00"
        );
    }
}
