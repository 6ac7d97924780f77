//! `commitea init`: from nothing to a working state repo against a server, in one command.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use chrono::{Duration, Utc};

use super::{CommandError, CommandResult, env_vars};
use crate::domain::{OpenState, RepoName};

/// The workflow `init` writes into the state repo (the same file this repository ships).
const WORKFLOW: &str = include_str!("../../.gitea/workflows/commitea.yml");

/// How far back someone assigned an issue closed since counts as on the team.
const RECENT_DAYS: i64 = 180;

/// `commitea init`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to create the state repo (a new or empty folder).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// The Gitea (or Forgejo) server, e.g. https://git.example.com.
    #[arg(long)]
    server: String,
    /// A repository to plan, `owner/name`; repeat for several.
    #[arg(long = "repo", required = true)]
    repos: Vec<RepoName>,
    /// The repository this state repo will be pushed to (`owner/name`): its pull requests are the approvals.
    #[arg(long)]
    state_repo: Option<RepoName>,
    /// Hours per week to assume for each person found (to confirm in commitea.yaml).
    #[arg(long, default_value = "30")]
    hours_per_week: crate::config::Hours,
}

/// Writes the config (with the team found on the server), the ledger, `.gitignore` and the workflow, syncs,
/// forecasts, renders, commits, and says which secrets to set.
pub fn run(mut a: Args) -> CommandResult {
    let started = Instant::now();
    // Said as the flags given, not as the config init would write (audit 184: "dupr/commitea.yaml line 3",
    // a file that did not exist).
    for (n, r) in a.repos.iter().enumerate() {
        if let Some(first) = a.repos[..n]
            .iter()
            .find(|f| f.to_string().eq_ignore_ascii_case(&r.to_string()))
        {
            return Err(CommandError::Input(format!(
                "--repo {r} names {first} again (Gitea's names ignore case): give each repository once"
            )));
        }
    }
    // The state repo is a repository of its own: its history is CommiTea's (audit 184: init went on, and
    // its next steps contradicted themselves).
    if let Some(s) = &a.state_repo
        && let Some(r) = a
            .repos
            .iter()
            .find(|r| r.to_string().eq_ignore_ascii_case(&s.to_string()))
    {
        return Err(CommandError::Input(format!(
            "--state-repo {s} is {r}, one of the repositories to plan: the state repo is a repository of its \
             own (CommiTea commits its snapshots and forecasts there); create an empty one, e.g. {}/plan, and \
             give it as --state-repo",
            r.owner
        )));
    }
    let cloned = check_folder(&a.dir)?;
    inside_another_work_tree(&a.dir);
    let token = crate::gitea::client::token_from_env();
    let client = crate::gitea::client::Client::new(&a.server, token.clone(), Default::default())
        .map_err(|e| CommandError::Input(e.to_string()))?;
    too_old(&client)?;
    server_names(&client, &mut a.repos)?;
    let now = Utc::now();
    tracing::info!(
        "init: reading {} from {}",
        crate::prose::count(a.repos.len(), "repository", "repositories"),
        client.server()
    );
    let t = std::time::Instant::now();
    let snapshot = crate::gitea::sync::full_sync(&client, &a.repos, now).map_err(|e| {
        // Nothing is written before the server is read: say so, and that init is what to run again
        // (audit 184: only `commitea run --offline` was advised, for a state repo never made).
        CommandError::Failed(anyhow::Error::from(e).context(format!(
            "init read nothing from {} and created nothing in {}: run `commitea init` again once the \
             server answers",
            client.server(),
            a.dir.display()
        )))
    })?;
    // The biggest sync a team makes, said as a run's is (audit 138: only the reading back was timed).
    tracing::info!(
        "sync: {} from {} in {} ({} at once at most), {:.0?}",
        crate::prose::count(snapshot.issues.len(), "issue", "issues"),
        crate::prose::count(a.repos.len(), "repository", "repositories"),
        crate::prose::count(client.request_count(), "request", "requests"),
        client.peak_parallel(),
        t.elapsed()
    );
    let team = team_of(&snapshot, now);
    let config = config_text(&a, &team, now);
    // The config must read: checked before anything is written, so that a refusal leaves no folder.
    crate::config::Config::parse(&config, &a.dir.join(crate::config::FILE_NAME))?;
    // Only now, the server read: a failed sync leaves no folder behind. Checked again: another init into
    // the same folder may have written it while this one read the server (audit 184: both succeeded, the
    // second over the first's config).
    if check_folder(&a.dir)? != cloned {
        return Err(CommandError::Input(format!(
            "{} changed while init read the server (another init into it?): nothing was written; run init \
             again into a new or empty folder",
            a.dir.display()
        )));
    }
    std::fs::create_dir_all(&a.dir)?;
    std::fs::write(a.dir.join(crate::config::FILE_NAME), config)?;
    // The config must read back: it is the file the user edits next.
    crate::config::Config::load(&a.dir, env_vars(), &Default::default())?;
    std::fs::write(
        crate::state::Layout::new(&a.dir).ledger(),
        "# Decisions\n\nThe PM's directive ledger: `commitea directive` (or the `record_directive` tool) appends \
         to it; each entry keeps the PM's words verbatim. See docs/ledger.md.\n",
    )?;
    std::fs::write(a.dir.join(".gitignore"), crate::state::GITIGNORE)?;
    let workflow = a.dir.join(".gitea/workflows/commitea.yml");
    if let Some(parent) = workflow.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&workflow, WORKFLOW)?;
    snapshot.save(&crate::state::Layout::new(&a.dir))?;
    let repo = crate::state::git::open_or_init(&a.dir)?;
    // A fresh clone of the empty state repo is on the machine's first branch (`master`, often): the first
    // commit goes on the branch the workflow and the runs use.
    let branch = crate::config::Config::default().approvals.branch;
    crate::state::git::start_on(&repo, &branch)?;
    let repo = crate::state::git::open_or_init(&a.dir)?;
    let sig = crate::state::git::Signature {
        name: "CommiTea".into(),
        email: "commitea@localhost".into(),
        time: now,
    };
    crate::state::git::commit_all(
        &repo,
        &["public"],
        "commitea init: the first snapshot, the config and the workflow\n",
        &sig,
    )?;
    let mut opts = super::run_options(
        &super::StateArg {
            state: a.dir.clone(),
        },
        &super::ForecastArgs::default(),
    );
    opts.clock = now;
    opts.commit = true;
    opts.render = true;
    let summary = crate::pipeline::run(&opts)?;
    super::report(&summary);
    let state_repo = a
        .state_repo
        .as_ref()
        .map_or_else(|| "<owner>/<state repo>".to_owned(), ToString::to_string);
    // Where it goes: the repository's clone URL when the server has it; said now when it does not, rather
    // than at the first `commitea propose`.
    // Whether it holds commits already: this state repo's history is new, and a push over it is refused.
    let mut has_history = false;
    let clone_url = a.state_repo.as_ref().and_then(|s| {
        match client.get_json::<serde_json::Value>(&format!("repos/{s}"), &[]) {
            Ok(v) => {
                has_history = v["empty"] == false;
                v["clone_url"].as_str().map(ToOwned::to_owned)
            }
            Err(e) => {
                tracing::warn!(
                    "the state repository {s} is not readable on {} ({e}): create it there (empty, no \
                     README) before you push, or run init again with the right --state-repo",
                    client.server()
                );
                None
            }
        }
    });
    if a.state_repo.is_none() {
        tracing::warn!(
            "no --state-repo: set approvals.state_repository (owner/name) in commitea.yaml to the repository \
             this state is pushed to — its pull requests are the approvals, and `commitea propose` needs it"
        );
    }
    let push = match (&clone_url, cloned) {
        (_, true) => "git push -u origin HEAD".to_owned(),
        // Not to the repository step 1 ruled out (audit 184).
        (Some(url), false) if !has_history => {
            format!("git remote add origin {url}; git push -u origin main")
        }
        (_, false) => {
            "git remote add origin URL-OF-THE-NEW-REPOSITORY; git push -u origin main".to_owned()
        }
    };
    // The secret and the variable come before the push: the push starts the workflow, which fails
    // without them (an audit followed these steps in order and met "invalid url").
    // A repository the server showed is not to be created again (audit 104: said even from a clone of it).
    let create = if has_history && !cloned {
        format!(
            "{}/{state_repo} has commits already, and this state repo's history is its own: a push \
             would be refused (audit 106). Create an empty repository for it (no README), with Actions \
             enabled, and put its owner/name as approvals.state_repository in commitea.yaml (this folder \
             is the state repo: no need to run init again).",
            client.server()
        )
    } else if clone_url.is_some() {
        format!(
            "In {}/{state_repo}'s settings, enable Actions (the repository is there already).",
            client.server()
        )
    } else {
        format!(
            "Create {}/{state_repo} on the server (empty), with Actions enabled in its settings.",
            client.server()
        )
    };
    eprintln!(
        "\nThe state repo is ready in {} ({:.1} s). Before its workflow can run:\n\
         1. {create}\n\
         2. In its settings → Actions → Secrets, add COMMITEA_TOKEN: a token of {} with the scopes\n\
         \u{20}  write:issue, write:repository, read:user and read:organization, whose user can write the issues\n\
         \u{20}  of {} and push to {state_repo}.\n\
         3. In settings → Actions → Variables, add COMMITEA_BINARY_URL (a prebuilt commitea to download), or\n\
         \u{20}  COMMITEA_SOURCE and COMMITEA_VERSION (a git URL and tag to build it from once, Rust 1.89+).\n\
         4. Confirm the team's hours in commitea.yaml (marked `to confirm`), commit, and push ({push}):\n\
         \u{20}  the push starts the first run.",
        a.dir.display(),
        started.elapsed().as_secs_f64(),
        client.server(),
        a.repos
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    );
    if let Some(index) = summary.site_index {
        println!("{}", index.display());
    }
    Ok(())
}

/// Refuses a folder `init` must not write into; whether it is a clone (it holds only `.git`: the state
/// repo was made on the server first and cloned, empty).
fn check_folder(dir: &std::path::Path) -> Result<bool, CommandError> {
    if dir.join(crate::config::FILE_NAME).is_file() {
        return Err(CommandError::Input(format!(
            "{} is already a CommiTea state repo (it has {}): `commitea run -s {}` syncs and forecasts it; \
             `commitea init` makes a new one",
            dir.display(),
            crate::config::FILE_NAME,
            dir.display()
        )));
    }
    let entries: Vec<std::ffi::OsString> = match std::fs::read_dir(dir) {
        Ok(d) => d.filter_map(Result::ok).map(|e| e.file_name()).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    match entries.as_slice() {
        [] => Ok(false),
        [only] if only == ".git" => Ok(true),
        _ => Err(CommandError::Input(format!(
            "{} is not empty: `commitea init` makes a new state repo; choose a new or empty folder (or a \
             fresh clone of an empty repository)",
            dir.display()
        ))),
    }
}

/// The oldest Gitea CommiTea reads (docs/gitea.md): its token scopes (`write:issue`, …) and answers.
const OLDEST_GITEA: (u64, u64) = (1, 20);

/// Refuses a server older than [`OLDEST_GITEA`] before anything is made: the token init asks for has
/// scopes such a server does not have (audit 198: on 1.19 init went through, and told the team to make a
/// token they could not). A Forgejo says the Gitea it is built on (`11.0.1+gitea-1.22.0`). A server that
/// does not say is not refused.
fn too_old(client: &crate::gitea::client::Client) -> Result<(), CommandError> {
    #[derive(serde::Deserialize)]
    struct Version {
        version: String,
    }
    let Ok(v) = client.get_json::<Version>("version", &[]) else {
        return Ok(());
    };
    let gitea = v.version.split("+gitea-").nth(1).unwrap_or(&v.version);
    let mut parts = gitea.split(['.', '-']).map(|p| p.parse::<u64>().ok());
    let (Some(Some(major)), Some(Some(minor))) = (parts.next(), parts.next()) else {
        return Ok(());
    };
    if (major, minor) < OLDEST_GITEA {
        return Err(CommandError::Input(format!(
            "{} is Gitea {} (GET /api/v1/version), and CommiTea reads Gitea {}.{} or newer (or a Forgejo \
             built on it): its token scopes (write:issue, write:repository) and its answers are 1.20's. \
             Upgrade the server, then run init again; nothing was created",
            client.server(),
            v.version,
            OLDEST_GITEA.0,
            OLDEST_GITEA.1
        )));
    }
    Ok(())
}

/// Puts each repository under the name the server gives it (its case, or its new name after a rename),
/// saying so: the config init writes is the one every later sync reads, and a correction after the first
/// sync moves every snapshot file (audit 184: `Acme/API` kept for the server's `acme/api`). A repository
/// the server does not answer is left as given, for the sync to say why.
fn server_names(
    client: &crate::gitea::client::Client,
    repos: &mut [RepoName],
) -> Result<(), CommandError> {
    for r in repos.iter_mut() {
        let Ok(info) = client.get_json::<crate::gitea::wire::GRepo>(&format!("repos/{r}"), &[])
        else {
            continue;
        };
        let Ok(named) = info.full_name.parse::<RepoName>() else {
            continue;
        };
        if named != *r {
            tracing::info!("init: {r} is {named} on the server: written as {named}");
            *r = named;
        }
    }
    // Two names of one repository (its old name and its new) are one repository.
    for (n, r) in repos.iter().enumerate() {
        if let Some(first) = repos[..n].iter().find(|f| *f == r) {
            return Err(CommandError::Input(format!(
                "two --repo name {first} on the server (one is its former name): give it once, as {first}"
            )));
        }
    }
    Ok(())
}

/// Says where `dir` is inside another git work tree (an app's checkout): the state repo is made as a
/// repository of its own there, which a `git add .` in the outer one takes as an embedded repository
/// (audit 184: said only that the folder "was not a git repository").
fn inside_another_work_tree(dir: &std::path::Path) {
    let Ok(abs) = std::path::absolute(dir) else {
        return;
    };
    if let Some(outer) = abs.ancestors().skip(1).find(|p| p.join(".git").exists()) {
        tracing::warn!(
            "{} is inside the git work tree of {}: the state repo is made as a repository of its own \
             there, which a `git add .` in {} would take as an embedded repository; a state repo is best \
             kept outside other checkouts",
            dir.display(),
            outer.display(),
            outer.display()
        );
    }
}

/// The open or recently closed issues someone needs before `init` narrows them to their repositories.
const MIN_ISSUES_FOR_REPOSITORIES: usize = 5;

/// Someone found doing the work: how many open or recently closed issues, and in which repositories.
struct Found {
    name: String,
    issues: usize,
    repos: std::collections::BTreeSet<crate::domain::RepoName>,
}

/// The people who do the work: whoever has open issues assigned or closed an issue lately, most active
/// first (then by name), with the repositories those issues are in.
fn team_of(snapshot: &crate::state::Snapshot, now: chrono::DateTime<Utc>) -> Vec<Found> {
    let since = now - Duration::days(RECENT_DAYS);
    let mut count: BTreeMap<String, Found> = BTreeMap::new();
    let mut note = |name: &str, repo: &crate::domain::RepoName| {
        let f = count.entry(name.to_owned()).or_insert_with(|| Found {
            name: name.to_owned(),
            issues: 0,
            repos: Default::default(),
        });
        f.issues += 1;
        f.repos.insert(repo.clone());
    };
    // A deleted user (Ghost) or the Actions bot does no work to plan: never a member.
    let person = |name: &str| !name.is_empty() && !crate::domain::is_placeholder_user(name);
    for (key, i) in &snapshot.issues {
        let closed_lately = i.state == OpenState::Closed && i.closed_at.is_some_and(|t| t >= since);
        if i.state != OpenState::Open && !closed_lately {
            continue;
        }
        // Who did the work: its assignees, else whoever tracked time on it. Not who closed it: a PM who
        // triages and closes as won't-fix does none of the work (audit 104: such a PM was put in the team
        // with 30 hours, and an assignee whose issue a colleague closed was left out).
        let mut workers: BTreeSet<&str> = i
            .assignees
            .iter()
            .map(String::as_str)
            .filter(|a| person(a))
            .collect();
        if workers.is_empty() && closed_lately {
            workers = i
                .tracked_times
                .iter()
                .map(|t| t.user.as_str())
                .filter(|u| person(u))
                .collect();
        }
        for w in workers {
            note(w, &key.repo);
        }
    }
    // A login the config cannot hold (an LDAP- or OAuth-synced server may have made one Gitea itself
    // would refuse today) is said and left out, rather than written into a config that then fails.
    count.retain(|name, _| {
        let ok = crate::ledger::format::valid_username(name);
        if !ok {
            tracing::warn!(
                "\"{}\" is assigned issues but is not a username commitea.yaml can hold (ASCII \
                 letters, digits, '-', '_' and '.'): left out of the team",
                crate::limits::excerpt(name)
            );
        }
        ok
    });
    let mut team: Vec<Found> = count.into_values().collect();
    team.sort_by(|a, b| b.issues.cmp(&a.issues).then(a.name.cmp(&b.name)));
    team
}

fn config_text(a: &Args, team: &[Found], now: chrono::DateTime<Utc>) -> String {
    let mut t = format!(
        "# CommiTea's settings for this state repo (docs/state-format.md). Written by `commitea init` on {}.\n\
         server: {}\n\
         repositories:\n",
        now.format("%Y-%m-%d"),
        // As a link is written: `…/api/v1` pasted is the API's address, not the server's (audit 104).
        crate::gitea::client::server_root(&a.server)
    );
    for r in &a.repos {
        t.push_str(&format!("  - {r}\n"));
    }
    if team.is_empty() {
        t.push_str(
            "# Nobody has open issues assigned or was assigned one closed in the last 180 days: add the people\n\
             # who do the work (their Gitea usernames), or every open issue is forecast beyond the horizon.\n\
             team: []\n",
        );
    } else {
        t.push_str(&format!(
            "# Found from who has open issues assigned, or was assigned (or tracked time on) issues closed in the\n\
             # last {RECENT_DAYS} days.\n\
             # The hours are a guess: confirm each person's hours per week, remove who is not on the team,\n\
             # and add time off; the calendar (working days, holidays, hours in a day) and every other\n\
             # setting are listed in docs/state-format.md, \"commitea.yaml\".\n\
             team:\n"
        ));
        for f in team {
            t.push_str(&format!(
                "  - name: {}\n    hours_per_week: {}  # to confirm ({})\n",
                f.name,
                a.hours_per_week.0,
                crate::prose::count(
                    f.issues,
                    "open or recently closed issue",
                    "open or recently closed issues"
                )
            ));
            // Someone whose issues are all in some of the repositories is planned there only: without
            // it, the plan gave a mobile developer web work she cannot be assigned.
            let configured: std::collections::BTreeSet<&crate::domain::RepoName> =
                a.repos.iter().collect();
            // A handful of issues first: one issue is too little to say where someone works.
            if f.issues >= MIN_ISSUES_FOR_REPOSITORIES
                && f.repos.len() < configured.len()
                && f.repos.iter().all(|r| configured.contains(r))
            {
                let repos: Vec<String> = f.repos.iter().map(ToString::to_string).collect();
                t.push_str(&format!(
                    "    repositories: [{}]  # where their issues are; add any other they work in\n",
                    repos.join(", ")
                ));
            }
        }
    }
    if let Some(s) = &a.state_repo {
        t.push_str(&format!("approvals:\n  state_repository: {s}\n"));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Issue, IssueKey, TimelineEvent, TrackedTime};

    #[test]
    fn the_team_is_who_does_the_work_not_who_closes_it() {
        let now = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 12, 6, 9, 0, 0).unwrap();
        let repo: RepoName = "acme/api".parse().unwrap();
        let closed = |n: u64, days_ago: i64, closer: &str, assignees: &[&str]| {
            let mut i = Issue::bare(n, now - Duration::days(400));
            i.state = OpenState::Closed;
            i.closed_at = Some(now - Duration::days(days_ago));
            i.assignees = assignees.iter().map(|a| (*a).to_owned()).collect();
            i.timeline.push(TimelineEvent::new(
                n,
                "close".into(),
                now - Duration::days(days_ago),
                closer,
            ));
            i
        };
        let mut open = Issue::bare(1, now - Duration::days(10));
        open.assignees = vec!["amara".into()];
        let mut tracked = closed(5, 20, "pat", &[]);
        tracked.tracked_times.push(TrackedTime {
            id: 1,
            user: "chen".into(),
            created: now - Duration::days(21),
            time: 3600,
        });
        let issues = [
            open,
            // The PM closes an unassigned issue as won't-fix: no one did work on it.
            closed(2, 5, "pat", &[]),
            // A colleague closes dana's issue: dana did the work.
            closed(3, 11, "jonas", &["dana"]),
            // Closed long ago: gus is not on the team any more.
            closed(4, 400, "gus", &["gus"]),
            tracked,
        ];
        let snapshot = crate::state::Snapshot {
            meta: crate::state::Meta::full(now, None, std::slice::from_ref(&repo)),
            labels: BTreeMap::new(),
            milestones: BTreeMap::new(),
            issues: issues
                .into_iter()
                .map(|i| {
                    let key = IssueKey {
                        repo: repo.clone(),
                        number: i.number,
                    };
                    (key, i)
                })
                .collect(),
        };
        let names: Vec<String> = team_of(&snapshot, now)
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(names, ["amara", "chen", "dana"]);
    }

    #[test]
    fn the_config_names_the_server_not_its_api() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let now = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 12, 6, 9, 0, 0).unwrap();
        for server in [
            "https://git.example.com/api/v1/",
            "https://git.example.com/",
        ] {
            let cli = Cli::parse_from(["init", "--server", server, "--repo", "acme/api"]);
            let text = config_text(&cli.args, &[], now);
            assert!(
                text.contains("\nserver: https://git.example.com\n"),
                "{server}: {text}"
            );
        }
    }
}
