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
    Comment, Issue, Label, LinkedPull, Milestone, OpenState, TimelineEvent, TrackedTime,
};
pub use key::{IssueKey, ParseKeyError, RepoName};
pub use lifecycle::{Lifecycle, LifecycleSpan};
