//! `commitea mcp`: the MCP server, driven by the official Python SDK (`tests/mcp/client.py`) and by raw
//! JSON-RPC lines for what an SDK hides (unknown methods, stdout carrying nothing but the protocol).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::toolcli::{TRIALS, demo_state};

/// Whether the MCP Python SDK is importable; skips loudly when not, fails under
/// `COMMITEA_REQUIRE_EXTERNAL=1` (as `tj3::external` does for programs).
pub(crate) fn python_sdk() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("COMMITEA_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1") {
            panic!(
                "the MCP Python SDK is required (COMMITEA_REQUIRE_EXTERNAL=1) but `python3 -c 'import mcp'` fails: python3 -m pip install 'mcp==2.3.0'"
            );
        }
        eprintln!(
            "\n!!!!!!!! SKIPPED: the MCP Python SDK is not installed (python3 -m pip install 'mcp==2.3.0') !!!!!!!!\n"
        );
    }
    found
}

#[test]
fn the_python_sdk_client_uses_every_tool_and_every_view() {
    if !python_sdk() {
        return;
    }
    let tmp = demo_state();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_commitea"))
        .arg(tmp.path())
        .env_remove("COMMITEA_STATE")
        .env(TRIALS.0, TRIALS.1)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "client.py failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["failures"], serde_json::json!([]), "{summary}");
    assert_eq!(summary["server"]["name"], "commitea");
    assert_eq!(summary["server"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        summary["tools"],
        serde_json::json!(commitea::tools::NAMES),
        "{summary}"
    );
    let views = summary["views"].as_object().unwrap();
    assert_eq!(views.len(), 9, "{summary}");
    assert!(views.values().all(Value::is_array), "{summary}");
    assert_eq!(summary["apply"]["applied"], 1);
    let ops_file = summary["apply"]["opsFile"].as_str().unwrap();
    assert!(tmp.path().join(ops_file).is_file());
    assert_eq!(summary["badInput"]["path"], "/filters/limit");
    assert_eq!(summary["afterError"], true);
    assert_eq!(summary["unknownTool"], "unknown_tool");
    assert_eq!(summary["captureWork"], "no_model");
    assert_eq!(summary["methodNotFound"], -32601);
    assert_eq!(summary["stillWorks"], true);
}

/// Writes `lines` to `commitea mcp`'s stdin, closes it, and returns the server's stdout lines once it has
/// exited (which it must do by itself, on EOF, within a minute).
fn raw_session(state: &Path, lines: &[Value]) -> (Vec<String>, String) {
    let lines: Vec<String> = lines.iter().map(Value::to_string).collect();
    raw_text_session(state, &lines)
}

/// [`raw_session`] with the lines as written, JSON or not.
fn raw_text_session(state: &Path, lines: &[String]) -> (Vec<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .arg("mcp")
        .arg("-s")
        .arg(state)
        .env_remove("COMMITEA_STATE")
        .env(TRIALS.0, TRIALS.1)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).unwrap();
        s
    });
    {
        let mut stdin = child.stdin.take().unwrap();
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
    }
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("commitea mcp did not exit within a minute of stdin closing");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = reader.join().unwrap();
    let err = err_reader.join().unwrap();
    assert!(status.success(), "commitea mcp failed: {err}");
    (out.lines().map(str::to_owned).collect(), err)
}

#[test]
fn raw_json_rpc_unknown_methods_are_method_not_found_and_stdout_is_protocol_only() {
    let tmp = demo_state();
    let requests = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 9, "method": "no/such", "params": {}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 14, "method": "resources/list", "params": {}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 15, "method": "prompts/list"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
            "name": "query_project", "arguments": {"view": "runway", "filters": {"limit": 500}}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {
            "name": "query_project", "arguments": {"view": "runway"}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 12, "method": "tools/list"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {
            "name": "query_project", "arguments": [1, 2]}}),
    ];
    let (lines, stderr) = raw_session(tmp.path(), &requests);
    // Every stdout line is a JSON-RPC message; logs went to stderr.
    let messages: Vec<Value> = lines
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l}"))
        })
        .collect();
    assert!(messages.iter().all(|m| m["jsonrpc"] == "2.0"), "{lines:?}");
    assert!(stderr.contains("MCP"), "logs go to stderr: {stderr}");
    let reply = |id: u64| {
        messages
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no reply to {id}: {lines:?}"))
    };
    assert_eq!(reply(1)["result"]["serverInfo"]["name"], "commitea");
    assert!(reply(1)["result"]["capabilities"]["tools"].is_object());

    let not_found = reply(9);
    assert_eq!(not_found["error"]["code"], -32601, "{not_found}");
    assert!(
        not_found["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no/such")
    );

    // What hosts probe every server for says the same (it said the method's name alone).
    for (id, method) in [(14, "resources/list"), (15, "prompts/list")] {
        assert_eq!(reply(id)["error"]["code"], -32601, "{}", reply(id));
        assert_eq!(
            reply(id)["error"]["message"],
            format!(
                "method not found: {method} (this server offers the tools: tools/list, tools/call)"
            )
        );
    }

    // A known method with params it cannot take: invalid params, with the shape to send.
    let wrong = reply(13);
    assert_eq!(wrong["error"]["code"], -32602, "{wrong}");
    assert!(
        wrong["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the arguments one JSON object"),
        "{wrong}"
    );

    let bad = &reply(10)["result"];
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(bad["structuredContent"]["error"]["path"], "/filters/limit");
    assert!(
        bad["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("/filters/limit")
    );

    let good = &reply(11)["result"];
    assert_eq!(good["isError"], false, "{good}");
    assert!(good["structuredContent"]["milestones"].is_array());
    let text: Value = serde_json::from_str(good["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, good["structuredContent"]);

    let tools = reply(12)["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4);
    // Every result fits the output schema the tool advertises, a failure's too (a client that checks
    // them threw a protocol error on a failure's `{error}`); no input schema has a combinator at its
    // root, which Anthropic's API refuses (record_directive's had a `oneOf`).
    let schema_of = |name: &str, which: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no tool {name}"))[which]
            .clone()
    };
    let output = jsonschema::validator_for(&schema_of("query_project", "outputSchema")).unwrap();
    for result in [bad, good] {
        let content = &result["structuredContent"];
        assert!(
            output.is_valid(content),
            "{:?}",
            output
                .iter_errors(content)
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        );
    }
    for t in tools {
        let input = &t["inputSchema"];
        for key in ["oneOf", "anyOf", "allOf", "not", "if"] {
            assert!(input.get(key).is_none(), "{}: {key} at the root", t["name"]);
        }
        assert_eq!(t["outputSchema"]["type"], "object", "{}", t["name"]);
    }
    // The tools that may ask the big model say they reach beyond the state repo.
    for t in tools {
        let open = matches!(
            t["name"].as_str().unwrap(),
            "capture_work" | "record_directive"
        );
        assert_eq!(t["annotations"]["openWorldHint"], open, "{t}");
    }
}

/// A mistyped `-s` is refused before any client is served (a server on it answered the handshake and listed
/// its tools, and every call then failed).
#[test]
fn a_folder_that_is_no_state_repo_is_refused_before_the_handshake() {
    let empty = tempfile::tempdir().unwrap();
    for dir in [empty.path().to_path_buf(), empty.path().join("nothere")] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_commitea"))
            .args(["mcp", "-s"])
            .arg(&dir)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{dir:?}");
        assert!(out.stdout.is_empty(), "nothing on the protocol's stdout");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("-s/--state"), "{err}");
    }
}

#[test]
fn settings_that_do_not_read_are_refused_before_the_handshake() {
    // The server answered the handshake, and every call then the same error (audit 89).
    let tmp = demo_state();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["mcp", "-s"])
        .arg(tmp.path())
        .env("COMMITEA_FORECAST_TRIALS", "abc")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing on the protocol's stdout");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("environment variable COMMITEA_FORECAST_TRIALS"),
        "{err}"
    );
}

#[test]
fn the_server_exits_cleanly_when_stdin_closes_before_the_handshake() {
    let tmp = demo_state();
    let (lines, _) = raw_session(tmp.path(), &[]);
    assert!(lines.is_empty(), "{lines:?}");
}

#[test]
fn a_line_that_is_no_json_rpc_message_is_answered_and_the_session_goes_on() {
    let tmp = demo_state();
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "0"}}});
    let lines = [
        init.to_string(),
        "this is not json".to_owned(),
        "[1, 2]".to_owned(),
        r#"{"id": 3, "method": "tools/list"}"#.to_owned(),
        format!(
            r#"{{"jsonrpc": "2.0", "method": "tools/list", "pad": "{}", "id": 4}}"#,
            "a".repeat(5 << 20)
        ),
        String::new(),
        r#"{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}"#.to_owned(),
        // A JavaScript host's emoji cut in half: a lone surrogate escape, which serde_json refuses.
        r#"{"jsonrpc": "2.0", "id": "six", "method": "tools/call", "params": {"name": "query_project", "arguments": {"view": "search", "filters": {"query": "\ud83d"}}}}"#.to_owned(),
        // An id that is no string or integer: refused, with the id as sent (audit 158: no id at all).
        r#"{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}"#.to_owned(),
        r#"{"jsonrpc": "2.0", "id": null, "method": "tools/list"}"#.to_owned(),
    ];
    let (out, stderr) = raw_text_session(tmp.path(), &lines);
    let messages: Vec<Value> = out
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let refused: Vec<(Value, i64)> = messages
        .iter()
        .filter(|m| m.get("error").is_some())
        .map(|m| (m["id"].clone(), m["error"]["code"].as_i64().unwrap()))
        .collect();
    // Not JSON; a batch; no "jsonrpc"; a line over 4 MiB; a lone surrogate: each answered, and nothing
    // else is, with the line's id where it has one (audit 105: a client waits forever for an answer
    // with id null, which it cannot match to its request).
    assert_eq!(
        refused,
        [
            (Value::Null, -32700),
            (Value::Null, -32600),
            (json!(3), -32600),
            (json!(4), -32600),
            (json!("six"), -32700),
            (json!(1.5), -32600),
            (Value::Null, -32600),
        ],
        "{out:?}"
    );
    assert!(
        out.iter()
            .any(|l| l.contains("Parse error: the line is not JSON (unexpected end of hex escape")),
        "{out:?}"
    );
    assert!(
        messages.iter().any(|m| m["id"] == 5
            && m["result"]["tools"]
                .as_array()
                .is_some_and(|t| t.len() == 4)),
        "the session went on: {out:?}"
    );
    assert!(
        messages
            .iter()
            .all(|m| (m["id"] != 3 && m["id"] != 4) || m.get("result").is_none()),
        "{out:?}"
    );
    assert!(
        stderr.contains("a line from the client was refused (-32700)"),
        "{stderr}"
    );
    assert!(
        messages
            .iter()
            .all(|m| m.get("id").is_some() || m.get("method").is_some()),
        "every answer has an id: {out:?}"
    );
}

/// A call the client cancels (`notifications/cancelled`) writes nothing: the host told its user nothing
/// happened, and an op file written seconds later surprised them. The forecast behind it runs on (it
/// cannot be stopped halfway), and the server says on stderr that the call was cancelled before writing.
#[test]
fn a_cancelled_write_writes_nothing() {
    use std::io::BufRead;
    let tmp = demo_state();
    let pending = || -> Vec<String> {
        std::fs::read_dir(tmp.path().join("ops/pending"))
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let before = pending();
    // Enough trials that the consequence takes seconds, so the cancellation lands while it runs.
    let mut child = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["mcp", "-s"])
        .arg(tmp.path())
        .env_remove("COMMITEA_STATE")
        .env(TRIALS.0, "300000")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "apply_changes", "arguments": {"ops": [
                {"op": "set_estimate", "issue": "acme/api#143", "estimate": "2w"}]}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    writeln!(
        stdin,
        "{}",
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "the user gave up"}})
    )
    .unwrap();
    let start = Instant::now();
    let mut log = Vec::new();
    let said = loop {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(line) if line.contains("cancelled before anything was written") => break true,
            Ok(line) => log.push(line),
            Err(_) if start.elapsed() > Duration::from_secs(180) => break false,
            Err(_) => {}
        }
    };
    drop(stdin);
    let _ = child.wait();
    assert!(said, "the call was not said cancelled: {log:?}");
    assert_eq!(pending(), before, "a cancelled call wrote an op file");
}

#[test]
fn a_write_running_when_the_client_closes_its_input_is_finished_not_abandoned() {
    // The server ended 6 s after stdin closed, abandoning a record_directive halfway: no entry, no op
    // file, nothing said (audit 105). Here the write waits for the writer lock, held by the test past
    // that point; the server must wait for it rather than go.
    let tmp = demo_state();
    let lock = if tmp.path().join(".git").is_dir() {
        tmp.path().join(".git/commitea.lock")
    } else {
        tmp.path().join(".commitea.lock")
    };
    let lock = std::fs::File::create(lock).unwrap();
    lock.lock().unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(8));
        drop(lock);
    });
    let (out, err) = raw_session(
        tmp.path(),
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "record_directive", "arguments": {
                    "kind": "note", "quote": "The pilot starts in March."}}}),
        ],
    );
    release.join().unwrap();
    assert!(
        err.contains("waiting for it to finish, so that nothing is left half-written"),
        "{err}"
    );
    let ledger = std::fs::read_to_string(tmp.path().join("pm-state.md")).unwrap();
    assert!(
        ledger.contains("The pilot starts in March."),
        "{out:?}\n{err}"
    );
    // And its answer is sent, for a client still reading (audit 106: rmcp had dropped it after 5 s).
    let answer: Value = out
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == 2)
        .unwrap_or_else(|| panic!("no answer to the call: {out:?}\n{err}"));
    assert!(
        answer["result"]["structuredContent"]["directiveId"].is_string(),
        "{answer}"
    );
    assert!(!err.contains("timed out draining"), "{err}");
}
