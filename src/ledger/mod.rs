//! The directive ledger (`pm-state.md`) and its replay over the snapshot into the effective [`Plan`].
//!
//! For now the replay passes the snapshot through unchanged; the ledger's parser and directives plug in here.

pub mod format;
pub mod parse;

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::plan::Plan;
use crate::state::Snapshot;

/// Folds the ledger over the snapshot: the effective plan the forecast runs on.
pub fn replay(snapshot: &Snapshot, config: &Config, now: DateTime<Utc>) -> Plan {
    Plan::from_snapshot(snapshot, config, now)
}
