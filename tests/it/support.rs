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

/// Schedules the TaskJuggler project `tjp` with `tj3` into `dir` (as `plan.tjp`), asserting it does; false
/// where `tj3` is not installed (skipped loudly, see [`external`]).
pub(crate) fn tj3_schedules(dir: &std::path::Path, tjp: &str) -> bool {
    if !external("tj3") {
        return false;
    }
    let file = dir.join("plan.tjp");
    std::fs::write(&file, tjp).unwrap();
    let run = Command::new("tj3")
        .args(["--silent", "--no-color", "-o"])
        .arg(dir)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "tj3: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    true
}

/// Asserts that each milestone a what-if's `detail` names has, on its side before, the p80 the forecast
/// `committed` (forecast.json) gives it, and that there is one at least.
pub(crate) fn milestones_before_are(detail: &serde_json::Value, committed: &serde_json::Value) {
    let mut compared = 0;
    for pair in detail.as_array().unwrap() {
        let subject = pair["subject"].as_str().unwrap();
        let Some(id) = subject
            .strip_prefix("milestone ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        let m = committed["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .unwrap();
        assert_eq!(pair["before"]["p80"], m["p80"], "{subject}");
        compared += 1;
    }
    assert!(compared > 0, "{detail}");
}
