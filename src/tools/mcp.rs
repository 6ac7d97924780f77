//! `commitea mcp`: the four agent tools as a Model Context Protocol server on stdin/stdout.
//!
//! The server is a thin shell over the dispatcher in [`crate::tools`]: `tools/list` publishes
//! [`super::specs`] (name, description, input and output JSON Schemas), `tools/call` runs [`super::call`] on
//! the blocking thread pool (a forecast is CPU work) and answers the tool's JSON both as structured content
//! and as text. A failed call — an unknown tool, input that does not fit the schema, an unreadable state
//! repo — is a tool result with `isError: true` whose text is the message and whose structured content is
//! `{error: {kind, message, path?}}`, so the model reads what to fix and the session goes on; it is never a
//! protocol error. A method the server does not know gets JSON-RPC's `-32601` (method not found): rmcp
//! reads it as a custom request, and the handler answers it with the method's name. A known method whose
//! params do not decode (a `tools/call` with its arguments as an array) arrives the same way and gets
//! `-32602` (invalid params) with the shape to send. A line that is no JSON-RPC message at all gets `-32700`
//! (not JSON) or `-32600` (not a message, or longer than 4 MiB) before rmcp sees it, with the id the line
//! gives where one can be read, else `null`.
//!
//! stdout carries the protocol and nothing else: logs go to stderr through `tracing`. The server runs on a
//! current-thread Tokio runtime of its own, so the caller stays synchronous, and returns when the client
//! closes stdin.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::{Context, ToolError};

/// What the server tells the client about itself, for the model.
const INSTRUCTIONS: &str = "CommiTea forecasts a team's Gitea issues and keeps its plan in a git state repo. Four tools: query_project reads the project (view focus, issue, milestone, board, runway, calibration, directives, standup or search; filters narrow it) and is the only read tool — every date and number in its answers comes from the forecast engine, and forecasts are ranges (p50/p80), never single dates, so report them as ranges; capture_work turns a braindump into a proposed issue set (it needs a configured big model and says so when none is); apply_changes proposes Gitea changes as one reviewable op file under ops/pending/ (destructive ops — remove_dep, close_issue, remove_label — need approved: true, obtained from the person after showing the consequence, which the same call with preview: true answers without writing anything); record_directive records a PM directive with the PM's verbatim words in the ledger and returns its consequence. No tool changes Gitea directly. An error result names the field to fix (a JSON pointer such as /filters/limit).";

/// The MCP server: the tool context it runs every call in.
#[derive(Debug, Clone)]
pub struct Server {
    ctx: Arc<Context>,
    in_flight: InFlight,
    cancels: ClientCancels,
}

/// The request ids the client cancelled (`notifications/cancelled`), as JSON text: rmcp cancels a call's
/// token for those and also when the session ends; only the client's own cancellation stops a write.
#[derive(Debug, Clone, Default)]
struct ClientCancels(Arc<std::sync::Mutex<std::collections::HashSet<String>>>);

impl ClientCancels {
    /// Notes the request a `notifications/cancelled` line names, before rmcp reads the line.
    fn note(&self, message: &Value) {
        if message.get("method").and_then(Value::as_str) != Some("notifications/cancelled") {
            return;
        }
        if let Some(id) = message.pointer("/params/requestId")
            && let Ok(mut set) = self.0.lock()
        {
            set.insert(id.to_string());
        }
    }

    /// Whether the client cancelled the request `id`.
    fn cancelled(&self, id: &rmcp::model::RequestId) -> bool {
        let Ok(id) = serde_json::to_value(id) else {
            return false;
        };
        self.0.lock().is_ok_and(|set| set.contains(&id.to_string()))
    }
}

/// How many tool calls are running on the blocking pool: a session the client ends waits for them, so a
/// write is never cut halfway (audit 105: a `record_directive` running when the client closed its input
/// was abandoned after 6 s, silently, its lock left behind).
#[derive(Debug, Clone, Default)]
struct InFlight(Arc<tokio::sync::watch::Sender<usize>>);

/// One running call; dropped where its thread's work ends, whether or not its answer is still awaited.
struct Running(Arc<tokio::sync::watch::Sender<usize>>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl InFlight {
    fn start(&self) -> Running {
        self.0.send_modify(|n| *n += 1);
        Running(Arc::clone(&self.0))
    }

    fn count(&self) -> usize {
        *self.0.borrow()
    }

    async fn finished(&self) {
        let _ = self.0.subscribe().wait_for(|n| *n == 0).await;
    }
}

impl Server {
    /// A server answering from `ctx`'s state repo.
    pub fn new(ctx: Context) -> Self {
        Self {
            ctx: Arc::new(ctx),
            in_flight: InFlight::default(),
            cancels: ClientCancels::default(),
        }
    }

    /// Runs one tool call on the blocking pool and turns its outcome into a tool result.
    async fn run(
        &self,
        name: String,
        arguments: Value,
        cancel: crate::state::Cancel,
    ) -> CallToolResult {
        // Each call its own model bounds: two captures at once are two conversations, not one.
        let ctx = Arc::new(super::Context {
            cancel,
            spent: crate::model::Spent::default(),
            ..(*self.ctx).clone()
        });
        let tool = name.clone();
        let running = self.in_flight.start();
        let outcome = tokio::task::spawn_blocking(move || {
            let _running = running;
            super::call(&ctx, &tool, &arguments)
        })
        .await;
        match outcome {
            Ok(Ok(answer)) => success(answer),
            Ok(Err(e)) => {
                if e.is_input() {
                    tracing::info!("{name}: {e}");
                } else {
                    tracing::warn!("{name}: {e}");
                }
                failure(&e)
            }
            Err(join) => {
                tracing::error!("{name} failed unexpectedly: {join}");
                failure(&ToolError::State(
                    format!("{name} failed unexpectedly ({join}); the server is still running")
                        .into(),
                ))
            }
        }
    }
}

/// A successful tool result: the answer as structured content and as compact JSON text.
fn success(answer: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(answer.to_string())]);
    result.structured_content = Some(answer);
    result
}

/// A failed tool result: the message as text, `{error: {kind, message, path?}}` as structured content.
fn failure(e: &ToolError) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
    result.structured_content = Some(e.to_json());
    result
}

/// A schema as the JSON object MCP wants; a non-object (which the derived schemas never are) becomes `{}`.
fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(map) => map,
        other => {
            tracing::warn!("a tool schema is not a JSON object: {other}");
            JsonObject::new()
        }
    }
}

/// An output schema as MCP wants it: `type: "object"` at the root, and every result the tool gives fits
/// it — its answer, or a failure's `{error: {kind, message, path?}}` ([`failure`]). A client that checks
/// the structured content of an error result against the schema threw a protocol error where the model
/// should have read what to fix (an audit met the TypeScript SDK's). The answer's `$defs` stay at the
/// root, where its references point.
fn output_object(v: Value) -> JsonObject {
    let mut answer = object(v);
    let mut schema = JsonObject::new();
    for key in ["$schema", "$defs"] {
        if let Some(value) = answer.remove(key) {
            schema.insert(key.to_owned(), value);
        }
    }
    schema.insert("type".to_owned(), Value::String("object".to_owned()));
    schema.insert(
        "anyOf".to_owned(),
        Value::Array(vec![Value::Object(answer), failure_schema()]),
    );
    schema
}

/// The structured content of a failed call: `{error: {kind, message, path?}}` ([`ToolError::to_json`]).
fn failure_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["kind", "message"],
                "properties": {
                    "kind": {"type": "string"},
                    "message": {"type": "string"},
                    "path": {"type": "string"}
                }
            }
        }
    })
}

/// What a client may assume about a tool: none touches Gitea; the readers change nothing; the two that
/// may ask the big model (`capture_work`, `record_directive` with `say`) reach beyond the state repo.
fn annotations(name: &str) -> ToolAnnotations {
    let reads_only = matches!(name, super::QUERY_PROJECT | super::CAPTURE_WORK);
    let open_world = matches!(name, super::CAPTURE_WORK | super::RECORD_DIRECTIVE);
    ToolAnnotations::new()
        .read_only(reads_only)
        .destructive(false)
        .open_world(open_world)
}

/// The four tools as MCP offers them (`tools/list`, and `commitea tool --list`).
pub fn tools() -> Vec<Tool> {
    super::specs()
        .into_iter()
        .map(|s| {
            Tool::new(s.name, s.description, object(s.input_schema))
                .with_raw_output_schema(Arc::new(output_object(s.output_schema)))
                .with_annotations(annotations(s.name))
        })
        .collect()
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("commitea", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // A cancelled call keeps running on its thread (a forecast cannot be stopped halfway), but writes
        // nothing: the host told its user nothing happened, and an op file written after that surprised
        // them (an audit's finding).
        // The session's end cancels the token too: a write then finishes (audit 105: a directive being
        // recorded when the client closed its input was lost).
        let cancel = crate::state::Cancel::default();
        let watch = {
            let (cancel, ct) = (cancel.clone(), context.ct.clone());
            let (cancels, id) = (self.cancels.clone(), context.id.clone());
            tokio::spawn(async move {
                ct.cancelled().await;
                if cancels.cancelled(&id) {
                    cancel.cancel();
                }
            })
        };
        let result = self.run(request.name.into_owned(), arguments, cancel).await;
        watch.abort();
        Ok(result.into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // rmcp hands a known method here when its params do not decode (arguments as an array, say):
        // that is invalid params, not a method this server lacks.
        if matches!(request.method.as_str(), "tools/call" | "tools/list") {
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "invalid params for {}: tools/call takes {{\"name\": \"<tool>\", \"arguments\": {{...}}}}, the arguments one JSON object",
                    request.method
                ),
                None,
            ));
        }
        Err(not_offered(&request.method))
    }

    // What hosts ask of every server: answered with the same words as any other method it lacks (rmcp's
    // own answer was the method's name alone).
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Err(not_offered("resources/list"))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(not_offered("resources/templates/list"))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Err(not_offered("prompts/list"))
    }
}

/// JSON-RPC's method not found for `method`, saying what the server does offer.
fn not_offered(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "method not found: {method} (this server offers the tools: tools/list, tools/call)"
        ),
        None,
    )
}

/// The longest line a client may send: a tool's input is a few kilobytes.
const MAX_LINE: usize = 4 << 20;

/// The top-level `"id"` of a JSON object read as its bytes go past, without holding them: the id a refused
/// line is answered with, so the client that sent it stops waiting (audit 105: a line over [`MAX_LINE`],
/// or with a lone surrogate escape that a JavaScript host sends for an emoji cut in half, was answered
/// with id `null`, which no client matches to its request).
#[derive(Debug, Default)]
struct IdScanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// A key is due (after `{` or `,` at the top level).
    key_due: bool,
    /// The top-level string being read, when it is a key (at most `"id"`'s length kept).
    key: Option<Vec<u8>>,
    /// The last top-level key was `id`.
    at_id: bool,
    /// The id's bytes, while they are read.
    value: Option<Vec<u8>>,
    /// The id found: a number or a string.
    id: Option<Value>,
}

impl IdScanner {
    /// Reads the next bytes of the line.
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if let Some(v) = self.value.as_mut() {
            // An id is a number or a string of some length; anything longer is no id worth keeping.
            if v.len() < 4096 {
                v.push(b);
            }
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if let Some(key) = self.key.take() {
                    // Written with escapes (`"i\u0064"`), it is still `id`.
                    let mut quoted = Vec::with_capacity(key.len() + 2);
                    quoted.push(b'"');
                    quoted.extend_from_slice(&key);
                    quoted.push(b'"');
                    self.at_id = serde_json::from_slice::<String>(&quoted).is_ok_and(|k| k == "id");
                }
                return;
            }
            if let Some(key) = self.key.as_mut().filter(|k| k.len() < 16) {
                key.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.key_due {
                    self.key = Some(Vec::new());
                    self.key_due = false;
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.key_due = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.finish();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && std::mem::take(&mut self.at_id) => {
                self.value = Some(Vec::new());
            }
            b',' if self.depth == 1 => {
                self.finish();
                self.key_due = true;
            }
            _ => {}
        }
    }

    /// Ends the id's value at the `,` or `}` after it.
    fn finish(&mut self) {
        let Some(mut bytes) = self.value.take() else {
            return;
        };
        bytes.pop();
        if let Ok(v @ (Value::Number(_) | Value::String(_))) =
            serde_json::from_slice::<Value>(bytes.trim_ascii())
        {
            self.id = Some(v);
        }
    }

    /// The id of the whole line, when it has one.
    fn of(line: &[u8]) -> Option<Value> {
        let mut s = Self::default();
        s.feed(line);
        s.id
    }
}

/// Reads the client's lines from `input` and passes each JSON-RPC message on to the server at `server`; a line
/// that is none gets JSON-RPC's answer on stdout at once (rmcp dropped such lines without a word, and the
/// client waited), with the line's id where one can be read (see [`IdScanner`]), else `null`: `-32700` for
/// text that is not JSON, `-32600` for JSON that is no JSON-RPC 2.0 message (a batch array, which MCP no
/// longer has, included) or a line over [`MAX_LINE`] bytes (read and dropped piecewise, never held). The
/// server sees the end of its input when the client's ends.
async fn frame(
    input: impl tokio::io::AsyncRead + Unpin,
    mut server: impl tokio::io::AsyncWrite + Unpin,
    stdout: Arc<tokio::sync::Mutex<tokio::io::Stdout>>,
    cancels: ClientCancels,
    in_flight: InFlight,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut input = tokio::io::BufReader::new(input);
    loop {
        let mut line = Vec::new();
        let mut too_long = false;
        let mut ids = IdScanner::default();
        let ended = loop {
            let Ok(buf) = input.fill_buf().await else {
                break true;
            };
            if buf.is_empty() {
                break true;
            }
            let (part, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..=i], true),
                None => (buf, false),
            };
            let n = part.len();
            if !too_long && line.len() + n <= MAX_LINE + 1 {
                line.extend_from_slice(part);
            } else {
                too_long = true;
                ids.feed(&line);
                ids.feed(part);
                line.clear();
            }
            input.consume(n);
            if done {
                break false;
            }
        };
        let text = line.trim_ascii();
        if too_long || !text.is_empty() {
            let refusal = if too_long {
                Some((
                    -32600,
                    format!("Invalid Request: a line longer than {MAX_LINE} bytes"),
                ))
            } else {
                refusal(text, &cancels)
            };
            let id = match refusal {
                Some(_) if too_long => ids.id.take(),
                Some(_) => IdScanner::of(text),
                None => None,
            };
            match refusal {
                None => {
                    if server.write_all(text).await.is_err()
                        || server.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                }
                Some((code, message)) => {
                    tracing::warn!("MCP: a line from the client was refused ({code}): {message}");
                    let answer = serde_json::json!({
                        "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message },
                    });
                    let mut out = stdout.lock().await;
                    let _ = out.write_all(format!("{answer}\n").as_bytes()).await;
                    let _ = out.flush().await;
                }
            }
        }
        if ended {
            break;
        }
    }
    // The calls still running finish, and their answers go out, before the server sees the end of its
    // input: rmcp gives in-flight answers 5 s and then drops them (audit 106: a directive recorded 14 s
    // after stdin closed, its answer never sent). A call just sent may not have started: a short quiet
    // spell first.
    let mut said = false;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let n = in_flight.count();
        if n == 0 {
            break;
        }
        if !said {
            tracing::info!(
                "the client closed its input with {} running: waiting for {} to finish, so that \
                 nothing is left half-written (a cancelled call's forecast runs to its end, writing \
                 nothing)",
                crate::prose::count(n, "tool call", "tool calls"),
                if n == 1 { "it" } else { "them" }
            );
            said = true;
        }
        in_flight.finished().await;
    }
    let _ = server.shutdown().await;
}

/// Why a line is no JSON-RPC 2.0 message, as its error code and message; `None` when it is one (a
/// cancellation it is noted in `cancels`).
fn refusal(text: &[u8], cancels: &ClientCancels) -> Option<(i32, String)> {
    let v = match serde_json::from_slice::<Value>(text) {
        Ok(v) => v,
        Err(e) => return Some((-32700, format!("Parse error: the line is not JSON ({e})"))),
    };
    cancels.note(&v);
    let ok = v.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && (v.get("method").is_some_and(Value::is_string)
            || (v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some())));
    if !ok {
        return Some((
            -32600,
            "Invalid Request: send one JSON-RPC 2.0 message per line, an object with \"jsonrpc\": \"2.0\" \
             and a \"method\""
                .into(),
        ));
    }
    // An id that is no string or integer was answered by the SDK without any id, which JSON-RPC 2.0
    // does not allow (audit 158): refused here, and answered with `"id": null`.
    match v.get("id") {
        Some(id) if !(id.is_string() || id.is_i64() || id.is_u64()) => Some((
            -32600,
            "Invalid Request: a request's \"id\" is a string or an integer".into(),
        )),
        _ => None,
    }
}

/// Copies the server's messages to stdout, each whole line under the lock that [`frame`]'s answers take too.
async fn forward(
    from_server: impl tokio::io::AsyncRead + Unpin,
    stdout: Arc<tokio::sync::Mutex<tokio::io::Stdout>>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut from_server = tokio::io::BufReader::new(from_server);
    let mut line = Vec::new();
    loop {
        line.clear();
        match from_server.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                // A hostile title's bidirectional controls, escaped: the same JSON, but a terminal or
                // log showing the line is not reordered by them.
                let escaped = match std::str::from_utf8(&line) {
                    Ok(text) => crate::site::text::escape_bidi_json(text)
                        .into_owned()
                        .into_bytes(),
                    Err(_) => line.clone(),
                };
                let mut out = stdout.lock().await;
                if out.write_all(&escaped).await.is_err() || out.flush().await.is_err() {
                    break;
                }
            }
        }
    }
}

/// Serves the tools over stdin/stdout until the client closes stdin.
///
/// Builds its own current-thread runtime (the tools run on its blocking pool). A client that goes away
/// before the handshake ends is a clean exit too.
pub fn serve(ctx: Context) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    tracing::info!(
        "MCP server on stdio for the state repo {}",
        ctx.state_dir.display()
    );
    let outcome = runtime.block_on(async move {
        // rmcp reads its side of a pipe; the lines in between are checked first (see `frame`).
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (from_server, to_server) = tokio::io::split(ours);
        let stdout = Arc::new(tokio::sync::Mutex::new(tokio::io::stdout()));
        let forwarding = tokio::spawn(forward(from_server, Arc::clone(&stdout)));
        let server = Server::new(ctx);
        let in_flight = server.in_flight.clone();
        tokio::spawn(frame(
            tokio::io::stdin(),
            to_server,
            stdout,
            server.cancels.clone(),
            in_flight.clone(),
        ));
        let running = match server.serve(theirs).await {
            Ok(running) => running,
            Err(ServerInitializeError::ConnectionClosed(why)) => {
                tracing::info!("the client left before the handshake ({why})");
                return Ok(());
            }
            Err(e) => return Err(anyhow::Error::new(e).context("MCP handshake")),
        };
        let reason = running.waiting().await?;
        // Ended otherwise than by the client's input (a transport error): still no write cut halfway.
        in_flight.finished().await;
        // The server's last answers may still be on their way to stdout.
        let _ = tokio::time::timeout(Duration::from_secs(5), forwarding).await;
        tracing::info!("MCP session ended: {reason:?}");
        Ok(())
    });
    // A read of stdin cannot be cancelled; do not wait for one that will never end.
    runtime.shutdown_timeout(Duration::from_secs(1));
    outcome
}

#[cfg(test)]
mod tests {
    use super::IdScanner;
    use serde_json::{Value, json};

    #[test]
    fn a_lines_top_level_id_is_found_wherever_it_is_and_never_a_nested_one() {
        let of = |s: &str| IdScanner::of(s.as_bytes());
        assert_eq!(
            of(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#),
            Some(json!(7))
        );
        // JavaScript SDKs put it last, after the params.
        assert_eq!(
            of(r#"{"method":"x","params":{"id":1,"q":"\"id\": 5, }"},"id" : "a,}b" }"#),
            Some(json!("a,}b"))
        );
        assert_eq!(of(r#"{"method":"x","params":{"id":1}}"#), None);
        assert_eq!(of(r#"{"id":{"n":1},"method":"x"}"#), None);
        assert_eq!(of(r#"{"idx":2,"method":"x"}"#), None);
        assert_eq!(of(r#"{"i\u0064":9,"method":"x"}"#), Some(json!(9)));
        let long = "x".repeat(1_000);
        assert_eq!(
            of(&format!(r#"{{"method":"x","id":"{long}"}}"#)),
            Some(json!(long))
        );
        assert_eq!(of("not json"), None);
        assert_eq!(of(r#"[{"id":1}]"#), None);
        // Fed piecewise, split anywhere, as a long line is read.
        let line = br#"{"method":"tools/call","params":{"pad":"\\\"}"},"id":42}"#;
        for cut in 0..line.len() {
            let mut s = IdScanner::default();
            s.feed(&line[..cut]);
            s.feed(&line[cut..]);
            assert_eq!(s.id, Some(Value::from(42)), "cut at {cut}");
        }
    }
}
