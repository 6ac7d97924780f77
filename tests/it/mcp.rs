//! `commitea mcp`: the MCP server, driven by the official Python SDK (`tests/mcp/client.py`) and by raw
//! JSON-RPC lines for what an SDK hides (unknown methods, stdout carrying nothing but the protocol).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

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
    // The tools that may ask the big model say they reach beyond the state repo.
    for t in tools {
        let open = matches!(
            t["name"].as_str().unwrap(),
            "capture_work" | "record_directive"
        );
        assert_eq!(t["annotations"]["openWorldHint"], open, "{t}");
    }
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
            r#"{{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "pad": "{}"}}"#,
            "a".repeat(5 << 20)
        ),
        String::new(),
        r#"{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}"#.to_owned(),
    ];
    let (out, stderr) = raw_text_session(tmp.path(), &lines);
    let messages: Vec<Value> = out
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let refused: Vec<i64> = messages
        .iter()
        .filter(|m| m["id"].is_null())
        .map(|m| m["error"]["code"].as_i64().unwrap())
        .collect();
    // Not JSON; a batch; no "jsonrpc"; a line over 4 MiB: each answered, and nothing else is.
    assert_eq!(refused, [-32700, -32600, -32600, -32600], "{out:?}");
    assert!(
        messages.iter().any(|m| m["id"] == 5
            && m["result"]["tools"]
                .as_array()
                .is_some_and(|t| t.len() == 4)),
        "the session went on: {out:?}"
    );
    assert!(
        messages.iter().all(|m| m["id"] != 3 && m["id"] != 4),
        "{out:?}"
    );
    assert!(
        stderr.contains("a line from the client was refused (-32700)"),
        "{stderr}"
    );
}
