//! A Gitea 1.27 API emulator on loopback, for the sync and apply tests (and for trying the client by hand).
//!
//! [`Emulator::start`] serves a [`Dataset`] (built from a CommiTea snapshot with [`Dataset::from_snapshot`])
//! on `127.0.0.1` at a free port, one thread per connection, answering every request with
//! `Connection: close`. Responses follow the JSON shapes of Gitea's OpenAPI spec and its pagination
//! behaviour:
//!
//! - `page` is 1-based (0 or less means 1); `limit` 0 or less means `default_paging_num` (30), and is capped at
//!   `max_response_items` (50 by default). List endpoints send `X-Total-Count` and a `Link` header with
//!   `rel="next"`/`rel="last"` when there is a next page and `rel="first"`/`rel="prev"` after the first page.
//! - The issues and pulls listings are sorted as Gitea sorts by default: newest created first, ties by
//!   descending id (number). `state` defaults to `open`; `type` is `issues`, `pulls` or absent (both, pulls
//!   carrying `pull_request`); `since`/`before` filter on `updated_at`, both inclusive, at second resolution
//!   (Gitea compares Unix seconds with `>=` and `<=`).
//! - Labels are sorted by name, milestones by due date (none last) then id, comments and timelines by time
//!   then id.
//! - The timeline (`/issues/{n}/timeline`) sends no `Link`, its `X-Total-Count` is the page's length, and
//!   Gitea filters entries after paging, so pages come back short before the end: the stored timeline
//!   holds a hidden entry after every third visible one. A client must page until it gets an empty page
//!   (`null`). A deleted tracked time ([`Dataset::delete_tracked_time`]) keeps its add entry and shows a
//!   `delete_time_manual` one (`|<seconds>`).
//! - Permissions are per unit, as Gitea's: `permissions.push` is the Code unit's, while `/times` lists
//!   everyone's entries only to an Issues writer ([`EmulatorOptions::issues_read_only`]); a repository with
//!   its Issues unit off ([`EmulatorOptions::issues_disabled`]) answers its issue list with `type=issues`
//!   404 and without a type lists pull requests only.
//! - `/dependencies` and `/blocks` page by hand like Gitea (no headers) and answer 404 when the repository
//!   has issue dependencies disabled.
//! - Errors are Gitea's `{"message": …, "url": …}`; unknown paths are 404 JSON.
//!
//! - Writes follow Gitea's handlers, quirks included: labels (created, added, replaced, removed, exclusive
//!   scopes), issues (created, edited; closing one with an open dependency is 412), dependencies (201 both
//!   ways, the event written in both issues, 500 on a repeat) and milestones (an edit without `due_on`, or with null, keeps it).
//! - State repositories ([`EmulatorOptions::state_repos`]) are backed by a bare git repository: their pull
//!   requests ([`StatePull`]) are opened on its branches and merged into it with a real merge commit.
//!
//! Tests read request counts ([`Emulator::request_count`], [`Emulator::count`], [`Emulator::writes`]) and
//! inject faults at run time ([`Emulator::inject`]): 5xx answers, slow answers, 429 with `Retry-After`, dropped
//! connections, and a page shift (an issue created right after a page is served).

mod dataset;
pub(crate) mod http;
mod pulls;
mod routes;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

pub use dataset::{Dataset, FUTURE_FIELD, Pull};
pub use pulls::{MergeStyle, StatePull};

use commitea::domain::{IssueKey, OpenState, RepoName};

/// Why the emulator could not start.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    /// The loopback socket could not be bound.
    #[error("Gitea emulator: cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    /// The accept thread could not be started.
    #[error("Gitea emulator: cannot start the accept thread: {0}")]
    Spawn(std::io::Error),
}

/// How the emulated server behaves.
#[derive(Debug, Clone)]
pub struct EmulatorOptions {
    /// The one accepted token (`Authorization: token X` or `Authorization: Bearer X`).
    pub token: String,
    /// The login of the token's user (`GET /user`, and the actor of changes made through the API).
    pub user: String,
    /// Gitea's `MAX_RESPONSE_ITEMS`: the cap on `limit`.
    pub max_response_items: usize,
    /// Gitea's `DEFAULT_PAGING_NUM`: the page size when `limit` is absent.
    pub default_paging_num: usize,
    /// Repositories with issue dependencies disabled (their dependency endpoints answer 404).
    pub dependencies_disabled: BTreeSet<RepoName>,
    /// Repositories with time tracking disabled (`/times` answers 404 "timetracker is disabled").
    pub time_tracking_disabled: BTreeSet<RepoName>,
    /// Repositories with the pull requests unit switched off (`has_pull_requests: false`; their pull
    /// request list answers 404, as `mustAllowPulls` does).
    pub pulls_disabled: BTreeSet<RepoName>,
    /// The token's user may only read the repositories: their `permissions` say so, and `/times` lists
    /// only that user's own entries (issue_tracked_time.go `cantSetUser`), a new issue is filed
    /// without its labels and milestone (`CreateIssue`), and the issue writes are refused as for
    /// [`Self::issues_read_only`]; a milestone's edit too (`reqRepoWriter`: 403).
    pub read_only: bool,
    /// The token's user may write the code but only read the issues (a team with per-unit permissions):
    /// `permissions.push` is true, as `innerToRepo` takes it from the Code unit, yet `/times` lists only
    /// that user's own entries, as `ListTrackedTimes` asks for write access to the Issues unit
    /// (`IsUserRepoWriter([TypeIssues])`), and a new issue is filed without its labels and milestone
    /// (`CreateIssue` asks `CanWrite(TypeIssues)`). Labels are refused (`prepareForReplaceOrAdd`: 403
    /// "write permission is required"; `DeleteIssueLabel`: a bare 403), a dependency's target is "not
    /// found" (404), and `PATCH /issues/{n}` is a bare 403 on someone else's issue, while on the user's own
    /// it changes the title, body and state and leaves the milestone, answering 201 (`EditIssue`). A
    /// milestone's edit passes (`reqRepoWriter` takes a pull-request writer: the code's writer is one here).
    pub issues_read_only: bool,
    /// The token was made with read scopes only (`read:issue`, `read:repository`): every write to a
    /// repository answers 403 before any handler runs, as `tokenRequiresScopes` does, naming the scope
    /// it needed (`write:issue` for issues, labels and milestones, `write:repository` for the rest).
    pub read_scoped_token: bool,
    /// A proxy in front of the server drops the list headers (`X-Total-Count`, `Link`) from every answer.
    pub strip_list_headers: bool,
    /// Repositories with the Issues unit switched off (`has_issues: false`): the issue list with
    /// `type=issues` answers 404 and without a type lists pull requests only (`ListIssues`), and an
    /// issue's own endpoints answer 404.
    pub issues_disabled: BTreeSet<RepoName>,
    /// The version `GET /version` reports. A Gitea older than 1.27 (`1.20.6`, `1.21.11`) answers as it
    /// did where CommiTea depends on it ([`EmulatorOptions::gitea_before`]).
    pub version: String,
    /// Add a field Gitea 1.27 does not send to every object, as a newer Gitea does.
    pub future_fields: bool,
    /// How long the server takes to answer each request (a server across an ocean).
    pub latency: Duration,
    /// State repositories: their git data is the bare repository at the path (branches are its
    /// `refs/heads/*`), their pull requests are kept by the emulator and merged for real. Each is added to the
    /// dataset when the emulator starts.
    pub state_repos: BTreeMap<RepoName, PathBuf>,
    /// What a request without a token is answered.
    pub anonymous: Anonymous,
    /// The server's zone (Gitea's `DefaultUILocation`): every time is written in it, and a milestone's due
    /// date is the end of its day there, as Gitea stores a deadline set in its web UI.
    pub zone: chrono::FixedOffset,
}

/// What Gitea answers a request that carries no token (`routers/api/v1/api.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Anonymous {
    /// The repositories are private: their endpoints answer 404 as if they did not exist
    /// (`repoAssignment`), `/version` and `/settings/api` answer, `/user` answers 401 "token is required".
    #[default]
    Private,
    /// The repositories are public: reads answer, while writes, tracked times and `/user` answer 401
    /// "token is required" (`reqToken`).
    Public,
    /// `REQUIRE_SIGNIN_VIEW`: every API request answers 403 "Only signed in user is allowed to call APIs.".
    SignInRequired,
}

impl EmulatorOptions {
    /// Whether the server is a Forgejo: its versions do not start with `1.` (`11.0.1+gitea-1.22.0`). It
    /// answers as Forgejo's handlers do where CommiTea meets a difference (audit 107, read in Forgejo's
    /// `routers/api/v1/repo/issue_comment.go` and `services/convert/issue.go`): no `time_estimate` on an
    /// issue (Forgejo has none), and 404 "IsErrIssueNotExist" for a deleted issue's timeline and comments,
    /// where Gitea answers 500.
    pub fn forgejo(&self) -> bool {
        self.version.split('.').next() != Some("1")
    }

    /// Whether the server is a Gitea older than 1.`minor` (a Forgejo, whose versions do not start with
    /// `1.`, is not).
    pub fn gitea_before(&self, minor: u32) -> bool {
        let mut parts = self.version.split(['.', '+', '-']);
        parts.next() == Some("1")
            && parts
                .next()
                .and_then(|m| m.parse::<u32>().ok())
                .is_some_and(|m| m < minor)
    }
}

impl Default for EmulatorOptions {
    fn default() -> Self {
        Self {
            token: "emulator-token".into(),
            user: "commitea-bot".into(),
            max_response_items: 50,
            default_paging_num: 30,
            dependencies_disabled: BTreeSet::new(),
            time_tracking_disabled: BTreeSet::new(),
            pulls_disabled: BTreeSet::new(),
            read_only: false,
            issues_read_only: false,
            read_scoped_token: false,
            issues_disabled: BTreeSet::new(),
            strip_list_headers: false,
            version: "1.27.1".into(),
            future_fields: true,
            latency: Duration::ZERO,
            state_repos: BTreeMap::new(),
            anonymous: Anonymous::Private,
            zone: chrono::Offset::fix(&chrono::Utc),
        }
    }
}

/// What an injected fault does to a request it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// Answer with this status (500, 502, 503, …) and a Gitea error body.
    Status(u16),
    /// Sleep this long, then answer normally.
    Slow(Duration),
    /// For a write (any method but `GET`; a `GET` passes the fault by): apply it at once, then hold the
    /// answer this long. A client killed meanwhile had exactly this write applied and sent no other, so a
    /// test can kill a run after each of its writes whatever the load on the machine.
    HoldAnswer(Duration),
    /// Answer 429 with `Retry-After: S`.
    RateLimit {
        /// The `Retry-After` seconds.
        retry_after_secs: u64,
    },
    /// Close the connection without answering.
    Drop,
    /// Answer with this status and a message quoting the request's `Authorization` header, as a proxy or
    /// gateway in front of Gitea may: the client must not print what the server echoes of its token.
    EchoAuthorization(u16),
    /// As [`FaultKind::EchoAuthorization`], with this many characters of the proxy's own text first (so
    /// the header falls where a client cuts a long message short).
    EchoAuthorizationAfter(u16, usize),
    /// Answer 200 with an HTML sign-in page, as a single-sign-on proxy in front of Gitea does (not Gitea:
    /// a client must say it met a web page, not that Gitea's JSON changed).
    LoginPage,
    /// Answer 200 with an empty list (`X-Total-Count: 0`), as a token that lost access to the issues, or
    /// a proxy answering for the server, may be answered.
    EmptyList,
    /// Answer normally, then create a new issue in the repository (newest, so it lands on page 1 and shifts
    /// every later page by one: a naive client sees one issue twice and misses the new one).
    PageShift {
        /// Where the issue is created.
        repo: RepoName,
    },
    /// Answer normally, then delete this issue (someone deletes it while a sync reads the repository).
    DeleteIssue(IssueKey),
    /// Delete this label of the repository first, then answer (someone deletes it on the web between a
    /// run's sync and its write).
    DeleteLabelFirst {
        /// The repository.
        repo: RepoName,
        /// The label's id.
        id: u64,
    },
    /// Answer normally, then create an issue of this title as the token's user (another run, beside
    /// this one, files it).
    CreateIssue {
        /// Where.
        repo: RepoName,
        /// Its title.
        title: String,
    },
}

/// A fault for the next `times` requests whose target (path and raw query) contains `path_contains`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What happens.
    pub kind: FaultKind,
    /// Only requests whose target contains this text (any request when `None`).
    pub path_contains: Option<String>,
    /// How many matching requests it affects.
    pub times: usize,
}

impl Fault {
    /// A fault for the next request.
    pub fn new(kind: FaultKind) -> Self {
        Self {
            kind,
            path_contains: None,
            times: 1,
        }
    }

    /// Affect the next `n` matching requests.
    pub fn times(mut self, n: usize) -> Self {
        self.times = n;
        self
    }

    /// Only requests whose target (path and raw query, e.g. `/api/v1/repos/a/b/issues?page=1`) contains `text`.
    pub fn on(mut self, text: impl Into<String>) -> Self {
        self.path_contains = Some(text.into());
        self
    }
}

#[derive(Debug, Default)]
struct Counters {
    total: u64,
    by_pattern: BTreeMap<String, u64>,
    log: Vec<String>,
    /// Every write with its JSON body (`null` when it has none or it is not JSON).
    bodies: Vec<Write>,
}

/// One write request as it arrived: method, target and JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    /// `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// The path and query, e.g. `/api/v1/repos/acme/api/issues/3/labels`.
    pub target: String,
    /// The body, as JSON.
    pub body: serde_json::Value,
}

#[derive(Debug)]
pub(crate) struct Shared {
    dataset: Mutex<Dataset>,
    /// Pull requests of the state repositories; locked after `dataset` when both are.
    state_pulls: Mutex<pulls::StatePulls>,
    faults: Mutex<Vec<Fault>>,
    counters: Mutex<Counters>,
    options: EmulatorOptions,
    base: String,
    stop: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running emulated Gitea server; stops when dropped.
#[derive(Debug)]
pub struct Emulator {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Emulator {
    /// Starts serving `dataset` on `127.0.0.1` at a free port.
    pub fn start(mut dataset: Dataset, options: EmulatorOptions) -> Result<Self, EmulatorError> {
        for repo in options.state_repos.keys() {
            dataset.add_repository(repo);
        }
        dataset.anchor_due_dates(options.zone);
        let listener = TcpListener::bind("127.0.0.1:0").map_err(EmulatorError::Bind)?;
        let addr = listener.local_addr().map_err(EmulatorError::Bind)?;
        let shared = Arc::new(Shared {
            dataset: Mutex::new(dataset),
            state_pulls: Mutex::new(BTreeMap::new()),
            faults: Mutex::new(Vec::new()),
            counters: Mutex::new(Counters::default()),
            options,
            base: format!("http://{addr}"),
            stop: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name("gitea-emulator".into())
            .spawn(move || accept_loop(&listener, &s))
            .map_err(EmulatorError::Spawn)?;
        Ok(Self {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The server's root URL, `http://127.0.0.1:PORT` (the API is under `/api/v1`).
    pub fn url(&self) -> String {
        self.shared.base.clone()
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The options it runs with.
    pub fn options(&self) -> &EmulatorOptions {
        &self.shared.options
    }

    /// Reads or changes the dataset between requests (e.g. edit an issue and bump its `updated_at`).
    pub fn with_dataset<R>(&self, f: impl FnOnce(&mut Dataset) -> R) -> R {
        f(&mut lock(&self.shared.dataset))
    }

    /// A copy of the dataset as it is now.
    pub fn dataset(&self) -> Dataset {
        lock(&self.shared.dataset).clone()
    }

    /// Queues a fault; faults are tried in the order they were injected.
    pub fn inject(&self, fault: Fault) {
        lock(&self.shared.faults).push(fault);
    }

    /// Drops every queued fault.
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }

    /// How many requests arrived in all (faulted and unauthorised ones included).
    pub fn request_count(&self) -> u64 {
        lock(&self.shared.counters).total
    }

    /// How many requests matched `pattern`, written as `METHOD /path` with `{owner}`, `{repo}`, `{index}`
    /// and `{id}` placeholders and without `/api/v1`, e.g. `GET /repos/{owner}/{repo}/issues/{index}/timeline`.
    pub fn count(&self, pattern: &str) -> u64 {
        lock(&self.shared.counters)
            .by_pattern
            .get(pattern)
            .copied()
            .unwrap_or(0)
    }

    /// Every pattern seen with its count.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        lock(&self.shared.counters).by_pattern.clone()
    }

    /// Every request as `METHOD target`, in order of arrival.
    pub fn requests(&self) -> Vec<String> {
        lock(&self.shared.counters).log.clone()
    }

    /// Every request whose method is not `GET`, as `METHOD target`, in order of arrival (what would change
    /// Gitea).
    /// Every write request with its body, in order of arrival.
    pub fn write_log(&self) -> Vec<Write> {
        lock(&self.shared.counters).bodies.clone()
    }

    /// Every write request (`METHOD target`), in order of arrival.
    pub fn writes(&self) -> Vec<String> {
        lock(&self.shared.counters)
            .log
            .iter()
            .filter(|r| !r.starts_with("GET "))
            .cloned()
            .collect()
    }

    /// The pull requests of state repository `repo`, by number (a pull request whose branch was deleted is
    /// closed, as Gitea closes it).
    pub fn state_pulls(&self, repo: &RepoName) -> Vec<StatePull> {
        let mut ds = lock(&self.shared.dataset);
        let mut pulls = lock(&self.shared.state_pulls);
        let Some(all) = pulls.get_mut(repo) else {
            return Vec::new();
        };
        if let Some(bare) = self.shared.options.state_repos.get(repo) {
            pulls::close_branch_pulls(bare, &mut ds, all);
        }
        all.values().cloned().collect()
    }

    /// Merges pull request `number` of state repository `repo` as `merger`, as `POST …/pulls/{n}/merge` with
    /// `Do: merge` does (a merge commit in the bare repository); returns the merge commit.
    pub fn merge_pull(&self, repo: &RepoName, number: u64, merger: &str) -> Result<String, String> {
        self.merge_pull_as(repo, number, merger, MergeStyle::Merge)
    }

    /// Merges pull request `number` of state repository `repo` as `merger` in `style`, as
    /// `POST …/pulls/{n}/merge` does; returns what Gitea records as its `merge_commit_sha` (the base's new tip).
    pub fn merge_pull_as(
        &self,
        repo: &RepoName,
        number: u64,
        merger: &str,
        style: MergeStyle,
    ) -> Result<String, String> {
        let mut ds = lock(&self.shared.dataset);
        pulls::merge(&self.shared, &mut ds, repo, number, merger, style, "", "")
            .map_err(|e| e.to_string())
    }

    /// Protects the branches of state repository `repo` that match `pattern` (a glob: `main`, `commitea/*`):
    /// a push to one, or its deletion, is refused with Gitea's words (`pre-receive hook declined`), as for a
    /// user who is not on the rule's allowlist. Merges through the API still land.
    pub fn protect_branch(&self, repo: &RepoName, pattern: &str) -> std::io::Result<()> {
        let bare = self.shared.options.state_repos.get(repo).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{repo} is no state repository of the emulator"),
            )
        })?;
        pulls::protect(bare, pattern)
    }

    /// Opens a pull request on state repository `repo` from branch `branch` of `fork_owner`'s fork, as
    /// anyone who may fork the repository can; closed at once (not merged) unless `open`. Returns its number.
    pub fn fork_pull(
        &self,
        repo: &RepoName,
        fork_owner: &str,
        branch: &str,
        title: &str,
        open: bool,
    ) -> u64 {
        let mut ds = lock(&self.shared.dataset);
        let mut pulls = lock(&self.shared.state_pulls);
        let number = pulls::next_number(&ds, &pulls, repo);
        let at = ds.tick();
        let mut pr = StatePull::opened(
            number,
            title.to_owned(),
            String::new(),
            fork_owner.to_owned(),
            (
                branch.to_owned(),
                Some(fork_owner.to_owned()),
                format!("{:040x}", 0xf0_4c),
            ),
            "main".to_owned(),
            String::new(),
            at,
        );
        if !open {
            pr.state = OpenState::Closed;
            pr.closed_at = Some(at);
        }
        pulls.entry(repo.clone()).or_default().insert(number, pr);
        number
    }

    /// Zeroes the counters and the request log.
    pub fn reset_counts(&self) {
        *lock(&self.shared.counters) = Counters::default();
    }

    /// Stops accepting connections and waits for the accept thread (requests in flight still finish).
    pub fn stop(&mut self) {
        if self.shared.stop.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake the blocking accept.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let s = Arc::clone(shared);
        let _ = std::thread::Builder::new()
            .name("gitea-emulator-conn".into())
            .spawn(move || serve(&stream, &s));
    }
}

/// The path pattern a request is counted under, e.g. `GET /repos/{owner}/{repo}/issues/{index}`.
fn pattern(method: &str, path: &str) -> String {
    let segs: Vec<&str> = path
        .strip_prefix("/api/v1")
        .unwrap_or(path)
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let mut out = String::new();
    for (k, seg) in segs.iter().enumerate() {
        out.push('/');
        let prev = if k > 0 { segs[k - 1] } else { "" };
        if segs.first() == Some(&"repos") && k == 1 {
            out.push_str("{owner}");
        } else if segs.first() == Some(&"repos") && k == 2 {
            out.push_str("{repo}");
        } else if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(if matches!(prev, "issues" | "pulls") {
                "{index}"
            } else {
                "{id}"
            });
        } else {
            out.push_str(seg);
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    format!("{method} {out}")
}

fn serve(stream: &TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Some(req) = http::read_request(stream) else {
        return;
    };
    if shared.stop.load(Ordering::SeqCst) {
        return;
    }
    let target = req.target();
    {
        let mut c = lock(&shared.counters);
        c.total += 1;
        *c.by_pattern
            .entry(pattern(&req.method, &req.path))
            .or_insert(0) += 1;
        c.log.push(format!("{} {target}", req.method));
        if req.method != "GET" {
            c.bodies.push(Write {
                method: req.method.clone(),
                target: target.clone(),
                body: serde_json::from_slice(&req.body).unwrap_or(serde_json::Value::Null),
            });
        }
    }
    let fault = {
        let mut faults = lock(&shared.faults);
        let hit = faults.iter().position(|f| {
            f.times > 0
                && f.path_contains
                    .as_ref()
                    .is_none_or(|p| target.contains(p.as_str()))
                && (req.method != "GET" || !matches!(f.kind, FaultKind::HoldAnswer(_)))
        });
        hit.map(|k| {
            faults[k].times -= 1;
            let kind = faults[k].kind.clone();
            if faults[k].times == 0 {
                faults.remove(k);
            }
            kind
        })
    };
    let error = |status: u16, message: &str| {
        http::Response::json(
            status,
            &serde_json::json!({"message": message, "url": format!("{}/api/swagger", shared.base)}),
        )
    };
    let mut page_shift = None;
    let mut delete = None;
    let mut create = None;
    let mut hold = None;
    match fault {
        Some(FaultKind::Status(s)) => {
            http::write_response(stream, &error(s, "injected fault"));
            return;
        }
        Some(FaultKind::RateLimit { retry_after_secs }) => {
            let resp = error(429, "rate limit exceeded")
                .with_header("Retry-After", retry_after_secs.to_string());
            http::write_response(stream, &resp);
            return;
        }
        Some(FaultKind::Drop) => {
            let _ = stream.shutdown(std::net::Shutdown::Both);
            return;
        }
        Some(FaultKind::EchoAuthorization(s)) => {
            let sent = req.header("authorization").unwrap_or("(none)");
            http::write_response(
                stream,
                &error(
                    s,
                    &format!("request refused; it carried Authorization: {sent}"),
                ),
            );
            return;
        }
        Some(FaultKind::EchoAuthorizationAfter(s, pad)) => {
            let sent = req.header("authorization").unwrap_or("(none)");
            let filler = "x".repeat(pad);
            http::write_response(
                stream,
                &error(
                    s,
                    &format!("{filler} request refused; it carried Authorization: {sent}"),
                ),
            );
            return;
        }
        Some(FaultKind::LoginPage) => {
            http::write_response(
                stream,
                &http::Response {
                    status: 200,
                    headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
                    body: b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body><form></form></body></html>\n"
                        .to_vec(),
                },
            );
            return;
        }
        Some(FaultKind::EmptyList) => {
            http::write_response(
                stream,
                &http::Response {
                    status: 200,
                    headers: vec![
                        (
                            "Content-Type".into(),
                            "application/json;charset=utf-8".into(),
                        ),
                        ("X-Total-Count".into(), "0".into()),
                    ],
                    body: b"[]\n".to_vec(),
                },
            );
            return;
        }
        Some(FaultKind::Slow(d)) => std::thread::sleep(d),
        Some(FaultKind::PageShift { repo }) => page_shift = Some(repo),
        Some(FaultKind::DeleteIssue(key)) => delete = Some(key),
        Some(FaultKind::DeleteLabelFirst { repo, id }) => {
            lock(&shared.dataset).delete_label(&repo, id);
        }
        Some(FaultKind::CreateIssue { repo, title }) => create = Some((repo, title)),
        Some(FaultKind::HoldAnswer(d)) => hold = Some(d),
        None => {}
    }
    if !shared.options.latency.is_zero() {
        std::thread::sleep(shared.options.latency);
    }
    let resp = routes::handle(&req, shared);
    let resp = if shared.options.strip_list_headers {
        resp.without_header("X-Total-Count").without_header("Link")
    } else {
        resp
    };
    // Go's net/http stamps every answer with the server's clock.
    let resp = resp.with_header(
        "Date",
        lock(&shared.dataset)
            .clock()
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string(),
    );
    // A page shift lands between this page and the next: create the issue before the client can ask again.
    if let Some(repo) = page_shift {
        let mut ds = lock(&shared.dataset);
        let user = shared.options.user.clone();
        ds.create_issue(&repo, "Inserted between two pages", &user);
    }
    if let Some(key) = delete {
        lock(&shared.dataset).delete_issue(&key);
    }
    if let Some((repo, title)) = create {
        let user = shared.options.user.clone();
        lock(&shared.dataset).create_issue(&repo, &title, &user);
    }
    if let Some(d) = hold {
        std::thread::sleep(d);
    }
    http::write_response(stream, &resp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_name_placeholders() {
        assert_eq!(
            pattern("GET", "/api/v1/repos/acme/api/issues/12/timeline"),
            "GET /repos/{owner}/{repo}/issues/{index}/timeline"
        );
        assert_eq!(
            pattern("DELETE", "/api/v1/repos/a/b/issues/3/labels/7"),
            "DELETE /repos/{owner}/{repo}/issues/{index}/labels/{id}"
        );
        assert_eq!(pattern("GET", "/api/v1/version"), "GET /version");
    }

    #[test]
    fn query_decoding_follows_go() {
        assert_eq!(
            http::decode("2026-10-02T09%3A00%3A00Z", true),
            "2026-10-02T09:00:00Z"
        );
        assert_eq!(http::decode("a+b%2Bc", true), "a b+c");
        assert_eq!(http::decode("100%", true), "100%");
    }
}
