//! The parser properties of `tests/it/props.rs`, 100,000 cases each (`-- --cases N` for another count):
//! prints, per parser, the cases run, how many failed (a panic or a broken round trip) and the time.
//!
//! Run: `cargo bench --bench props`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

#[path = "../tests/support/props.rs"]
mod props;

fn run<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) -> bool {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let t = Instant::now();
    let outcome = runner.run(&strategy, test);
    let ok = outcome.is_ok();
    println!(
        "{name:<58} {cases:>9} {:>8} {:>8.1}",
        if ok { "0" } else { "FAILED" },
        t.elapsed().as_secs_f64()
    );
    if let Err(e) = outcome {
        println!("    {e}");
    }
    ok
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cases = args
        .iter()
        .position(|a| a == "--cases")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    println!(
        "{:<58} {:>9} {:>8} {:>8}",
        "parser property", "cases", "failed", "s"
    );
    let fail = TestCaseError::fail;
    let dir = tempfile::tempdir().unwrap();
    let results = [
        run(
            "ledger: a generated ledger round-trips byte for byte",
            cases,
            proptest::collection::vec(props::directive(), 0..6),
            |d| props::ledger_round_trips("# Decisions\n", &d).map_err(fail),
        ),
        run(
            "ledger: arbitrary bytes give problems, never a panic",
            cases,
            proptest::collection::vec(any::<u8>(), 0..400),
            |b| props::ledger_takes_anything(&String::from_utf8_lossy(&b)).map_err(fail),
        ),
        run(
            "snapshot, config, op and meta YAML: a value or an error",
            cases,
            props::yamlish(),
            |t| props::yaml_files_take_anything(&t).map_err(fail),
        ),
        run(
            "op files: rendered and read back the same",
            cases,
            proptest::collection::vec(props::op(), 1..8),
            |ops| props::op_file_round_trips(ops, None).map_err(fail),
        ),
        run(
            "Gitea JSON: any value in any field, a value or a named error",
            cases,
            (proptest::sample::select(props::GITEA_FIELDS), props::json()),
            |(f, v)| props::gitea_json_takes_anything(f, &v).map_err(fail),
        ),
        run(
            "Jira CSV importer: records or an error",
            cases,
            prop_oneof![props::csvish(), props::jira_rows()],
            |rows| props::jira_takes_anything(dir.path(), &rows).map_err(fail),
        ),
    ];
    if results.iter().any(|ok| !ok) {
        std::process::exit(1);
    }
}
