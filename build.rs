//! Build script: the identity of the forecasting code a binary is built from.
//!
//! A forecast records the engine that made it (`ForecastReport::engine`), so that a run after an upgrade
//! says its moves are the new engine's, not the project's, and a reader never reuses a forecast another
//! engine made. The crate's version alone cannot tell builds apart (every build said 0.1.0), so the
//! identity also carries a hash of every file under `src/`, paths and contents, in a fixed order.

use std::hash::Hasher as _;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    let mut all = Vec::new();
    files(Path::new("src"), &mut all);
    all.sort();
    // SipHash with fixed keys: the same sources give the same identity on every build of a toolchain.
    let mut hash = std::hash::DefaultHasher::new();
    for path in &all {
        hash.write(path.to_string_lossy().as_bytes());
        hash.write(&std::fs::read(path).unwrap_or_default());
    }
    println!("cargo:rustc-env=ENGINE_SOURCE_HASH={:016x}", hash.finish());
}
