//! A scripted OpenAI-compatible chat server on loopback, for the model layer's tests.
//!
//! [`ModelServer::start`] serves `POST …/chat/completions` on `127.0.0.1` at a free port. It answers from a
//! script of recorded [`Exchange`]s, each matched by the request: the first exchange not yet used whose
//! [`Match`] fits the request's body answers it (so a conversation replays in order, and a request nobody
//! scripted is a loud 500 naming what it asked). Every request is kept ([`ModelServer::requests`]) so a
//! test can check what reached the model — the tools offered, the messages, the bearer token.
//!
//! Replies are a chat completion ([`Reply::text`], [`Reply::tool_call`], [`Reply::tool_call_raw`] for
//! malformed arguments, [`Reply::json`] for any body) or a fault: an error status ([`Reply::status`]), a
//! reply held longer than the client waits ([`Reply::delay`]), a reply cut at the token limit
//! ([`Reply::cut`]), and a body that never ends ([`Reply::Endless`]).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

use crate::gitea::http::{self, Response};

/// Which requests an exchange answers: all of its conditions hold.
#[derive(Debug, Clone, Default)]
pub struct Match {
    /// Texts the last message's content must hold (a tool answer, a question, a correction).
    pub last: Vec<String>,
    /// Texts the whole request body must hold (the system prompt, a tool's name).
    pub body: Vec<String>,
    /// The model named in the request.
    pub model: Option<String>,
}

impl Match {
    /// Any request.
    pub fn any() -> Self {
        Self::default()
    }

    /// A request whose last message holds `text`.
    pub fn last(text: &str) -> Self {
        Self {
            last: vec![text.to_owned()],
            ..Self::default()
        }
    }

    /// Also: the whole body holds `text`.
    pub fn and_body(mut self, text: &str) -> Self {
        self.body.push(text.to_owned());
        self
    }

    /// Also: the request names `model`.
    pub fn model(mut self, model: &str) -> Self {
        self.model = Some(model.to_owned());
        self
    }

    fn fits(&self, body: &Value, raw: &str) -> bool {
        let last = body
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("content"))
            .map(|c| match c {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_default();
        self.last.iter().all(|t| last.contains(t.as_str()))
            && self.body.iter().all(|t| raw.contains(t.as_str()))
            && self
                .model
                .as_ref()
                .is_none_or(|m| body.get("model").and_then(Value::as_str) == Some(m))
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A JSON body with a status.
    Json(u16, Value),
    /// The reply, after a pause (longer than the client's timeout makes a timeout).
    Delay(Duration, Box<Reply>),
    /// A 200 whose body never ends: bytes until the client hangs up.
    Endless,
    /// The reply with these headers added (`Retry-After`, `Location`).
    Headers(Vec<(String, String)>, Box<Reply>),
}

impl Reply {
    /// A chat completion that answers `content` and stops.
    pub fn text(content: &str) -> Self {
        Self::json(completion(
            json!({"role": "assistant", "content": content}),
            "stop",
        ))
    }

    /// A chat completion that calls `name` with `arguments` (sent as a JSON string, as OpenAI does).
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Self::tool_call_raw(name, &arguments.to_string())
    }

    /// A chat completion that calls `name` with `arguments` as written (malformed JSON included).
    pub fn tool_call_raw(name: &str, arguments: &str) -> Self {
        Self::json(completion(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": name, "arguments": arguments}}]}),
            "tool_calls",
        ))
    }

    /// A chat completion that makes several calls in one reply, each `(name, arguments)`.
    pub fn tool_calls(calls: &[(&str, Value)]) -> Self {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, arguments))| {
                json!({"id": format!("call_{}", i + 1), "type": "function",
                       "function": {"name": name, "arguments": arguments.to_string()}})
            })
            .collect();
        Self::json(completion(
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
            "tool_calls",
        ))
    }

    /// A reply cut at the token limit (`finish_reason: length`).
    pub fn cut(content: &str) -> Self {
        Self::json(completion(
            json!({"role": "assistant", "content": content}),
            "length",
        ))
    }

    /// A 200 with `body`.
    pub fn json(body: Value) -> Self {
        Self::Json(200, body)
    }

    /// An error status with an OpenAI-shaped error body.
    pub fn status(status: u16, message: &str) -> Self {
        Self::Json(
            status,
            json!({"error": {"message": message, "type": "server_error"}}),
        )
    }

    /// This reply after `d`.
    pub fn delay(d: Duration, then: Reply) -> Self {
        Self::Delay(d, Box::new(then))
    }

    /// This reply with the header `name: value`.
    pub fn with_header(self, name: &str, value: &str) -> Self {
        match self {
            Self::Headers(mut h, r) => {
                h.push((name.to_owned(), value.to_owned()));
                Self::Headers(h, r)
            }
            r => Self::Headers(vec![(name.to_owned(), value.to_owned())], Box::new(r)),
        }
    }
}

/// A chat completion around one message.
fn completion(message: Value, finish: &str) -> Value {
    json!({"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "scripted",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
}

/// One recorded exchange: the request it answers and the reply.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// Which requests it answers.
    pub when: Match,
    /// What it answers.
    pub reply: Reply,
}

impl Exchange {
    /// `reply` to the next request that fits `when`.
    pub fn new(when: Match, reply: Reply) -> Self {
        Self { when, reply }
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    /// The path, `/v1/chat/completions`.
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The JSON body (null when it was not JSON).
    pub body: Value,
    /// The index of the exchange that answered it, if one did.
    pub answered_by: Option<usize>,
}

struct Shared {
    script: Vec<Exchange>,
    used: Mutex<Vec<bool>>,
    received: Mutex<Vec<Received>>,
    stop: AtomicBool,
}

/// The server; stops when dropped.
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl ModelServer {
    /// Serves `script` on a free loopback port.
    pub fn start(script: Vec<Exchange>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            used: Mutex::new(vec![false; script.len()]),
            script,
            received: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name("model-server".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if s.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let s = Arc::clone(&s);
                    let _ = std::thread::Builder::new()
                        .name("model-server-conn".into())
                        .spawn(move || serve(&stream, &s));
                }
            })?;
        Ok(Self {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The base URL to configure (`models.*.url`): `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Received> {
        self.shared
            .received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many exchanges of the script are not used yet.
    pub fn unused(&self) -> usize {
        self.shared
            .used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|u| !**u)
            .count()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

fn serve(stream: &TcpStream, shared: &Shared) {
    let Some(req) = http::read_request(stream) else {
        return;
    };
    if shared.stop.load(Ordering::SeqCst) {
        return;
    }
    let raw = String::from_utf8_lossy(&req.body).into_owned();
    let body: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    let chosen = if req.method == "POST" && req.path.ends_with("/chat/completions") {
        let mut used = shared.used.lock().unwrap_or_else(PoisonError::into_inner);
        let i =
            (0..shared.script.len()).find(|&i| !used[i] && shared.script[i].when.fits(&body, &raw));
        if let Some(i) = i {
            used[i] = true;
        }
        i
    } else {
        None
    };
    shared
        .received
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Received {
            path: req.path.clone(),
            authorization: req.header("authorization").map(str::to_owned),
            body: body.clone(),
            answered_by: chosen,
        });
    let reply = match chosen {
        Some(i) => shared.script[i].reply.clone(),
        None => {
            let last = body
                .pointer("/messages")
                .and_then(Value::as_array)
                .and_then(|m| m.last())
                .cloned()
                .unwrap_or(Value::Null);
            eprintln!(
                "model server: no scripted exchange matches {} {}; its last message: {last}",
                req.method, req.path
            );
            Reply::status(500, "no scripted exchange matches this request")
        }
    };
    answer(stream, reply, shared);
}

fn answer(stream: &TcpStream, reply: Reply, shared: &Shared) {
    answer_with(stream, reply, shared, Vec::new());
}

fn answer_with(stream: &TcpStream, reply: Reply, shared: &Shared, headers: Vec<(String, String)>) {
    match reply {
        Reply::Json(status, v) => {
            let mut r = Response::json(status, &v);
            r.headers.extend(headers);
            http::write_response(stream, &r);
        }
        Reply::Headers(mut more, then) => {
            more.extend(headers);
            answer_with(stream, *then, shared, more);
        }
        Reply::Delay(d, then) => {
            std::thread::sleep(d);
            answer_with(stream, *then, shared, headers);
        }
        Reply::Endless => {
            use std::io::Write;
            let mut s = stream;
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"choices\": [{\"message\": {\"content\": \"";
            if s.write_all(head.as_bytes()).is_err() {
                return;
            }
            let chunk = "and on ".repeat(1024);
            while !shared.stop.load(Ordering::SeqCst) {
                if s.write_all(chunk.as_bytes()).is_err() {
                    return;
                }
            }
        }
    }
}
