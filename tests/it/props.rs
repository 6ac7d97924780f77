//! Parsers that never panic, and files that read back as written: property tests over the ledger, the
//! YAML files, op files, Gitea's JSON and the Jira CSV importer. CI runs a modest number of cases
//! (`PROPTEST_CASES`, default 64 here); `cargo bench --bench props` runs 100,000 per parser.

use proptest::prelude::*;

#[path = "../support/props.rs"]
mod properties;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_generated_ledger_round_trips(
        preamble in prop_oneof![Just(String::new()), Just("# Decisions\n\nThe PM's ledger.\n".to_owned()), Just("# CRLF\r\n".to_owned())],
        directives in proptest::collection::vec(properties::directive(), 0..6),
    ) {
        properties::ledger_round_trips(&preamble, &directives).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_bytes_as_a_ledger_give_problems_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), text in properties::prose()) {
        properties::ledger_takes_anything(&String::from_utf8_lossy(&bytes)).map_err(TestCaseError::fail)?;
        properties::ledger_takes_anything(&format!("## D-0001 · note · 2026-01-01T00:00:00Z\n\n> {text}\n\n- status: {text}\n")).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_text_as_a_yaml_file_gives_a_value_or_an_error(text in properties::yamlish(), bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        properties::yaml_files_take_anything(&text).map_err(TestCaseError::fail)?;
        properties::yaml_files_take_anything(&String::from_utf8_lossy(&bytes)).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_op_file_round_trips(ops in proptest::collection::vec(properties::op(), 1..8), by in proptest::option::of("[a-z]{1,8}")) {
        properties::op_file_round_trips(ops, by).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_json_in_any_gitea_field_is_a_value_or_an_error_naming_the_field(
        field in proptest::sample::select(properties::GITEA_FIELDS),
        value in properties::json(),
    ) {
        properties::gitea_json_takes_anything(field, &value).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_csv_for_the_jira_importer_is_records_or_an_error(text in properties::csvish(), rows in properties::jira_rows()) {
        let dir = tempfile::tempdir().unwrap();
        properties::jira_takes_anything(dir.path(), &text).map_err(TestCaseError::fail)?;
        properties::jira_takes_anything(dir.path(), &rows).map_err(TestCaseError::fail)?;
    }
}
