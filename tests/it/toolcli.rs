//! `commitea tool`: one agent tool call from the command line on a copy of the bundled demo. stdout holds
//! the answer and nothing else; a caller's mistake exits with status 2 and names the field on stderr.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use commitea::demo::{self, DemoSpec};
use serde_json::Value;

/// Fewer Monte Carlo trials than the default: the tests check shapes, not precision.
pub const TRIALS: (&str, &str) = ("COMMITEA_FORECAST_TRIALS", "400");

/// A fresh copy of the bundled demo state (no git, no forecast) in a temporary directory.
pub fn demo_state() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    demo::write(&demo::generate(&DemoSpec::bundled()), tmp.path()).unwrap();
    tmp
}

/// Runs `commitea ARGS… -s STATE` and asserts that it succeeded (its stderr otherwise); its stdout.
pub fn commitea_ok(state: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(args)
        .arg("-s")
        .arg(state)
        .env_remove("COMMITEA_STATE")
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "commitea {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `commitea tool -s STATE ARGS…`, with `stdin` as its standard input.
fn tool(state: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .arg("tool")
        .arg("-s")
        .arg(state)
        .args(args)
        .env_remove("COMMITEA_STATE")
        .env(TRIALS.0, TRIALS.1)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The one-line JSON answer of a successful call.
fn answer(out: &Output) -> Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(stdout.ends_with('\n'), "the answer ends with a newline");
    assert_eq!(
        stdout.lines().count(),
        1,
        "the answer is one line: {stdout}"
    );
    serde_json::from_str(&stdout).unwrap()
}

/// The stderr of a call that failed with status 2 and printed nothing on stdout.
fn input_error(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout on an error");
    assert!(stderr.contains("error: "), "{stderr}");
    stderr
}

/// An open issue of the demo, `owner/repo#N`, from the board.
fn open_issue(state: &Path) -> String {
    let board = answer(&tool(
        state,
        &[
            "query_project",
            r#"{"view":"board","filters":{"state":"steeping","limit":1}}"#,
        ],
        "",
    ));
    board["columns"][0]["issues"][0]["issue"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn query_project_answers_one_line_of_json_from_the_argument_or_stdin() {
    let tmp = demo_state();
    let runway = answer(&tool(
        tmp.path(),
        &["query_project", r#"{"view":"runway"}"#],
        "",
    ));
    assert!(!runway["milestones"].as_array().unwrap().is_empty());
    assert!(runway["milestones"][0]["band"]["p80"].is_string());
    // `-` and no argument both read stdin.
    let board = answer(&tool(
        tmp.path(),
        &["query_project", "-"],
        r#"{"view":"board","filters":{"limit":2}}"#,
    ));
    assert_eq!(board["columns"].as_array().unwrap().len(), 5);
    let calibration = answer(&tool(
        tmp.path(),
        &["query_project"],
        r#"{"view":"calibration"}"#,
    ));
    assert!(calibration["globalMultiplier"].is_number());
}

#[test]
fn input_mistakes_exit_2_and_name_the_problem() {
    let tmp = demo_state();
    let bad_json = input_error(&tool(tmp.path(), &["query_project", "{bad"], ""));
    assert!(bad_json.contains("not valid JSON"), "{bad_json}");

    let view = input_error(&tool(
        tmp.path(),
        &["query_project", r#"{"view":"gantt"}"#],
        "",
    ));
    assert!(view.contains("/view"), "{view}");

    let limit = input_error(&tool(
        tmp.path(),
        &[
            "query_project",
            r#"{"view":"board","filters":{"limit":500}}"#,
        ],
        "",
    ));
    assert!(limit.contains("/filters/limit"), "{limit}");

    let unknown = input_error(&tool(tmp.path(), &["make_coffee", "{}"], ""));
    assert!(
        unknown.contains("unknown tool \"make_coffee\""),
        "{unknown}"
    );

    let capture = input_error(&tool(
        tmp.path(),
        &["capture_work", r#"{"braindump":"a login page by Friday"}"#],
        "",
    ));
    assert!(capture.contains("no model configured"), "{capture}");

    // Who asks is a Gitea username: a newline in it wrote a second line into the op file's `by`.
    let key = open_issue(tmp.path());
    let write = format!(r#"{{"ops":[{{"op":"set_priority","issue":"{key}","priority":"p/1"}}]}}"#);
    let by = input_error(&tool(
        tmp.path(),
        &["--by", "pat\n## D-0009", "apply_changes", &write],
        "",
    ));
    assert!(by.contains("is not a Gitea username"), "{by}");
    assert!(!tmp.path().join("ops/pending").exists());
}

#[test]
fn list_prints_the_four_tools_with_object_schemas() {
    let tmp = demo_state();
    let list = answer(&tool(tmp.path(), &["--list"], ""));
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, commitea::tools::NAMES);
    for t in tools {
        assert!(!t["description"].as_str().unwrap().is_empty());
        assert_eq!(t["inputSchema"]["type"], "object", "{}", t["name"]);
        assert_eq!(t["outputSchema"]["type"], "object", "{}", t["name"]);
    }
}

#[test]
fn a_destructive_op_without_approval_is_rejected_and_files_nothing() {
    let tmp = demo_state();
    let issue = open_issue(tmp.path());
    let input = serde_json::json!({ "ops": [{ "op": "close_issue", "issue": issue }] }).to_string();
    let out = answer(&tool(tmp.path(), &["apply_changes", &input], ""));
    assert_eq!(out["applied"], 0, "{out}");
    let rejected = out["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 1, "{out}");
    assert_eq!(rejected[0]["op"]["op"], "close_issue");
    assert!(
        rejected[0]["reason"].as_str().unwrap().contains("approv"),
        "{out}"
    );
    let pending = tmp.path().join("ops/pending");
    let files = std::fs::read_dir(&pending).map_or(0, |d| d.count());
    assert_eq!(files, 0, "nothing under ops/pending");
}

#[test]
fn an_additive_op_writes_an_op_file_with_who_and_when() {
    let tmp = demo_state();
    let issue = open_issue(tmp.path());
    let input =
        serde_json::json!({ "ops": [{ "op": "set_priority", "issue": issue, "priority": "p/3" }] })
            .to_string();
    let out = answer(&tool(
        tmp.path(),
        &[
            "apply_changes",
            &input,
            "--by",
            "amara",
            "--clock",
            "2026-12-01T09:30:00Z",
        ],
        "",
    ));
    assert_eq!(out["applied"], 1, "{out}");
    let file = out["opsFile"].as_str().unwrap();
    assert!(file.starts_with("ops/pending/"), "{file}");
    let text = std::fs::read_to_string(tmp.path().join(file)).unwrap();
    assert!(text.contains("amara"), "{text}");
    assert!(text.contains("2026-12-01"), "{text}");
    assert!(text.contains("set_priority"), "{text}");
}

/// The demo state with `acme/api` renamed `acme/api-v2` on Gitea, as a sync after the rename leaves it:
/// the snapshot under the new name, which remembers the old one; the ledger and members' `repositories`
/// still say the old name.
fn renamed_demo_state() -> tempfile::TempDir {
    let tmp = demo_state();
    let snapshot = tmp.path().join("snapshot");
    std::fs::rename(
        snapshot.join("issues/acme/api"),
        snapshot.join("issues/acme/api-v2"),
    )
    .unwrap();
    for entry in walkdir::WalkDir::new(&snapshot) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let renamed = text
            .replace("acme/api#", "acme/api-v2#")
            .replace("acme/api:", "acme/api-v2:")
            .replace(
                "- name: acme/api\n",
                "- name: acme/api-v2\n  formerly:\n  - acme/api\n",
            );
        std::fs::write(entry.path(), renamed).unwrap();
    }
    let config = tmp.path().join("commitea.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("  - acme/api\n"), "{text}");
    std::fs::write(&config, text.replace("  - acme/api\n", "  - acme/api-v2\n")).unwrap();
    tmp
}

#[test]
fn the_tools_take_an_issue_under_its_repositorys_former_name() {
    // The ledger read `acme/api#N` as `acme/api-v2#N` after the rename; the tools said the repository
    // was not synced (audit 179 F4). Each reads it as the ledger does and writes the name it goes by now.
    let tmp = renamed_demo_state();
    let number = std::fs::read_dir(tmp.path().join("snapshot/issues/acme/api-v2"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".yaml")?.parse::<u64>().ok())
        .find(|n| {
            let text = std::fs::read_to_string(
                tmp.path()
                    .join(format!("snapshot/issues/acme/api-v2/{n}.yaml")),
            )
            .unwrap();
            text.contains("\nstate: open\n")
        })
        .unwrap();
    let old = format!("acme/api#{number}");
    let now = format!("acme/api-v2#{number}");
    let issue = answer(&tool(
        tmp.path(),
        &[
            "query_project",
            &serde_json::json!({ "view": "issue", "filters": { "issueId": old } }).to_string(),
        ],
        "",
    ));
    assert_eq!(issue["issue"], now.as_str(), "{issue}");
    let input =
        serde_json::json!({ "ops": [{ "op": "set_priority", "issue": old, "priority": "p/3" }] })
            .to_string();
    let out = answer(&tool(tmp.path(), &["apply_changes", &input], ""));
    assert_eq!(out["applied"], 1, "{out}");
    let text = std::fs::read_to_string(tmp.path().join(out["opsFile"].as_str().unwrap())).unwrap();
    assert!(
        text.contains(&format!("issue: {now}\n")) && !text.contains(&format!("{old}\n")),
        "{text}"
    );
    let input = serde_json::json!({
        "kind": "reprioritize",
        "quote": "api first",
        "target": { "issue": old },
        "params": { "priority": 0 },
        "by": "amara"
    })
    .to_string();
    let out = answer(&tool(tmp.path(), &["record_directive", &input], ""));
    let ledger = std::fs::read_to_string(tmp.path().join("pm-state.md")).unwrap();
    assert!(
        ledger.contains(&format!("- target: issue {now}\n")),
        "{out}\n{ledger}"
    );
    // A repository the snapshot never knew is still unknown.
    let input =
        serde_json::json!({ "ops": [{ "op": "set_priority", "issue": "acme/apx#1", "priority": "p/3" }] })
            .to_string();
    let out = answer(&tool(tmp.path(), &["apply_changes", &input], ""));
    assert_eq!(out["applied"], 0, "{out}");
    assert!(
        out.to_string()
            .contains("acme/apx is not one of the repositories synced"),
        "{out}"
    );
}
