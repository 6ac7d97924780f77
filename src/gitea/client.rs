//! A blocking client for Gitea's `/api/v1`: token auth, JSON decoding, paging, and retries with backoff.
//!
//! Every request goes through [`Client::get_json`], which retries connection errors, timeouts and 5xx answers
//! with exponential backoff and (seeded, deterministic) jitter, honours `Retry-After` on 429, and stops after
//! [`ClientOptions::max_retries`] retries or [`ClientOptions::max_retry_time`] in all. Errors name the
//! request and the repository and say what to do; the token never appears in an error or in `Debug` output.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use reqwest::Url;
use reqwest::header::{AUTHORIZATION, DATE, HeaderMap, RETRY_AFTER};
use serde::de::DeserializeOwned;

use super::wire::{self, Page};
use crate::secret::{Secret, scrub};

/// The environment variables a token is read from, in order of preference.
/// `COMMITEA_TOKEN` is the workflow's secret (which it passes as `COMMITEA_GITEA_TOKEN`): a person who
/// exports it under the secret's name locally means the same token.
pub(crate) const TOKEN_ENV_VARS: [&str; 5] = [
    "COMMITEA_GITEA_TOKEN",
    "COMMITEA_TOKEN",
    "GITEA_TOKEN",
    "FORGEJO_TOKEN",
    "GITHUB_TOKEN",
];

/// The token variables for a hint: `COMMITEA_GITEA_TOKEN (or COMMITEA_TOKEN, …, or GITHUB_TOKEN)`.
pub(crate) fn token_vars_said() -> String {
    let (first, rest) = TOKEN_ENV_VARS.split_first().unwrap_or((&"", &[]));
    match rest.split_last() {
        Some((last, middle)) if !middle.is_empty() => {
            format!("{first} (or {}, or {last})", middle.join(", "))
        }
        Some((last, _)) => format!("{first} (or {last})"),
        None => (*first).to_owned(),
    }
}

/// The page size used when `/settings/api` cannot be read.
pub(crate) const DEFAULT_MAX_RESPONSE_ITEMS: usize = 50;

/// How many times a listing that changes while it is read is read (see [`Client::get_listing`]).
const LISTING_READS: usize = 3;

/// The first of [`TOKEN_ENV_VARS`] that holds a token, with the token.
fn token_var() -> Option<(&'static str, String)> {
    TOKEN_ENV_VARS.iter().find_map(|v| {
        let t = std::env::var(v).ok()?.trim().to_owned();
        (!t.is_empty()).then_some((*v, t))
    })
}

/// The first non-empty token among [`TOKEN_ENV_VARS`].
pub(crate) fn token_from_env() -> Option<String> {
    let (var, token) = token_var()?;
    // The workflow sets COMMITEA_GITEA_TOKEN from the secret, empty when the secret is unset, and the
    // runner sets the job's own token under GITHUB_TOKEN and FORGEJO_TOKEN: that one reads only the
    // state repository, so every other one answered "not visible to the token" without saying why.
    if matches!(var, "GITHUB_TOKEN" | "FORGEJO_TOKEN")
        && std::env::var(TOKEN_ENV_VARS[0]).is_ok_and(|t| t.trim().is_empty())
    {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            tracing::warn!(
                "{} is empty (is the repository secret COMMITEA_TOKEN set?): using {var}, the Actions \
                 job's own token, which may read only the state repository",
                TOKEN_ENV_VARS[0]
            );
        });
    }
    Some(token)
}

/// Why a request to Gitea failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server URL does not parse.
    #[error(
        "Gitea server URL \"{url}\" is not valid ({reason}); give the server's root, e.g. https://gitea.example.com"
    )]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client for {server}: {reason}")]
    Setup {
        /// The server.
        server: String,
        /// What failed.
        reason: String,
    },
    /// 401: the token is missing or wrong.
    #[error(
        "{request} on {server}: 401 Unauthorized, {}; {}",
        if *token_sent { "the server refused the Gitea token (expired, revoked, or another server's?)" } else { "no Gitea token is set" },
        set_token_hint(repo)
    )]
    Unauthorized {
        /// The server.
        server: String,
        /// The repository the request was about (or `the repositories`).
        repo: String,
        /// The request, e.g. `GET /api/v1/repos/acme/api/issues?page=1`.
        request: String,
        /// Whether the request carried a token.
        token_sent: bool,
    },
    /// An https URL whose server does not answer TLS: most often a plain-HTTP server.
    #[error(
        "{request}: no TLS connection to {server} ({reason}); if the server speaks plain HTTP, give its URL with http:// (`server:` in commitea.yaml, or COMMITEA_SERVER)"
    )]
    NoTls {
        /// The server.
        server: String,
        /// The request.
        request: String,
        /// What the TLS layer said.
        reason: String,
    },
    /// The server answered a web page where Gitea's API answers JSON.
    #[error(
        "{request}: {server} answered a web page, not Gitea's API; check that the server URL is the Gitea root (https://gitea.example.com, without /api/v1) and that no login page or proxy stands in front of the API"
    )]
    NotApi {
        /// The server.
        server: String,
        /// The request.
        request: String,
    },
    /// 403: the token may not read the repository (or, with no token, the server wants one for
    /// everything). A write's 403 is a [`ClientError::Status`] naming the scope a write needs.
    #[error(
        "{request} on {server}: 403 Forbidden{}, {}",
        if said.is_empty() { String::new() } else { format!(" ({said})") },
        if !*token_sent {
            format!("the server lets only signed-in users call its API and no Gitea token is set; {}", set_token_hint(repo))
        } else {
            format!("the token may not read {repo}; give its user read access to issues of {repo} (and a token with the read:issue and read:repository scopes)")
        }
    )]
    Forbidden {
        /// The server.
        server: String,
        /// The repository.
        repo: String,
        /// The request.
        request: String,
        /// Whether the request carried a token.
        token_sent: bool,
        /// What Gitea said, if anything (a token's missing scope, a blocked user).
        said: String,
    },
    /// 404 on a repository's endpoint.
    #[error(
        "{request} on {server}: 404 Not Found, {}",
        if *token_sent {
            format!("repository {repo} does not exist or is not visible to the token; check its name (in commitea.yaml, or as given on the command line) and that the token's user can see it")
        } else {
            format!("repository {repo} does not exist or is private, and no Gitea token is set (Gitea answers a request without a token for a private repository as if it did not exist); {}", set_token_hint(repo))
        }
    )]
    NotFound {
        /// The server.
        server: String,
        /// The repository.
        repo: String,
        /// The request.
        request: String,
        /// Whether the request carried a token.
        token_sent: bool,
    },
    /// 404 from the server's router rather than from Gitea's API: no endpoint of this path on this server
    /// (a Gitea older than the endpoint).
    #[error(
        "{request}: {server} has no such endpoint (its router answered \"404 page not found\", not Gitea's API): its Gitea is older than this request needs, or a proxy in front of it answers for that path"
    )]
    NoRoute {
        /// The server.
        server: String,
        /// The request.
        request: String,
    },
    /// 404 on a dependencies endpoint: the repository has issue dependencies switched off.
    #[error(
        "{request}: issue dependencies are disabled on {repo} (repository settings → Issues → enable dependencies)"
    )]
    DependenciesDisabled {
        /// The repository.
        repo: String,
        /// The request.
        request: String,
    },
    /// 404 on `/times`: time tracking is switched off (in the repository or on the server).
    #[error("{request}: time tracking is disabled on {repo}")]
    TimeTrackingDisabled {
        /// The repository.
        repo: String,
        /// The request.
        request: String,
    },
    /// Another error status that retrying does not help.
    #[error("{request}: Gitea answered {status}: {message}; check the request for {repo}")]
    Status {
        /// The repository.
        repo: String,
        /// The request.
        request: String,
        /// The HTTP status.
        status: u16,
        /// Gitea's `message`, or the start of the body.
        message: String,
    },
    /// A retryable failure that did not go away.
    #[error(
        "{request} for {repo} failed {attempts} times over {elapsed_secs} s, last: {last}; check that the server is up and reachable, then run again (meanwhile a state repo that has a snapshot forecasts from it: `commitea run --offline`)"
    )]
    GaveUp {
        /// The repository.
        repo: String,
        /// The request.
        request: String,
        /// How many attempts were made.
        attempts: u32,
        /// Seconds spent in all.
        elapsed_secs: u64,
        /// The last failure.
        last: String,
    },
    /// The answer was not the JSON expected.
    #[error(
        "{request} for {repo}: the answer does not fit what CommiTea reads {reason}; if the server is Gitea (or \
         Forgejo), please report it with the server's version (GET /api/v1/version)"
    )]
    Decode {
        /// The repository.
        repo: String,
        /// The request.
        request: String,
        /// Where and what did not parse: `at [3].labels[0].id: invalid type: …`.
        reason: String,
    },
    /// An earlier request of this run exhausted its retries: the server is down, so this one was not sent.
    #[error(
        "{request} was not sent: the server stopped answering ({first}); check that it is up and reachable, then run again (meanwhile a state repo that has a snapshot forecasts from it: `commitea run --offline`)"
    )]
    ServerDown {
        /// The request not sent.
        request: String,
        /// The first request that gave up, and why.
        first: String,
    },
}

impl ClientError {
    /// The error with `secret` masked in every text a server or the transport supplied (a server may echo
    /// the request's `Authorization` header in its message).
    fn scrubbed(self, secret: Option<&Secret>) -> Self {
        let s = |t: String| scrub(&t, secret);
        match self {
            Self::InvalidUrl { url, reason } => Self::InvalidUrl {
                url: s(url),
                reason: s(reason),
            },
            Self::Setup { server, reason } => Self::Setup {
                server,
                reason: s(reason),
            },
            Self::Status {
                repo,
                request,
                status,
                message,
            } => Self::Status {
                repo,
                request,
                status,
                message: s(message),
            },
            Self::GaveUp {
                repo,
                request,
                attempts,
                elapsed_secs,
                last,
            } => Self::GaveUp {
                repo,
                request,
                attempts,
                elapsed_secs,
                last: s(last),
            },
            Self::Decode {
                repo,
                request,
                reason,
            } => Self::Decode {
                repo,
                request,
                reason: s(reason),
            },
            Self::ServerDown { request, first } => Self::ServerDown {
                request,
                first: s(first),
            },
            Self::NoTls {
                server,
                request,
                reason,
            } => Self::NoTls {
                server,
                request,
                reason: s(reason),
            },
            e @ (Self::Unauthorized { .. }
            | Self::NotApi { .. }
            | Self::Forbidden { .. }
            | Self::NotFound { .. }
            | Self::NoRoute { .. }
            | Self::DependenciesDisabled { .. }
            | Self::TimeTrackingDisabled { .. }) => e,
        }
    }
}

/// What to do when no token, or the wrong one, was sent: said once for every error that needs it.
fn set_token_hint(repo: &str) -> String {
    // Which variable the token came from: one set earlier in the order shadows a right one set later
    // (audit 120: a wrong COMMITEA_GITEA_TOKEN hid a right COMMITEA_TOKEN, and nothing said so).
    let sent = token_var().map_or_else(String::new, |(var, _)| {
        format!("the token sent was {var}'s, the first of them set; ")
    });
    format!(
        "{sent}set {} to an access token of this server that can read {repo} (in the shipped workflow: \
         the repository secret COMMITEA_TOKEN)",
        token_vars_said()
    )
}

/// How the client retries and waits.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Retries after the first attempt (5 by default).
    pub max_retries: u32,
    /// Time budget of one request including its retries and waits (60 s by default).
    pub max_retry_time: Duration,
    /// The first backoff; doubled on each retry (500 ms by default).
    pub initial_backoff: Duration,
    /// The cap on one backoff (20 s by default).
    pub max_backoff: Duration,
    /// The timeout of one attempt (30 s by default).
    pub request_timeout: Duration,
    /// The seed of the jitter (backoffs are deterministic for a seed).
    pub jitter_seed: u64,
    /// Requests in flight at once to begin with.
    pub parallel: usize,
    /// The most requests in flight at once while the server answers well.
    pub max_parallel: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            max_retries: 5,
            max_retry_time: Duration::from_secs(60),
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            request_timeout: Duration::from_secs(30),
            jitter_seed: 0x5eed,
            parallel: 4,
            max_parallel: 16,
        }
    }
}

/// How many requests may be in flight: additive increase while answers come back well, halved on an
/// overload sign (429, 5xx, a timeout, a dropped connection) — TCP's AIMD, so a sync speeds up on a
/// server that copes and backs off from one that does not.
#[derive(Debug)]
struct Throttle {
    state: Mutex<ThrottleState>,
    freed: Condvar,
    max: f64,
}

#[derive(Debug)]
struct ThrottleState {
    limit: f64,
    in_flight: usize,
    peak: usize,
}

impl Throttle {
    fn new(start: usize, max: usize) -> Self {
        let max = max.max(1) as f64;
        Self {
            state: Mutex::new(ThrottleState {
                limit: (start.max(1) as f64).min(max),
                in_flight: 0,
                peak: 0,
            }),
            freed: Condvar::new(),
            max,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ThrottleState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for a free slot.
    fn enter(&self) {
        let mut s = self.lock();
        while s.in_flight as f64 >= s.limit.floor() {
            s = self.freed.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        s.in_flight += 1;
        s.peak = s.peak.max(s.in_flight);
    }

    /// Frees the slot; `ok` says whether the answer was a good one.
    fn leave(&self, ok: bool) {
        let mut s = self.lock();
        s.in_flight = s.in_flight.saturating_sub(1);
        s.limit = if ok {
            (s.limit + 1.0 / s.limit).min(self.max)
        } else {
            (s.limit / 2.0).max(1.0)
        };
        drop(s);
        self.freed.notify_all();
    }
}

/// A successful answer's status and body.
#[derive(Debug)]
struct Answer {
    status: u16,
    body: Vec<u8>,
    /// `X-Total-Count`: how many items the whole listing has, when it is one.
    total: Option<u64>,
}

/// The answer to a write.
#[derive(Debug, Clone)]
pub struct Written {
    /// The HTTP status (2xx).
    pub status: u16,
    /// The body (empty for 204).
    pub body: Vec<u8>,
}

/// How to send one request.
struct Call<'a> {
    method: reqwest::Method,
    body: Option<&'a serde_json::Value>,
    idempotent: bool,
}

impl Call<'_> {
    const GET: Call<'static> = Call {
        method: reqwest::Method::GET,
        body: None,
        idempotent: true,
    };
}

/// One failed attempt: retry it or give up.
enum Attempt {
    Retry {
        reason: String,
        wait: Option<Duration>,
    },
    Fail(ClientError),
}

/// A server's root URL as given (`https://gitea.example.com/`, `…/api/v1`): without surrounding space, a
/// trailing slash or `/api/v1`.
pub fn server_root(server: &str) -> &str {
    let trimmed = server.trim().trim_end_matches('/');
    trimmed.strip_suffix("/api/v1").unwrap_or(trimmed)
}

/// The API root (`{server}/api/v1/`) of the Gitea at `server`, or why that URL cannot be one: not
/// http(s), not a URL, or carrying a user name, password, query or fragment. The server's URL is written
/// to `snapshot/meta.yaml`, the site's links and the logs, so a secret in it would be published (and
/// reqwest would send a password in place of the token). Checked as text before it is parsed, so a URL
/// that does not parse is not let through (audit 87). The reason never quotes the URL.
pub fn api_url(server: &str) -> Result<Url, String> {
    let trimmed = server_root(server);
    let authority = trimmed
        .split_once("://")
        .map_or(trimmed, |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    if authority.contains('@') {
        return Err(
            "it carries a user name or password, which would be written to the snapshot, the site and \
             the logs: give the server's URL without it, and the token in COMMITEA_GITEA_TOKEN"
                .into(),
        );
    }
    if trimmed.contains(['?', '#']) {
        return Err(
            "it has a query (?…) or a fragment (#…), which would be written to the snapshot, the site \
             and the logs: give the server's root alone, and the token in COMMITEA_GITEA_TOKEN"
                .into(),
        );
    }
    let api = Url::parse(&format!("{trimmed}/api/v1/")).map_err(|e| e.to_string())?;
    if !matches!(api.scheme(), "http" | "https") {
        return Err("the scheme must be http or https".into());
    }
    Ok(api)
}

/// `server` as it may be shown: what stands before an `@` of its authority, and any query or fragment,
/// as `***`.
pub fn shown_url(server: &str) -> String {
    let s = server.trim();
    let (scheme, rest) = s.split_once("://").map_or(("", s), |(a, b)| (a, b));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority.to_owned(), |(_, h)| format!("***@{h}"));
    let path = path.find(['?', '#']).map_or(path.to_owned(), |i| {
        format!("{}{}***", &path[..i], &path[i..=i])
    });
    if scheme.is_empty() {
        format!("{host}{path}")
    } else {
        format!("{scheme}://{host}{path}")
    }
}

/// A blocking Gitea API client. Cheap to share between threads.
pub struct Client {
    /// The server's root URL (no `/api/v1`), without a trailing slash.
    server: String,
    /// `{server}/api/v1/`.
    api: Url,
    token: Option<Secret>,
    http: reqwest::blocking::Client,
    options: ClientOptions,
    requests: AtomicU64,
    /// The page size asked for, and whether the server said it (`/settings/api`) or it is the fallback.
    page_size: OnceLock<(usize, bool)>,
    rng: Mutex<u64>,
    throttle: Throttle,
    /// Set by the first request that exhausts its retries; every later request fails at once.
    down: OnceLock<String>,
    /// The server's clock (`Date` header) at its first answer.
    first_server_time: OnceLock<DateTime<Utc>>,
    /// Repositories the server answered under another name (`owner/repo` asked → answered), through a
    /// redirect it followed: renamed or transferred.
    redirected: Mutex<BTreeMap<String, String>>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server)
            .field("token", &self.token)
            .field("options", &self.options)
            .field("requests", &self.request_count())
            .field("page_size", &self.page_size.get().map(|p| p.0))
            .field("peak_parallel", &self.peak_parallel())
            .finish_non_exhaustive()
    }
}

/// A path's segments (`repos/o/r/issues/12` → `["repos", "o", "r", "issues", "12"]`).
fn segments(path: &str) -> Vec<&str> {
    path.trim_start_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect()
}

/// The issue a path reads a part of (`repos/o/r/issues/12/timeline` → `repos/o/r/issues/12`), if it does.
fn issue_of_part(path: &str) -> Option<String> {
    match segments(path).as_slice() {
        ["repos", owner, name, "issues", n, _part, ..] if n.parse::<u64>().is_ok() => {
            Some(format!("repos/{owner}/{name}/issues/{n}"))
        }
        _ => None,
    }
}

/// The repository a path is about (`repos/OWNER/REPO/…`), for error messages.
fn repo_of(path: &str) -> String {
    match segments(path).as_slice() {
        ["repos", owner, name, ..] => format!("{owner}/{name}"),
        _ => "the repositories".to_owned(),
    }
}

/// Gitea's error `message` with its `errors` after it, else the start of the body.
///
/// Gitea's `APIErrorNotFound("IsErrIssueNotExist", err)` puts a string argument in `message` and an
/// error in `errors`: the words that say what happened ("issue does not exist") may be in either.
fn error_message(body: &[u8], secret: Option<&Secret>) -> String {
    let text = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            // Some handlers answer a bare JSON string (`"CrossRepositoryDependencies not enabled"`).
            if let Some(said) = v.as_str() {
                return Some(said.to_owned());
            }
            let message = v.get("message").and_then(|m| m.as_str())?.to_owned();
            let errors: Vec<&str> = v
                .get("errors")
                .and_then(|e| e.as_array())
                .map(|e| e.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            Some(if errors.is_empty() {
                message
            } else {
                format!("{message}: {}", errors.join("; "))
            })
        })
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    // Masked before it is cut: a token cut in two no longer matches, and its first part would be shown.
    let mut s: String = scrub(&text, secret).chars().take(200).collect();
    if s.is_empty() {
        s.push_str("(empty body)");
    }
    s
}

/// Whether a 404's text says the issue it was about does not exist (Gitea's `ErrIssueNotExist`).
fn names_a_missing_issue(message: &str) -> bool {
    message.contains("IsErrIssueNotExist") || message.contains("issue does not exist")
}

/// A reqwest error with its causes, one line.
fn describe(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

/// Whether a transport failure is a TLS handshake that met no TLS server: rustls reads a plain-HTTP answer
/// as a corrupt record (`InvalidContentType`), and a server that hangs up on the hello as `tls handshake eof`.
fn tls_mismatch(reason: &str) -> bool {
    reason.contains("InvalidContentType")
        || reason.contains("tls handshake eof")
        || reason.contains("corrupt message")
}

/// Whether a request gave up on HTTP 500 answers (the server is up but failed this request).
pub(crate) fn last_failure_is_500(e: &ClientError) -> bool {
    matches!(e, ClientError::GaveUp { last, .. } if last.starts_with("500 "))
}

/// The server's clock from its `Date` header (RFC 7231's IMF-fixdate, second resolution).
fn server_date(headers: &HeaderMap) -> Option<DateTime<Utc>> {
    let v = headers.get(DATE)?.to_str().ok()?;
    chrono::DateTime::parse_from_rfc2822(v.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let delta = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

impl Client {
    /// A client for the Gitea at `server` (its root URL, e.g. `https://gitea.example.com`), sending `token`.
    pub fn new(
        server: &str,
        token: Option<String>,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        // reqwest is built without a default crypto provider: install ring once (an error means another
        // provider is already installed, which is fine).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let trimmed = server_root(server);
        let api = api_url(server).map_err(|reason| ClientError::InvalidUrl {
            url: shown_url(server),
            reason,
        })?;
        let http = reqwest::blocking::Client::builder()
            .timeout(options.request_timeout)
            .connect_timeout(options.request_timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("commitea/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ClientError::Setup {
                server: trimmed.to_owned(),
                reason: describe(&e),
            })?;
        Ok(Self {
            server: trimmed.to_owned(),
            api,
            token: token.as_deref().and_then(Secret::new),
            http,
            rng: Mutex::new(options.jitter_seed),
            throttle: Throttle::new(options.parallel, options.max_parallel),
            options,
            requests: AtomicU64::new(0),
            page_size: OnceLock::new(),
            down: OnceLock::new(),
            first_server_time: OnceLock::new(),
            redirected: Mutex::new(BTreeMap::new()),
        })
    }

    /// The server's root URL, as written to `snapshot/meta.yaml`.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Whether requests carry a token (nothing can be written without one).
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// The retry settings.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// How many HTTP requests were sent (retries included).
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The most requests that were in flight at once.
    pub fn peak_parallel(&self) -> usize {
        self.throttle.lock().peak
    }

    /// The server's clock at its first answer (its `Date` header), if it sent one: what an incremental
    /// sync's cursor is measured against, so that a client clock ahead of the server's loses nothing.
    pub(crate) fn first_server_time(&self) -> Option<DateTime<Utc>> {
        self.first_server_time.get().copied()
    }

    /// The repositories the server answered under another name, through a redirect (`owner/repo` asked,
    /// `owner/repo` answered): Gitea's answer for a renamed or transferred one, whatever the request.
    pub(crate) fn redirected_repositories(&self) -> BTreeMap<String, String> {
        self.redirected
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// GETs `path` (relative to `/api/v1`, e.g. `repos/acme/api/labels`) with `query` and decodes the JSON.
    pub fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T, ClientError> {
        self.get_counted(path, query).map(|(v, _)| v)
    }

    /// [`Self::get_json`] with the answer's `X-Total-Count`, when it has one (a page of a listing).
    fn get_counted<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<(T, Option<u64>), ClientError> {
        let (url, request) = self.url(path, query)?;
        let answer = self.with_retries(path, &url, &request, &Call::GET)?;
        Ok((self.decode(path, request, &answer.body)?, answer.total))
    }

    /// An answer's JSON; a web page (a login page, a proxy's) is said to be one.
    fn decode<T: DeserializeOwned>(
        &self,
        path: &str,
        request: String,
        body: &[u8],
    ) -> Result<T, ClientError> {
        wire::decode(body).map_err(|e| {
            if body.trim_ascii_start().starts_with(b"<") {
                ClientError::NotApi {
                    server: self.server.clone(),
                    request,
                }
            } else {
                ClientError::Decode {
                    repo: repo_of(path),
                    request,
                    reason: scrub(&e.to_string(), self.token.as_ref()),
                }
            }
        })
    }

    /// Gitea's `max_response_items`, read once from `/settings/api` (50 when that fails).
    pub(crate) fn page_size(&self) -> usize {
        self.page_size_read().0
    }

    /// Whether the server said its page size: a short page is then its last unless `X-Total-Count` says
    /// more; with the fallback, a server capping pages lower sends short pages all along.
    fn page_size_known(&self) -> bool {
        self.page_size_read().1
    }

    fn page_size_read(&self) -> (usize, bool) {
        let fallback = (DEFAULT_MAX_RESPONSE_ITEMS, false);
        *self.page_size.get_or_init(|| {
            match self.get_json::<wire::GSettings>("settings/api", &[]) {
                Ok(s) if s.max_response_items > 0 => (s.max_response_items, true),
                Ok(_) => fallback,
                // The next request meets the same token, server or URL, and says it: once is enough.
                Err(
                    e @ (ClientError::Unauthorized { .. }
                    | ClientError::Forbidden { .. }
                    | ClientError::GaveUp { .. }
                    | ClientError::ServerDown { .. }
                    | ClientError::NoTls { .. }
                    | ClientError::NotApi { .. }
                    | ClientError::InvalidUrl { .. }),
                ) => {
                    tracing::debug!(
                        "cannot read the page size, using {DEFAULT_MAX_RESPONSE_ITEMS}: {e}"
                    );
                    fallback
                }
                // Its own words: a 404's are a repository's ("repository the repositories does not
                // exist", an audit read).
                Err(ClientError::NotFound { server, .. }) => {
                    tracing::warn!(
                        "cannot read the page size: {server}/api/v1/settings/api answers 404 (a proxy in \
                         front of Gitea, or a server that is not Gitea); asking for \
                         {DEFAULT_MAX_RESPONSE_ITEMS} a page, and reading each list to an empty page"
                    );
                    fallback
                }
                Err(e) => {
                    tracing::warn!(
                        "cannot read the page size, using {DEFAULT_MAX_RESPONSE_ITEMS}: {e}"
                    );
                    fallback
                }
            }
        })
    }

    /// Whether a page of `sent` items, of `limit` asked for, ends its list, `seen` items read in all and
    /// `total` its `X-Total-Count`: an empty page does; a short one does once `total` items came, or,
    /// without a total, where the server said its page size. Gitea drops a row deleted between its count
    /// and its read (`GetIssuesByIDs`), and a server capping pages below the size asked for sends short
    /// pages all along: an audit's sync kept 90 of 320 issues so, and again behind a proxy that stripped
    /// the header.
    fn ends_list(&self, sent: usize, limit: usize, seen: u64, total: Option<u64>) -> bool {
        sent == 0
            || (sent < limit
                && match total {
                    Some(t) => seen >= t,
                    None => self.page_size_known(),
                })
    }

    /// Every item of a paged listing: asks for the largest pages and stops at an empty page, or a short one
    /// once `X-Total-Count` items came.
    pub(crate) fn get_paged<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Vec<T>, ClientError> {
        self.pages(path, query, false)
    }

    /// Page `page` (from 1) of a listing, and whether it is the last: for a reader that stops as soon as
    /// it has what it looks for.
    pub(crate) fn get_page<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
        page: usize,
    ) -> Result<(Vec<T>, bool), ClientError> {
        let limit = self.page_size();
        let (items, total) = self.one_page::<T>(path, query, limit, page)?;
        // The pages before were as full as this one, or fuller: an estimate that can only ask once more.
        let seen = (items.sent * page) as u64;
        Ok((items.items, self.ends_list(items.sent, limit, seen, total)))
    }

    /// Page `page` of `limit` items of a listing, with its `X-Total-Count`. Gitea writes an empty page as
    /// `null` where its handler builds the list as a nil slice.
    fn one_page<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
        limit: usize,
        page: usize,
    ) -> Result<(Page<T>, Option<u64>), ClientError> {
        let mut q: Vec<(&str, String)> = query.to_vec();
        q.push(("limit", limit.to_string()));
        q.push(("page", page.to_string()));
        self.get_counted::<Page<T>>(path, &q)
    }

    /// Every item of a listing whose pages can come back short before the end (the timeline): pages until
    /// an empty one.
    pub(crate) fn get_until_empty<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Vec<T>, ClientError> {
        self.pages(path, query, true)
    }

    fn pages<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
        until_empty: bool,
    ) -> Result<Vec<T>, ClientError> {
        self.pages_counted(path, query, until_empty)
            .map(|(items, _)| items)
    }

    /// [`Self::pages`], and whether the listing stood still while it was read: every page said the same
    /// `X-Total-Count` (or none did).
    fn pages_counted<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
        until_empty: bool,
    ) -> Result<(Vec<T>, bool), ClientError> {
        let limit = self.page_size();
        let mut out = Vec::new();
        let mut totals = BTreeSet::new();
        let mut sent = 0u64;
        for page in 1.. {
            let (page, total) = self.one_page::<T>(path, query, limit, page)?;
            totals.insert(total);
            let n = page.sent;
            sent += n as u64;
            out.extend(page.items);
            if n == 0 || (!until_empty && self.ends_list(n, limit, sent, total)) {
                break;
            }
        }
        Ok((out, totals.len() <= 1))
    }

    /// Every item of a listing that may change while it is read (a repository's issues), read again while
    /// it moved: Gitea pages by offset, so an issue deleted on an earlier page moves the next page's first
    /// item onto the page already read, and a read that does not notice never sees it. A listing moved when
    /// its pages disagree on `X-Total-Count`. Up to [`LISTING_READS`] reads; the first that stood still is
    /// the answer, else the union of them all, said in a warning (the caller may see an item twice).
    pub(crate) fn get_listing<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Vec<T>, ClientError> {
        let mut all = Vec::new();
        for _ in 0..LISTING_READS {
            let (items, still) = self.pages_counted(path, query, false)?;
            if still {
                return Ok(items);
            }
            all.extend(items);
            tracing::info!("{path}: the listing changed while it was read; reading it again");
        }
        tracing::warn!(
            "{path}: the listing kept changing while it was read ({LISTING_READS} times); what every read \
             listed is kept, and an item still missing is read by the next sync"
        );
        Ok(all)
    }

    fn url(&self, path: &str, query: &[(&str, String)]) -> Result<(Url, String), ClientError> {
        let mut url =
            self.api
                .join(path.trim_start_matches('/'))
                .map_err(|e| ClientError::InvalidUrl {
                    url: format!("{}{path}", self.api),
                    reason: e.to_string(),
                })?;
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in query {
                pairs.append_pair(k, v);
            }
        }
        let request = match url.query() {
            Some(q) => format!("GET {}?{q}", url.path()),
            None => format!("GET {}", url.path()),
        };
        Ok((url, request))
    }

    /// Sends `method` to `path` (relative to `/api/v1`) with a JSON `body`: the apply stage's and the
    /// proposal's writes. `idempotent` says whether the request may be sent twice: a request that may
    /// not (creating an issue) is retried only on answers that say it was not processed (429, 502, 503),
    /// never after a timeout or a dropped connection. Returns the status and the answer's body (empty
    /// for a 204).
    pub fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&serde_json::Value>,
        idempotent: bool,
    ) -> Result<Written, ClientError> {
        let (url, request) = self.url(path, &[])?;
        let request = request.replacen("GET", method.as_str(), 1);
        let call = Call {
            method,
            body,
            idempotent,
        };
        let answer = self.with_retries(path, &url, &request, &call)?;
        Ok(Written {
            status: answer.status,
            body: answer.body,
        })
    }

    /// [`Client::send`] and the answer decoded.
    pub fn send_json<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&serde_json::Value>,
        idempotent: bool,
    ) -> Result<T, ClientError> {
        let written = self.send(method.clone(), path, body, idempotent)?;
        self.decode(path, format!("{method} {path}"), &written.body)
    }

    /// The next backoff for retry number `retry` (0-based): `initial * 2^retry`, capped, times a jitter
    /// factor in [0.5, 1).
    fn backoff(&self, retry: u32) -> Duration {
        let base = self
            .options
            .initial_backoff
            .saturating_mul(1u32 << retry.min(20))
            .min(self.options.max_backoff);
        let r = {
            let mut s = self.rng.lock().unwrap_or_else(PoisonError::into_inner);
            // splitmix64
            *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let factor = 0.5 + (r >> 11) as f64 / (1u64 << 53) as f64 / 2.0;
        base.mul_f64(factor)
    }

    fn with_retries(
        &self,
        path: &str,
        url: &Url,
        request: &str,
        call: &Call<'_>,
    ) -> Result<Answer, ClientError> {
        let started = Instant::now();
        let mut attempts = 0u32;
        loop {
            self.check_up(request)?;
            attempts += 1;
            self.throttle.enter();
            let result = self.attempt(path, url, request, call);
            self.throttle
                .leave(!matches!(result, Err(Attempt::Retry { .. })));
            let (last, wait) = match result {
                Ok(a) => return Ok(a),
                Err(Attempt::Fail(e)) => return Err(e.scrubbed(self.token.as_ref())),
                Err(Attempt::Retry { reason, wait }) => (scrub(&reason, self.token.as_ref()), wait),
            };
            // Gitea answers 500 for the timeline or comments of an issue deleted a moment ago: asked once,
            // the issue itself says so (404), and the retries that would follow are spared (about 9 s per
            // issue deleted during a sync).
            let gone = attempts == 1
                && call.method == reqwest::Method::GET
                && last.starts_with("500 ")
                && issue_of_part(path).is_some_and(|issue| self.issue_is_gone(&issue));
            let wait = wait.unwrap_or_else(|| self.backoff(attempts - 1));
            let over_budget = started.elapsed() + wait > self.options.max_retry_time;
            if gone || attempts > self.options.max_retries || over_budget {
                let e = ClientError::GaveUp {
                    repo: repo_of(path),
                    request: request.to_owned(),
                    attempts,
                    elapsed_secs: started.elapsed().as_secs(),
                    last,
                };
                // Every other request now fails at once instead of spending its own retries — unless the
                // server did answer, with a 500: Gitea's answer to some bad requests (the timeline of an
                // issue deleted a moment ago), not a sign that it is down.
                let answered_500 = last_failure_is_500(&e);
                if !answered_500 {
                    let _ = self.down.set(format!(
                        "{request} failed {attempts} times, last: {}",
                        match &e {
                            ClientError::GaveUp { last, .. } => last.as_str(),
                            _ => "",
                        }
                    ));
                }
                return Err(e);
            }
            tracing::debug!("{request}: {last}; retrying in {wait:?}");
            // Sleep in short steps so a server found down by another request stops this one promptly.
            let until = Instant::now() + wait;
            while Instant::now() < until {
                self.check_up(request)?;
                std::thread::sleep((until - Instant::now()).min(Duration::from_millis(250)));
            }
        }
    }

    /// Whether GET `issue` answers 404 now (one attempt, no retries).
    fn issue_is_gone(&self, issue: &str) -> bool {
        let Ok((url, request)) = self.url(issue, &[]) else {
            return false;
        };
        matches!(
            self.attempt(issue, &url, &request, &Call::GET),
            Err(Attempt::Fail(ClientError::NotFound { .. }))
        )
    }

    /// Fails at once when an earlier request found the server down.
    fn check_up(&self, request: &str) -> Result<(), ClientError> {
        match self.down.get() {
            Some(first) => Err(ClientError::ServerDown {
                request: request.to_owned(),
                first: first.clone(),
            }),
            None => Ok(()),
        }
    }

    fn attempt(
        &self,
        path: &str,
        url: &Url,
        request: &str,
        call: &Call<'_>,
    ) -> Result<Answer, Attempt> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut req = self
            .http
            .request(call.method.clone(), url.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(body) = call.body {
            req = req.json(body);
        }
        if let Some(t) = &self.token {
            let mut value =
                reqwest::header::HeaderValue::from_str(&format!("token {}", t.expose())).map_err(
                    |_| {
                        Attempt::Fail(ClientError::Unauthorized {
                            server: self.server.clone(),
                            repo: repo_of(path),
                            request: request.to_owned(),
                            token_sent: true,
                        })
                    },
                )?;
            value.set_sensitive(true);
            req = req.header(AUTHORIZATION, value);
        }
        let resp = match req.send() {
            Ok(r) => r,
            Err(e) if e.is_builder() => {
                return Err(Attempt::Fail(ClientError::InvalidUrl {
                    url: url.to_string(),
                    reason: describe(&e),
                }));
            }
            // A handshake a plain-HTTP server cannot answer fails the same way every time: not retried.
            Err(e) if url.scheme() == "https" && tls_mismatch(&describe(&e)) => {
                return Err(Attempt::Fail(ClientError::NoTls {
                    server: self.server.clone(),
                    request: request.to_owned(),
                    reason: describe(&e),
                }));
            }
            // A write that may not be sent twice is not retried when it may have been processed.
            Err(e) if !call.idempotent => {
                return Err(Attempt::Fail(ClientError::GaveUp {
                    repo: repo_of(path),
                    request: request.to_owned(),
                    attempts: 1,
                    elapsed_secs: 0,
                    last: format!("{} (not retried: it may have been done)", describe(&e)),
                }));
            }
            Err(e) => {
                return Err(Attempt::Retry {
                    reason: describe(&e),
                    wait: None,
                });
            }
        };
        // A redirect to another repository's path: the one asked for is renamed or transferred.
        if resp.url().path() != url.path() {
            let repo = |u: &Url| match segments(u.path().strip_prefix(self.api.path())?).as_slice()
            {
                ["repos", owner, name, ..] => Some(format!("{owner}/{name}")),
                _ => None,
            };
            if let (Some(asked), Some(answered)) = (repo(url), repo(resp.url()))
                && asked != answered
                && let Ok(mut r) = self.redirected.lock()
            {
                r.insert(asked, answered);
            }
        }
        let status = resp.status();
        let wait = retry_after(resp.headers());
        let total = resp
            .headers()
            .get("x-total-count")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        if let Some(t) = server_date(resp.headers()) {
            let _ = self.first_server_time.set(t);
        }
        let body = match resp.bytes() {
            Ok(b) => b.to_vec(),
            Err(e) => {
                return Err(Attempt::Retry {
                    reason: format!("reading the answer: {}", describe(&e)),
                    wait: None,
                });
            }
        };
        let repo = repo_of(path);
        let request = request.to_owned();
        if status.is_success() {
            return Ok(Answer {
                status: status.as_u16(),
                body,
                total,
            });
        }
        let processed_maybe = !matches!(
            status,
            StatusCode::TOO_MANY_REQUESTS
                | StatusCode::BAD_GATEWAY
                | StatusCode::SERVICE_UNAVAILABLE
        );
        if !call.idempotent && status.is_server_error() && processed_maybe {
            return Err(Attempt::Fail(ClientError::Status {
                repo,
                request,
                status: status.as_u16(),
                message: error_message(&body, self.token.as_ref()),
            }));
        }
        if call.method != reqwest::Method::GET && status == StatusCode::FORBIDDEN {
            // Pull requests, branches and files are the repository's scope; issues, labels and
            // milestones the issues' (audit 147: a refused pull request was told to need write:issue).
            let repository = ["/pulls", "/branches", "/contents", "/git/"]
                .iter()
                .any(|p| path.contains(p));
            // Gitea names a missing scope ("token does not have at least one of required scope(s)"); any
            // other refusal is the user's rights, which no scope gives (audit 192: "write permission is
            // required" was told to add write:issue, which the token had); a bare 403 may be either.
            let said = error_message(&body, self.token.as_ref());
            let bare = body.iter().all(u8::is_ascii_whitespace);
            let scope = said.contains("scope");
            let (what, scope_name) = if repository {
                ("the repository", "write:repository")
            } else {
                ("its issues", "write:issue")
            };
            let advice = if scope || bare {
                format!(
                    "the token may not change {repo}: it needs write access to {what} (scope \
                     {scope_name}{})",
                    if bare {
                        ", and a user who may write there"
                    } else {
                        ""
                    }
                )
            } else {
                format!(
                    "the token's user may not change {what} of {repo}: give the user write access to {repo} \
                     (a collaborator or team with Write); the token's scopes are not the cause"
                )
            };
            return Err(Attempt::Fail(ClientError::Status {
                // `DeleteIssueLabel` and `EditIssue` answer a bare 403: the advice is all there is to say.
                message: if bare {
                    advice
                } else {
                    format!("{said}; {advice}")
                },
                repo,
                request,
                status: 403,
            }));
        }
        Err(match status {
            StatusCode::TOO_MANY_REQUESTS => Attempt::Retry {
                reason: format!(
                    "429 Too Many Requests: {}",
                    error_message(&body, self.token.as_ref())
                ),
                wait: Some(wait.unwrap_or_else(|| self.backoff(0))),
            },
            s if s.is_server_error() => Attempt::Retry {
                reason: format!("{s}: {}", error_message(&body, self.token.as_ref())),
                wait: None,
            },
            StatusCode::UNAUTHORIZED => Attempt::Fail(ClientError::Unauthorized {
                server: self.server.clone(),
                repo,
                request,
                token_sent: self.token.is_some(),
            }),
            StatusCode::FORBIDDEN => Attempt::Fail(ClientError::Forbidden {
                server: self.server.clone(),
                repo,
                request,
                token_sent: self.token.is_some(),
                said: if body.trim_ascii().is_empty() {
                    String::new()
                } else {
                    error_message(&body, self.token.as_ref())
                },
            }),
            // Gitea answers a bare 404 when the repository has dependencies switched off, and 404
            // "IsErrIssueNotExist" with "issue does not exist" in `errors` when the issue is gone
            // (routers/api/v1/repo/issue_dependency.go; Forgejo the same).
            StatusCode::NOT_FOUND
                if (path.ends_with("/dependencies") || path.ends_with("/blocks"))
                    && !names_a_missing_issue(&error_message(&body, self.token.as_ref())) =>
            {
                Attempt::Fail(ClientError::DependenciesDisabled { repo, request })
            }
            // routers/api/v1/repo/issue_tracked_time.go: time tracking off for the repository or the server.
            StatusCode::NOT_FOUND
                if path.ends_with("/times")
                    && error_message(&body, self.token.as_ref())
                        .to_lowercase()
                        .contains("timetracker is disabled") =>
            {
                Attempt::Fail(ClientError::TimeTrackingDisabled { repo, request })
            }
            // Go's `http.NotFound`, what chi answers a path no route matches (Gitea's own 404s are JSON).
            StatusCode::NOT_FOUND if body.trim_ascii() == b"404 page not found" => {
                Attempt::Fail(ClientError::NoRoute {
                    server: self.server.clone(),
                    request,
                })
            }
            StatusCode::NOT_FOUND => Attempt::Fail(ClientError::NotFound {
                server: self.server.clone(),
                repo,
                request,
                token_sent: self.token.is_some(),
            }),
            s => Attempt::Fail(ClientError::Status {
                repo,
                request,
                status: s.as_u16(),
                message: error_message(&body, self.token.as_ref()),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_server_url_is_shown_without_what_could_be_a_secret() {
        for (given, shown) in [
            (
                "http://user:tok@127.0.0.1:999999",
                "http://***@127.0.0.1:999999",
            ),
            ("https://tok@[::1", "https://***@[::1"),
            (
                "https://g.example/?access_token=tok",
                "https://g.example/?***",
            ),
            ("https://g.example/sub#tok", "https://g.example/sub#***"),
            ("https://g.example/gitea", "https://g.example/gitea"),
        ] {
            assert_eq!(super::shown_url(given), shown);
        }
        assert!(super::api_url("https://g.example/gitea/").is_ok());
        assert!(
            super::api_url("http://user:tok@127.0.0.1:999999")
                .unwrap_err()
                .contains("user name or password")
        );
    }

    use super::*;

    #[test]
    fn a_server_url_with_a_password_is_refused_without_showing_it() {
        for url in [
            "https://alice:PASSWORD-SECRET@git.example.com",
            "https://PASSWORD-SECRET@git.example.com/",
        ] {
            let e = Client::new(url, None, ClientOptions::default()).unwrap_err();
            let said = e.to_string();
            assert!(matches!(e, ClientError::InvalidUrl { .. }), "{said}");
            assert!(
                !said.contains("PASSWORD-SECRET") && !said.contains("alice"),
                "{said}"
            );
            assert!(
                said.contains("https://***@git.example.com") && said.contains("GITEA_TOKEN"),
                "{said}"
            );
        }
        assert!(Client::new("https://git.example.com", None, ClientOptions::default()).is_ok());
    }

    #[test]
    fn debug_hides_the_token() {
        let c = Client::new(
            "http://127.0.0.1:1/",
            Some("s3cret-t0ken".into()),
            ClientOptions::default(),
        )
        .unwrap();
        let d = format!("{c:?}");
        assert!(!d.contains("s3cret-t0ken"), "{d}");
        assert!(d.contains("***"), "{d}");
        assert_eq!(c.server(), "http://127.0.0.1:1");
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter() {
        let c = Client::new("http://127.0.0.1:1", None, ClientOptions::default()).unwrap();
        for retry in 0..4 {
            let b = c.backoff(retry);
            let full = Duration::from_millis(500) * (1 << retry);
            assert!(b >= full / 2 && b < full, "{retry}: {b:?}");
        }
        assert!(c.backoff(30) <= Duration::from_secs(20));
    }

    #[test]
    fn repo_is_named_from_the_path() {
        assert_eq!(repo_of("repos/acme/api/issues/3/timeline"), "acme/api");
        assert_eq!(repo_of("settings/api"), "the repositories");
    }
}
