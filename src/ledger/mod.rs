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

/// Reads the ledger at `path`; a missing file is no ledger (`None`), so no directives. Bytes that are not
/// UTF-8 (an editor that saved the file in another encoding) are read as `�` with a warning naming their
/// line, so one bad entry never stops the others; [`read_exact`] refuses them instead, for a writer.
pub fn read(path: &Path) -> Result<Option<String>, StateError> {
    // A run reads the checkout's ledger more than once (the forecast, the pages): the same bytes are
    // said once (audit 167: the warning came twice, before and after the forecast's line).
    static SAID: std::sync::Mutex<Vec<(std::path::PathBuf, usize, usize)>> =
        std::sync::Mutex::new(Vec::new());
    Ok(
        read_bytes(path)?.map(|bytes| match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let key = (path.to_path_buf(), at, e.as_bytes().len());
                let new = SAID.lock().map_or(true, |mut said| {
                    let new = !said.contains(&key);
                    if new {
                        said.push(key);
                    }
                    new
                });
                if new {
                    tracing::warn!(
                        "{}; it is read with those bytes shown as \u{fffd}",
                        not_utf8(path, e.as_bytes(), at)
                    );
                }
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        }),
    )
}

/// Reads the ledger at `path` to write it again: as [`read`], but bytes that are not UTF-8 are an error
/// naming their line (writing the text back would replace them for good).
pub fn read_exact(path: &Path) -> Result<Option<String>, StateError> {
    read_bytes(path)?
        .map(|bytes| {
            String::from_utf8(bytes).map_err(|e| StateError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "{}; nothing is recorded until it is",
                    not_utf8(path, e.as_bytes(), e.utf8_error().valid_up_to())
                ),
            })
        })
        .transpose()
}

fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, StateError> {
    match crate::state::read_file(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StateError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// `pm-state.md line 88 is not UTF-8 text: save it as UTF-8`, for the first bad byte at `at`.
fn not_utf8(path: &Path, bytes: &[u8], at: usize) -> String {
    let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
    format!(
        "{} line {line} is not UTF-8 text (saved in another encoding?): save the file as UTF-8",
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        )
    )
}
