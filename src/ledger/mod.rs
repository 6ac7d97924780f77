//! The directive ledger (`pm-state.md`) and its replay over the snapshot into the effective [`Plan`].
//!
//! [`parse`] reads the ledger, [`format`](mod@format) holds its types, and [`replay()`] folds its active directives over
//! the snapshot (see [`replay`](mod@replay) for the rules).
//!
//! [`Plan`]: crate::plan::Plan

pub mod format;
pub mod parse;
pub mod record;
pub mod replay;

use std::path::Path;

pub use replay::{Replayed, replay};

use crate::state::StateError;

/// Reads the ledger at `path`; a missing file is no ledger (`None`), so no directives.
pub fn read(path: &Path) -> Result<Option<String>, StateError> {
    match crate::state::read_text_file(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StateError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}
