//! One client for OpenAI-compatible chat endpoints (`POST {url}/chat/completions`) with tool calling: what
//! Ollama, llama.cpp's server, vLLM and the hosted APIs all speak.
//!
//! The client is tolerant of the servers' differences in what they answer — tool-call arguments as a JSON
//! string or as an object, missing tool-call ids, the legacy `function_call` field, content as a string or a
//! list of parts, the many spellings of `finish_reason` — and strict about what it accepts: a reply cut at
//! the token limit is an error (never half-read), a body over [`crate::limits::MODEL_REPLY_BYTES`] is an
//! error (a reply that never ends), a server error is retried once and then said. The API key is read from
//! the environment variable the config names, sent as a bearer token and never written to any log, file or
//! error.

use chrono::{DateTime, Utc};
use std::io::Read;
use std::time::Duration;

use serde_json::{Value, json};

use super::ModelError;
use crate::config::ModelEndpoint;
use crate::secret::{Secret, scrub};

/// The value of the environment variable `var`: from `env` first (the command's own), then the process's.
pub(crate) fn variable(var: &str, env: &[(String, String)]) -> Option<String> {
    env.iter()
        .find(|(k, _)| k == var)
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var(var).ok())
}

/// A configured endpoint, ready to call: its setting's name (for errors), URL, model, key and limits.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The setting it comes from, `models.small` or `models.big`, named in every error.
    pub setting: &'static str,
    /// `{url}/chat/completions`.
    chat_url: String,
    /// The model's name.
    pub model: String,
    key: Option<Secret>,
    /// The other secrets this process holds (the Gitea token, the other model's key), masked in every
    /// answer as the key is.
    others: Vec<Secret>,
    /// How long one request may take.
    pub timeout: Duration,
    /// The most tokens one reply may have.
    pub max_tokens: u32,
    temperature: f64,
}

impl Endpoint {
    /// The endpoint of a config entry; `env` is where the key's variable is looked up.
    pub fn new(
        setting: &'static str,
        cfg: &ModelEndpoint,
        env: &[(String, String)],
    ) -> Result<Self, ModelError> {
        let base = cfg.url.trim().trim_end_matches('/');
        // The endpoint's own address pasted whole (`…/v1/chat/completions`) is its base too.
        let base = base.strip_suffix("/chat/completions").unwrap_or(base);
        let bad = |reason: &str| ModelError::Setting {
            setting: format!("{setting}.url"),
            reason: reason.to_owned(),
        };
        let parsed = reqwest::Url::parse(base).map_err(|e| bad(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("the scheme must be http or https"));
        }
        // A user name or password in the URL is sent as Basic authorization in place of the key, and
        // shown by every error that names the URL (audit 87).
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(bad(&format!(
                "it carries a user name or password: give the URL without it, and the key in the variable \
                 {setting}.api_key_env names"
            )));
        }
        if cfg.model.trim().is_empty() {
            return Err(ModelError::Setting {
                setting: format!("{setting}.model"),
                reason: "no model named".to_owned(),
            });
        }
        let key = match cfg.api_key_env.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(var) => {
                let raw = variable(var, env);
                let value =
                    raw.as_deref()
                        .and_then(Secret::new)
                        .ok_or_else(|| ModelError::MissingKey {
                            var: crate::limits::excerpt(var),
                            setting: format!("{setting}.api_key_env"),
                            empty: raw.is_some(),
                        })?;
                // A header carries visible ASCII and spaces: a key with a newline inside (a secret
                // pasted with two lines) was "cannot reach the model (models.small.url)", and retried
                // (audit 162). Said before any request, without the key.
                if !value
                    .expose()
                    .bytes()
                    .all(|b| b == b' ' || b == b'\t' || b.is_ascii_graphic())
                {
                    return Err(ModelError::Setting {
                        setting: format!("{setting}.api_key_env"),
                        reason: format!(
                            "the key in {} holds a character a request header cannot carry (a line \
                             break inside it, or a letter outside ASCII): export the key alone, on one \
                             line",
                            crate::limits::excerpt(var)
                        ),
                    });
                }
                Some(value)
            }
        };
        Ok(Self {
            setting,
            chat_url: format!("{base}/chat/completions"),
            model: cfg.model.trim().to_owned(),
            key,
            others: Vec::new(),
            timeout: Duration::from_secs(u64::from(cfg.timeout_seconds.0)),
            max_tokens: cfg.max_tokens.0,
            temperature: cfg.temperature.0,
        })
    }
}

impl Endpoint {
    /// This endpoint, masking `secrets` too in what its server answers: a model that echoes the Gitea
    /// token or the other model's key (read from an issue body, say) carries neither to the terminal, an
    /// op file or the ledger (audit 113).
    pub(crate) fn masking(mut self, secrets: Vec<Secret>) -> Self {
        self.others = secrets;
        self
    }

    /// `text` with this endpoint's key and every other secret it masks replaced by `***`.
    fn mask(&self, text: &str) -> String {
        self.others
            .iter()
            .fold(scrub(text, self.key.as_ref()), |t, s| s.scrub(&t))
    }

    /// `v` with every text in it masked ([`Self::mask`]): what is sent to the server carries no secret
    /// either — a token pasted into an issue body reached the model in a tool answer, and a hosted big
    /// model's provider with it (audit 162).
    fn mask_json(&self, v: &Value) -> Value {
        match v {
            Value::String(t) => Value::String(self.mask(t)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.mask_json(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (self.mask(k), self.mask_json(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The rules.
    System,
    /// The person (or CommiTea speaking for them: a correction).
    User,
    /// The model.
    Assistant,
    /// A tool's answer.
    Tool,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
        }
    }
}

/// A tool call's arguments as the model sent them.
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// A JSON value (an object, if the model followed the schema).
    Json(Value),
    /// Text that is not JSON: kept for the tool's answer to quote, never parsed.
    Malformed(String),
}

impl Arguments {
    /// The arguments as the wire carries them: a JSON string. Malformed ones go back as `{}`: Ollama,
    /// llama.cpp and vLLM parse the arguments of the history they are sent and refuse the whole request
    /// over one that is not JSON (audit 78); the tool's answer quotes what the model wrote.
    fn wire(&self) -> String {
        match self {
            Self::Json(v) => v.to_string(),
            Self::Malformed(_) => "{}".to_owned(),
        }
    }
}

/// One tool call of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id (made up when the server sends none).
    pub id: String,
    /// The tool's name, as the model wrote it.
    pub name: String,
    /// Its arguments.
    pub arguments: Arguments,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// The text, if any.
    pub content: Option<String>,
    /// The tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A message of `role` with `text`.
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(text.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A tool's answer to call `id`.
    pub fn tool(id: &str, text: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(id.to_owned()),
            ..Self::new(Role::Tool, text)
        }
    }

    fn wire(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("role".into(), self.role.as_str().into());
        // Some servers refuse a null content on an assistant message with tool calls; an empty string
        // is accepted everywhere.
        m.insert(
            "content".into(),
            self.content.clone().unwrap_or_default().into(),
        );
        if !self.tool_calls.is_empty() {
            let calls: Vec<Value> = self
                .tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments.wire()}})
                })
                .collect();
            m.insert("tool_calls".into(), Value::Array(calls));
        }
        if let Some(id) = &self.tool_call_id {
            m.insert("tool_call_id".into(), id.clone().into());
        }
        Value::Object(m)
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// It said what it had to say.
    Stop,
    /// It wants tools called.
    ToolCalls,
    /// It hit the token limit: the reply is cut.
    Length,
    /// Something else the server said (`content_filter`, …).
    Other(String),
}

impl Finish {
    /// Reads the servers' spellings: OpenAI's, llama.cpp's, vLLM's, Anthropic-style and Ollama's.
    fn parse(v: Option<&Value>) -> Self {
        match v
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("" | "stop" | "eos" | "end_turn" | "stop_sequence" | "end") => Self::Stop,
            Some("tool_calls" | "function_call" | "tool_use" | "tool_call" | "tools") => {
                Self::ToolCalls
            }
            Some("length" | "max_tokens" | "model_length" | "max_length") => Self::Length,
            Some(other) => Self::Other(crate::limits::excerpt(other)),
        }
    }
}

/// The model's reply to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The assistant message.
    pub message: Message,
    /// Why it stopped.
    pub finish: Finish,
    /// Tokens the request used in all, as the server counted them (prompt and reply).
    pub tokens: Option<u64>,
}

/// A tool offered to the model, in the OpenAI function shape.
pub fn tool_spec(name: &str, description: &str, parameters: &Value) -> Value {
    json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
}

/// The HTTP client for one endpoint.
#[derive(Debug, Clone)]
pub struct Client {
    endpoint: Endpoint,
    http: reqwest::blocking::Client,
}

/// How long to wait before the one retry of a server error that names no wait.
const RETRY_PAUSE: Duration = Duration::from_millis(500);

/// The longest `Retry-After` waited for before the one retry; a longer one is said instead.
const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);

/// A `Retry-After` header's wait in seconds: a number of seconds, or an HTTP date (RFC 9110 allows both;
/// audit 143 found a date ignored and retried after half a second), counted from `now`.
fn retry_after_seconds(value: &str, now: DateTime<Utc>) -> Option<u64> {
    let value = value.trim();
    if let Ok(s) = value.parse::<u64>() {
        return Some(s);
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    Some(u64::try_from((at.with_timezone(&Utc) - now).num_seconds()).unwrap_or(0))
}

impl Client {
    /// `text` with every secret this client masks replaced by `***`: for CommiTea's own words made from
    /// what the model read, as the model's are (audit 165: `ask`'s fallback printed a token an issue
    /// body held).
    pub(crate) fn mask(&self, text: &str) -> String {
        self.endpoint.mask(text)
    }

    /// A client for `endpoint`.
    pub fn new(endpoint: Endpoint) -> Result<Self, ModelError> {
        // reqwest is built without a default crypto provider: install ring once (an error means another
        // provider is already installed, which is fine).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::blocking::Client::builder()
            .timeout(endpoint.timeout)
            .connect_timeout(endpoint.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("commitea/", env!("CARGO_PKG_VERSION")))
            // A redirect turns the POST into a GET (301, 302) and drops the key across hosts: said,
            // with where it points, rather than followed into a 405.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ModelError::Setting {
                setting: endpoint.setting.to_owned(),
                reason: format!("cannot build an HTTP client: {e}"),
            })?;
        Ok(Self { endpoint, http })
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The request body for `messages` and `tools`.
    pub fn body(&self, messages: &[Message], tools: &[Value]) -> Value {
        let mut body = json!({
            "model": self.endpoint.model,
            "messages": messages.iter().map(Message::wire).collect::<Vec<_>>(),
            "max_tokens": self.endpoint.max_tokens,
            "temperature": self.endpoint.temperature,
            "stream": false,
        });
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools.to_vec());
        }
        body
    }

    /// Sends one chat request; a server error or a dropped connection is retried once.
    pub fn chat(&self, messages: &[Message], tools: &[Value]) -> Result<Reply, ModelError> {
        let body = self.body(messages, tools);
        match self.send(&body) {
            Err(e) if e.retryable() => {
                let pause = match &e {
                    ModelError::Status {
                        retry_after: Some(s),
                        ..
                    } => Duration::from_secs(*s),
                    _ => RETRY_PAUSE,
                };
                if pause > RETRY_AFTER_CAP.min(self.endpoint.timeout) {
                    return Err(e);
                }
                // Waited for here: the error's "longer than CommiTea waits" is for a wait it does not make.
                let said = match &e {
                    ModelError::Status {
                        setting,
                        status,
                        message,
                        ..
                    } => ModelError::Status {
                        setting,
                        status: *status,
                        message: message.clone(),
                        retry_after: None,
                    }
                    .to_string(),
                    other => other.to_string(),
                };
                tracing::warn!("{said}; trying once more in {} s", pause.as_secs_f64());
                std::thread::sleep(pause);
                // A second "wait" after the one retry is said as such, not as a wait longer than
                // CommiTea makes (audit 143: it asked for 2 s, which CommiTea had just waited).
                self.send(&body).map_err(|e| match e {
                    ModelError::Status {
                        setting,
                        status,
                        message,
                        retry_after: Some(s),
                    } => ModelError::Status {
                        setting,
                        status,
                        message: format!(
                            "{message}; after CommiTea's one retry it asks again to be left alone for \
                             {s} s (Retry-After): try again then"
                        ),
                        retry_after: None,
                    },
                    other => other,
                })
            }
            other => other,
        }
    }

    fn send(&self, body: &Value) -> Result<Reply, ModelError> {
        let setting = self.endpoint.setting;
        let mut request = self
            .http
            .post(&self.endpoint.chat_url)
            .json(&self.endpoint.mask_json(body));
        if let Some(key) = &self.endpoint.key {
            request = request.bearer_auth(key.expose());
        }
        let response = request.send().map_err(|e| self.transport(&e))?;
        let status = response.status();
        if status.is_redirection() {
            let to = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(|l| self.endpoint.mask(l))
                .unwrap_or_else(|| "another address".to_owned());
            return Err(ModelError::Status {
                setting,
                status: status.as_u16(),
                message: format!(
                    "it sends the request on to {}; set {setting}.url to where it points (CommiTea does \
                     not follow: a redirect turns the request into a GET and drops the key)",
                    crate::limits::excerpt_long(&to)
                ),
                retry_after: None,
            });
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after_seconds(v, Utc::now()));
        let mut bytes = Vec::new();
        let limit = crate::limits::MODEL_REPLY_BYTES;
        response
            .take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                if is_timeout(&e) {
                    ModelError::Timeout {
                        setting,
                        seconds: self.endpoint.timeout.as_secs(),
                    }
                } else {
                    ModelError::Connect {
                        setting,
                        reason: format!("the answer broke off: {}", short_io(&e)),
                    }
                }
            })?;
        if bytes.len() > limit {
            return Err(ModelError::TooLong { setting, limit });
        }
        if !status.is_success() {
            let said = server_message(&bytes, &self.endpoint);
            let hint = self.hint(status.as_u16(), &said);
            return Err(ModelError::Status {
                setting,
                status: status.as_u16(),
                message: format!("{said}{hint}"),
                retry_after,
            });
        }
        // What the model says goes to the terminal, the log, the ledger and the site: a server that echoes
        // the key (in an answer, a tool call's arguments) does not carry it there (audit 87).
        let masked = self.endpoint.mask(&String::from_utf8_lossy(&bytes));
        if masked.as_bytes() != bytes.as_slice() {
            // Said, as a reply changed is no longer the model's words (audit 162).
            tracing::warn!(
                "the answer of {setting} had text masked as a secret (a key or the Gitea token it \
                 quoted): what it wrote there reads `***`"
            );
        }
        bytes = masked.into_bytes();
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| ModelError::BadReply {
            setting,
            reason: self.endpoint.mask(&if String::from_utf8_lossy(&bytes)
                .trim_start()
                .starts_with("data:")
            {
                "it streamed its answer (text/event-stream), which was not asked for".to_owned()
            } else {
                format!("the answer is not JSON ({e})")
            }),
        })?;
        // An error in a 200 (OpenRouter's, when the provider fails mid-answer): said as the status it
        // names, so that a server error is retried like one.
        if value.get("choices").is_none()
            && let Some(error) = value.get("error")
        {
            let status = error
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok())
                .filter(|c| (400..600).contains(c))
                .unwrap_or(502);
            return Err(ModelError::Status {
                setting,
                status,
                message: format!(
                    "{} (in a 200 answer)",
                    server_message(&bytes, &self.endpoint)
                ),
                retry_after,
            });
        }
        let reply = parse_reply(&value).map_err(|reason| ModelError::BadReply {
            setting,
            reason: self.endpoint.mask(&reason),
        })?;
        if reply.finish == Finish::Length {
            return Err(ModelError::Truncated {
                setting,
                max_tokens: self.endpoint.max_tokens,
            });
        }
        Ok(reply)
    }

    /// What to do about an error status, where its words tell: a wrong address, a model that cannot
    /// call tools.
    fn hint(&self, status: u16, said: &str) -> String {
        let setting = self.endpoint.setting;
        if status == 404 && said.contains("model") && said.contains("not found") {
            format!(
                "; check {setting}.model: the server has no model \"{}\" (with Ollama: ollama pull {})",
                self.endpoint.model, self.endpoint.model
            )
        } else if status == 404 {
            format!(
                "; check {setting}.url ({}): an OpenAI-compatible server's address usually ends in /v1, \
                 and CommiTea adds /chat/completions",
                self.endpoint.chat_url.trim_end_matches("/chat/completions")
            )
        } else if said.contains("does not support tools") {
            format!(
                "; {} cannot call tools on this server, which CommiTea's questions need: set \
                 {setting}.model to one that can (Ollama lists them under \"tools\": qwen3:4b, \
                 llama3.1:8b)",
                self.endpoint.model
            )
        } else {
            String::new()
        }
    }

    /// A transport error in words, without the URL's query or anything secret.
    fn transport(&self, e: &reqwest::Error) -> ModelError {
        let setting = self.endpoint.setting;
        if e.is_timeout() {
            return ModelError::Timeout {
                setting,
                seconds: self.endpoint.timeout.as_secs(),
            };
        }
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            reason = s.to_string();
            source = s.source();
        }
        ModelError::Connect {
            setting,
            reason: crate::limits::excerpt_long(&self.endpoint.mask(&reason)),
        }
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    if e.kind() == std::io::ErrorKind::TimedOut {
        return true;
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<reqwest::Error>()
            && r.is_timeout()
        {
            return true;
        }
        if s.to_string().contains("timed out") {
            return true;
        }
        source = s.source();
    }
    e.to_string().contains("timed out")
}

fn short_io(e: &std::io::Error) -> String {
    crate::limits::excerpt_long(&e.to_string())
}

/// What a failed answer says, in at most an excerpt: `{"error": {"message": …}}`, `{"error": "…"}`,
/// `{"message": …}`, or the start of the text.
/// A server's error message, the secrets masked and then cut short (masked first: a key cut in two no longer
/// matches, and its first part would be shown).
fn server_message(bytes: &[u8], endpoint: &Endpoint) -> String {
    let text = String::from_utf8_lossy(bytes);
    let said = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(|m| m.as_str().or_else(|| m.pointer("/0/msg")?.as_str()))
            .map(str::to_owned)
    });
    crate::limits::excerpt_long(&endpoint.mask(said.as_deref().unwrap_or(&text)))
}

/// Content as a string, or as a list of parts (`[{type: "text", text}]`), or absent.
fn content_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let text: String = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
                .collect();
            Some(text)
        }
        _ => None,
    }
}

/// Content without the reasoning a thinking model writes before its answer (`<think>…</think>`, which
/// Qwen3 and DeepSeek-R1 put in `content` where the server does not split it out): it is not the
/// answer, is not checked or shown, and is not sent back. An unclosed `<think>` is all reasoning.
fn without_thinking(content: &str) -> &str {
    let t = content.trim_start();
    match t.strip_prefix("<think>") {
        Some(rest) => rest
            .split_once("</think>")
            .map_or("", |(_, answer)| answer.trim_start()),
        None => content,
    }
}

/// A tool call's arguments: a JSON string (OpenAI), an object (Ollama, some llama.cpp builds), absent.
fn arguments(v: Option<&Value>) -> Arguments {
    match v {
        None | Some(Value::Null) => Arguments::Json(json!({})),
        Some(Value::String(s)) if s.trim().is_empty() => Arguments::Json(json!({})),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            // A string that holds a JSON string of an object (double-encoded) is read through.
            Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
                Ok(v @ Value::Object(_)) => Arguments::Json(v),
                _ => Arguments::Malformed(s.clone()),
            },
            Ok(v) => Arguments::Json(v),
            Err(_) => Arguments::Malformed(s.clone()),
        },
        Some(other) => Arguments::Json(other.clone()),
    }
}

/// Reads a chat completion; the error says what is missing, in a few words.
pub(crate) fn parse_reply(v: &Value) -> Result<Reply, String> {
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        // Ollama's native shape, which some proxies pass through: `{message, done_reason}`.
        .or_else(|| v.get("message").map(|_| v))
        .ok_or("the answer has no choices")?;
    let message = choice
        .get("message")
        .or_else(|| choice.get("delta"))
        .ok_or("the answer's choice has no message")?;
    let mut calls = Vec::new();
    if let Some(list) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in list.iter().enumerate() {
            let function = c.get("function").unwrap_or(c);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_owned();
            let id = c
                .get("id")
                .and_then(|id| match id {
                    Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .unwrap_or_else(|| format!("call_{i}"));
            calls.push(ToolCall {
                id,
                name,
                arguments: arguments(
                    function
                        .get("arguments")
                        .or_else(|| function.get("parameters")),
                ),
            });
        }
    } else if let Some(f) = message.get("function_call").filter(|f| f.is_object()) {
        calls.push(ToolCall {
            id: "call_0".to_owned(),
            name: f
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_owned(),
            arguments: arguments(f.get("arguments")),
        });
    }
    let finish = Finish::parse(
        choice
            .get("finish_reason")
            .or_else(|| choice.get("done_reason")),
    );
    let finish = if !calls.is_empty() && finish != Finish::Length {
        Finish::ToolCalls
    } else if calls.is_empty() && finish == Finish::ToolCalls {
        // Said it called a tool and called none: read it as done.
        Finish::Stop
    } else {
        finish
    };
    let tokens = v
        .pointer("/usage/total_tokens")
        .and_then(Value::as_u64)
        .or_else(|| {
            let p = v.pointer("/usage/prompt_tokens").and_then(Value::as_u64)?;
            let c = v
                .pointer("/usage/completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            Some(p + c)
        });
    Ok(Reply {
        message: Message {
            role: Role::Assistant,
            // Without control characters (newlines kept) or bidirectional overrides: the model copies
            // what Gitea's users wrote, and its words are printed to a terminal (audit 87: a milestone
            // title's escape sequence wrote to the clipboard of whoever ran `ask`).
            content: content_text(message.get("content"))
                .map(|c| crate::site::text::clean(without_thinking(&c)).into_owned())
                .filter(|c| !c.trim().is_empty()),
            tool_calls: calls,
            tool_call_id: None,
        },
        finish,
        tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_after_is_read_as_seconds_or_as_a_date() {
        let now = DateTime::parse_from_rfc3339("2015-10-21T07:27:30Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(retry_after_seconds(" 120 ", now), Some(120));
        assert_eq!(
            retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(30)
        );
        // A date already past: no wait.
        assert_eq!(
            retry_after_seconds("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(0)
        );
        assert_eq!(retry_after_seconds("soon", now), None);
    }

    #[test]
    fn a_thinking_models_reasoning_is_not_its_answer() {
        let r = reply(json!({"choices": [{"message": {"role": "assistant",
            "content": "<think>\nShape: {\"kind\": \"capacity\"} and 17 issues.\n</think>\n\n{\"kind\": \"note\"}"},
            "finish_reason": "stop"}]}));
        assert_eq!(r.message.content.as_deref(), Some("{\"kind\": \"note\"}"));
        // Unclosed: all of it reasoning, so no text; without a think block the content is as sent.
        let r = reply(json!({"choices": [{"message": {"content": "<think>I wonder"}}]}));
        assert_eq!(r.message.content, None);
        assert_eq!(
            without_thinking(" Fine <think>x</think>"),
            " Fine <think>x</think>"
        );
    }

    #[test]
    fn a_key_variable_set_to_nothing_is_said_as_such() {
        // A CI secret that is not defined arrives as an empty variable: "not set" sent people looking for
        // a typo in the name.
        let cfg = crate::config::ModelEndpoint {
            api_key_env: Some("BIG_KEY".into()),
            ..crate::config::ModelEndpoint::default()
        };
        let said = |env: &[(String, String)]| {
            Endpoint::new("models.big", &cfg, env)
                .unwrap_err()
                .to_string()
        };
        assert!(
            said(&[("BIG_KEY".into(), String::new())])
                .contains("BIG_KEY (models.big.api_key_env) is set but empty")
        );
        assert!(said(&[]).contains("is not set"));
        // A key of two lines is said as such, not as a server out of reach (audit 162).
        let two = said(&[("BIG_KEY".into(), "sk-proj-AUDIT12\nX".into())]);
        assert!(
            two.contains("models.big.api_key_env: the key in BIG_KEY holds a character")
                && !two.contains("AUDIT12"),
            "{two}"
        );
    }

    #[test]
    fn the_endpoints_whole_address_pasted_is_read_as_its_base() {
        let cfg = crate::config::ModelEndpoint {
            url: "http://127.0.0.1:11434/v1/chat/completions/".into(),
            ..crate::config::ModelEndpoint::default()
        };
        let e = Endpoint::new("models.small", &cfg, &[]).unwrap();
        assert_eq!(e.chat_url, "http://127.0.0.1:11434/v1/chat/completions");
    }

    fn reply(v: Value) -> Reply {
        parse_reply(&v).unwrap()
    }

    #[test]
    fn arguments_as_a_string_or_an_object_and_missing_ids_are_read() {
        let r = reply(
            json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "query_project", "arguments": "{\"view\":\"focus\"}"}},
                {"function": {"name": "query_project", "arguments": {"view": "board"}}}
            ]}, "finish_reason": "tool_calls"}], "usage": {"total_tokens": 42}}),
        );
        assert_eq!(r.finish, Finish::ToolCalls);
        assert_eq!(r.tokens, Some(42));
        assert_eq!(r.message.tool_calls.len(), 2);
        assert_eq!(r.message.tool_calls[0].id, "a");
        assert_eq!(
            r.message.tool_calls[0].arguments,
            Arguments::Json(json!({"view": "focus"}))
        );
        assert_eq!(r.message.tool_calls[1].id, "call_1");
        assert_eq!(
            r.message.tool_calls[1].arguments,
            Arguments::Json(json!({"view": "board"}))
        );
    }

    #[test]
    fn finish_reason_variants_and_tool_calls_without_the_reason() {
        for (reason, want) in [
            (json!("stop"), Finish::Stop),
            (json!("eos"), Finish::Stop),
            (Value::Null, Finish::Stop),
            (json!("length"), Finish::Length),
            (json!("max_tokens"), Finish::Length),
            (
                json!("content_filter"),
                Finish::Other("content_filter".into()),
            ),
            // Said tool_calls, called nothing: done.
            (json!("tool_calls"), Finish::Stop),
        ] {
            let r = reply(
                json!({"choices": [{"message": {"content": "hi"}, "finish_reason": reason}]}),
            );
            assert_eq!(r.finish, want, "{reason}");
        }
        // llama.cpp sometimes says "stop" with tool calls.
        let r = reply(
            json!({"choices": [{"message": {"tool_calls": [{"function": {"name": "x"}}]},
            "finish_reason": "stop"}]}),
        );
        assert_eq!(r.finish, Finish::ToolCalls);
        assert_eq!(
            r.message.tool_calls[0].arguments,
            Arguments::Json(json!({}))
        );
    }

    #[test]
    fn malformed_arguments_are_kept_not_parsed_and_legacy_function_calls_read() {
        let r = reply(json!({"choices": [{"message": {"tool_calls": [{"id": "x",
            "function": {"name": "query_project", "arguments": "{\"view\": "}}]}}]}));
        assert!(matches!(
            &r.message.tool_calls[0].arguments,
            Arguments::Malformed(s) if s == "{\"view\": "
        ));
        let r = reply(
            json!({"choices": [{"message": {"function_call": {"name": "query_project",
            "arguments": "{\"view\":\"runway\"}"}}, "finish_reason": "function_call"}]}),
        );
        assert_eq!(r.finish, Finish::ToolCalls);
        assert_eq!(r.message.tool_calls[0].name, "query_project");
        // Double-encoded arguments.
        let r = reply(
            json!({"choices": [{"message": {"tool_calls": [{"function": {"name": "q",
            "arguments": "\"{\\\"view\\\":\\\"focus\\\"}\""}}]}}]}),
        );
        assert_eq!(
            r.message.tool_calls[0].arguments,
            Arguments::Json(json!({"view": "focus"}))
        );
    }

    #[test]
    fn content_parts_and_empty_content_and_missing_choices() {
        let r = reply(
            json!({"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]}),
        );
        assert_eq!(r.message.content.as_deref(), Some("ab"));
        let r = reply(json!({"choices": [{"message": {"content": "  "}}]}));
        assert_eq!(r.message.content, None);
        let r = reply(
            json!({"choices": [{"message": {"content": "a\u{1b}]52;c;SEFDSw==\u{7}\u{1b}[2J\u{202e}b\nc"}}]}),
        );
        assert_eq!(r.message.content.as_deref(), Some("a]52;c;SEFDSw==[2Jb\nc"));
        assert!(parse_reply(&json!({"id": "x"})).is_err());
        assert!(parse_reply(&json!({"choices": []})).is_err());
        // Ollama's native shape.
        let r = reply(json!({"message": {"content": "native"}, "done_reason": "stop"}));
        assert_eq!(r.message.content.as_deref(), Some("native"));
    }

    #[test]
    fn the_key_comes_from_the_named_variable_and_never_prints() {
        let cfg = ModelEndpoint {
            api_key_env: Some("MY_MODEL_KEY".into()),
            ..ModelEndpoint::default()
        };
        let env = vec![("MY_MODEL_KEY".to_owned(), "sk-secret-123".to_owned())];
        let e = Endpoint::new("models.big", &cfg, &env).unwrap();
        assert!(!format!("{e:?}").contains("sk-secret-123"));
        let missing = Endpoint::new("models.big", &cfg, &[])
            .unwrap_err()
            .to_string();
        assert!(missing.contains("MY_MODEL_KEY") && missing.contains("models.big.api_key_env"));
        let bad = ModelEndpoint {
            url: "ftp://x".into(),
            ..ModelEndpoint::default()
        };
        let e = Endpoint::new("models.small", &bad, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("models.small.url"), "{e}");
        let with_password = ModelEndpoint {
            url: "http://u:sk-secret-123@127.0.0.1:1/v1".into(),
            ..ModelEndpoint::default()
        };
        let e = Endpoint::new("models.small", &with_password, &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("user name or password") && !e.contains("sk-secret-123"),
            "{e}"
        );
    }

    #[test]
    fn messages_go_out_in_the_openai_shape() {
        let m = Message {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "query_project".into(),
                arguments: Arguments::Json(json!({"view": "focus"})),
            }],
            tool_call_id: None,
        };
        let w = m.wire();
        assert_eq!(w["content"], "");
        assert_eq!(
            w["tool_calls"][0]["function"]["arguments"],
            "{\"view\":\"focus\"}"
        );
        let t = Message::tool("c1", "{}").wire();
        assert_eq!(t["role"], "tool");
        assert_eq!(t["tool_call_id"], "c1");
        // Arguments that are not JSON go back as an empty object, which every server parses.
        let mut m = m;
        m.tool_calls[0].arguments = Arguments::Malformed("{\"view\": ".into());
        assert_eq!(m.wire()["tool_calls"][0]["function"]["arguments"], "{}");
    }
}
