//! The endpoints: routing a request to its handler, auth, pagination and the write operations.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::dataset::{Dataset, Render, TimelineEntry, blank_issue, timeline_entries};
use super::http::{Request, Response};
use super::{Anonymous, Shared, lock, pulls};
use commitea::domain::{EventKind, Issue, IssueKey, Label, OpenState, RepoName, TimelineEvent};

/// Gitea's error body.
/// Gitea's answer to a write `mustNotBeArchived` guards on an archived repository (routers/api/v1/api.go):
/// 423, naming the repository as its `LogString` does.
fn archived(shared: &Shared, ds: &Dataset, repo: &RepoName) -> Response {
    // 423 came with Gitea 1.22 (#27149); before, `mustNotBeArchived` answered `ctx.NotFound()`.
    if shared.options.gitea_before(22) {
        return not_found(shared);
    }
    let id = ds.repo_id(repo).unwrap_or(0);
    error(
        shared,
        423,
        &format!("<Repository {id}:{}/{}> is archived", repo.owner, repo.name),
    )
}

pub(crate) fn error(shared: &Shared, status: u16, message: &str) -> Response {
    Response::json(
        status,
        &json!({"message": message, "url": format!("{}/api/swagger", shared.base)}),
    )
}

/// The assignees an `EditIssueOption` or `CreateIssueOption` asks for: `assignees` with `assignee` added
/// when not already in it (`UpdateAssignees`), each once; `None` when neither is given.
fn asked_assignees(shared: &Shared, body: &Value) -> Result<Option<Vec<String>>, Response> {
    let mut out: Vec<String> = match &body["assignees"] {
        Value::Null => Vec::new(),
        Value::Array(items) => {
            let mut v = Vec::new();
            for x in items {
                match x.as_str() {
                    Some(s) => v.push(s.to_owned()),
                    None => return Err(bad_field(shared, x, "assignees", "string")),
                }
            }
            v
        }
        v => return Err(bad_field(shared, v, "assignees", "[]string")),
    };
    let one = match &body["assignee"] {
        Value::Null => None,
        Value::String(s) => Some(s.clone()).filter(|s| !s.is_empty()),
        v => return Err(bad_field(shared, v, "assignee", "string")),
    };
    if body["assignees"].is_null() && body["assignee"].is_null() {
        return Ok(None);
    }
    if let Some(one) = one
        && !out.contains(&one)
    {
        out.push(one);
    }
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|a| seen.insert(a.clone()));
    Ok(Some(out))
}

/// Whether the token's user may write the issues (`CanWriteIssuesOrPulls`): not when it may only read the
/// repositories or only their issues.
fn issues_writer(shared: &Shared) -> bool {
    !shared.options.read_only && !shared.options.issues_read_only
}

/// Gitea's text of a failed issue lookup (`ErrIssueNotExist`).
fn missing(ds: &Dataset, key: &IssueKey) -> String {
    format!(
        "issue does not exist [id: 0, repo_id: {}, index: {}]",
        ds.repo_id(&key.repo).unwrap_or(0),
        key.number
    )
}

/// `ctx.APIErrorNotFound("Timetracker is disabled")` (issue_tracked_time.go): capital T, and `errors` is
/// Go's nil slice.
fn timetracker_disabled(shared: &Shared) -> Response {
    Response::json(
        404,
        &json!({
            "message": "Timetracker is disabled",
            "url": format!("{}/api/swagger", shared.base),
            "errors": null,
        }),
    )
}

pub(crate) fn not_found(shared: &Shared) -> Response {
    Response::json(
        404,
        &json!({
            "errors": [],
            "message": "The target couldn't be found.",
            "url": format!("{}/api/swagger", shared.base),
        }),
    )
}

/// The effective page and page size, as Gitea's `GetListOptions` computes them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Paging {
    page: usize,
    limit: usize,
}

impl Paging {
    pub(crate) fn of(req: &Request, shared: &Shared) -> Self {
        let page = req
            .param("page")
            .and_then(|p| p.parse::<i64>().ok())
            .filter(|p| *p > 0)
            .map_or(1, |p| p as usize);
        let limit = req
            .param("limit")
            .and_then(|p| p.parse::<i64>().ok())
            .filter(|p| *p > 0)
            .map_or(shared.options.default_paging_num, |p| p as usize)
            .min(shared.options.max_response_items)
            .max(1);
        Self { page, limit }
    }

    pub(crate) fn slice<'a, T>(&self, items: &'a [T]) -> &'a [T] {
        let start = (self.page - 1).saturating_mul(self.limit).min(items.len());
        let end = start.saturating_add(self.limit).min(items.len());
        &items[start..end]
    }
}

/// A list response with `X-Total-Count` and Gitea's `Link` header.
pub(crate) fn listed(
    shared: &Shared,
    req: &Request,
    paging: Paging,
    total: usize,
    items: Vec<Value>,
) -> Response {
    let last = total.div_ceil(paging.limit).max(1);
    let link_to = |page: usize, rel: &str| {
        let mut pairs: Vec<String> = req
            .raw_query
            .split('&')
            .filter(|p| !p.is_empty() && !p.starts_with("page="))
            .map(str::to_owned)
            .collect();
        pairs.push(format!("page={page}"));
        format!(
            "<{}{}?{}>; rel=\"{rel}\"",
            shared.base,
            req.path,
            pairs.join("&")
        )
    };
    let mut links = Vec::new();
    if paging.page < last {
        links.push(link_to(paging.page + 1, "next"));
        links.push(link_to(last, "last"));
    }
    if paging.page > 1 {
        links.push(link_to(1, "first"));
        links.push(link_to(paging.page - 1, "prev"));
    }
    let mut resp = Response::json(200, &Value::Array(items))
        .with_header("X-Total-Count", total.to_string())
        .with_header("Access-Control-Expose-Headers", "X-Total-Count, Link");
    if !links.is_empty() {
        resp = resp.with_header("Link", links.join(","));
    }
    resp
}

/// Parses an RFC 3339 query time; `Err` is the 422 to send.
fn time_param(
    req: &Request,
    shared: &Shared,
    name: &str,
) -> Result<Option<DateTime<Utc>>, Response> {
    match req.param(name) {
        None | Some("") => Ok(None),
        Some(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|e| error(shared, 422, &format!("{name}: parsing time {s:?}: {e}"))),
    }
}

/// `since` and `before` are both inclusive, at second resolution (Gitea's `updated_unix >= since` and
/// `updated_unix <= before`).
fn in_window(
    t: DateTime<Utc>,
    since: Option<DateTime<Utc>>,
    before: Option<DateTime<Utc>>,
) -> bool {
    since.is_none_or(|s| t.timestamp() >= s.timestamp())
        && before.is_none_or(|b| t.timestamp() <= b.timestamp())
}

/// Whether a request is signed in (`Ok(true)`), anonymous and let through (`Ok(false)`), or refused.
fn authorised(req: &Request, shared: &Shared) -> Result<bool, Response> {
    let Some(h) = req.header("authorization") else {
        return match shared.options.anonymous {
            Anonymous::SignInRequired => Err(error(
                shared,
                403,
                "Only signed in user is allowed to call APIs.",
            )),
            Anonymous::Private | Anonymous::Public => Ok(false),
        };
    };
    let token = h
        .strip_prefix("token ")
        .or_else(|| h.strip_prefix("Bearer "))
        .or_else(|| h.strip_prefix("bearer "))
        .map(str::trim);
    if token == Some(shared.options.token.as_str()) {
        Ok(true)
    } else {
        Err(error(shared, 401, "invalid username, password or token"))
    }
}

/// What Gitea answers an anonymous request it lets past sign-in: a private repository is not found
/// (`repoAssignment`), and `reqToken` routes (every write, tracked times, `/user`) want a token.
fn anonymous_refusal(shared: &Shared, method: &str, segs: &[&str]) -> Option<Response> {
    let token_required = || error(shared, 401, "token is required");
    match segs {
        ["version"] | ["settings", "api"] => None,
        ["user"] => Some(token_required()),
        ["repos", _, _, ..] if shared.options.anonymous == Anonymous::Private => {
            Some(not_found(shared))
        }
        _ if method != "GET" => Some(token_required()),
        ["repos", _, _, .., "times"] => Some(token_required()),
        _ => None,
    }
}

/// Answers one request.
pub(crate) fn handle(req: &Request, shared: &Shared) -> Response {
    let Some(rest) = req.path.strip_prefix("/api/v1/") else {
        return not_found(shared);
    };
    let signed_in = match authorised(req, shared) {
        Ok(signed_in) => signed_in,
        Err(resp) => return resp,
    };
    let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let method = req.method.as_str();
    if !signed_in && let Some(resp) = anonymous_refusal(shared, method, &segs) {
        return resp;
    }
    if signed_in
        && shared.options.read_scoped_token
        && method != "GET"
        && let ["repos", _, _, tail @ ..] = segs.as_slice()
    {
        // routers/api/v1/api.go: the issue group (issues, labels, milestones) wants `write:issue`,
        // the rest of a repository `write:repository`.
        let category = match tail.first() {
            Some(&("issues" | "labels" | "milestones")) => "issue",
            _ => "repository",
        };
        return error(
            shared,
            403,
            &format!(
                "token does not have at least one of required scope(s), required=[write:{category}], \
                 token scope=read:issue,read:repository"
            ),
        );
    }
    // routers/api/v1/api.go wraps `/user` in `tokenRequiresScopes(AccessTokenScopeCategoryUser)`: a token
    // of issue and repository scopes alone is refused it (audit 184: the emulator answered it).
    if signed_in
        && shared.options.read_scoped_token
        && let ["user", ..] = segs.as_slice()
    {
        // The level by the method, as tokenRequiresScopes takes it.
        let level = if method == "GET" { "read" } else { "write" };
        return error(
            shared,
            403,
            &format!(
                "token does not have at least one of required scope(s), required=[{level}:user], token \
                 scope=read:issue,read:repository"
            ),
        );
    }
    match (method, segs.as_slice()) {
        ("GET", ["version"]) => Response::json(200, &json!({"version": shared.options.version})),
        ("GET", ["settings", "api"]) => Response::json(
            200,
            &json!({
                "max_response_items": shared.options.max_response_items,
                "default_paging_num": shared.options.default_paging_num,
                "default_git_trees_per_page": 1000,
                "default_max_blob_size": 10_485_760,
                "default_max_response_size": 104_857_600,
            }),
        ),
        ("GET", ["user"]) => {
            let ds = lock(&shared.dataset);
            let r = Render::new(&ds, shared);
            Response::json(200, &r.user(&shared.options.user))
        }
        // `ListLabels` of an organisation (`/orgs/{org}/labels`); a user is not one (`orgAssignment`: 404).
        ("GET", ["orgs", org, "labels"]) => {
            let ds = lock(&shared.dataset);
            match ds.org_labels(org) {
                None => not_found(shared),
                Some(labels) => {
                    let mut labels = labels.to_vec();
                    labels.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
                    let r = Render::new(&ds, shared);
                    // An organisation's label is exclusive by the organisation's own set, which
                    // any repository name under it reads.
                    let repo = RepoName::new(*org, "-");
                    let p = Paging::of(req, shared);
                    let items: Vec<Value> =
                        p.slice(&labels).iter().map(|l| r.label(&repo, l)).collect();
                    listed(shared, req, p, labels.len(), items)
                }
            }
        }
        // `GetCommitPullRequest` came in Gitea 1.22 (#29243): before, no route matches the path.
        ("GET", ["repos", _, _, "commits", _, "pull"]) if shared.options.gitea_before(22) => {
            Response::unrouted()
        }
        (_, ["repos", owner, name, tail @ ..]) => {
            let mut ds = lock(&shared.dataset);
            let repo = ds.canonical(RepoName::new(*owner, *name));
            if ds.is_hidden(&repo) {
                return not_found(shared);
            }
            if ds.repo_id(&repo).is_none() {
                // `repoAssignment`: a renamed repository's old name redirects to the same path (and query)
                // under the new one (`RedirectToRepo`, 307).
                if let Some(new) = ds.redirect(&repo) {
                    let rest = tail.join("/");
                    let mut to = format!("{}/api/v1/repos/{new}", shared.base);
                    if !rest.is_empty() {
                        to = format!("{to}/{rest}");
                    }
                    if !req.raw_query.is_empty() {
                        to = format!("{to}?{}", req.raw_query);
                    }
                    return Response::empty(307).with_header("Location", to);
                }
                return not_found(shared);
            }
            repo_route(req, shared, &mut ds, &repo, tail).unwrap_or_else(|r| r)
        }
        _ => not_found(shared),
    }
}

pub(crate) type Answer = Result<Response, Response>;

pub(crate) fn number(seg: &str, shared: &Shared) -> Result<u64, Response> {
    seg.parse().map_err(|_| not_found(shared))
}

pub(crate) fn body_json(req: &Request, shared: &Shared) -> Result<Value, Response> {
    serde_json::from_slice(&req.body)
        .map_err(|e| error(shared, 422, &format!("request body is not valid JSON: {e}")))
}

fn repo_route(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    repo: &RepoName,
    tail: &[&str],
) -> Answer {
    let deps_enabled = !shared.options.dependencies_disabled.contains(repo);
    if let Some(bare) = shared.options.state_repos.get(repo)
        && let Some(answer) = pulls::route(req, shared, ds, repo, bare, tail, deps_enabled)
    {
        return answer;
    }
    let method = req.method.as_str();
    match (method, tail) {
        ("GET", []) => {
            let r = Render::new(ds, shared);
            let times = !shared.options.time_tracking_disabled.contains(repo);
            let mut v = r.repository(repo, deps_enabled, times);
            // Gitea's `empty` is `repo.IsEmpty`: no branch yet (audit 172: always false here, so
            // `init` said a new, empty state repo already had commits).
            if let Some(bare) = shared.options.state_repos.get(repo) {
                let branches = std::process::Command::new("git")
                    .arg("-C")
                    .arg(bare)
                    .args(["for-each-ref", "--count=1", "refs/heads"])
                    .output();
                v["empty"] = serde_json::json!(branches.is_ok_and(|o| o.stdout.is_empty()));
            }
            Ok(Response::json(200, &v))
        }
        ("GET", ["labels"]) => {
            let r = Render::new(ds, shared);
            let mut labels = ds.labels(repo).to_vec();
            labels.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
            let p = Paging::of(req, shared);
            let items = p.slice(&labels).iter().map(|l| r.label(repo, l)).collect();
            Ok(listed(shared, req, p, labels.len(), items))
        }
        ("POST", ["labels"]) => create_label(req, shared, ds, repo),
        ("POST", ["issues"]) if ds.is_archived(repo) => Err(archived(shared, ds, repo)),
        ("POST", ["issues"]) => create_issue(req, shared, ds, repo),
        ("GET", ["commits", sha, "pull"]) => {
            // The dataset's merged pull requests carry `merge_commit_sha` = their number in 40 hex digits.
            let found = ds
                .pulls(repo)
                .into_iter()
                .find(|p| p.merged && format!("{:040x}", p.number) == *sha);
            match found {
                Some(p) => {
                    let r = Render::new(ds, shared);
                    Ok(Response::json(200, &r.pull(repo, p, deps_enabled, false)))
                }
                None => Err(error(
                    shared,
                    404,
                    &format!(
                        "pull request does not exist [id: 0, issue_id: 0, head_repo_id: 0, base_repo_id: {}, head_branch: , base_branch: ]",
                        ds.repo_id(repo).unwrap_or(0)
                    ),
                )),
            }
        }
        ("GET", ["milestones"]) => {
            let r = Render::new(ds, shared);
            // `ListMilestones` filters only on `open` or `closed`: no state (or any other) lists all; a
            // name is a case-insensitive `LIKE` (routers/api/v1/repo/milestone.go, audit 116).
            let want = req.param("state").unwrap_or("all");
            let mut ms: Vec<_> = ds
                .milestones(repo)
                .iter()
                .filter(|m| match want {
                    "closed" => m.state == OpenState::Closed,
                    "open" => m.state == OpenState::Open,
                    _ => true,
                })
                .filter(|m| {
                    req.param("name")
                        .is_none_or(|n| m.title.to_lowercase().contains(&n.to_lowercase()))
                })
                .cloned()
                .collect();
            ms.sort_by_key(|m| (m.due_on.is_none(), m.due_on, m.id));
            let p = Paging::of(req, shared);
            let items = p.slice(&ms).iter().map(|m| r.milestone(m)).collect();
            Ok(listed(shared, req, p, ms.len(), items))
        }
        // `reqRepoWriter(unit.TypeIssues, unit.TypePullRequests)`: a user who may write neither is refused
        // before the handler; one who writes the code (and so, here, its pull requests) passes.
        ("PATCH", ["milestones", _]) if shared.options.read_only => Err(error(
            shared,
            403,
            "user should have a permission to write to a repo",
        )),
        ("PATCH", ["milestones", id]) => edit_milestone(req, shared, ds, repo, id),
        ("GET", ["issues"]) => list_issues(req, shared, ds, repo),
        ("GET", ["issues", "comments"]) => {
            let since = time_param(req, shared, "since")?;
            let before = time_param(req, shared, "before")?;
            let r = Render::new(ds, shared);
            // `ListRepoIssueComments`: with the Issues unit off, pull requests' comments only (the
            // emulator keeps none of those).
            let issues_off = shared.options.issues_disabled.contains(repo);
            let mut all: Vec<(u64, &commitea::domain::Comment)> = ds
                .issues(repo)
                .into_iter()
                .filter(|_| !issues_off)
                .flat_map(|i| i.comments.iter().map(move |c| (i.number, c)))
                .filter(|(_, c)| in_window(c.updated_at, since, before))
                .collect();
            all.sort_by_key(|(_, c)| (c.created_at, c.id));
            let p = Paging::of(req, shared);
            let items = p
                .slice(&all)
                .iter()
                .map(|(n, c)| r.comment(repo, *n, c))
                .collect();
            Ok(listed(shared, req, p, all.len(), items))
        }
        (_, ["issues", n, rest @ ..]) => {
            let n = number(n, shared)?;
            let key = repo.issue(n);
            if shared.options.issues_disabled.contains(repo) && ds.issue(&key).is_some() {
                return Err(not_found(shared));
            }
            issue_route(req, shared, ds, &key, rest, deps_enabled)
        }
        ("GET", ["pulls"]) if shared.options.pulls_disabled.contains(repo) => {
            Err(not_found(shared))
        }
        ("GET", ["pulls"]) => {
            let want = req.param("state").unwrap_or("open");
            let mut pulls: Vec<_> = ds
                .pulls(repo)
                .into_iter()
                .filter(|p| state_matches(want, p.state))
                .cloned()
                .collect();
            pulls.sort_by(|a, b| {
                b.created_at
                    .cmp(&a.created_at)
                    .then(b.number.cmp(&a.number))
            });
            let r = Render::new(ds, shared);
            let p = Paging::of(req, shared);
            let items = p
                .slice(&pulls)
                .iter()
                .map(|pr| r.pull(repo, pr, deps_enabled, true))
                .collect();
            Ok(listed(shared, req, p, pulls.len(), items))
        }
        ("GET", ["pulls", n]) => {
            let n = number(n, shared)?;
            let r = Render::new(ds, shared);
            let pr = ds.pull(repo, n).ok_or_else(|| not_found(shared))?;
            Ok(Response::json(200, &r.pull(repo, pr, deps_enabled, false)))
        }
        _ => Err(not_found(shared)),
    }
}

pub(crate) fn state_matches(want: &str, state: OpenState) -> bool {
    match want {
        "all" => true,
        "closed" => state == OpenState::Closed,
        _ => state == OpenState::Open,
    }
}

fn list_issues(req: &Request, shared: &Shared, ds: &Dataset, repo: &RepoName) -> Answer {
    let since = time_param(req, shared, "since")?;
    let before = time_param(req, shared, "before")?;
    let want = req.param("state").unwrap_or("open");
    let kind = req.param("type").unwrap_or("");
    // `ListIssues`: asked for issues where the Issues unit is off, a 404; not asked, pull requests only.
    let issues_off = shared.options.issues_disabled.contains(repo);
    if issues_off && kind == "issues" {
        return Err(not_found(shared));
    }
    let r = Render::new(ds, shared);
    // (created_at, number, is a pull request); only the page asked for is rendered.
    let mut rows: Vec<(DateTime<Utc>, u64, bool)> = Vec::new();
    if kind != "pulls" && !issues_off {
        for i in ds.issues(repo) {
            if state_matches(want, i.state) && in_window(i.updated_at, since, before) {
                rows.push((i.created_at, i.number, false));
            }
        }
    }
    if kind != "issues" {
        for p in ds.pulls(repo) {
            if state_matches(want, p.state) && in_window(p.updated_at, since, before) {
                rows.push((p.created_at, p.number, true));
            }
        }
    }
    // Gitea's default order: newest created first, then highest id.
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let p = Paging::of(req, shared);
    let items = p
        .slice(&rows)
        .iter()
        .map(|&(_, n, pull)| {
            if pull {
                ds.pull(repo, n)
                    .map_or(Value::Null, |p| r.pull_as_issue(repo, p))
            } else {
                ds.issue(&repo.issue(n))
                    .map_or(Value::Null, |i| r.issue(repo, i))
            }
        })
        .collect();
    Ok(listed(shared, req, p, rows.len(), items))
}

fn issue_route(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    key: &IssueKey,
    rest: &[&str],
    deps_enabled: bool,
) -> Answer {
    let method = req.method.as_str();
    let is_issue = ds.issue(key).is_some();
    let is_pull = ds.pull(&key.repo, key.number).is_some();
    if !is_issue && !is_pull {
        return Err(match rest {
            // Forgejo's issue_comment.go: `ctx.NotFound("IsErrIssueNotExist", err)`.
            ["comments"] | ["timeline"] if shared.options.forgejo() => Response::json(
                404,
                &json!({
                    "message": "IsErrIssueNotExist",
                    "url": format!("{}/api/swagger", shared.base),
                    "errors": [missing(ds, key)],
                }),
            ),
            // Gitea's issue_comment.go sends a failed issue lookup to APIErrorInternal: 500, and no
            // message for a caller who is not an admin.
            ["comments"] | ["timeline"] => error(shared, 500, ""),
            // `ctx.APIErrorNotFound("IsErrIssueNotExist", err)` (issue_dependency.go): the string is the
            // message, the error goes to `errors`.
            ["dependencies"] | ["blocks"] if deps_enabled => Response::json(
                404,
                &json!({
                    "message": "IsErrIssueNotExist",
                    "url": format!("{}/api/swagger", shared.base),
                    "errors": [missing(ds, key)],
                }),
            ),
            ["dependencies"] | ["blocks"] => error(shared, 404, "not found"),
            ["times"] if shared.options.time_tracking_disabled.contains(&key.repo) => {
                timetracker_disabled(shared)
            }
            // `ctx.APIErrorNotFound(err)` (issue_tracked_time.go): the default message, the error in `errors`.
            ["times"] => Response::json(
                404,
                &json!({
                    "message": "The target couldn't be found.",
                    "url": format!("{}/api/swagger", shared.base),
                    "errors": [missing(ds, key)],
                }),
            ),
            _ => not_found(shared),
        });
    }
    let actor = shared.options.user.clone();
    match (method, rest) {
        ("GET", []) => {
            let r = Render::new(ds, shared);
            Ok(Response::json(200, &r.issue_or_pull(key)))
        }
        ("PATCH", []) if is_issue => edit_issue(req, shared, ds, key, &actor),
        ("GET", ["comments"]) => {
            let since = time_param(req, shared, "since")?;
            let before = time_param(req, shared, "before")?;
            let r = Render::new(ds, shared);
            let items: Vec<Value> = ds
                .issue(key)
                .map(|i| {
                    i.comments
                        .iter()
                        .filter(|c| in_window(c.updated_at, since, before))
                        .map(|c| r.comment(&key.repo, key.number, c))
                        .collect()
                })
                .unwrap_or_default();
            Ok(Response::json(200, &Value::Array(items)))
        }
        ("GET", ["timeline"]) => {
            let since = time_param(req, shared, "since")?;
            let before = time_param(req, shared, "before")?;
            let r = Render::new(ds, shared);
            let Some(i) = ds.issue(key) else {
                // A pull request's timeline: none is kept.
                return Ok(Response::json(200, &Value::Null));
            };
            let entries: Vec<TimelineEntry<'_>> = timeline_entries(i, ds.deleted_times(key))
                .into_iter()
                .filter(|e| in_window(e.updated(), since, before))
                .collect();
            let p = Paging::of(req, shared);
            let items: Vec<Value> = p
                .slice(&entries)
                .iter()
                .filter(|e| !matches!(e, TimelineEntry::Hidden(_)))
                .map(|e| r.timeline(&key.repo, i, e))
                .collect();
            // routers/api/v1/repo/issue_comment.go `ListIssueCommentsAndTimeline`: the list is a nil slice
            // appended to (an empty page is `null`), the total is this page's length, and there is no Link.
            let total = items.len();
            let body = if items.is_empty() {
                Value::Null
            } else {
                Value::Array(items)
            };
            Ok(Response::json(200, &body).with_header("X-Total-Count", total.to_string()))
        }
        ("GET", ["times"]) if shared.options.time_tracking_disabled.contains(&key.repo) => {
            Err(timetracker_disabled(shared))
        }
        ("GET", ["times"]) => {
            let since = time_param(req, shared, "since")?;
            let before = time_param(req, shared, "before")?;
            let r = Render::new(ds, shared);
            let Some(i) = ds.issue(key) else {
                return Ok(listed(shared, req, Paging::of(req, shared), 0, Vec::new()));
            };
            let times: Vec<_> = i
                .tracked_times
                .iter()
                .filter(|t| in_window(t.created, since, before))
                .filter(|t| req.param("user").is_none_or(|u| t.user == u))
                // `cantSetUser`: without write access to the Issues unit, only the token user's own
                // entries, whatever the Code unit allows.
                .filter(|t| {
                    !(shared.options.read_only || shared.options.issues_read_only)
                        || t.user == shared.options.user
                })
                .collect();
            let p = Paging::of(req, shared);
            let items = p
                .slice(&times)
                .iter()
                .map(|t| r.tracked_time(&key.repo, i, t))
                .collect();
            Ok(listed(shared, req, p, times.len(), items))
        }
        // Checked before the issue lookup, with Gitea's bare "not found" (issue_dependency.go).
        (_, ["dependencies"] | ["blocks"]) if !deps_enabled => Err(error(shared, 404, "not found")),
        ("GET", ["dependencies"]) => {
            let deps = ds
                .issue(key)
                .map(|i| i.depends_on.clone())
                .unwrap_or_default();
            Ok(dependency_page(req, shared, ds, &deps))
        }
        ("GET", ["blocks"]) => {
            let blocks = ds.blocked_by(key);
            Ok(dependency_page(req, shared, ds, &blocks))
        }
        ("POST" | "DELETE", ["dependencies"]) if is_issue && ds.is_archived(&key.repo) => {
            Err(archived(shared, ds, &key.repo))
        }
        // `createIssueDependency`/`removeIssueDependency`: a target the user may not write is "not found".
        ("POST" | "DELETE", ["dependencies"]) if is_issue && !issues_writer(shared) => {
            Err(not_found(shared))
        }
        ("POST" | "DELETE", ["dependencies"]) if is_issue => {
            change_dependency(req, shared, ds, key, &actor)
        }
        ("GET", ["labels"]) => {
            let r = Render::new(ds, shared);
            Ok(Response::json(200, &issue_labels(&r, key)))
        }
        // `prepareForReplaceOrAdd` and `DeleteIssueLabel`/`ClearIssueLabels`: a writer's only.
        ("POST" | "PUT", ["labels"]) if is_issue && !issues_writer(shared) => {
            Err(error(shared, 403, "write permission is required"))
        }
        ("DELETE", ["labels", ..]) if is_issue && !issues_writer(shared) => {
            Ok(Response::empty(403))
        }
        ("POST" | "PUT", ["labels"]) if is_issue => {
            let body = body_json(req, shared)?;
            let wanted = resolve_labels(shared, ds, &key.repo, &body["labels"])?;
            let new = if method == "PUT" {
                replace_labels(ds, &key.repo, &wanted)
            } else {
                let current = ds.issue(key).map(|i| i.labels.clone()).unwrap_or_default();
                add_labels(ds, &key.repo, &current, &wanted)
            };
            set_labels(ds, key, &actor, |_| new);
            let r = Render::new(ds, shared);
            Ok(Response::json(200, &issue_labels(&r, key)))
        }
        ("DELETE", ["labels"]) if is_issue => {
            set_labels(ds, key, &actor, |_| Vec::new());
            Ok(Response::empty(204))
        }
        ("DELETE", ["labels", id]) if is_issue => {
            // `ctx.PathParamInt64`: anything but a number is 0.
            let id: i64 = id.parse().unwrap_or(0);
            let Some(label) = ds
                .issue_labels(&key.repo)
                .into_iter()
                .find(|l| i64::try_from(l.id).is_ok_and(|l| l == id))
            else {
                // `DeleteIssueLabel` looks the id up anywhere (`GetLabelByID`): a label of another
                // repository exists, and removing it from this issue deletes nothing (204); an id that
                // exists nowhere is 422.
                let elsewhere = ds.repositories().iter().any(|r| {
                    ds.labels(r)
                        .iter()
                        .any(|l| i64::try_from(l.id).is_ok_and(|l| l == id))
                });
                if elsewhere {
                    return Ok(Response::empty(204));
                }
                return Err(error(
                    shared,
                    422,
                    &format!("label does not exist [label_id: {id}]"),
                ));
            };
            set_labels(ds, key, &actor, |current| {
                current
                    .iter()
                    .filter(|n| **n != label.name)
                    .cloned()
                    .collect()
            });
            Ok(Response::empty(204))
        }
        _ => Err(not_found(shared)),
    }
}

pub(crate) fn next_event_id(i: &commitea::domain::Issue) -> u64 {
    let t = i.timeline.iter().map(|e| e.id).max().unwrap_or(0);
    let c = i.comments.iter().map(|c| c.id).max().unwrap_or(0);
    t.max(c) + 1 + 1_000_000
}

fn issue_labels(r: &Render<'_>, key: &IssueKey) -> Value {
    let names =
        r.ds.issue(key)
            .map(|i| i.labels.clone())
            .unwrap_or_default();
    Value::Array(
        names
            .iter()
            .map(|n| r.label(&key.repo, &r.ds.label_by_name(&key.repo, n)))
            .collect(),
    )
}

/// The labels of `repo` named in an `IssueLabelsOption`, sorted by name as Gitea loads them
/// (`GetLabelsByIDs … Asc("name")`): all numbers (ids) or all strings (names); unknown ones are dropped silently.
fn resolve_labels(
    shared: &Shared,
    ds: &Dataset,
    repo: &RepoName,
    list: &Value,
) -> Result<Vec<Label>, Response> {
    let items: &[Value] = match list {
        Value::Null => &[],
        Value::Array(a) => a,
        v => {
            return Err(error(
                shared,
                422,
                &format!(
                    "json: cannot unmarshal {v} into Go struct field IssueLabelsOption.labels of type []interface {{}}"
                ),
            ));
        }
    };
    let mut ids = Vec::new();
    let mut names = Vec::new();
    for item in items {
        match item {
            // Go decodes a JSON number into `any` as a float64; Gitea takes `int64(f)`.
            Value::Number(n) => ids.push(n.as_f64().unwrap_or(0.0) as i64),
            Value::String(s) => names.push(s.as_str()),
            _ => {}
        }
    }
    if !ids.is_empty() && !names.is_empty() {
        return Err(error(
            shared,
            400,
            "labels should be an array of strings or integers",
        ));
    }
    // Names and ids of the repository's labels and of its organisation's (`GetLabelIDsInRepoByNames`,
    // `GetLabelIDsInOrgByNames`; `NewIssueLabels` keeps a label of either).
    let mut out: Vec<Label> = ds
        .issue_labels(repo)
        .into_iter()
        .filter(|l| {
            names.contains(&l.name.as_str())
                || i64::try_from(l.id).is_ok_and(|id| ids.contains(&id))
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    Ok(out)
}

/// `current` after adding `wanted` one by one as Gitea's `newIssueLabels` does: a label already there is
/// skipped, and adding an exclusive label first removes the issue's labels of the same scope.
fn add_labels(ds: &Dataset, repo: &RepoName, current: &[String], wanted: &[Label]) -> Vec<String> {
    let mut out = current.to_vec();
    for l in wanted {
        if out.contains(&l.name) {
            continue;
        }
        if let Some(scope) = ds.label_scope(repo, &l.name) {
            out.retain(|n| ds.label_scope(repo, n).as_deref() != Some(scope.as_str()));
        }
        out.push(l.name.clone());
    }
    out
}

/// The label set a replace leaves (Gitea's `RemoveDuplicateExclusiveLabels`): of several labels of one exclusive
/// scope only the last (by name) stays.
fn replace_labels(ds: &Dataset, repo: &RepoName, wanted: &[Label]) -> Vec<String> {
    let scopes: Vec<Option<String>> = wanted
        .iter()
        .map(|l| ds.label_scope(repo, &l.name))
        .collect();
    wanted
        .iter()
        .enumerate()
        .filter(|(k, _)| {
            scopes[*k]
                .as_ref()
                .is_none_or(|s| !scopes[k + 1..].iter().any(|o| o.as_ref() == Some(s)))
        })
        .map(|(_, l)| l.name.clone())
        .collect()
}

/// Sets the issue's labels to `f(current)` (deduplicated, sorted), recording one `label` event per change and
/// bumping `updated_at`; nothing happens (no event, no tick) when the set stays the same.
fn set_labels(
    ds: &mut Dataset,
    key: &IssueKey,
    actor: &str,
    f: impl FnOnce(&[String]) -> Vec<String>,
) {
    let Some(i) = ds.issue(key) else { return };
    let mut new = f(&i.labels);
    new.sort();
    new.dedup();
    if new == i.labels {
        return;
    }
    let at = ds.tick();
    let Some(i) = ds.issue_mut(key) else { return };
    record_labels(i, new, at, actor);
    i.updated_at = at;
}

/// Sets `i`'s labels to `new` (sorted), with a `label` event for each one removed, then each one added.
fn record_labels(i: &mut Issue, new: Vec<String>, at: DateTime<Utc>, actor: &str) {
    let mut id = next_event_id(i);
    for removed in i
        .labels
        .iter()
        .filter(|l| !new.contains(l))
        .cloned()
        .collect::<Vec<_>>()
    {
        let mut ev = TimelineEvent::new(id, EventKind::Label, at, actor);
        ev.label = Some(removed);
        ev.removed = true;
        i.timeline.push(ev);
        id += 1;
    }
    for added in new
        .iter()
        .filter(|l| !i.labels.contains(l))
        .cloned()
        .collect::<Vec<_>>()
    {
        let mut ev = TimelineEvent::new(id, EventKind::Label, at, actor);
        ev.label = Some(added);
        i.timeline.push(ev);
        id += 1;
    }
    i.labels = new;
}

/// Gitea's `NormalizeColor`: `rgb` or `rrggbb`, with or without `#`, any case; six lower-case digits without `#`.
fn normalize_color(color: &str) -> Result<String, String> {
    let mut c = color.trim().to_lowercase();
    if c.len() == 6 || c.len() == 3 {
        c.insert(0, '#');
    }
    let digits = c.strip_prefix('#').unwrap_or(&c);
    if !(digits.len() == 6 || digits.len() == 3) || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("bad color code: {c}"));
    }
    Ok(if digits.len() == 3 {
        digits.chars().flat_map(|ch| [ch, ch]).collect()
    } else {
        digits.to_owned()
    })
}

/// `POST /repos/{o}/{r}/labels` (`CreateLabelOption`): no check for a duplicate name.
fn create_label(req: &Request, shared: &Shared, ds: &mut Dataset, repo: &RepoName) -> Answer {
    let body = body_json(req, shared)?;
    let name = body["name"].as_str().unwrap_or_default();
    let color = body["color"].as_str().unwrap_or_default();
    if name.is_empty() || color.is_empty() {
        let missing: Vec<&str> = [("Name", name), ("Color", color)]
            .iter()
            .filter(|(_, v)| v.is_empty())
            .map(|(k, _)| *k)
            .collect();
        return Err(error(
            shared,
            422,
            &format!("[{}]: Required", missing.join(" ")),
        ));
    }
    let color = normalize_color(color).map_err(|m| error(shared, 422, &m))?;
    let description = body["description"].as_str().unwrap_or_default();
    let exclusive = body["exclusive"].as_bool().unwrap_or(false);
    let label = ds.create_label(repo, name, &color, description, exclusive);
    let r = Render::new(ds, shared);
    Ok(Response::json(201, &r.label(repo, &label)))
}

/// A Go JSON binding error for field `field` of `CreateIssueOption`.
fn bad_field(shared: &Shared, v: &Value, field: &str, ty: &str) -> Response {
    error(
        shared,
        422,
        &format!(
            "json: cannot unmarshal {v} into Go struct field CreateIssueOption.{field} of type {ty}"
        ),
    )
}

/// `POST /repos/{o}/{r}/issues` (`CreateIssueOption`): title, body, labels (ids), milestone.
fn create_issue(req: &Request, shared: &Shared, ds: &mut Dataset, repo: &RepoName) -> Answer {
    let body = body_json(req, shared)?;
    let title = match &body["title"] {
        Value::Null => "",
        Value::String(s) => s.as_str(),
        v => return Err(bad_field(shared, v, "title", "string")),
    };
    let text = match &body["body"] {
        Value::Null => "",
        Value::String(s) => s.as_str(),
        v => return Err(bad_field(shared, v, "body", "string")),
    };
    let label_ids: Vec<u64> = match &body["labels"] {
        Value::Null => Vec::new(),
        Value::Array(items) => {
            let mut ids = Vec::new();
            for v in items {
                match v.as_i64() {
                    Some(id) => ids.extend(u64::try_from(id).ok()),
                    None => return Err(bad_field(shared, v, "labels", "int64")),
                }
            }
            ids
        }
        v => return Err(bad_field(shared, v, "labels", "[]int64")),
    };
    let milestone = match &body["milestone"] {
        Value::Null => 0,
        v => match v.as_i64() {
            Some(m) => m,
            None => return Err(bad_field(shared, v, "milestone", "int64")),
        },
    };
    let assignees = asked_assignees(shared, &body)?.unwrap_or_default();
    if title.is_empty() {
        return Err(error(shared, 422, "[Title]: Required"));
    }
    // `CreateIssue`: a user who may not write the issues files one all the same, without its labels
    // ("setting labels is not allowed if user is not a writer"), milestone or assignees (set only for a
    // writer, each checked: `Assignee does not exist`, 422).
    let writer = issues_writer(shared);
    let assignees = if writer { assignees } else { Vec::new() };
    if let Some(unknown) = assignees.iter().find(|a| !ds.knows_user(a)) {
        return Err(error(
            shared,
            422,
            &format!(
                "Assignee does not exist: [name: user does not exist [uid: 0, name: {unknown}]]"
            ),
        ));
    }
    let (label_ids, milestone) = if writer {
        (label_ids, milestone)
    } else {
        (Vec::new(), 0)
    };
    let number = pulls::next_number(ds, &lock(&shared.state_pulls), repo);
    let actor = shared.options.user.clone();
    let at = ds.tick();
    let mut issue = blank_issue(number, title, &actor, at);
    text.clone_into(&mut issue.body);
    // `NewIssueWithIndex`: labels of this repository or its organisation (`label.RepoID != opts.Repo.ID &&
    // label.OrgID != opts.Repo.OwnerID` is skipped), unknown ids dropped, each added as `newIssueLabel`.
    let mut wanted: Vec<Label> = ds
        .issue_labels(repo)
        .into_iter()
        .filter(|l| label_ids.contains(&l.id))
        .collect();
    wanted.sort_by_key(|l| l.id);
    let labels = add_labels(ds, repo, &[], &wanted);
    let mut labels_sorted = labels;
    labels_sorted.sort();
    labels_sorted.dedup();
    record_labels(&mut issue, labels_sorted, at, &actor);
    if let Some(m) = u64::try_from(milestone)
        .ok()
        .filter(|m| ds.milestones(repo).iter().any(|x| x.id == *m))
    {
        issue.milestone = Some(m);
        let mut ev = TimelineEvent::new(next_event_id(&issue), EventKind::Milestone, at, &actor);
        ev.milestone = Some(m);
        issue.timeline.push(ev);
    }
    for a in &assignees {
        let mut ev = TimelineEvent::new(next_event_id(&issue), EventKind::Assignees, at, &actor);
        ev.assignee = Some(a.clone());
        issue.timeline.push(ev);
    }
    issue.assignees = assignees;
    ds.insert_issue(repo, issue);
    let r = Render::new(ds, shared);
    Ok(Response::json(201, &r.issue_or_pull(&repo.issue(number))))
}

/// `POST`/`DELETE /issues/{n}/dependencies` (`IssueMeta`): both answer 201 with issue `{n}`; a dependency that
/// already exists (or the reverse one) cannot be added and a missing one cannot be removed (500, no message).
fn change_dependency(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    key: &IssueKey,
    actor: &str,
) -> Answer {
    let meta = body_json(req, shared)?;
    let owner = meta["owner"].as_str().unwrap_or_default();
    let name = meta["repo"].as_str().unwrap_or_default();
    let index = meta["index"].as_i64().unwrap_or(0);
    // routers/api/v1/repo/issue_dependency.go `getFormIssue`: another repository's is looked up by its
    // lower-cased name, as every repository is.
    let dep_repo = ds.canonical(RepoName::new(owner, name));
    let Some(repo_id) = ds.repo_id(&dep_repo) else {
        return Err(Response::json(
            404,
            &json!({
                "message": "IsErrRepoNotExist",
                "url": format!("{}/api/swagger", shared.base),
                "errors": [format!("repository does not exist [id: 0, uid: 0, owner_name: {owner}, name: {name}]")],
            }),
        ));
    };
    let dep = u64::try_from(index)
        .ok()
        .map(|n| dep_repo.issue(n))
        .filter(|d| ds.issue(d).is_some() || ds.pull(&d.repo, d.number).is_some());
    let Some(dep) = dep else {
        return Err(Response::json(
            404,
            &json!({
                "message": "IsErrIssueNotExist",
                "url": format!("{}/api/swagger", shared.base),
                "errors": [format!("issue does not exist [id: 0, repo_id: {repo_id}, index: {index}]")],
            }),
        ));
    };
    let add = req.method == "POST";
    let has = ds.issue(key).is_some_and(|i| i.depends_on.contains(&dep));
    // `CreateIssueDependency` refuses an existing and a circular dependency (ErrDependencyExists,
    // ErrCircularDependency); `RemoveIssueDependency` a missing one (ErrDependencyNotExists): all 500.
    let circular = ds.issue(&dep).is_some_and(|d| d.depends_on.contains(key));
    if (add && (has || circular)) || (!add && !has) {
        return Err(error(shared, 500, ""));
    }
    let at = ds.tick();
    if let Some(i) = ds.issue_mut(key) {
        let kind = if add {
            i.depends_on.push(dep.clone());
            i.depends_on.sort();
            EventKind::AddDependency
        } else {
            i.depends_on.retain(|d| d != &dep);
            EventKind::RemoveDependency
        };
        let mut ev = TimelineEvent::new(next_event_id(i), kind, at, actor);
        ev.dependency = Some(dep.clone());
        i.timeline.push(ev);
        i.updated_at = at;
    }
    // `createIssueDependencyComment` makes "two comments, one in each issue" (models/issues/comment.go),
    // and each comment bumps its issue's `updated_unix`: the blocker changes too.
    if let Some(b) = ds.issue_mut(&dep) {
        let kind = if add {
            EventKind::AddDependency
        } else {
            EventKind::RemoveDependency
        };
        let mut ev = TimelineEvent::new(next_event_id(b), kind, at, actor);
        ev.dependency = Some(key.clone());
        b.timeline.push(ev);
        b.updated_at = at;
    }
    let r = Render::new(ds, shared);
    Ok(Response::json(201, &r.issue_or_pull(key)))
}

fn dependency_page(req: &Request, shared: &Shared, ds: &Dataset, keys: &[IssueKey]) -> Response {
    let r = Render::new(ds, shared);
    let p = Paging::of(req, shared);
    // A blocker in a repository the caller may not read comes back as Gitea's placeholder, or, to a caller
    // who may write the blocked issue, as its "confidential" form (repository, number, title, state)
    // (routers/api/v1/repo/issue_dependency.go `GetIssueDependencies`). A blocker of a repository the
    // dataset does not hold has nothing to be confidential about: the placeholder.
    let items: Vec<Value> = p
        .slice(keys)
        .iter()
        .map(|k| match r.issue_or_pull(k) {
            Value::Null if ds.repo_id(&k.repo).is_none() => r.hidden_issue(),
            _ if ds.is_hidden(&k.repo) => match ds.issue(k) {
                Some(i) if !shared.options.read_only => r.confidential_issue(k, i),
                _ => r.hidden_issue(),
            },
            v => v,
        })
        .filter(|v| !v.is_null())
        .collect();
    Response::json(200, &Value::Array(items))
}

/// `PATCH /issues/{n}` (`EditIssueOption`), in Gitea's order: title (when not empty), body, assignees,
/// milestone, state; a change made before a failing step stays made. 201 with the issue.
fn edit_issue(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    key: &IssueKey,
    actor: &str,
) -> Answer {
    let body = body_json(req, shared)?;
    let binding = |field: &str, ty: &str| {
        error(
            shared,
            422,
            &format!(
                "json: cannot unmarshal {} into Go struct field EditIssueOption.{field} of type {ty}",
                body[field]
            ),
        )
    };
    let milestone = match &body["milestone"] {
        Value::Null => None,
        v => Some(v.as_i64().ok_or_else(|| binding("milestone", "int64"))?),
    };
    let state = match &body["state"] {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        _ => return Err(binding("state", "string")),
    };
    // `EditIssue`: someone who may not write the issues edits only their own, and then only its title,
    // body and state (the milestone is set "only if allowed", silently).
    let writer = issues_writer(shared);
    if !writer && ds.issue(key).is_some_and(|i| i.author != actor) {
        return Ok(Response::empty(403));
    }
    let milestone = milestone.filter(|_| writer);
    // `UpdateAssignees`, a writer's only: the set replaced, an unknown login failing the rest (500).
    let assignees = asked_assignees(shared, &body)?.filter(|_| writer);
    if assignees
        .as_ref()
        .is_some_and(|list| list.iter().any(|a| !ds.knows_user(a)))
    {
        return Err(error(shared, 500, ""));
    }
    let at = ds.tick();
    let mut changed = false;
    let event = |i: &Issue, kind: EventKind| TimelineEvent::new(next_event_id(i), kind, at, actor);
    let Some(i) = ds.issue_mut(key) else {
        return Err(not_found(shared));
    };
    if let Some(title) = body["title"]
        .as_str()
        .filter(|t| !t.is_empty() && *t != i.title)
    {
        let mut e = event(i, EventKind::ChangeTitle);
        e.old_title = Some(i.title.clone());
        e.new_title = Some(title.to_owned());
        i.title = title.to_owned();
        i.timeline.push(e);
        changed = true;
    }
    if let Some(b) = body["body"].as_str().filter(|b| *b != i.body) {
        i.body = b.to_owned();
        changed = true;
    }
    if let Some(list) = assignees {
        // Each change is a comment, which marks the issue updated (`updateCommentInfos`).
        for old in i.assignees.clone().iter().filter(|o| !list.contains(o)) {
            let mut e = event(i, EventKind::Assignees);
            e.assignee = Some(old.clone());
            e.removed = true;
            i.timeline.push(e);
            changed = true;
        }
        for new in list.iter().filter(|n| !i.assignees.contains(n)) {
            let mut e = event(i, EventKind::Assignees);
            e.assignee = Some(new.clone());
            i.timeline.push(e);
            changed = true;
        }
        i.assignees = list;
    }
    if changed {
        i.updated_at = at;
    }
    if let Some(m) = milestone.filter(|m| *m != i.milestone.map_or(0, |x| x as i64)) {
        let new = if m > 0 {
            // `GetMilestoneByRepoID` failing goes to `APIErrorInternal`: 500, and no message for a non-admin.
            let found = u64::try_from(m)
                .ok()
                .filter(|m| ds.milestones(&key.repo).iter().any(|x| x.id == *m));
            match found {
                Some(id) => Some(id),
                None => return Err(error(shared, 500, "")),
            }
        } else {
            None
        };
        if let Some(i) = ds.issue_mut(key) {
            let mut e = event(i, EventKind::Milestone);
            e.milestone = new;
            e.old_milestone = i.milestone;
            i.milestone = new;
            i.timeline.push(e);
            i.updated_at = at;
        }
    }
    if let Some(s) = state {
        // Gitea's `closeOrReopenIssue` takes only these two; Forgejo's `EditIssue` has `isClosed :=
        // api.StateClosed == api.StateType(*form.State)`: any other word opens the issue (audit 154).
        let new = match s.as_str() {
            "closed" => OpenState::Closed,
            "open" => OpenState::Open,
            _ if shared.options.forgejo() => OpenState::Open,
            _ => return Err(error(shared, 412, &format!("unknown state: {s}"))),
        };
        // `CloseIssue` refuses while a dependency is open and the repository has dependencies on
        // (`models/issues/issue_update.go` `doChangeIssueStatus`: `ErrDependenciesLeft`), which
        // `routers/api/v1/repo/issue.go` `closeOrReopenIssue` answers with 412. An open pull request
        // counts as an issue does: `IssueNoDependenciesLeft` joins the `issue` table, which holds both.
        let open = |b: &IssueKey| {
            ds.issue(b).is_some_and(|b| b.state == OpenState::Open)
                || ds
                    .pull(&b.repo, b.number)
                    .is_some_and(|p| p.state == OpenState::Open)
        };
        let blocked = new == OpenState::Closed
            && !shared.options.dependencies_disabled.contains(&key.repo)
            && ds
                .issue(key)
                .is_some_and(|i| i.state == OpenState::Open && i.depends_on.iter().any(open));
        if blocked {
            return Err(error(
                shared,
                412,
                "cannot close this issue or pull request because it still has open dependencies",
            ));
        }
        if let Some(i) = ds.issue_mut(key)
            && i.state != new
        {
            let kind = if new == OpenState::Closed {
                "close"
            } else {
                "reopen"
            };
            let e = event(i, kind.into());
            i.state = new;
            i.closed_at = (new == OpenState::Closed).then_some(at);
            i.timeline.push(e);
            i.updated_at = at;
        }
    }
    let r = Render::new(ds, shared);
    Ok(Response::json(201, &r.issue_or_pull(key)))
}

/// `PATCH /milestones/{id}` (`EditMilestoneOption`), `{id}` the id or the title: title when not empty, description
/// when given, `due_on` only when given and not zero (`EditMilestone`: `form.Deadline != nil &&
/// !form.Deadline.IsZero()`; absent or null keeps it, and the API cannot clear a due date), state `closed`
/// closes and any other value reopens.
fn edit_milestone(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    repo: &RepoName,
    id: &str,
) -> Answer {
    let body = body_json(req, shared)?;
    let found = ds
        .milestones(repo)
        .iter()
        .find(|m| m.id.to_string() == id)
        .or_else(|| ds.milestones(repo).iter().find(|m| m.title == id))
        .map(|m| m.id)
        .ok_or_else(|| not_found(shared))?;
    let due_on = match &body["due_on"] {
        Value::String(s) => Some(
            DateTime::parse_from_rfc3339(s)
                .map_err(|e| error(shared, 422, &format!("due_on: parsing time {s:?}: {e}")))?
                .with_timezone(&Utc),
        ),
        Value::Null => None,
        v => {
            return Err(error(
                shared,
                422,
                &format!(
                    "json: cannot unmarshal {v} into Go struct field EditMilestoneOption.due_on of type time.Time"
                ),
            ));
        }
    };
    let state = match &body["state"] {
        Value::Null => None,
        Value::String(s) => Some(if s == "closed" {
            OpenState::Closed
        } else {
            OpenState::Open
        }),
        v => {
            return Err(error(
                shared,
                422,
                &format!(
                    "json: cannot unmarshal {v} into Go struct field EditMilestoneOption.state of type string"
                ),
            ));
        }
    };
    ds.update_milestone_at(found, |m, at| {
        if let Some(t) = body["title"].as_str().filter(|t| !t.is_empty()) {
            t.clone_into(&mut m.title);
        }
        if let Some(d) = body["description"].as_str() {
            d.clone_into(&mut m.description);
        }
        // Go's zero time, 0001-01-01T00:00:00Z, is "not given" as well.
        if let Some(d) = due_on.filter(|d| d.timestamp() != -62_135_596_800) {
            m.due_on = Some(d);
        }
        if let Some(s) = state.filter(|s| *s != m.state) {
            m.state = s;
            m.closed_at = (s == OpenState::Closed).then_some(at);
        }
    });
    let r = Render::new(ds, shared);
    let m = ds.milestone(found).ok_or_else(|| not_found(shared))?;
    Ok(Response::json(200, &r.milestone(m)))
}
