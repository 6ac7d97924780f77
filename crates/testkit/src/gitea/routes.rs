//! The endpoints: routing a request to its handler, auth, pagination and the write operations.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::dataset::{Dataset, Render, TimelineEntry, timeline_entries};
use super::http::{Request, Response};
use super::{Shared, lock};
use commitea::domain::{IssueKey, Label, OpenState, RepoName, TimelineEvent};

/// Gitea's error body.
fn error(shared: &Shared, status: u16, message: &str) -> Response {
    Response::json(
        status,
        &json!({"message": message, "url": format!("{}/api/swagger", shared.base)}),
    )
}

fn not_found(shared: &Shared) -> Response {
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
struct Paging {
    page: usize,
    limit: usize,
}

impl Paging {
    fn of(req: &Request, shared: &Shared) -> Self {
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

    fn slice<'a, T>(&self, items: &'a [T]) -> &'a [T] {
        let start = (self.page - 1).saturating_mul(self.limit).min(items.len());
        let end = start.saturating_add(self.limit).min(items.len());
        &items[start..end]
    }
}

/// A list response with `X-Total-Count` and Gitea's `Link` header.
fn listed(
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

fn authorised(req: &Request, shared: &Shared) -> Result<(), Response> {
    let Some(h) = req.header("authorization") else {
        return Err(error(shared, 401, "token is required"));
    };
    let token = h
        .strip_prefix("token ")
        .or_else(|| h.strip_prefix("Bearer "))
        .or_else(|| h.strip_prefix("bearer "))
        .map(str::trim);
    if token == Some(shared.options.token.as_str()) {
        Ok(())
    } else {
        Err(error(shared, 401, "invalid username, password or token"))
    }
}

/// Answers one request.
pub(crate) fn handle(req: &Request, shared: &Shared) -> Response {
    let Some(rest) = req.path.strip_prefix("/api/v1/") else {
        return not_found(shared);
    };
    if let Err(resp) = authorised(req, shared) {
        return resp;
    }
    let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let method = req.method.as_str();
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
        (_, ["repos", owner, name, tail @ ..]) => {
            let repo = RepoName::new(*owner, *name);
            let mut ds = lock(&shared.dataset);
            if ds.repo_id(&repo).is_none() {
                return not_found(shared);
            }
            repo_route(req, shared, &mut ds, &repo, tail).unwrap_or_else(|r| r)
        }
        _ => not_found(shared),
    }
}

type Answer = Result<Response, Response>;

fn number(seg: &str, shared: &Shared) -> Result<u64, Response> {
    seg.parse().map_err(|_| not_found(shared))
}

fn body_json(req: &Request, shared: &Shared) -> Result<Value, Response> {
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
    let method = req.method.as_str();
    match (method, tail) {
        ("GET", []) => {
            let r = Render::new(ds, shared);
            let times = !shared.options.time_tracking_disabled.contains(repo);
            Ok(Response::json(
                200,
                &r.repository(repo, deps_enabled, times),
            ))
        }
        ("GET", ["labels"]) => {
            let r = Render::new(ds, shared);
            let mut labels = ds.labels(repo).to_vec();
            labels.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
            let p = Paging::of(req, shared);
            let items = p.slice(&labels).iter().map(|l| r.label(repo, l)).collect();
            Ok(listed(shared, req, p, labels.len(), items))
        }
        ("GET", ["milestones"]) => {
            let r = Render::new(ds, shared);
            let want = req.param("state").unwrap_or("open");
            let mut ms: Vec<_> = ds
                .milestones(repo)
                .iter()
                .filter(|m| match want {
                    "all" => true,
                    "closed" => m.state == OpenState::Closed,
                    _ => m.state == OpenState::Open,
                })
                .filter(|m| req.param("name").is_none_or(|n| m.title == n))
                .cloned()
                .collect();
            ms.sort_by_key(|m| (m.due_on.is_none(), m.due_on, m.id));
            let p = Paging::of(req, shared);
            let items = p.slice(&ms).iter().map(|m| r.milestone(m)).collect();
            Ok(listed(shared, req, p, ms.len(), items))
        }
        ("PATCH", ["milestones", id]) => edit_milestone(req, shared, ds, repo, id),
        ("GET", ["issues"]) => list_issues(req, shared, ds, repo),
        ("GET", ["issues", "comments"]) => {
            let since = time_param(req, shared, "since")?;
            let before = time_param(req, shared, "before")?;
            let r = Render::new(ds, shared);
            let mut all: Vec<(u64, &commitea::domain::Comment)> = ds
                .issues(repo)
                .into_iter()
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
            issue_route(req, shared, ds, &key, rest, deps_enabled)
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

fn state_matches(want: &str, state: OpenState) -> bool {
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
    let r = Render::new(ds, shared);
    // (created_at, number, is a pull request); only the page asked for is rendered.
    let mut rows: Vec<(DateTime<Utc>, u64, bool)> = Vec::new();
    if kind != "pulls" {
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
            // issue_comment.go sends a failed issue lookup to APIErrorInternal: 500, and no message
            // for a caller who is not an admin.
            ["comments"] | ["timeline"] => error(shared, 500, ""),
            ["dependencies"] | ["blocks"] if deps_enabled => error(
                shared,
                404,
                &format!(
                    "issue does not exist [id: 0, repo_id: {}, index: {}]",
                    ds.repo_id(&key.repo).unwrap_or(0),
                    key.number
                ),
            ),
            ["dependencies"] | ["blocks"] => error(shared, 404, "not found"),
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
            let entries: Vec<TimelineEntry<'_>> = timeline_entries(i)
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
            Err(error(shared, 404, "timetracker is disabled"))
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
        ("POST" | "DELETE", ["dependencies"]) if is_issue => {
            let meta = body_json(req, shared)?;
            let owner = meta["owner"].as_str().unwrap_or(&key.repo.owner).to_owned();
            let name = meta["repo"].as_str().unwrap_or(&key.repo.name).to_owned();
            let index = meta["index"]
                .as_u64()
                .ok_or_else(|| error(shared, 422, "IssueMeta: index is required"))?;
            let dep = RepoName::new(owner, name).issue(index);
            if ds.issue(&dep).is_none() {
                return Err(not_found(shared));
            }
            let add = method == "POST";
            let at = ds.tick();
            let ev_at = at;
            let mut changed = false;
            if let Some(i) = ds.issue_mut(key) {
                let has = i.depends_on.contains(&dep);
                if add && !has {
                    i.depends_on.push(dep.clone());
                    i.depends_on.sort();
                    changed = true;
                } else if !add && has {
                    i.depends_on.retain(|d| d != &dep);
                    changed = true;
                }
                if changed {
                    let kind = if add {
                        "add_dependency"
                    } else {
                        "remove_dependency"
                    };
                    let mut ev = TimelineEvent::new(next_event_id(i), kind.into(), ev_at, &actor);
                    ev.dependency = Some(dep.clone());
                    i.timeline.push(ev);
                    i.updated_at = at;
                }
            }
            let r = Render::new(ds, shared);
            Ok(Response::json(
                if add { 201 } else { 200 },
                &r.issue_or_pull(key),
            ))
        }
        ("GET", ["labels"]) => {
            let r = Render::new(ds, shared);
            Ok(Response::json(200, &issue_labels(&r, key)))
        }
        ("POST" | "PUT", ["labels"]) if is_issue => {
            let body = body_json(req, shared)?;
            let wanted = resolve_labels(ds, &key.repo, &body["labels"])
                .map_err(|m| error(shared, 422, &m))?;
            let replace = method == "PUT";
            set_labels(ds, key, &actor, |current| {
                if replace {
                    wanted.iter().map(|l| l.name.clone()).collect()
                } else {
                    let mut v = current.to_vec();
                    v.extend(wanted.iter().map(|l| l.name.clone()));
                    v
                }
            });
            let r = Render::new(ds, shared);
            Ok(Response::json(200, &issue_labels(&r, key)))
        }
        ("DELETE", ["labels"]) if is_issue => {
            set_labels(ds, key, &actor, |_| Vec::new());
            Ok(Response::empty(204))
        }
        ("DELETE", ["labels", id]) if is_issue => {
            let id = number(id, shared)?;
            let Some(label) = ds.labels(&key.repo).iter().find(|l| l.id == id).cloned() else {
                return Err(error(shared, 422, &format!("label {id} does not exist")));
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

fn next_event_id(i: &commitea::domain::Issue) -> u64 {
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

/// The labels of `repo` named by ids or names in an `IssueLabelsOption`.
fn resolve_labels(ds: &Dataset, repo: &RepoName, list: &Value) -> Result<Vec<Label>, String> {
    let Some(items) = list.as_array() else {
        return Err("IssueLabelsOption: labels must be a list of ids or names".into());
    };
    let mut out = Vec::new();
    for item in items {
        let found = match item {
            Value::Number(n) => n
                .as_u64()
                .and_then(|id| ds.labels(repo).iter().find(|l| l.id == id)),
            Value::String(s) => ds.labels(repo).iter().find(|l| &l.name == s),
            _ => None,
        };
        match found {
            Some(l) => out.push(l.clone()),
            None => return Err(format!("label {item} does not exist in {repo}")),
        }
    }
    Ok(out)
}

/// Sets the issue's labels to `f(current)` (deduplicated, sorted), recording one `label` event per change.
fn set_labels(
    ds: &mut Dataset,
    key: &IssueKey,
    actor: &str,
    f: impl FnOnce(&[String]) -> Vec<String>,
) {
    let at = ds.tick();
    let Some(i) = ds.issue_mut(key) else { return };
    let mut new = f(&i.labels);
    new.sort();
    new.dedup();
    if new == i.labels {
        return;
    }
    let mut id = next_event_id(i);
    for removed in i
        .labels
        .iter()
        .filter(|l| !new.contains(l))
        .cloned()
        .collect::<Vec<_>>()
    {
        let mut ev = TimelineEvent::new(id, commitea::domain::EventKind::Label, at, actor);
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
        let mut ev = TimelineEvent::new(id, commitea::domain::EventKind::Label, at, actor);
        ev.label = Some(added);
        i.timeline.push(ev);
        id += 1;
    }
    i.labels = new;
    i.updated_at = at;
}

fn dependency_page(req: &Request, shared: &Shared, ds: &Dataset, keys: &[IssueKey]) -> Response {
    let r = Render::new(ds, shared);
    let p = Paging::of(req, shared);
    // A blocker in a repository the caller may not read comes back as Gitea's placeholder
    // (routers/api/v1/repo/issue_dependency.go `GetIssueDependencies`).
    let items: Vec<Value> = p
        .slice(keys)
        .iter()
        .map(|k| match r.issue_or_pull(k) {
            Value::Null if ds.repo_id(&k.repo).is_none() => r.hidden_issue(),
            v => v,
        })
        .filter(|v| !v.is_null())
        .collect();
    Response::json(200, &Value::Array(items))
}

fn edit_issue(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    key: &IssueKey,
    actor: &str,
) -> Answer {
    let body = body_json(req, shared)?;
    let new_state = match body["state"].as_str() {
        None => None,
        Some("open") => Some(OpenState::Open),
        Some("closed") => Some(OpenState::Closed),
        Some(s) => return Err(error(shared, 422, &format!("state: unknown state {s:?}"))),
    };
    let new_milestone = match &body["milestone"] {
        Value::Null => None,
        v => match v.as_u64() {
            Some(0) => Some(None),
            Some(id) if ds.milestone(id).is_some() => Some(Some(id)),
            _ => return Err(error(shared, 422, &format!("milestone {v} does not exist"))),
        },
    };
    let at = ds.tick();
    let Some(i) = ds.issue_mut(key) else {
        return Err(not_found(shared));
    };
    let first_id = next_event_id(i);
    let mut events: Vec<TimelineEvent> = Vec::new();
    let mut changed = false;
    let ev = |events: &Vec<TimelineEvent>, kind: &str| {
        TimelineEvent::new(first_id + events.len() as u64, kind.into(), at, actor)
    };
    if let Some(title) = body["title"].as_str().filter(|t| *t != i.title) {
        let mut e = ev(&events, "change_title");
        e.old_title = Some(i.title.clone());
        e.new_title = Some(title.to_owned());
        i.title = title.to_owned();
        events.push(e);
    }
    if let Some(b) = body["body"].as_str().filter(|b| *b != i.body) {
        i.body = b.to_owned();
        changed = true;
    }
    if let Some(m) = new_milestone.filter(|m| *m != i.milestone) {
        let mut e = ev(&events, "milestone");
        e.milestone = m;
        e.old_milestone = i.milestone;
        i.milestone = m;
        events.push(e);
    }
    if let Some(s) = new_state.filter(|s| *s != i.state) {
        let e = ev(
            &events,
            if s == OpenState::Closed {
                "close"
            } else {
                "reopen"
            },
        );
        i.state = s;
        i.closed_at = (s == OpenState::Closed).then_some(at);
        events.push(e);
    }
    changed |= !events.is_empty();
    i.timeline.extend(events);
    if changed {
        i.updated_at = at;
    }
    let r = Render::new(ds, shared);
    Ok(Response::json(201, &r.issue_or_pull(key)))
}

fn edit_milestone(
    req: &Request,
    shared: &Shared,
    ds: &mut Dataset,
    repo: &RepoName,
    id: &str,
) -> Answer {
    let body = body_json(req, shared)?;
    // Gitea accepts the id or the title.
    let found = ds
        .milestones(repo)
        .iter()
        .find(|m| m.id.to_string() == id || m.title == id)
        .map(|m| m.id)
        .ok_or_else(|| not_found(shared))?;
    let due_on = match &body["due_on"] {
        Value::String(s) => Some(Some(
            DateTime::parse_from_rfc3339(s)
                .map_err(|e| error(shared, 422, &format!("due_on: {e}")))?
                .with_timezone(&Utc),
        )),
        _ => None,
    };
    let state = match body["state"].as_str() {
        None => None,
        Some("open") => Some(OpenState::Open),
        Some("closed") => Some(OpenState::Closed),
        Some(s) => return Err(error(shared, 422, &format!("state: unknown state {s:?}"))),
    };
    let now = ds.clock() + chrono::Duration::seconds(1);
    ds.update_milestone(found, |m| {
        if let Some(t) = body["title"].as_str() {
            t.clone_into(&mut m.title);
        }
        if let Some(d) = body["description"].as_str() {
            d.clone_into(&mut m.description);
        }
        if let Some(d) = due_on {
            m.due_on = d;
        }
        if let Some(s) = state.filter(|s| *s != m.state) {
            m.state = s;
            m.closed_at = (s == OpenState::Closed).then_some(now);
        }
    });
    let r = Render::new(ds, shared);
    let m = ds.milestone(found).ok_or_else(|| not_found(shared))?;
    Ok(Response::json(200, &r.milestone(m)))
}
