//! Plain domain types shared by every stage: issue keys, estimates, priorities and the lifecycle.
//!
//! Nothing here does I/O; the types are small, `Ord` where a stable order matters, and serialise to the
//! same text the state repo and the views use.

mod estimate;
pub mod issue;
mod key;
pub mod lifecycle;

pub use estimate::{Estimate, EstimateUnit, ParseEstimateError, Priority};
pub use issue::{
    Comment, EventKind, Issue, Label, LinkedPull, Milestone, OpenState, TimelineEvent, TrackedTime,
};
pub use key::{IssueKey, IssueRef, ParseKeyError, RepoName};
pub use lifecycle::{Lifecycle, LifecycleSpan};

/// A day written `YYYY-MM-DD`, or what is wrong with it in words (chrono says "input is out of range" of a
/// 30 February): the one reading of a hand-typed date, in the ledger's params and in `commitea.yaml`.
pub(crate) fn parse_day(text: &str) -> Result<chrono::NaiveDate, String> {
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| {
        format!(
            "\"{}\" is not a date: expected a real day as YYYY-MM-DD, e.g. 2027-01-29",
            crate::limits::excerpt(text)
        )
    })
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
