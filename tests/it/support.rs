//! Helpers shared by the test modules of this binary.

use std::process::Command;

/// Whether an external program is there; skips loudly, or fails under `COMMITEA_REQUIRE_EXTERNAL=1`.
pub(crate) fn external(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("COMMITEA_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1") {
            panic!("{program} is required (COMMITEA_REQUIRE_EXTERNAL=1) but is not installed");
        }
        eprintln!(
            "\n!!!!!!!! SKIPPED: {program} is not installed; install it to run this test !!!!!!!!\n"
        );
    }
    found
}

/// Leaves the state repo at `state` as a CommiTea writer killed while it held the lock leaves it: the
/// lock file still names that writer (`command`, e.g. `commitea run`), so the next writer takes it over.
pub(crate) fn killed_writer(state: &std::path::Path, command: &str) {
    std::fs::write(
        state.join(".git/commitea.lock"),
        format!(
            r#"{{"pid":4194304,"host":"gone","command":"{command}","since":"2026-11-30T08:00:00Z"}}"#
        ),
    )
    .unwrap();
}
