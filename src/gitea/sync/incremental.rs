//! Incremental sync: per repository, a full read when it is due, else only what changed since the cursor.
//!
//! An incremental pass over a repository asks for its labels, its milestones (`state=all`), the issues and
//! pull requests updated since the cursor (`issues?state=all&since=…`, no type filter) and the comments
//! updated since the cursor (`issues/comments?since=…`, because editing a comment does not bump its issue).
//! Every issue that changed — listed, commented, or linked by a changed pull request (by a closing keyword
//! in its description, or because the previous snapshot lists that pull request) — is re-read; everything
//! else is carried over from the previous snapshot. Deletions and transfers are invisible to `since`: they
//! are only seen by the periodic full resync.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Duration, SecondsFormat, Utc};

use super::{
    Acc, PullInfo, PullText, Run, SyncError, finish_links, full_repo, note_keyword_links, pull_key,
    read_issues, read_labels, read_milestones, rename_back, state,
};
use crate::domain::{Issue, IssueKey, OpenState, RepoName};
use crate::gitea::client::{Client, ClientError};
use crate::gitea::wire::{GCommentRef, GIssue};
use crate::state::{Meta, RepoMeta, Snapshot};

/// How [`sync`] decides between a full and an incremental read.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncOptions {
    /// A repository whose last full read is this many days old (or older) is read in full again, so that
    /// deleted and transferred issues disappear.
    pub full_every_days: u32,
    /// Read every repository in full.
    pub force_full: bool,
    /// The share of a repository's issues (of the previous snapshot) a full read may find gone before
    /// the sync stops with [`SyncError::Vanished`]; 1 accepts any.
    pub max_vanished_share: f64,
}

impl Default for SyncOptions {
    fn default() -> Self {
        Self {
            full_every_days: 7,
            force_full: false,
            max_vanished_share: 0.5,
        }
    }
}

/// A repository with fewer issues than this in the previous snapshot is never held to
/// [`SyncOptions::max_vanished_share`]: deleting three of its five issues is ordinary housekeeping.
pub const VANISH_CHECK_MIN: usize = 20;

/// How far before the server's clock at the start of a sync the next cursor is set: a change written
/// while the sync read its listing (a transaction committed a moment after its `updated_at`) is still
/// seen next time. Issues changed inside the margin are read again; when nothing changed they are equal
/// to what the snapshot holds, so nothing is rewritten.
pub(crate) const CURSOR_OVERLAP: Duration = Duration::seconds(60);

/// What [`sync`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncOutcome {
    /// The new snapshot (the previous one, unchanged, when nothing changed).
    pub snapshot: Snapshot,
    /// The repositories read in full.
    pub full: Vec<RepoName>,
    /// How many issues of incrementally synced repositories were re-read.
    pub refreshed: usize,
    /// Whether anything differs from the previous snapshot.
    pub changed: bool,
}

/// Gitea's time format for `since`.
fn since(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The issue number at the end of a comment's `issue_url`.
fn issue_number(url: &str) -> Option<u64> {
    url.trim_end_matches('/').rsplit('/').next()?.parse().ok()
}

/// What an incremental pass over one repository found.
#[derive(Default)]
struct Changes {
    /// Issues listed as updated since the cursor, with their listing shape.
    listed: BTreeMap<IssueKey, GIssue>,
    /// Issues with a new or edited comment.
    commented: BTreeSet<IssueKey>,
}

/// Syncs `repos` against the `previous` snapshot: each repository in full when forced, when `previous` has
/// no cursor for it (or came from another server), or when its last full read is `full_every_days` old;
/// otherwise incrementally (see the module documentation).
///
/// `now` is the client's clock, taken before the first request: it becomes `synced_at` (or the newest
/// `updated_at` read, where that is later) and, for the repositories read in full, their
/// `last_full_sync`. Every repository's next cursor is the server's clock
/// at its first answer (its `Date` header; else the newest `updated_at` seen) less [`CURSOR_OVERLAP`], so
/// that what changes during the sync is seen next time whatever the two clocks say. When no
/// repository was read in full and the labels, milestones and issues are identical to `previous`, the
/// outcome carries `previous` itself (meta included) and `changed` is false.
pub fn sync(
    client: &Client,
    repos: &[RepoName],
    previous: Option<&Snapshot>,
    now: DateTime<Utc>,
    options: &SyncOptions,
) -> Result<SyncOutcome, SyncError> {
    let server = client.server();
    let prev = previous.filter(|p| p.meta.server.as_deref().is_none_or(|s| s == server));
    let prev_meta: HashMap<&RepoName, &RepoMeta> = prev
        .map(|p| p.meta.repositories.iter().map(|r| (&r.name, r)).collect())
        .unwrap_or_default();
    let previous_meta: &[RepoMeta] = prev.map_or(&[], |p| p.meta.repositories.as_slice());
    let max_age = Duration::days(i64::from(options.full_every_days));
    // A repository put in or taken out of `repositories` (renamed, moved) has every repository read in
    // full: the others' dependencies on it are read anew, in or out of the plan, rather than left as
    // they were until the weekly full read (audit 168: after a rename, a wait into it was dropped as
    // "not in the snapshot" for up to a week).
    let set_changed = prev.is_some()
        && prev_meta.keys().copied().collect::<BTreeSet<&RepoName>>()
            != repos.iter().collect::<BTreeSet<&RepoName>>();

    // Which repositories are read in full, and the cursor of the others.
    let mut cursors: BTreeMap<RepoName, DateTime<Utc>> = BTreeMap::new();
    let mut full: Vec<RepoName> = Vec::new();
    for repo in repos {
        let due = prev_meta
            .get(repo)
            .and_then(|m| Some((m.cursor?, m.last_full_sync?)))
            // A full read stamped after now (a run given a later `--now`) has no age to trust: read in
            // full (audit 99: such a stamp put the weekly full read off by weeks).
            .filter(|(_, last)| {
                !options.force_full && !set_changed && *last <= now && now - *last < max_age
            });
        match due {
            Some((cursor, _)) => {
                cursors.insert(repo.clone(), cursor);
            }
            None if !full.contains(repo) => full.push(repo.clone()),
            None => {}
        }
    }
    let full_set: BTreeSet<RepoName> = full.iter().cloned().collect();

    let mut run = Run {
        configured: repos.iter().cloned().collect(),
        ..Run::default()
    };
    let mut acc = Acc::default();
    let mut changes: BTreeMap<RepoName, Changes> = BTreeMap::new();
    let mut changed_pulls: BTreeSet<IssueKey> = BTreeSet::new();
    // Issues named by a closing keyword in a changed open pull request.
    let mut keyword_targets: BTreeSet<IssueKey> = BTreeSet::new();
    // Repositories the server no longer shows (made private, the token's access gone), each with since
    // when: their last snapshot is carried over, said loudly, rather than one repository taking every
    // other's plan offline.
    let mut unreached: BTreeMap<RepoName, DateTime<Utc>> = BTreeMap::new();
    for repo in repos {
        let read = match cursors.get(repo) {
            None if acc.labels.contains_key(repo) => Ok(()),
            None => full_repo(client, &mut run, repo, &mut acc),
            Some(_) if changes.contains_key(repo) => continue,
            Some(cursor) => incremental_repo(client, &mut run, repo, *cursor, &mut acc).map(|c| {
                for (pull, open_text) in c.1 {
                    if let Some(text) = open_text {
                        keyword_targets.extend(note_keyword_links(&mut acc, &pull, &text));
                    }
                    changed_pulls.insert(pull);
                }
                changes.insert(repo.clone(), c.0);
            }),
        };
        let Err(e) = read else { continue };
        let (e, carry) = reach(client, repo, e);
        let held = prev.filter(|p| p.labels.contains_key(repo) || p.milestones.contains_key(repo));
        // Every repository out of reach is no plan to carry on with: said as the error it is.
        let last = unreached.len() + 1 == repos.len();
        match held.filter(|_| !last) {
            Some(p) if carry => {
                let since = prev_meta
                    .get(repo)
                    .and_then(|m| m.unreached_since)
                    .unwrap_or(now);
                let since_words = since.format("%Y-%m-%d %H:%M UTC");
                if matches!(e, SyncError::IssuesOff { .. }) {
                    tracing::warn!(
                        "{e} (since {since_words}); its issues as last read stay in the plan, and approved \
                         changes to it wait"
                    );
                } else {
                    tracing::warn!(
                        "{repo} cannot be read, since {since_words} ({e}); its issues as last read stay in \
                         the plan, and approved changes to it wait: give the token access again, or take \
                         it out of repositories in commitea.yaml"
                    );
                }
                acc.issues.retain(|k, _| &k.repo != repo);
                acc.labels.insert(
                    repo.clone(),
                    p.labels.get(repo).cloned().unwrap_or_default(),
                );
                acc.milestones.insert(
                    repo.clone(),
                    p.milestones.get(repo).cloned().unwrap_or_default(),
                );
                unreached.insert(repo.clone(), since);
            }
            _ => return Err(e),
        }
    }
    // Their previous issues are carried as an incremental sync carries unchanged ones, and never re-read.
    let carried = |r: &RepoName| cursors.contains_key(r) || unreached.contains_key(r);

    // Carry the issues of incrementally synced repositories over, then decide which to re-read.
    let empty = BTreeMap::new();
    let prev_issues = prev.map_or(&empty, |p| &p.issues);
    for repo in full.iter().filter(|r| !unreached.contains_key(*r)) {
        vanished(repo, prev_issues, &acc.issues, options.max_vanished_share)?;
    }
    let mut refresh: BTreeSet<IssueKey> = BTreeSet::new();
    let stale = prev.map(|p| Stale::between(p, &acc)).unwrap_or_default();
    for (key, issue) in prev_issues {
        if !carried(&key.repo) {
            continue;
        }
        acc.issues.insert(key.clone(), issue.clone());
        if unreached.contains_key(&key.repo) {
            continue;
        }
        let linked_by_changed = issue.pull_requests.iter().any(|p| {
            let k = pull_key(p, &key.repo);
            changed_pulls.contains(&k) || full_set.contains(&k.repo)
        });
        if linked_by_changed || keyword_targets.contains(key) || stale.holds(key, issue) {
            refresh.insert(key.clone());
        }
    }
    if stale.count > 0 {
        tracing::info!(
            "{} since the last sync (renamed or deleted: Gitea does not mark their issues changed); the \
             issues that carry them are read again",
            crate::prose::count(
                stale.count,
                "label or milestone change",
                "label or milestone changes"
            )
        );
    }
    for c in changes.values() {
        refresh.extend(c.listed.keys().cloned());
        refresh.extend(
            c.commented
                .iter()
                .filter(|k| prev_issues.contains_key(k))
                .cloned(),
        );
    }

    let incremental: BTreeSet<RepoName> = cursors.keys().cloned().collect();
    // The issue shape of each issue to re-read: from the listing, else asked for (it may be gone).
    let mut todo: BTreeMap<RepoName, Vec<GIssue>> = BTreeMap::new();
    // Per repository, whether a 404 for one of its issues is its Issues unit switched off (asked once):
    // then the issue is not gone, and is kept as last read.
    let mut switched_off: BTreeMap<RepoName, bool> = BTreeMap::new();
    let listed: Vec<(IssueKey, Option<GIssue>)> = refresh
        .into_iter()
        .map(|key| {
            let gi = changes
                .get_mut(&key.repo)
                .and_then(|c| c.listed.remove(&key));
            (key, gi)
        })
        .collect();
    // Those the listing did not bring (a renamed label's, a commented one's) are asked for side by side:
    // one at a time, a label on 2,513 issues took 28 s without a line (audit 138).
    let mut asked = ask_each(
        client,
        listed
            .iter()
            .filter(|(_, gi)| gi.is_none())
            .map(|(k, _)| k.clone())
            .collect(),
    )?;
    for (key, listed) in listed {
        let gi = match listed {
            Some(gi) => gi,
            None => {
                // Every key the listing did not bring was asked for.
                let Some(answer) = asked.remove(&key) else {
                    continue;
                };
                match answer {
                    Some(gi) => gi,
                    None => {
                        let off = *switched_off
                            .entry(key.repo.clone())
                            .or_insert_with(|| issues_switched_off(client, &key.repo));
                        if !off {
                            tracing::info!(
                                "{key} is gone from the server; dropped from the snapshot"
                            );
                            acc.issues.remove(&key);
                        }
                        continue;
                    }
                }
            }
        };
        if gi.pull_request.is_none() {
            todo.entry(key.repo.clone()).or_default().push(gi);
        }
    }
    for (repo, _) in switched_off.iter().filter(|(_, off)| **off) {
        tracing::warn!(
            "{}; its issues as last read stay in the plan until the next full read",
            SyncError::IssuesOff { repo: repo.clone() }
        );
    }
    let mut refreshed = 0;
    let mut fresh: BTreeSet<IssueKey> = BTreeSet::new();
    for (repo, items) in todo {
        let numbers: Vec<u64> = items.iter().map(|gi| gi.number).collect();
        let read = read_issues(client, &mut run, &repo, items)?;
        for (n, issue) in numbers.into_iter().zip(read) {
            let key = repo.issue(n);
            let Some(mut issue) = issue else {
                acc.issues.remove(&key);
                continue;
            };
            keep_links(
                &mut issue,
                &key,
                prev_issues.get(&key),
                &incremental,
                &changed_pulls,
            );
            fresh.insert(key.clone());
            acc.issues.insert(key, issue);
            refreshed += 1;
        }
    }
    outside_states(client, &cursors, &fresh, &mut acc);
    // The issues of repositories read in full keep the links of unchanged pull requests of the others.
    let full_keys: Vec<IssueKey> = acc
        .issues
        .keys()
        .filter(|k| full_set.contains(&k.repo))
        .cloned()
        .collect();
    for key in full_keys {
        if let Some(issue) = acc.issues.get_mut(&key) {
            keep_links(
                issue,
                &key,
                prev_issues.get(&key),
                &incremental,
                &changed_pulls,
            );
        }
    }
    run.note_redirects(client, repos);
    run.drop_doubled(&mut acc);
    rename_back(&run, &mut acc);
    finish_links(&run, &mut acc);

    if let Some(p) = prev
        && full.is_empty()
        && p.meta.server.as_deref() == Some(server)
        && p.meta.repositories.iter().all(|m| {
            m.unreached_since.is_some() == unreached.contains_key(&m.name)
                && (unreached.contains_key(&m.name) || m.renamed_to == run.renamed_to(&m.name))
                && m.formerly == run.formerly(&m.name, &p.meta.repositories)
        })
        && p.meta.repositories.iter().map(|r| &r.name).eq(repos.iter())
        && p.labels == acc.labels
        && p.milestones == acc.milestones
        && p.issues == acc.issues
    {
        return Ok(SyncOutcome {
            snapshot: p.clone(),
            full,
            refreshed,
            changed: false,
        });
    }

    // The next cursor is measured on the server's clock, never the client's: a client clock ahead of the
    // server's would otherwise skip every change the server stamps in between.
    let newest_seen = acc.issues.values().map(|i| i.updated_at).max();
    let cursor = client.first_server_time().or(newest_seen).unwrap_or(now) - CURSOR_OVERLAP;
    let mut seen = BTreeSet::new();
    let repositories = repos
        .iter()
        .filter(|r| seen.insert(*r))
        .map(|r| match unreached.get(r) {
            // Not read: where the next read starts is where it would have.
            Some(since) => RepoMeta {
                name: r.clone(),
                cursor: prev_meta.get(r).and_then(|m| m.cursor),
                last_full_sync: prev_meta.get(r).and_then(|m| m.last_full_sync),
                unreached_since: Some(*since),
                renamed_to: prev_meta.get(r).and_then(|m| m.renamed_to.clone()),
                formerly: prev_meta
                    .get(r)
                    .map(|m| m.formerly.clone())
                    .unwrap_or_default(),
            },
            None => RepoMeta {
                name: r.clone(),
                cursor: Some(cursor),
                last_full_sync: if full_set.contains(r) {
                    Some(now)
                } else {
                    prev_meta.get(r).and_then(|m| m.last_full_sync)
                },
                unreached_since: None,
                renamed_to: run.renamed_to(r),
                formerly: run.formerly(r, previous_meta),
            },
        })
        .collect();
    // Never before what it holds: a run's clock is taken before its apply stage, whose changes the
    // sync after it reads (audit 184: a close made by the apply was after its own snapshot's moment, so
    // the forecast left it out of the closing history its approval's what-if had counted), and a
    // `--now` before the data would date the snapshot before its own issues (audit 179).
    let synced_at = newest_seen.map_or(now, |n| n.max(now));
    let snapshot = Snapshot {
        meta: Meta {
            format: crate::state::Format::CURRENT,
            synced_at,
            server: Some(server.to_owned()),
            repositories,
        },
        labels: acc.labels,
        milestones: acc.milestones,
        issues: acc.issues,
    };
    let changed = previous != Some(&snapshot);
    Ok(SyncOutcome {
        snapshot,
        full,
        refreshed,
        changed,
    })
}

/// Asks again for the state of every blocker outside the configured repositories that a carried issue
/// waits on: closing it changes no issue Gitea lists as changed, so without this the blocked issue would
/// wait on it until the next full read. A blocker the server no longer shows keeps its last state (the
/// next full read of the blocked issue says what became of it), and so does one the server fails to
/// answer for: a repository outside the plan does not stop its sync.
fn outside_states(
    client: &Client,
    cursors: &BTreeMap<RepoName, DateTime<Utc>>,
    fresh: &BTreeSet<IssueKey>,
    acc: &mut Acc,
) {
    let carried = |k: &IssueKey| cursors.contains_key(&k.repo) && !fresh.contains(k);
    let blockers: BTreeSet<IssueKey> = acc
        .issues
        .iter()
        .filter(|(k, _)| carried(k))
        .flat_map(|(_, i)| i.outside_blockers.iter().map(|b| b.issue.clone()))
        .collect();
    let mut states: BTreeMap<IssueKey, OpenState> = BTreeMap::new();
    for blocker in blockers {
        let path = format!("repos/{}/issues/{}", blocker.repo, blocker.number);
        let read = client
            .get_json::<GIssue>(&path, &[])
            .map_err(SyncError::from)
            .and_then(|gi| {
                state(
                    &gi.state,
                    &blocker.repo,
                    &format!("issue #{}", blocker.number),
                )
            });
        // Outside the plan's repositories: a failure there is said, not the whole sync's.
        let now = match read {
            Ok(s) => s,
            Err(SyncError::Client(
                ClientError::NotFound { .. } | ClientError::Forbidden { .. },
            )) => {
                tracing::debug!("{blocker} is not shown to this token; its last state is kept");
                continue;
            }
            // The server out of reach (retries spent): the next ones would fail the same way, each after
            // its own retries, so their states are kept too.
            Err(
                e @ SyncError::Client(ClientError::GaveUp { .. } | ClientError::ServerDown { .. }),
            ) => {
                tracing::warn!(
                    "{blocker}, outside the configured repositories, could not be read; it and the other \
                     blockers outside them keep their states as last read: {e}"
                );
                break;
            }
            Err(e) => {
                tracing::warn!(
                    "{blocker}, outside the configured repositories, could not be read; its state as last \
                     read is kept: {e}"
                );
                continue;
            }
        };
        states.insert(blocker, now);
    }
    for (key, issue) in &mut acc.issues {
        if !carried(key) {
            continue;
        }
        for b in &mut issue.outside_blockers {
            if let Some(now) = states.get(&b.issue) {
                b.state = *now;
            }
        }
    }
}

/// Whether the server shows `repo` with its Issues unit off (asked of the repository).
fn issues_switched_off(client: &Client, repo: &RepoName) -> bool {
    client
        .get_json::<crate::gitea::wire::GRepo>(&format!("repos/{repo}"), &[])
        .is_ok_and(|r| r.has_issues == Some(false))
}

/// What `e`, met reading `repo`, is, and whether the repository's last snapshot is carried over: the server
/// no longer showing the repository at all (404 or 403 for the repository itself, asked once more), or
/// showing it with its Issues unit off ([`SyncError::IssuesOff`]: a full read's `type=issues` listing, or
/// an issue read again, answers 404; the incremental listing has no `type` and lists its pull requests
/// only); anything else is a part of it failing, not carried.
fn reach(client: &Client, repo: &RepoName, e: SyncError) -> (SyncError, bool) {
    // Not 401: a token refused is refused for every repository, and carrying them all would be a plan
    // that silently stopped reading Gitea.
    let refused = |e: &ClientError| {
        matches!(
            e,
            ClientError::NotFound { .. } | ClientError::Forbidden { .. }
        )
    };
    let not_found = match &e {
        // Its issues as last read are all there is to plan with until they are switched on again.
        SyncError::IssuesOff { .. } => return (e, true),
        SyncError::Client(c) if refused(c) => matches!(c, ClientError::NotFound { .. }),
        _ => return (e, false),
    };
    match client.get_json::<crate::gitea::wire::GRepo>(&format!("repos/{repo}"), &[]) {
        Ok(r) if not_found && r.has_issues == Some(false) => {
            (SyncError::IssuesOff { repo: repo.clone() }, true)
        }
        Ok(_) => (e, false),
        // With no token at all, a private repository is hidden from everyone: the token is what is
        // missing, for every repository, not this one's access.
        Err(again) => {
            let carry = client.has_token() && refused(&again);
            (e, carry)
        }
    }
}

/// What changed in a repository's labels and milestones without its issues being marked changed: Gitea's
/// `UpdateLabel` and `DeleteLabel` and its milestone deletion (`UPDATE issue SET milestone_id = 0`) leave
/// `updated_unix` alone, so no `since` listing names the issues that carried them, and the issues carried
/// over would keep a label name or a milestone that is gone.
#[derive(Default)]
struct Stale {
    /// Per repository, label names gone or now naming another label (renamed, deleted, made again).
    labels: BTreeMap<RepoName, BTreeSet<String>>,
    /// Per repository, milestones deleted.
    milestones: BTreeMap<RepoName, BTreeSet<u64>>,
    /// How many labels and milestones changed so.
    count: usize,
}

impl Stale {
    fn between(prev: &Snapshot, acc: &Acc) -> Self {
        let mut out = Self::default();
        for (repo, now) in &acc.labels {
            let Some(before) = prev.labels.get(repo) else {
                continue;
            };
            let names: BTreeSet<String> = before
                .iter()
                .filter(|b| !now.iter().any(|n| n.id == b.id && n.name == b.name))
                .map(|b| b.name.clone())
                .collect();
            out.count += names.len();
            if !names.is_empty() {
                out.labels.insert(repo.clone(), names);
            }
        }
        for (repo, now) in &acc.milestones {
            let Some(before) = prev.milestones.get(repo) else {
                continue;
            };
            let gone: BTreeSet<u64> = before
                .iter()
                .filter(|b| !now.iter().any(|n| n.id == b.id))
                .map(|b| b.id)
                .collect();
            out.count += gone.len();
            if !gone.is_empty() {
                out.milestones.insert(repo.clone(), gone);
            }
        }
        out
    }

    /// Whether `issue` carries a label name or a milestone that changed so, now or in its timeline (whose
    /// events name a label by its current name, and lose a deleted label's or milestone's).
    fn holds(&self, key: &IssueKey, issue: &Issue) -> bool {
        let label = |l: &String| self.labels.get(&key.repo).is_some_and(|n| n.contains(l));
        let milestone = |m: &u64| {
            self.milestones
                .get(&key.repo)
                .is_some_and(|gone| gone.contains(m))
        };
        issue.labels.iter().any(label)
            || issue.milestone.as_ref().is_some_and(milestone)
            || issue.timeline.iter().any(|e| {
                e.label.as_ref().is_some_and(label)
                    || e.milestone.as_ref().is_some_and(milestone)
                    || e.old_milestone.as_ref().is_some_and(milestone)
            })
    }
}

/// Asks for each of `keys` (`GET /repos/{o}/{r}/issues/{n}`) as many at once as the client allows, with
/// progress per repository: each issue's answer, `None` where the server has no such issue (404). Any
/// other failure stops the rest.
fn ask_each(
    client: &Client,
    keys: Vec<IssueKey>,
) -> Result<HashMap<IssueKey, Option<GIssue>>, ClientError> {
    let mut by_repo: BTreeMap<RepoName, Vec<IssueKey>> = BTreeMap::new();
    for k in keys {
        by_repo.entry(k.repo.clone()).or_default().push(k);
    }
    let mut out = HashMap::new();
    for (repo, keys) in by_repo {
        let total = keys.len();
        let done = std::sync::atomic::AtomicUsize::new(0);
        let ask = |key: IssueKey| {
            let path = format!("repos/{}/issues/{}", key.repo, key.number);
            let answer = match client.get_json::<GIssue>(&path, &[]) {
                Ok(gi) => Some(gi),
                Err(ClientError::NotFound { .. }) => None,
                Err(e) => return Err(e),
            };
            super::progress(
                &repo,
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                total,
            );
            Ok((key, answer))
        };
        out.extend(super::in_parallel(client, keys, ask)?);
    }
    Ok(out)
}

/// A changed pull request and, when it is open, the text that tells which issues it closes.
type ChangedPull = (IssueKey, Option<PullText>);

/// Labels, milestones, and what changed since `cursor` in `repo`: issues and comments (in the result) and
/// pull requests (their `PullInfo` into `run`).
fn incremental_repo(
    client: &Client,
    run: &mut Run,
    repo: &RepoName,
    cursor: DateTime<Utc>,
    acc: &mut Acc,
) -> Result<(Changes, Vec<ChangedPull>), SyncError> {
    acc.labels
        .insert(repo.clone(), read_labels(client, run, repo)?);
    acc.milestones
        .insert(repo.clone(), read_milestones(client, repo)?);

    let mut changes = Changes::default();
    let mut pulls = Vec::new();
    let listed: Vec<GIssue> = client.get_listing(
        &format!("repos/{repo}/issues"),
        &[("state", "all".into()), ("since", since(cursor))],
    )?;
    for gi in listed {
        if let Some(r) = &gi.repository {
            run.note_name(repo, &r.full_name);
        }
        let key = repo.issue(gi.number);
        if gi.pull_request.is_some() {
            if pulls.iter().any(|(k, _): &ChangedPull| *k == key) {
                continue;
            }
            let info = PullInfo::from_issue_shape(&gi, repo)?;
            let what = format!("pull request #{}", gi.number);
            let open = state(&gi.state, repo, &what)? == OpenState::Open;
            run.pulls.insert(key.clone(), info);
            pulls.push((
                key,
                open.then_some(PullText {
                    title: gi.title,
                    body: gi.body,
                    html_url: gi.html_url,
                }),
            ));
        } else {
            changes.listed.entry(key).or_insert(gi);
        }
    }

    let comments: Vec<GCommentRef> = client.get_paged(
        &format!("repos/{repo}/issues/comments"),
        &[("since", since(cursor))],
    )?;
    for c in comments {
        match issue_number(&c.issue_url) {
            Some(n) => {
                changes.commented.insert(repo.issue(n));
            }
            // A comment on a pull request has `issue_url: ""` (models/issues/comment.go `IssueURL`).
            None if c.issue_url.is_empty() => {}
            None => tracing::warn!(
                "a comment of {repo} has an issue_url without an issue number: {:?}",
                c.issue_url
            ),
        }
    }
    Ok((changes, pulls))
}

/// Keeps the previous linked-pull entries of `key` that are still valid: those of pull requests of
/// incrementally synced repositories that did not change (their description and state are as before).
/// Entries the issue already has win.
fn keep_links(
    issue: &mut Issue,
    key: &IssueKey,
    prev: Option<&Issue>,
    incremental: &BTreeSet<RepoName>,
    changed: &BTreeSet<IssueKey>,
) {
    let Some(prev) = prev else {
        return;
    };
    for lp in &prev.pull_requests {
        let pk = pull_key(lp, &key.repo);
        if incremental.contains(&pk.repo)
            && !changed.contains(&pk)
            && !issue
                .pull_requests
                .iter()
                .any(|p| pull_key(p, &key.repo) == pk)
        {
            issue.pull_requests.push(lp.clone());
        }
    }
}

/// Stops a sync whose full read of `repo` found fewer issues than a repository loses: Gitea deletes
/// issues only one at a time, by an admin or the repository's owner, and lists them through its issue
/// indexer, so a listing that lost most of them is an index being rebuilt or a token that lost access
/// to the issues, not a project that deleted its history. Committing it would empty the forecast.
fn vanished(
    repo: &RepoName,
    before: &BTreeMap<IssueKey, Issue>,
    now: &BTreeMap<IssueKey, Issue>,
    max_share: f64,
) -> Result<(), SyncError> {
    let held = before.keys().filter(|k| k.repo == *repo).count();
    if held < VANISH_CHECK_MIN {
        return Ok(());
    }
    let found = before
        .keys()
        .filter(|k| k.repo == *repo && now.contains_key(*k))
        .count();
    let gone = held - found;
    #[expect(
        clippy::cast_precision_loss,
        reason = "issue counts are far below 2^52"
    )]
    let share = gone as f64 / held as f64;
    if share > max_share {
        return Err(SyncError::Vanished {
            repo: repo.clone(),
            held,
            found,
            max_share,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_number_is_the_last_segment() {
        assert_eq!(issue_number("http://h/acme/api/issues/12"), Some(12));
        assert_eq!(issue_number("http://h/acme/api/issues/12/"), Some(12));
        assert_eq!(issue_number(""), None);
    }

    #[test]
    fn since_has_second_resolution() {
        let t = DateTime::parse_from_rfc3339("2026-11-27T17:00:00.250Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap();
        assert_eq!(since(t), "2026-11-27T17:00:00Z");
    }
}
