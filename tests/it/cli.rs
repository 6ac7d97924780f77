//! The `commitea` binary as a newcomer runs it: the demo command, exit codes, stdout for data only.

use std::path::Path;
use std::process::Command;

pub(crate) fn commitea(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(args)
        .current_dir(cwd)
        .env_remove("COMMITEA_STATE")
        .output()
        .expect("the binary runs")
}

/// What `git ARGS` prints in `dir`.
fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn git_count(dir: &Path) -> String {
    git_out(dir, &["rev-list", "--count", "HEAD"])
        .trim()
        .to_owned()
}

#[test]
fn demo_prints_the_site_path_and_a_second_run_makes_no_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let out = commitea(&["demo", "--trials", "500"], tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let index = stdout.trim();
    assert_eq!(
        index, "commitea-demo/public/index.html",
        "stdout holds only the path"
    );
    let site = tmp.path().join("commitea-demo/public");
    let board = std::fs::read_to_string(site.join("board.html")).unwrap();
    let runway = std::fs::read_to_string(site.join("runway.html")).unwrap();
    let overview = std::fs::read_to_string(site.join("index.html")).unwrap();
    // The demo's issues are on the board, its milestones on the runway and the front page.
    let snapshot = commitea::state::Snapshot::load(&commitea::state::Layout::new(
        tmp.path().join("commitea-demo"),
    ))
    .unwrap();
    let open_titles: Vec<&str> = snapshot
        .issues
        .values()
        .filter(|i| !i.is_closed())
        .map(|i| i.title.as_str())
        .collect();
    assert!(open_titles.len() > 100);
    let escaped = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    for t in &open_titles {
        assert!(board.contains(&escaped(t)), "board lacks {t:?}");
    }
    for ms in snapshot
        .milestones
        .values()
        .flatten()
        .filter(|m| m.state == commitea::domain::OpenState::Open)
    {
        assert!(
            runway.contains(&escaped(&ms.title)),
            "runway lacks {}",
            ms.title
        );
        assert!(
            overview.contains(&escaped(&ms.title)),
            "index lacks {}",
            ms.title
        );
    }
    let demo_dir = tmp.path().join("commitea-demo");
    assert_eq!(
        git_count(&demo_dir),
        "4",
        "the import, a forecast, the PM's latest directives and the forecast after them"
    );

    // The demo is populated: directives of several kinds, an applied history, one additive and one
    // destructive op file pending, and a backtest of its own history with cuts.
    let ledger = commitea::ledger::parse::parse(
        &std::fs::read_to_string(demo_dir.join("pm-state.md")).unwrap(),
    );
    assert!(ledger.problems.is_empty(), "{:?}", ledger.problems);
    let kinds: std::collections::BTreeSet<String> = ledger
        .ledger
        .directives()
        .map(|d| d.kind.to_string())
        .collect();
    assert!(kinds.len() >= 5, "{kinds:?}");
    assert!(ledger.ledger.directives().all(|d| !d.quote.is_empty()));
    let applied = std::fs::read_dir(demo_dir.join("ops/applied"))
        .unwrap()
        .count();
    assert!(applied >= 2, "{applied} applied op files");
    let pending = commitea::ops::pending(&commitea::state::Layout::new(&demo_dir)).unwrap();
    assert!(pending.iter().any(|f| f.destructive), "{pending:?}");
    assert!(pending.iter().any(|f| !f.destructive), "{pending:?}");
    // Filed through apply_changes, each pending change carries the consequence it would have.
    assert!(
        pending
            .iter()
            .all(|f| !f.consequence.is_empty() && f.summary.contains("moved")),
        "{pending:?}"
    );
    let changes = std::fs::read_to_string(site.join("changes.html")).unwrap();
    // The destructive one needs a pull request that does not exist yet: the page says how it comes.
    assert!(
        changes.contains("needs a pull request: commitea propose opens it")
            && changes.contains("its pull request will come from"),
        "{changes}"
    );
    // Moments read as people write them; the ledger's targets are named and linked.
    assert!(!changes.contains(":00:00Z"), "{changes}");
    assert!(changes.contains(" UTC"), "{changes}");
    assert!(
        changes.contains(
            r#"milestone <a href="milestones/2.html"><bdi>Accessibility compliance (EAA)</bdi></a>"#
        ),
        "{changes}"
    );
    let backtest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(demo_dir.join("forecast/backtest.json")).unwrap())
            .unwrap();
    assert!(backtest["cuts"].as_u64().unwrap() > 0, "{backtest}");
    let calibration = std::fs::read_to_string(site.join("calibration.html")).unwrap();
    assert!(!calibration.contains("No backtest yet"), "{calibration}");
    let directives = std::fs::read_to_string(site.join("directives.html")).unwrap();
    assert!(directives.contains("D-0001"), "{directives}");
    // Each directive says what it sets, and names its target by title, linked to its page.
    assert!(
        directives.contains("→ <strong>priority p/0</strong>"),
        "{directives}"
    );
    assert!(
        directives.contains(
            r#"milestone <a href="milestones/2.html"><bdi>Accessibility compliance (EAA)</bdi></a>"#
        ),
        "{directives}"
    );
    // The standup measures against the forecast committed before the PM's latest directives.
    let standup = std::fs::read_to_string(site.join("standup.html")).unwrap();
    assert!(
        standup.contains("What moved since the forecast committed"),
        "{standup}"
    );
    assert!(!standup.contains("No issue moved"), "{standup}");
    // It names the commit that wrote that forecast (the one before the directives' commit), and says
    // why each issue moved: the re-estimated issue changed itself, by the directive named.
    let forecast_commit = git_out(&demo_dir, &["rev-parse", "--short=12", "HEAD~2"]);
    assert!(
        standup.contains(&format!("forecast committed in {}", forecast_commit.trim())),
        "{standup}"
    );
    assert!(
        standup.contains(
            r#"<td data-label="Why">own change (<a href="directives.html#D-0004"><bdi>D-0004</bdi></a>)</td>"#
        ),
        "{standup}"
    );
    // A milestone that moved says how many of its issues moved and names the biggest mover's reason.
    assert!(
        standup.contains(" of its issues moved later, ")
            && standup.contains("; the most: <a href=\"issues/acme/"),
        "{standup}"
    );
    // An issue cut from a milestone (the demo's D-0005 takes acme/mobile#90 out of the holiday release)
    // is said to have left it, and no longer counts among its issues.
    let holiday = standup
        .split("<tr>")
        .skip(1)
        .find(|row| row.contains("Mobile 3.0 holiday release"))
        .expect("the holiday release moved");
    let (scope, moves) = holiday
        .split_once("<bdi>acme/mobile#90</bdi></a> left it; ")
        .unwrap_or_else(|| panic!("{holiday}"));
    assert!(
        scope.ends_with("<td data-label=\"Why\"><a href=\"issues/acme/mobile/90.html\">")
            && moves.contains(" of its issues moved later")
            && !moves.contains("acme/mobile#90"),
        "{holiday}"
    );
    // The board's filter script draws the cards it adds with the page's words for a date beyond the
    // horizon; without them it said "not within the horizon" and "later".
    let board = std::fs::read_to_string(demo_dir.join("public/board.html")).unwrap();
    assert!(
        board.contains("data-not-within=\"not within 2 years\""),
        "{board}"
    );
    // The milestone's own page says the same, against the same forecast (it said nothing: its drift
    // chart merges a day's forecasts).
    let page = holiday
        .split("href=\"")
        .nth(1)
        .and_then(|h| h.split('"').next())
        .unwrap();
    assert!(page.starts_with("milestones/"), "{page}");
    let milestone = std::fs::read_to_string(demo_dir.join("public").join(page)).unwrap();
    let since = milestone
        .split("<h2 id=\"moved-title\">Since the last forecast</h2>")
        .nth(1)
        .unwrap_or_else(|| panic!("no move said: {milestone}"));
    assert!(
        since.contains("<bdi>acme/mobile#90</bdi></a> left it; ")
            && since.contains(" working day")
            && since.contains("href=\"../standup.html\""),
        "{since}"
    );
    // And what changed since: the directives recorded after that forecast, named.
    let then: Vec<String> =
        commitea::ledger::parse::parse(&git_out(&demo_dir, &["show", "HEAD~2:pm-state.md"]))
            .ledger
            .directives()
            .map(|d| d.id.to_string())
            .collect();
    let latest: Vec<String> = ledger
        .ledger
        .directives()
        .map(|d| d.id.to_string())
        .filter(|id| !then.contains(id))
        .collect();
    assert!(latest.len() >= 2, "{latest:?}");
    assert!(
        standup.contains(&format!("{} directives recorded (", latest.len()))
            && standup.contains("Since then: Gitea not read (the snapshot of "),
        "{standup}"
    );
    for id in &latest {
        assert!(
            standup.contains(&format!(
                "<a href=\"directives.html#{id}\"><bdi>{id}</bdi></a>"
            )),
            "{id} is linked: {standup}"
        );
    }
    // The run's commit message gives the same context beneath the milestones that moved.
    let message = git_out(&demo_dir, &["log", "-1", "--format=%B"]);
    // Each milestone line says why it moved, as the standup does.
    assert!(
        message
            .lines()
            .any(|l| l.starts_with("- Public API v2: p80 ")
                && l.contains(" of its issues moved later, ")),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "Since the forecast of {}: Gitea not read (the snapshot of ",
            forecast_commit.trim()
        )) && message.contains(&format!("{} directives recorded (", latest.len())),
        "{message}"
    );

    let again = commitea(&["demo", "--trials", "500"], tmp.path());
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(
        git_count(&demo_dir),
        "4",
        "running the demo twice makes no second forecast commit"
    );
}

#[test]
fn render_redraws_the_site_a_run_drew_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let out = commitea(&["demo", "d", "--trials", "300"], tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let site = tmp.path().join("d/public");
    let read = |dir: &std::path::Path| -> std::collections::BTreeMap<String, Vec<u8>> {
        walkdir::WalkDir::new(dir)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                (
                    e.path()
                        .strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect()
    };
    let drawn = read(&site);
    std::fs::remove_dir_all(&site).unwrap();
    let out = commitea(&["render", "-s", "d", "--trials", "300"], tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let redrawn = read(&site);
    assert!(redrawn.len() > 300, "{} files", redrawn.len());
    assert_eq!(
        drawn.keys().collect::<Vec<_>>(),
        redrawn.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &drawn {
        assert!(redrawn[name] == *bytes, "{name} differs");
    }
}

#[test]
fn demo_refuses_a_folder_that_is_not_a_state_repo() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
    let out = commitea(&["demo", "."], tmp.path());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a CommiTea state repo"), "{err}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn bad_usage_exits_2_and_a_missing_snapshot_says_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let out = commitea(&["run", "--now", "tomorrow"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("neither YYYY-MM-DD nor an RFC 3339 time")
    );
    // Shaped as a day but no day: said so, not "neither YYYY-MM-DD".
    let out = commitea(&["run", "--now", "2027-02-29"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"2027-02-29\" is not a date: expected a real day as YYYY-MM-DD"),
        "{err}"
    );
    let out = commitea(&["plan", "--trials", "0"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--trials")
            && err.contains("0 is not in 1..=1000000")
            && !err.contains("environment"),
        "{err}"
    );
    for now in ["1900-01-01", "9999-12-31T00:00:00Z"] {
        let out = commitea(&["plan", "--now", now], tmp.path());
        assert_eq!(out.status.code(), Some(2), "{now}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("out of range: give a moment from 1970 to 2200"),
            "{err}"
        );
    }
    let out = commitea(&["run", "--offline"], tmp.path());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has no commitea.yaml")
            && err.contains("commitea init")
            && err.contains("commitea demo"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// Run inside a folder of the state repo, a command finds the state repo above it, as git does (audit 120:
/// `plan` inside `snapshot/` said to start one there with `commitea init`); a setting refused exits 2
/// from `tool` as from `plan`.
#[test]
fn a_command_inside_the_state_repo_finds_it_and_a_refused_setting_exits_2_everywhere() {
    let (_tmp, dir) = quick_demo();
    let inside = dir.join("snapshot/issues");
    let out = commitea(&["plan", "--trials", "100"], &inside);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Public API v2"),
        "{out:?}"
    );
    let out = commitea(&["tool", "query_project", r#"{"view":"focus"}"#], &inside);
    assert!(out.status.success(), "{out:?}");
    // A blank COMMITEA_STATE (a CI variable defined empty) is as if none were set (audit 120).
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["plan", "--trials", "100"])
        .current_dir(&inside)
        .env("COMMITEA_STATE", "")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // A full resync of nothing is refused, not run silently as --offline (audit 120).
    let out = commitea(&["run", "--offline", "--full"], &dir);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
        "{out:?}"
    );
    // A folder given by name is taken as given.
    let out = commitea(&["plan", "-s", "issues"], &dir.join("snapshot"));
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not a CommiTea state repo"),
        "{out:?}"
    );
    // A day zero before the history is said as such, not as a history of negative length.
    let out = commitea(&["plan", "--now", "2020-01-01", "--trials", "100"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("day zero comes before the history begins") && !stderr.contains("covers -"),
        "{stderr}"
    );
    for args in [
        &["plan"][..],
        &["tool", "query_project", r#"{"view":"focus"}"#],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
            .args(args)
            .current_dir(&dir)
            .env_remove("COMMITEA_STATE")
            .env("COMMITEA_FORECAST_TRIALS", "abc")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("COMMITEA_FORECAST_TRIALS"),
            "{args:?}: {out:?}"
        );
    }
    // A variable a letter off names the one meant (audit 153).
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["plan", "--trials", "100"])
        .current_dir(&dir)
        .env_remove("COMMITEA_STATE")
        .env("COMMITEA_FORCAST_TRIALS", "5")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "ignoring COMMITEA_FORCAST_TRIALS: no config key of that name; did you mean \
             COMMITEA_FORECAST_TRIALS?"
        ),
        "{out:?}"
    );
    // A section set whole where the environment sets it key by key, and a key of a section not set, say
    // so and what does work (audit 164: the second said the file alone could set it).
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["plan", "--trials", "100"])
        .current_dir(&dir)
        .env_remove("COMMITEA_STATE")
        .env(
            "COMMITEA_MODELS_SMALL",
            "{url: 'http://127.0.0.1:9/v1', model: m}",
        )
        .env("COMMITEA_MODELS_BIG_MODEL", "x")
        .env("COMMITEA_FORECAST_SEED_VALUE", "7")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "ignoring COMMITEA_MODELS_SMALL: no config key of that name; it names a section, which the \
             environment sets key by key: COMMITEA_MODELS_SMALL_"
        ) && stderr.contains(
            "ignoring COMMITEA_MODELS_BIG_MODEL: no config key of that name; models.big is not set, so \
             it has no keys of its own yet: set it whole (COMMITEA_MODELS_BIG='{...}', YAML) or add it to \
             commitea.yaml"
        ),
        "{stderr}"
    );
    // A value left unset is no section (audit 165: told to set forecast.seed whole, as YAML).
    assert!(
        stderr.contains(
            "ignoring COMMITEA_FORECAST_SEED_VALUE: no config key of that name; did you mean \
             COMMITEA_FORECAST_SEED?"
        ),
        "{stderr}"
    );
}

/// A commitea.yaml emptied beside a snapshot of repositories is refused by run and sync, with the way
/// back, and nothing is committed (audit 120: a run committed a forecast with no team).
#[test]
fn an_emptied_config_beside_a_snapshot_is_refused_not_read_as_no_settings() {
    let (_tmp, dir) = quick_demo();
    let head = git_out(&dir, &["rev-parse", "HEAD"]);
    for text in ["", "# settings to come\n", "~\n"] {
        std::fs::write(dir.join("commitea.yaml"), text).unwrap();
        for args in [&["run", "--offline"][..], &["sync"]] {
            let out = commitea(args, &dir);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?} {text:?}: {stderr}");
            assert!(
                stderr.contains(
                    "commitea.yaml sets nothing (it is empty, or only comments), but the \
                                 snapshot holds acme/api, acme/web and acme/mobile"
                ) && stderr.contains("git checkout HEAD -- commitea.yaml"),
                "{stderr}"
            );
        }
    }
    assert_eq!(git_out(&dir, &["rev-parse", "HEAD"]), head);
}

#[test]
fn plan_and_render_work_on_a_state_repo() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = commitea::demo::generate(&commitea::demo::DemoSpec::bundled());
    commitea::demo::write(&demo, &tmp.path().join("state")).unwrap();
    let state = tmp.path().join("state");
    // A title is anyone's on Gitea: a line break or an escape sequence in it must not break the table.
    let milestones = state.join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&milestones).unwrap();
    let hostile = text.replace(
        "title: Accessibility compliance (EAA)",
        "title: \"Accessibility\\ncompliance\\e[2K (EAA)\"",
    );
    assert_ne!(hostile, text);
    std::fs::write(&milestones, hostile).unwrap();
    let plan = commitea(&["plan", "-s", "state", "--trials", "300"], tmp.path());
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let table = String::from_utf8(plan.stdout).unwrap();
    assert!(table.starts_with("as of 2026-11-27\n"), "{table}");
    assert!(
        table.contains("Accessibility compliance[2K (EAA)"),
        "{table}"
    );
    assert!(!table.contains('\u{1b}'), "{table:?}");
    // The columns line up whatever the titles' lengths ("Accessibility compliance (EAA)" is 30 long).
    let widths: std::collections::BTreeSet<usize> = table
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("  ("))
        .map(|l| l.chars().count())
        .collect();
    assert_eq!(widths.len(), 1, "{table}");
    assert!(
        !table.contains("the work that stays"),
        "the demo keeps the model off: {table}"
    );
    assert!(state.join("forecast/forecast.json").exists());
    // Not a git repository: nothing to say of commits.
    let said = String::from_utf8_lossy(&plan.stderr);
    assert!(!said.contains("without committing"), "{said}");
    // In a git repository the files plan rewrote are counted, with how to commit or drop them, since a
    // `git pull` refuses while they differ.
    commitea::state::git::open_or_init(&state).unwrap();
    // With the abandonment model on, each milestone's line is the work that stays, the planned scope
    // beneath it.
    let on = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["plan", "-s", "state", "--trials", "300"])
        .current_dir(tmp.path())
        .env_remove("COMMITEA_STATE")
        .env("COMMITEA_FORECAST_ABANDONMENT_MIN_HISTORY_DAYS", "90")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&on.stderr);
    assert!(
        said.contains("in forecast/ without committing them")
            && said.contains("git checkout -- forecast"),
        "{said}"
    );
    let on = String::from_utf8(on.stdout).unwrap();
    assert!(
        on.contains("  (the work that stays; all planned work: not within 2 years, about"),
        "{on}"
    );
    let render = commitea(&["render", "-s", "state", "--trials", "300"], tmp.path());
    assert!(
        render.status.success(),
        "{}",
        String::from_utf8_lossy(&render.stderr)
    );
    // The whole site, detail pages included.
    for page in [
        "runway.html",
        "standup.html",
        "roadmap.html",
        "changes.html",
        "search.html",
    ] {
        assert!(state.join("public").join(page).exists(), "{page}");
    }
    assert!(state.join("public/milestones").is_dir() && state.join("public/people").is_dir());
    assert!(state.join("public/issues/acme/api").is_dir());
    let json = commitea(
        &["plan", "-s", "state", "--trials", "300", "--json"],
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["trials"], 300);
}

#[test]
fn work_no_one_can_do_is_left_out_of_the_export_and_tj3_schedules_the_rest() {
    // Both members limited to acme/api: acme/web#3 has no one, and was written as effort with no
    // allocation: tj3 refused the whole project and wrote no report (audit 180).
    let dir = crate::pipeline::small_with(&crate::pipeline::BOTH_ON_API_ONLY);
    let s = dir.path().to_string_lossy().into_owned();
    let out = commitea(&["export", "tjp", "-s", &s], dir.path());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("left out of the export, as tj3 cannot place work no one can do")
            && said.contains("acme/web#3")
            && said.contains("no member of the team may take"),
        "{said}"
    );
    let tjp = String::from_utf8(out.stdout).unwrap();
    assert!(!tjp.contains("\"acme/web#3 "), "{tjp}");
    assert!(tjp.contains("\"acme/api#3 "), "{tjp}");
    crate::support::tj3_schedules(dir.path(), &tjp);
}

#[test]
fn export_tjp_writes_a_project_taskjuggler_schedules() {
    let tmp = tempfile::tempdir().unwrap();
    let mut demo = commitea::demo::generate(&commitea::demo::DemoSpec::bundled());
    // Titles as people write them: TaskJuggler expands `${…}` even in a string, and reads `\"` as a
    // quote, so a trailing backslash would have swallowed the closing quote.
    let hostile = [
        "Costs ${PRICE} and $[x] \"quoted\" in $(NO_SUCH_VAR) under $(HOME)",
        "Path C:\\temp\\",
        "Tab\tand ünïcode 日本",
    ];
    let open: Vec<commitea::domain::IssueKey> = demo
        .snapshot
        .issues
        .iter()
        .filter(|(_, i)| i.state == commitea::domain::OpenState::Open)
        .map(|(k, _)| k.clone())
        .take(hostile.len())
        .collect();
    for (key, title) in open.iter().zip(hostile) {
        if let Some(i) = demo.snapshot.issues.get_mut(key) {
            i.title = title.to_owned();
        }
    }
    // A milestone closed on Gitea with work still open: its issues are forecast as work, not as its cone,
    // and TaskJuggler is not asked to date it.
    for m in demo.snapshot.milestones.values_mut().flatten() {
        if m.title == "Mobile 3.0 holiday release" {
            m.state = commitea::domain::OpenState::Closed;
            m.closed_at = Some(demo.snapshot.meta.synced_at);
        }
    }
    commitea::demo::write(&demo, &tmp.path().join("state")).unwrap();
    let out = commitea(&["export", "tjp", "-s", "state"], tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tjp = String::from_utf8(out.stdout).unwrap();
    assert!(
        tjp.starts_with("project commitea \"Acme Platform (CommiTea demo)\" 2026-11-27 - "),
        "{}",
        &tjp[..200]
    );
    assert!(tjp.contains("resource r0 \"amara\""));
    assert!(tjp.contains("task t0 \"acme/api#"));
    // Each task is named by its issue and its title.
    for key in &open {
        assert!(tjp.contains(&format!("\"{key} ")), "{key}");
    }
    assert!(
        tjp.contains("Costs $ {PRICE} and $[x] \\\"quoted\\\" in $ (NO_SUCH_VAR) under $ (HOME)"),
        "{tjp}"
    );
    assert!(tjp.contains("Path C:\\temp\" {"), "{tjp}");
    assert!(tjp.contains("Tab and ünïcode 日本\" {"), "{tjp}");
    // Every milestone with open work waits for its issues; its due date goes in its note.
    let milestones: Vec<(String, Vec<String>)> = tjp
        .split("\ntask ")
        .filter(|block| block.starts_with('m') && block.contains("\n  milestone\n"))
        .map(|block| {
            let id = block.split_whitespace().next().unwrap().to_owned();
            let deps = block
                .lines()
                .find_map(|l| l.trim().strip_prefix("depends "))
                .unwrap_or_else(|| panic!("{block}"));
            (id, deps.split(", ").map(str::to_owned).collect())
        })
        .collect();
    assert!(milestones.len() >= 2, "{tjp}");
    assert!(!tjp.contains("Mobile 3.0 holiday release"), "{tjp}");
    assert!(tjp.contains("a hard deadline\""), "{tjp}");
    if !crate::support::tj3_schedules(tmp.path(), &tjp) {
        return;
    }
    let csv = std::fs::read_to_string(tmp.path().join("commitea.csv")).unwrap();
    assert!(csv.lines().count() > 100, "{csv}");
    assert!(csv.contains("Costs $ {PRICE}"), "{csv}");
    assert!(
        csv.contains("under $ (HOME)"),
        "the environment stays out: {csv}"
    );
    // TaskJuggler dates each milestone when the last of its issues ends.
    let ends: std::collections::HashMap<&str, &str> = csv
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(';').map(|x| x.trim_matches('"')).collect();
            Some((*f.first()?, *f.last()?))
        })
        .collect();
    for (id, deps) in &milestones {
        let last = deps.iter().map(|d| ends[d.as_str()]).max().unwrap();
        assert_eq!(ends[id.as_str()], last, "{id} waits for {deps:?}: {csv}");
    }
}

#[test]
fn every_forecasting_command_takes_now_seed_and_trials() {
    let state = crate::toolcli::demo_state();
    let s = state.path().to_str().unwrap();
    let pinned = ["--now", "2026-11-30", "--seed", "7", "--trials", "300"];
    let twice = |args: &[&str]| {
        let run = || {
            let mut all = args.to_vec();
            all.extend(["-s", s]);
            all.extend(pinned);
            let out = commitea(&all, state.path());
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            out.stdout
        };
        let (a, b) = (run(), run());
        assert_eq!(a, b, "{args:?} is not reproducible");
        String::from_utf8(a).unwrap()
    };
    let runway = twice(&["tool", "query_project", r#"{"view":"runway"}"#]);
    assert!(runway.contains("\"asOf\":\"2026-11-30\""), "{runway}");
    twice(&["plan", "--json"]);
    twice(&["export", "tjp"]);
    // A directive with --now is stamped with it, and forecast from it.
    let mut args = vec![
        "directive",
        "--kind",
        "note",
        "--quote",
        "Ship it.",
        "-s",
        s,
    ];
    args.extend(pinned);
    let out = commitea(&args, state.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ledger = std::fs::read_to_string(state.path().join("pm-state.md")).unwrap();
    assert!(ledger.contains("note · 2026-11-30T00:00:00Z"), "{ledger}");
    // A sync does not forecast: it offers none of them.
    for flag in ["--seed", "--trials"] {
        let out = commitea(&["sync", flag, "7", "-s", s], state.path());
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn every_reader_forecasts_from_the_committed_forecasts_day_zero() {
    let state = crate::toolcli::demo_state();
    let s = state.path().to_str().unwrap();
    let small = ["--seed", "3", "--trials", "300"];
    // A run at a later moment than the snapshot commits a forecast as of that moment.
    let mut run = vec!["run", "--offline", "-s", s, "--now", "2026-12-14T09:00:00Z"];
    run.extend(small);
    let out = commitea(&run, state.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let committed: serde_json::Value = serde_json::from_slice(
        &std::fs::read(state.path().join("forecast/forecast.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(committed["as_of"], "2026-12-14");
    // A tool call and `plan` without --now answer from that day, with the same milestone p80s.
    let mut q = vec!["tool", "query_project", r#"{"view":"runway"}"#, "-s", s];
    q.extend(small);
    let out = commitea(&q, state.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runway: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runway["asOf"], "2026-12-14", "{runway}");
    let mut plan = vec!["plan", "--json", "-s", s];
    plan.extend(small);
    let out = commitea(&plan, state.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let planned: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(planned["as_of"], "2026-12-14");
    let p80s = |r: &serde_json::Value| -> Vec<(u64, String)> {
        r["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["id"].as_u64().unwrap(), m["p80"].to_string()))
            .collect()
    };
    assert_eq!(p80s(&planned), p80s(&committed));
}

#[test]
fn a_run_says_which_proposals_are_only_in_the_checkout_and_how_they_get_in() {
    let dir = crate::pipeline::state_from_fixture("replay/small-with-ledger");
    let s = dir.path().to_string_lossy().into_owned();
    let out = commitea(
        &[
            "directive",
            "--kind",
            "reprioritize",
            "--quote",
            "API 3 first.",
            "--target",
            "acme/api#3",
            "--params",
            r#"{"priority": 0}"#,
            "-s",
            &s,
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["directiveId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = commitea(&["run", "--offline", "-s", &s], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The new entry and its op file: both named, both sent by propose (not "commit them").
    assert!(
        stderr.contains(&format!(
            "pm-state.md has new entries that are not on the branch ({id})"
        )) && stderr.contains("`commitea propose` sends them for approval"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("1 op file is only in the checkout ({id}.yaml)")),
        "{stderr}"
    );
    assert!(
        !stderr.contains("has edits that are not committed"),
        "{stderr}"
    );
}

#[test]
fn a_run_forecasts_the_committed_ledger_and_says_the_checkouts_edits_are_left_out() {
    let dir = crate::pipeline::state_from_fixture("replay/small-with-ledger");
    // The PM has emptied the ledger in the checkout, not committed.
    std::fs::write(dir.path().join("pm-state.md"), "# PM directives\n").unwrap();
    let out = commitea(
        &["run", "--offline", "-s", &dir.path().to_string_lossy()],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("pm-state.md has edits that are not committed")
            && stderr.contains("commit them"),
        "{stderr}"
    );
    // The forecast and the directives view it commits read one ledger, the committed one: they are what a
    // run of the same state without the edit commits.
    let clean = crate::pipeline::state_from_fixture("replay/small-with-ledger");
    let out = commitea(
        &["run", "--offline", "-s", &clean.path().to_string_lossy()],
        clean.path(),
    );
    assert!(out.status.success());
    for file in ["forecast/forecast.json", "forecast/views/directives.json"] {
        let read = |d: &Path| std::fs::read_to_string(d.join(file)).unwrap();
        assert_eq!(read(dir.path()), read(clean.path()), "{file}");
    }
    let view = std::fs::read_to_string(dir.path().join("forecast/views/directives.json")).unwrap();
    assert!(view.contains("D-0001"), "{view}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pm-state.md")).unwrap(),
        "# PM directives\n",
        "the checkout's edit is kept"
    );
}

#[test]
fn plan_and_directive_say_the_ledgers_problems_as_run_does() {
    let dir = crate::pipeline::state_from_fixture("replay/small-with-ledger");
    let s = dir.path().to_string_lossy().into_owned();
    let said = |args: &[&str]| {
        let out = commitea(args, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}: {stderr}");
        stderr
            .lines()
            .filter(|l| l.contains("ledger line"))
            .map(|l| l.split_once("ledger line").unwrap().1.to_owned())
            .collect::<Vec<_>>()
    };
    let run = said(&["run", "--offline", "-s", &s]);
    assert!(run.len() >= 2, "{run:?}");
    assert_eq!(said(&["plan", "-s", &s]), run);
    // Recording a directive says the ledger's problems; what Gitea does not carry is a run's to say.
    let run: Vec<String> = run
        .into_iter()
        .filter(|l| !l.contains("Gitea does not carry"))
        .collect();
    let directive = said(&[
        "directive",
        "--kind",
        "note",
        "--quote",
        "Ship it.",
        "-s",
        &s,
    ]);
    assert_eq!(directive, run);
}

#[test]
fn a_mistyped_state_folder_is_refused_and_never_created() {
    let tmp = tempfile::tempdir().unwrap();
    let nope = tmp.path().join("nope");
    for cmd in ["run", "plan"] {
        let args: &[&str] = if cmd == "run" {
            &[cmd, "--offline", "-s", "nope"]
        } else {
            &[cmd, "-s", "nope"]
        };
        let out = commitea(args, tmp.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{cmd}: {stderr}");
        assert!(
            stderr.contains("there is no folder") && stderr.contains("commitea init"),
            "{cmd}: {stderr}"
        );
        assert!(!nope.exists(), "{cmd} created the folder");
    }
    // A folder that holds a snapshot but no commitea.yaml (a copy, a subfolder) is not taken for a state repo.
    let copy = crate::pipeline::state_from_fixture("small");
    std::fs::remove_file(copy.path().join("commitea.yaml")).unwrap();
    let out = commitea(&["run", "--offline", "-s", "."], copy.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("has no commitea.yaml"), "{stderr}");
    assert!(!copy.path().join("forecast").exists());
}

#[test]
fn an_op_file_that_does_not_read_is_said_once_with_what_to_do() {
    let dir = crate::pipeline::state_from_fixture("small");
    let pending = dir.path().join("ops/pending");
    std::fs::create_dir_all(&pending).unwrap();
    let file = |id: &str, estimate: &str| {
        format!(
            "id: {id}\nsource: apply_changes\ncreated_at: 2026-11-29T09:00:00Z\nby: ann\napproved: false\ndestructive: false\nops:\n- op: set_estimate\n  issue: acme/api#3\n  estimate: {estimate}\nsummary: x\nconsequence: []\n"
        )
    };
    // A copy whose id was not renamed with the file, and a hand edit that broke a value.
    std::fs::write(pending.join("C-0002.yaml"), file("C-0001", "3d")).unwrap();
    std::fs::write(pending.join("C-0003.yaml"), file("C-0003", "[3]")).unwrap();
    std::fs::write(pending.join("C-0004.yaml"), file("C-0004", "1d")).unwrap();
    // Written by hand with half the fields: all the missing ones are named at once.
    std::fs::write(
        pending.join("C-0005.yaml"),
        "id: C-0005\nsource: apply_changes\nops: []\n",
    )
    .unwrap();
    // A good file named `.yml` is said, not passed over (audit 120: merged, never carried out, no word);
    // a hidden file is no proposal.
    std::fs::write(pending.join("C-0006.yml"), file("C-0006", "1d")).unwrap();
    std::fs::write(pending.join(".gitkeep"), "").unwrap();
    std::fs::create_dir_all(pending.join("old.yaml")).unwrap();
    let out = commitea(&["run", "--offline", "-s", "."], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let said = |needle: &str| stderr.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(
        said("ops/pending/C-0002.yaml: its id is C-0001 but the file is named C-0002.yaml"),
        1,
        "{stderr}"
    );
    assert_eq!(
        said("ops/pending/C-0003.yaml line 8 column 1: ops[0].estimate: expected a string"),
        1,
        "the op's field is named: {stderr}"
    );
    assert_eq!(
        said(
            "ops/pending/C-0005.yaml line 1 column 1: missing fields `created_at`, `approved`, \
             `destructive`, `summary`, `consequence`; an op file has id, source,"
        ),
        1,
        "{stderr}"
    );
    assert_eq!(
        said(
            "ops/pending/C-0006.yml: is not read: an op file is named by its id and `.yaml` \
             (C-0004.yaml); rename it"
        ),
        1,
        "{stderr}"
    );
    assert_eq!(
        said("ops/pending/old.yaml: is a folder, not an op file"),
        1,
        "{stderr}"
    );
    assert_eq!(
        said("left out until it is fixed (or deleted"),
        5,
        "{stderr}"
    );
    assert!(!stderr.contains(".gitkeep"), "{stderr}");
    // The good one is on the changes page as a proposal; those left out are listed as such, with why.
    let page = std::fs::read_to_string(dir.path().join("public/changes.html")).unwrap();
    assert!(page.contains("id=\"C-0004\""), "{page}");
    // Drawn offline: whether a pull request awaits it is said unknown, not left to read as "none".
    assert!(page.contains("was not checked"), "{page}");
    for id in ["C-0001", "C-0002", "C-0003", "C-0005"] {
        assert!(!page.contains(&format!("id=\"{id}\"")), "{id}: {page}");
    }
    assert!(page.contains("<strong>Left out:</strong>"), "{page}");
    for name in ["C-0002", "C-0003", "C-0005"] {
        assert!(
            page.contains(&format!(
                "<code>ops/pending/{name}.yaml</code>: ops/pending/{name}.yaml"
            )),
            "{name}: {page}"
        );
    }
    // A preview and a redraw say them too, once each (`plan` was silent: an audit's finding).
    for args in [&["plan", "-s", "."][..], &["render", "-s", "."]] {
        let out = commitea(args, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        for name in ["C-0002", "C-0003", "C-0005"] {
            assert_eq!(
                stderr
                    .lines()
                    .filter(|l| l.contains(&format!("ops/pending/{name}.yaml"))
                        && l.contains("left out until it is fixed"))
                    .count(),
                1,
                "{args:?} {name}: {stderr}"
            );
        }
    }
}

#[test]
fn a_directive_only_in_the_checkout_is_on_the_site_but_not_in_the_committed_view() {
    let dir = crate::pipeline::state_from_fixture("small");
    let s = dir.path().to_string_lossy().into_owned();
    let out = commitea(
        &[
            "directive",
            "--kind",
            "reprioritize",
            "--quote",
            "Auth first.",
            "--target",
            "issue acme/api#3",
            "--params",
            r#"{"priority": 0}"#,
            "-s",
            &s,
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("ops/pending/D-0001.yaml").exists());
    let out = commitea(&["run", "--offline", "-s", &s], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The PM sees their proposal on the site; the commit holds only what is on the branch.
    let page = std::fs::read_to_string(dir.path().join("public/directives.html")).unwrap();
    assert!(page.contains("Awaiting approval: D-0001"), "{page}");
    let view: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("forecast/views/directives.json")).unwrap(),
    )
    .unwrap();
    assert!(view["pending"].is_null(), "{view}");
    let committed = git_out(dir.path(), &["show", "HEAD:forecast/views/directives.json"]);
    assert!(!committed.contains("D-0001"), "{committed}");
}

#[test]
fn a_milestone_timed_by_a_slow_closing_pace_says_so_next_to_its_schedule() {
    let tmp = tempfile::tempdir().unwrap();
    let state = commitea::demo::generate(&commitea::demo::DemoSpec::bundled());
    commitea::demo::write(&state, tmp.path()).unwrap();
    let plan = |min_history: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_commitea"));
        c.args(["plan", "--trials", "400", "-s"])
            .arg(tmp.path())
            .env_remove("COMMITEA_STATE");
        if let Some(days) = min_history {
            c.env("COMMITEA_FORECAST_ABANDONMENT_MIN_HISTORY_DAYS", days);
        }
        let out = c.output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // The demo keeps the abandonment model off: its dates are the schedule's, and nothing is said.
    assert!(!plan(None).contains("the schedule's finish"));
    // With the model on, its generated history closes far fewer issues than the team's hours allow:
    // the dates move months past the schedule, and the run says why, once, naming each milestone.
    let stderr = plan(Some("90"));
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("the schedule's finish"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("Public API v2 (p50 ")
            && said[0].contains("working days after the schedule's finish")
            && said[0].contains("Accessibility compliance (EAA) (p50 ")
            && said[0].contains("closed while")
            && !said[0].contains("docs/"),
        "{stderr}"
    );
}

/// Records D-0001 in the `small` fixture: acme/api#3 to p/0, its op file pending in the checkout.
fn reprioritize_api_3(dir: &Path) {
    let s = dir.to_string_lossy();
    let out = commitea(
        &[
            "directive",
            "--kind",
            "reprioritize",
            "--quote",
            "API three first.",
            "--target",
            "acme/api#3",
            "--params",
            r#"{"priority": 0}"#,
            "-s",
            &s,
        ],
        dir,
    );
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_hand_written_directive_gitea_does_not_carry_is_carried_out_by_its_own_op_file() {
    let dir = crate::pipeline::state_from_fixture("small");
    let s = dir.path().to_string_lossy().into_owned();
    let stderr = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();
    // Written into the ledger by hand: no op file ever carried it to Gitea, where acme/api#3 is p/1.
    let ledger = dir.path().join("pm-state.md");
    let mut text = std::fs::read_to_string(&ledger).unwrap();
    text.push_str(
        "\n## D-0001 · reprioritize · 2026-11-30T09:00:00Z\n\n> API three first.\n\n\
         - target: issue acme/api#3\n- params: {\"priority\": 0}\n- by: ann\n",
    );
    std::fs::write(&ledger, &text).unwrap();
    let planned = commitea(&["plan", "-s", &s], dir.path());
    assert!(planned.status.success(), "{planned:?}");
    assert!(
        stderr(&planned).contains("D-0001 is in force but Gitea does not carry it")
            && stderr(&planned).contains("commitea directive --carry-out D-0001"),
        "{planned:?}"
    );
    // Nothing to carry out for a directive the ledger lacks.
    let unknown = commitea(
        &["directive", "--carry-out", "D-0009", "-s", &s],
        dir.path(),
    );
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
    assert!(
        stderr(&unknown).contains("pm-state.md has no directive D-0009"),
        "{unknown:?}"
    );
    // The op file makes exactly the change Gitea lacks; pending, the run has nothing to say.
    let out = commitea(
        &["directive", "--carry-out", "d-0001", "-s", &s],
        dir.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["applied"], 1, "{answer}");
    let file = dir.path().join(answer["opsFile"].as_str().unwrap());
    let yaml = std::fs::read_to_string(&file).unwrap();
    assert!(
        yaml.contains("op: set_priority")
            && yaml.contains("issue: acme/api#3")
            && yaml.contains("priority: p/0"),
        "{yaml}"
    );
    let planned = commitea(&["plan", "-s", &s], dir.path());
    assert!(
        !stderr(&planned).contains("Gitea does not carry it"),
        "{planned:?}"
    );
    // Gitea carrying it (the label applied), there is nothing left to carry out.
    std::fs::remove_file(&file).unwrap();
    let issue = dir.path().join("snapshot/issues/acme/api/3.yaml");
    let i = std::fs::read_to_string(&issue).unwrap();
    std::fs::write(&issue, i.replacen("- p/1", "- p/0", 1)).unwrap();
    let again = commitea(
        &["directive", "--carry-out", "D-0001", "-s", &s],
        dir.path(),
    );
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    assert!(
        stderr(&again).contains("Gitea already carries D-0001"),
        "{again:?}"
    );
}

#[test]
fn the_same_directive_twice_is_recorded_once() {
    let dir = crate::pipeline::state_from_fixture("small");
    let s = dir.path().to_string_lossy().into_owned();
    reprioritize_api_3(dir.path());
    let ledger = std::fs::read_to_string(dir.path().join("pm-state.md")).unwrap();
    let again = |priority: &str| {
        commitea(
            &[
                "directive",
                "--kind",
                "reprioritize",
                "--quote",
                "API three first, really.",
                "--target",
                "acme/api#3",
                "--params",
                &format!(r#"{{"priority": {priority}}}"#),
                "-s",
                &s,
            ],
            dir.path(),
        )
    };
    let out = again("0");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("D-0001 (ledger line ") && said.contains("already says this and is in force"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pm-state.md")).unwrap(),
        ledger
    );
    // Another priority is another directive.
    let out = again("2");
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_withdrawn_directive_whose_op_file_is_still_pending_is_said() {
    let dir = crate::pipeline::state_from_fixture("small");
    let s = dir.path().to_string_lossy().into_owned();
    reprioritize_api_3(dir.path());
    let stderr = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();
    let planned = commitea(&["plan", "-s", &s], dir.path());
    assert!(!stderr(&planned).contains("still pending"), "{planned:?}");
    let ledger = dir.path().join("pm-state.md");
    let text = std::fs::read_to_string(&ledger).unwrap();
    std::fs::write(
        &ledger,
        text.replace("- status: active", "- status: withdrawn"),
    )
    .unwrap();
    let planned = commitea(&["plan", "-s", &s], dir.path());
    let said = stderr(&planned);
    assert!(
        said.contains(
            "D-0001 is withdrawn, but its op file ops/pending/D-0001.yaml is still pending"
        ) && said.contains("delete it"),
        "{said}"
    );
    // Merged so: the site said the file was "approved, carried out at the next run", and only the job's
    // log said otherwise (audit 175).
    git_out(dir.path(), &["add", "-A"]);
    git_out(
        dir.path(),
        &["commit", "-qm", "D-0001 withdrawn, its file merged"],
    );
    let run = commitea(&["run", "--offline", "-s", &s], dir.path());
    assert!(run.status.success(), "{run:?}");
    let read = |rel: &str| std::fs::read_to_string(dir.path().join(rel)).unwrap();
    assert!(
        read("forecast/forecast.json").contains("D-0001 is withdrawn, but its op file"),
        "{}",
        read("forecast/forecast.json")
    );
    assert!(
        read("public/changes.html")
            .contains("its directive is withdrawn: none of it is carried out; delete this file"),
        "{}",
        read("public/changes.html")
    );
    let page = read("public/directives.html");
    assert!(
        !page.contains("carried out at the next run that reaches Gitea: D-0001")
            && !page.contains("Awaiting approval: D-0001"),
        "{page}"
    );
    // Not a ledger entry skipped, to fix in pm-state.md: a file to delete (audit 179).
    assert!(
        !page.contains("D-0001 is withdrawn, but its op file"),
        "{page}"
    );
    assert!(read("public/index.html").contains("D-0001 is withdrawn, but its op file"));
    assert!(
        !read("public/changes.html").contains("p80 +"),
        "the file's consequence is no more"
    );
}

#[test]
fn a_merged_directive_waiting_for_an_online_run_is_not_awaiting_approval() {
    let dir = crate::pipeline::state_from_fixture("small");
    let s = dir.path().to_string_lossy().into_owned();
    reprioritize_api_3(dir.path());
    let page = |dir: &Path| std::fs::read_to_string(dir.join("public/directives.html")).unwrap();
    let run = commitea(&["run", "--offline", "-s", &s], dir.path());
    assert!(run.status.success(), "{run:?}");
    assert!(page(dir.path()).contains("Awaiting approval: D-0001"));
    // Merged: on the branch, the offline run cannot carry it out; it is approved, not awaiting approval.
    git_out(dir.path(), &["add", "pm-state.md", "ops"]);
    git_out(dir.path(), &["commit", "-qm", "merged"]);
    let run = commitea(&["run", "--offline", "-s", &s], dir.path());
    assert!(run.status.success(), "{run:?}");
    let html = page(dir.path());
    assert!(
        html.contains("Approved, carried out at the next run that reaches Gitea: D-0001"),
        "{html}"
    );
}

#[test]
fn plan_says_it_previews_ledger_entries_the_branch_does_not_have() {
    let tmp = tempfile::tempdir().unwrap();
    let out = commitea(&["demo", "d", "--trials", "300"], tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tmp.path().join("d");
    let s = dir.to_str().unwrap();
    let plan = commitea(&["plan", "-s", s, "--trials", "300"], tmp.path());
    let stderr = String::from_utf8_lossy(&plan.stderr);
    assert!(!stderr.contains("a preview"), "{stderr}");
    let recorded = commitea(
        &[
            "directive",
            "-s",
            s,
            "--kind",
            "note",
            "--quote",
            "Demo on Friday.",
        ],
        tmp.path(),
    );
    assert!(
        recorded.status.success(),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let plan = commitea(&["plan", "-s", s, "--trials", "300"], tmp.path());
    let stderr = String::from_utf8_lossy(&plan.stderr);
    assert!(
        stderr.contains("a preview: this plan includes D-0008 from pm-state.md that the branch does not have yet"),
        "{stderr}"
    );
}

#[test]
fn a_reader_that_stops_reading_ends_the_command_quietly() {
    // `commitea tool … | head` panicked on the closed pipe and exited 101 with a backtrace hint.
    let tmp = crate::toolcli::demo_state();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["tool", "query_project", r#"{"view":"standup"}"#, "-s"])
        .arg(tmp.path())
        .env(crate::toolcli::TRIALS.0, crate::toolcli::TRIALS.1)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `commitea ARGS` in `dir`, which must succeed: its log (stderr).
fn commitea_in(dir: &Path, args: &[&str]) -> String {
    let out = commitea(args, dir);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    said
}

/// The demo in `d` under a new folder, drawn with 300 trials and its `commitea.yaml` keeping them.
fn demo_kept_at_300_trials() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    commitea_in(tmp.path(), &["demo", "d", "--trials", "300"]);
    let config = tmp.path().join("d/commitea.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("  trials: 10000\n", "  trials: 300\n"),
    )
    .unwrap();
    tmp
}

#[test]
fn a_forecast_drawn_with_a_seed_the_settings_do_not_keep_says_so() {
    // `run --seed 7` committed a draw no other reader makes: `plan`, the tools and `render` drew with the
    // settings' seed, their p80s a day off the site's, and `render` said they read the committed one
    // (audits 169, 176, 177).
    let tmp = demo_kept_at_300_trials();
    let ok = |args: &[&str]| commitea_in(tmp.path(), args);
    let forecast = || std::fs::read_to_string(tmp.path().join("d/forecast/forecast.json")).unwrap();
    let said = "drawn with seed 7 (--seed), not the default seed";
    ok(&["run", "--offline", "-s", "d", "--seed", "7"]);
    assert!(
        forecast().contains("drawn with seed 7 (--seed), not the default seed: `plan`, the tools, `render`, `propose` and the next run draw with the settings'"),
        "{}",
        forecast()
    );
    let page = std::fs::read_to_string(tmp.path().join("d/public/index.html")).unwrap();
    assert!(page.contains(said), "{page}");
    ok(&["render", "-s", "d"]);
    let page = std::fs::read_to_string(tmp.path().join("d/public/index.html")).unwrap();
    assert!(
        page.contains("the committed one was drawn with flags its run was given, and the tools and the next run draw with the settings"),
        "{page}"
    );
    // Drawn with the settings' seed again, it says nothing.
    ok(&["run", "--offline", "-s", "d"]);
    assert!(!forecast().contains("drawn with seed"), "{}", forecast());
}

#[test]
fn a_site_rendered_for_another_day_says_it_is_a_preview() {
    // `render --now` drew the site of another day than the committed forecast's, with nothing to say so,
    // while the tools and the standup answered from the committed one.
    // The settings keep the demo's trials, so the committed forecast is what the tools read.
    let tmp = demo_kept_at_300_trials();
    let ok = |args: &[&str]| commitea_in(tmp.path(), args);
    let page =
        |name: &str| std::fs::read_to_string(tmp.path().join("d/public").join(name)).unwrap();
    let said = "A preview (commitea render) as of 2026-12-10, the committed forecast as of 2026-11-27 \
                (--now 2026-11-27 draws it): the tools, the standup and the next run read the committed \
                one.";
    ok(&[
        "render",
        "-s",
        "d",
        "--trials",
        "300",
        "--now",
        "2026-12-10",
    ]);
    assert!(page("index.html").contains(said), "{}", page("index.html"));
    assert!(page("issues/acme/api/102.html").contains(said));
    ok(&["render", "-s", "d", "--trials", "300"]);
    assert!(!page("index.html").contains("A preview"));
    // Another seed too (audit 169: after `run --seed 7` every page was redrawn with the default seed).
    ok(&["render", "-s", "d", "--trials", "300", "--seed", "7"]);
    assert!(
        page("index.html").contains(
            "A preview (commitea render) with seed 7, the committed forecast with the default seed (--seed 4859222839642056033 draws it)"
        ),
        "{}",
        page("index.html")
    );
}

#[test]
fn a_title_several_repositories_share_is_refused_as_a_target_and_named_with_its_repository() {
    // Milestones are per repository in Gitea: one release across repositories is several milestones of
    // one title. A directive by title changed the first of them without a word, and every text named
    // two milestones alike.
    let dir = crate::toolcli::demo_state();
    let path = dir.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    // "Café" decomposed, as macOS writes it, in one title; the other two share a title.
    // Last quarter's closed milestone of the same title is not what a PM means today.
    let text = text
        .replace("title: Public API v2", "title: Release 1.0")
        .replace("title: Mobile 3.0 holiday release", "title: Release 1.0")
        .replace("title: Q3 hardening", "title: Release 1.0")
        .replace(
            "title: Accessibility compliance (EAA)",
            "title: \"Cafe\u{301} accessibility\"",
        );
    std::fs::write(&path, text).unwrap();
    let s = dir.path().to_string_lossy().into_owned();
    let directive = |target: &str| {
        commitea(
            &[
                "directive",
                "--kind",
                "set-deadline",
                "--quote",
                "Ship it by March.",
                "--target",
                target,
                "--params",
                r#"{"due":"2027-03-01"}"#,
                "-s",
                &s,
            ],
            dir.path(),
        )
    };
    let out = directive("milestone Release 1.0");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "\"Release 1.0\" is the title of 2 milestones: 3 (acme/mobile), 4 (acme/api); name the \
             one meant by its id (`milestone 3`)"
        ),
        "{err}"
    );
    assert!(
        !std::fs::read_to_string(dir.path().join("pm-state.md"))
            .unwrap()
            .contains("Ship it by March."),
        "nothing recorded"
    );
    // A title typed composed and in another case names the decomposed one.
    let out = directive("milestone CAFÉ ACCESSIBILITY");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The table names each shared title with its repository.
    let out = commitea(&["plan", "--trials", "200", "-s", &s], dir.path());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("Release 1.0 (acme/api)") && table.contains("Release 1.0 (acme/mobile)"),
        "{table}"
    );
    // So do the consequence's subjects, the charts, the board and the people's queues (audit 168: the
    // runway chart said "Release 1.0" twice, the roadmap's due lines alike).
    let out = directive("milestone 4");
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("milestone 4 Release 1.0 (acme/api)"),
        "{said}"
    );
    let out = commitea(&["render", "--trials", "200", "-s", &s], dir.path());
    assert!(out.status.success(), "{out:?}");
    let page = |name: &str| std::fs::read_to_string(dir.path().join("public").join(name)).unwrap();
    let runway = page("runway.html");
    assert!(
        runway.contains("Release 1.0 (acme/api): p10")
            && runway.contains("Release 1.0 (acme/mobile): p10"),
        "the runway chart"
    );
    let roadmap = page("roadmap.html");
    assert!(
        roadmap.contains("Release 1.0 (acme/api) due")
            && roadmap.contains("Release 1.0 (acme/mobile) due"),
        "the roadmap's due lines"
    );
    assert!(page("board.html").contains("Release 1.0 (acme/mobile)"));
}

#[test]
fn the_plan_table_lines_up_in_terminal_columns_whatever_the_script() {
    // A Japanese title's characters take two columns each: padded by characters, its row came out
    // wider than the others (audit 95).
    let (_tmp, dir) = quick_demo();
    edit(
        &dir.join("snapshot/milestones.yaml"),
        "title: Public API v2",
        "title: 公開API第二版",
    );
    let s = dir.to_string_lossy().into_owned();
    let out = commitea(&["plan", "--trials", "200", "-s", &s], &dir);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(table.contains("公開API第二版"), "{table}");
    let widths: Vec<usize> = table
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("  ("))
        .map(unicode_width::UnicodeWidthStr::width)
        .collect();
    assert!(
        widths.windows(2).all(|w| w[0] == w[1]),
        "{widths:?}\n{table}"
    );
}

#[test]
fn the_plan_table_says_overdue_where_no_slack_can_be_stated() {
    // Forecast from long after Mobile 3.0's due date (2026-12-18), its p80 beyond the horizon: "-" said
    // nothing of the due date gone (audit 102).
    let (_tmp, dir) = quick_demo();
    let s = dir.to_string_lossy().into_owned();
    let out = commitea(
        &["plan", "--trials", "200", "--now", "2029-01-10", "-s", &s],
        &dir,
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = table
        .lines()
        .find(|l| l.contains("2026-12-18"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.trim_end().ends_with(" overdue"), "{table}");
}

#[test]
fn a_run_with_no_server_to_sync_from_says_it_synced_nothing() {
    // An imported state has no server: `run` forecast it as if it had synced (audit 97).
    let (_tmp, dir) = quick_demo();
    edit(
        &dir.join("commitea.yaml"),
        "server: https://gitea.example.com\n",
        "",
    );
    let s = dir.to_string_lossy().into_owned();
    let out = commitea(&["run", "--trials", "200", "-s", &s], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("no server to sync from") && err.contains("nothing was synced"),
        "{err}"
    );
    let out = commitea(&["run", "--offline", "--trials", "200", "-s", &s], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("no server to sync from"), "{err}");
}

#[test]
fn a_member_written_in_another_case_is_the_login_the_issues_name() {
    // Gitea reads usernames without case: `Amara` in commitea.yaml is the `amara` her issues are
    // assigned to (audit 95: her work went to the others, and her page was empty).
    let (_tmp, dir) = quick_demo();
    edit(
        &dir.join("commitea.yaml"),
        "  - name: amara ",
        "  - name: Amara ",
    );
    let s = dir.to_string_lossy().into_owned();
    let out = commitea(&["run", "--offline", "--trials", "200", "-s", &s], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("not in the team"), "{err}");
    assert!(
        err.contains("Gitea spells the username amara: planned as amara"),
        "{err}"
    );
    let out = commitea(
        &[
            "tool",
            "-s",
            &s,
            "query_project",
            r#"{"view":"runway","filters":{"assignee":"amara"}}"#,
        ],
        &dir,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["capacity"][0]["person"], "amara", "{v}");
    assert!(v["capacity"][0]["queued"].as_u64().unwrap() > 0, "{v}");
}

#[test]
fn a_hostile_titles_bidirectional_controls_never_reach_a_terminal_raw() {
    // A right-to-left override in a milestone title reordered the terminal line of an error that listed
    // the milestones, and of every tool answer that carried the title.
    let dir = crate::toolcli::demo_state();
    let path = dir.path().join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "title: Public API v2",
        "title: \"Public \u{202e}2v IPA\u{202c} API v2\"",
    );
    std::fs::write(&path, text).unwrap();
    let s = dir.path().to_string_lossy().into_owned();
    let out = commitea(
        &[
            "directive",
            "--kind",
            "set-deadline",
            "--quote",
            "By March.",
            "--target",
            "milestone No Such Thing",
            "--params",
            r#"{"due":"2027-03-01"}"#,
            "-s",
            &s,
        ],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("2v IPA") && !err.contains('\u{202e}'), "{err}");
    let out = commitea(
        &["tool", "-s", &s, "query_project", r#"{"view":"runway"}"#],
        dir.path(),
    );
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        answer.contains("\\u202e2v IPA") && !answer.contains('\u{202e}'),
        "{answer}"
    );
    // Still the same JSON: the title reads back with its character.
    let v: serde_json::Value = serde_json::from_str(answer.trim()).unwrap();
    assert!(v.to_string().contains('\u{202e}'));
    // So do `plan --json` and the consequence a recorded directive prints (audit 95: raw).
    for args in [
        vec!["plan", "--json", "--trials", "200", "-s", &s],
        vec![
            "directive",
            "--kind",
            "set-deadline",
            "--quote",
            "By March.",
            "--target",
            "milestone 4",
            "--params",
            r#"{"due":"2027-03-01"}"#,
            "--trials",
            "200",
            "-s",
            &s,
        ],
    ] {
        let out = commitea(&args, dir.path());
        let answer = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            answer.contains("\\u202e2v IPA") && !answer.contains('\u{202e}'),
            "{args:?}: {answer}"
        );
    }
}

/// `commitea demo` in a new temporary folder: the folder and the demo's state repo in it.
/// The bundled demo made by `commitea demo` at 200 trials, in `d` of a new folder.
fn quick_demo() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = commitea(&["demo", "d", "--trials", "200"], tmp.path());
    assert!(out.status.success(), "{out:?}");
    let dir = tmp.path().join("d");
    (tmp, dir)
}

#[test]
fn a_hire_taken_back_gives_back_the_plan_before_it() {
    // A contractor hired by directive and the directive withdrawn: the plan kept the work the hire had
    // shared out, and was worse than before the hire (audit 175: a milestone's P(on time) 99% → 91%).
    let (_tmp, dir) = quick_demo();
    let run = || {
        let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
        assert!(out.status.success(), "{out:?}");
        std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap()
    };
    let planned = planned_people;
    let before = planned(&run());
    let ledger = dir.join("pm-state.md");
    let text = std::fs::read_to_string(&ledger).unwrap();
    std::fs::write(
        &ledger,
        format!(
            "{text}\n## D-0008 · capacity · 2026-11-27T12:00:00Z\n\n> Zoe joins as a contractor for Q1.\n\n\
             - target: member zoe\n- params: {{\"from\": \"2026-11-30\", \"to\": \"2027-03-31\", \
             \"hours_per_week\": 40}}\n- status: active\n- by: amara\n"
        ),
    )
    .unwrap();
    commit_as_t(&dir, &["-a"], "Zoe joins");
    let hired = planned(&run());
    assert!(
        hired.iter().any(|(_, who)| who == "\"zoe\""),
        "zoe takes work"
    );
    let text = std::fs::read_to_string(&ledger).unwrap();
    let withdrawn = text.replacen(
        "- status: active\n- by: amara\n",
        "- status: withdrawn\n- by: amara\n",
        usize::MAX,
    );
    // Only D-0008's status: it is the last entry.
    let at = text.rfind("## D-0008").unwrap();
    std::fs::write(
        &ledger,
        format!(
            "{}{}",
            &text[..at],
            &withdrawn[withdrawn.rfind("## D-0008").unwrap()..]
        ),
    )
    .unwrap();
    commit_as_t(&dir, &["-a"], "D-0008 withdrawn");
    // A what-if before the next run keeps the same people as that run (audit 179: its "before" kept
    // the hire's, and was neither `plan` nor the run).
    let op = r#"{"ops": [{"op": "set_priority", "issue": "acme/web#87", "priority": "p/0"}], "preview": true}"#;
    let out = commitea(&["tool", "--trials", "200", "apply_changes", op], &dir);
    assert!(out.status.success(), "{out:?}");
    let preview: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let after_text = run();
    let after = planned(&after_text);
    assert_eq!(
        after, before,
        "whom each issue is planned for, before the hire and after it was withdrawn"
    );
    let committed: serde_json::Value = serde_json::from_str(&after_text).unwrap();
    crate::support::milestones_before_are(&preview["detail"], &committed);
}

#[test]
fn a_hire_withdrawn_by_a_pull_request_says_what_the_merge_gives() {
    // `commitea propose` of a withdrawal ("D-0008 (edit)") shared the work out afresh on the side after,
    // while the run after the merge gives back the plan before the hire (audit 181: May 17 against May 19).
    let (_tmp, dir) = quick_demo();
    let run = || {
        let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
        assert!(out.status.success(), "{out:?}");
    };
    run();
    let ledger = dir.join("pm-state.md");
    let text = std::fs::read_to_string(&ledger).unwrap();
    let base = format!(
        "{text}\n## D-0008 · capacity · 2026-11-27T12:00:00Z\n\n> Zoe joins as a contractor for Q1.\n\n\
         - target: member zoe\n- params: {{\"from\": \"2026-11-30\", \"to\": \"2027-03-31\", \
         \"hours_per_week\": 40}}\n- status: active\n- by: amara\n"
    );
    std::fs::write(&ledger, &base).unwrap();
    commit_as_t(&dir, &["-a"], "Zoe joins");
    run();
    let at = base.rfind("- status: active").unwrap();
    let withdrawn = format!("{}- status: withdrawn{}", &base[..at], &base[at + 16..]);
    // The consequence of the edit, as `propose` works it out for its pull request.
    let layout = commitea::state::Layout::new(&dir);
    let config = commitea::config::Config::load(
        &dir,
        vec![("COMMITEA_FORECAST_TRIALS".to_owned(), "200".to_owned())],
        &Default::default(),
    )
    .unwrap();
    let snapshot = commitea::state::Snapshot::load(&layout).unwrap();
    let now =
        commitea::pipeline::day_zero(&layout, &config.calendar.timezone, snapshot.meta.synced_at);
    let (c, _, _) = commitea::consequence::of_change(
        &config,
        (&snapshot, Some(&base)),
        (&snapshot, Some(&withdrawn)),
        now,
        &|plan, ledger| commitea::pipeline::keeps(&layout, &config, plan, ledger),
        None,
    );
    std::fs::write(&ledger, &withdrawn).unwrap();
    commit_as_t(&dir, &["-a"], "D-0008 withdrawn");
    run();
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap();
    let mut compared = 0;
    for m in &c.milestones {
        let Some(after) = &m.after else { continue };
        let run = merged["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == m.milestone)
            .unwrap();
        assert_eq!(after.p80, run["p80"].as_str().unwrap(), "{}", m.title);
        compared += 1;
    }
    assert!(compared > 0);
}

#[test]
fn a_capacity_directive_marked_superseded_by_a_later_one_moves_nothing() {
    // The ledger asks that an entry a later one replaces be marked superseded: for a hire, that read as
    // the hire taken back, and the plan went back to before it (audit 181).
    let (_tmp, dir) = quick_demo();
    let run = || {
        let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let ledger = dir.join("pm-state.md");
    let hire = |id: &str, hours: u32| {
        format!(
            "\n## {id} · capacity · 2026-11-27T12:00:00Z\n\n> Zoe joins.\n\n- target: member zoe\n\
             - params: {{\"from\": \"2026-11-30\", \"hours_per_week\": {hours}}}\n- status: active\n\
             - by: amara\n"
        )
    };
    let text = std::fs::read_to_string(&ledger).unwrap();
    std::fs::write(
        &ledger,
        format!("{text}{}{}", hire("D-0008", 30), hire("D-0009", 20)),
    )
    .unwrap();
    commit_as_t(&dir, &["-a"], "Zoe joins, then at 20 h");
    run();
    let planned = || std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap();
    let before = planned();
    let text = std::fs::read_to_string(&ledger).unwrap();
    let at = text
        .find("- status: active\n- by: amara\n\n## D-0009")
        .unwrap();
    let marked = format!("{}- status: superseded{}", &text[..at], &text[at + 16..]);
    std::fs::write(&ledger, marked).unwrap();
    commit_as_t(&dir, &["-a"], "D-0008 superseded by D-0009");
    let said = run();
    assert!(!said.contains("no longer in force"), "{said}");
    let people = |t: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(t).unwrap();
        v["issues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["planned_assignee"].to_string())
            .collect()
    };
    assert_eq!(people(&planned()), people(&before));
}

#[test]
fn trailing_spaces_an_editor_adds_are_no_edit_of_an_entry() {
    // Audit 185: an editor padding lines on save made six entries "edits of entries the branch has", for
    // `commitea propose` to send as edit pull requests.
    let (_tmp, dir) = quick_demo();
    let ledger = dir.join("pm-state.md");
    let text = std::fs::read_to_string(&ledger).unwrap();
    let padded: String = text
        .lines()
        .map(|l| {
            if l.starts_with("- ") {
                format!("{l}   \n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_ne!(padded, text);
    std::fs::write(&ledger, padded).unwrap();
    let out = commitea(&["run", "--offline", "--trials", "100"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("has edits of entries"), "{stderr}");
    // A real edit still is one.
    let edited = std::fs::read_to_string(&ledger).unwrap().replacen(
        "- status: active",
        "- status: withdrawn",
        1,
    );
    std::fs::write(&ledger, edited).unwrap();
    let out = commitea(&["run", "--offline", "--trials", "100"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("has edits of entries"), "{stderr}");
}

#[test]
fn each_reader_says_a_warning_once() {
    // `export` said the plan's warnings, and then again with the forecast's (audit 182).
    let (_tmp, dir) = quick_demo();
    let config = std::fs::read_to_string(dir.join("commitea.yaml")).unwrap();
    let typo = config.replacen(
        "repositories: [acme/mobile]",
        "repositories: [acme/mobil]",
        1,
    );
    assert_ne!(typo, config);
    std::fs::write(dir.join("commitea.yaml"), typo).unwrap();
    for args in [
        &["export", "tjp", "-o", "/dev/null"][..],
        &["plan", "--trials", "100"],
    ] {
        let out = commitea(args, &dir);
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.matches("their repositories name acme/mobil").count(),
            1,
            "{args:?}: {stderr}"
        );
    }
}

/// The ledger text with directive `id`'s status line set to `status`.
fn with_status(text: &str, id: &str, status: &str) -> String {
    let at = text.find(&format!("## {id} ")).unwrap();
    let line = at + text[at..].find("- status: ").unwrap();
    let end = line + text[line..].find('\n').unwrap();
    format!("{}- status: {status}{}", &text[..line], &text[end..])
}

#[test]
fn a_hire_revised_then_dropped_or_dropped_under_its_holiday_gives_back_the_plan_before_it() {
    // Audit 182: a hire superseded by a revised one, the revision then withdrawn, went back only to the
    // first hire; a hire withdrawn while a holiday of the hire's stood was not taken back at all (30
    // issues' people, and a milestone a week later than before the hire, each time).
    let entry = |id: &str, who: &str, params: &str| {
        format!(
            "\n## {id} · capacity · 2026-11-27T12:00:00Z\n\n> {who} joins.\n\n- target: member {who}\n\
             - params: {params}\n- status: active\n- by: amara\n"
        )
    };
    let hire = |hours: u32| format!(r#"{{"from": "2026-11-30", "hours_per_week": {hours}}}"#);
    for case in ["revised", "holiday", "another joins"] {
        let (_tmp, dir) = quick_demo();
        let run = || {
            let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
            assert!(out.status.success(), "{out:?}");
            (
                std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        let planned = planned_people;
        let before = planned(&run().0);
        let ledger = dir.join("pm-state.md");
        let append = |more: &str| {
            let text = std::fs::read_to_string(&ledger).unwrap();
            std::fs::write(&ledger, format!("{text}{more}")).unwrap();
        };
        let status = |id: &str, to: &str| {
            let text = std::fs::read_to_string(&ledger).unwrap();
            std::fs::write(&ledger, with_status(&text, id, to)).unwrap();
        };
        append(&entry("D-0008", "zoe", &hire(30)));
        commit_as_t(&dir, &["-a"], "Zoe joins");
        let hired = planned(&run().0);
        assert!(hired.iter().any(|(_, who)| who == "\"zoe\""), "{case}");
        let said = match case {
            "revised" => {
                status("D-0008", "superseded");
                append(&entry("D-0009", "zoe", &hire(20)));
                commit_as_t(&dir, &["-a"], "Zoe at 20 h");
                run();
                status("D-0009", "withdrawn");
                commit_as_t(&dir, &["-a"], "the hire fell through");
                "D-0008 and D-0009 no longer in force"
            }
            "holiday" => {
                append(&entry(
                    "D-0009",
                    "zoe",
                    r#"{"from": "2026-12-21", "to": "2027-01-01", "hours_per_week": 0}"#,
                ));
                commit_as_t(&dir, &["-a"], "Zoe's holiday");
                let (_, stderr) = run();
                // The hire in force knows her: the holiday adds nobody.
                assert!(!stderr.contains("adds zoe"), "{stderr}");
                status("D-0008", "withdrawn");
                commit_as_t(&dir, &["-a"], "the hire fell through");
                "D-0008 no longer in force"
            }
            _ => {
                status("D-0008", "withdrawn");
                append(&entry("D-0009", "yuki", &hire(30)));
                commit_as_t(&dir, &["-a"], "Yuki instead of Zoe");
                "D-0008 no longer in force"
            }
        };
        let (after, stderr) = run();
        assert!(stderr.contains(said), "{case}: {stderr}");
        if case == "another joins" {
            // Said beside the hire taken back (audit 182: the run named only the withdrawal).
            assert!(
                stderr.contains("yuki joined the team since the last forecast"),
                "{stderr}"
            );
        } else {
            assert_eq!(planned(&after), before, "{case}: the plan before the hire");
        }
    }
}

#[test]
fn a_capacity_directive_taken_back_beside_another_of_the_member_gives_back_the_plan_before_it() {
    // Audit 189: only a member left with no directive giving hours was taken back. A leave withdrawn
    // while a part-time week stood went back to before the part-time week (Public API v2 three months
    // earlier); a hire's revision withdrawn kept the revision's cut lines. And a hire whose every hour
    // was before the forecast's day "joined the team" and shared the work out again.
    let entry = |id: &str, who: &str, params: &str| {
        format!(
            "\n## {id} · capacity · 2026-11-27T12:00:00Z\n\n> {who}'s hours.\n\n- target: member {who}\n\
             - params: {params}\n- status: active\n- by: amara\n"
        )
    };
    let week = |hours: u32| format!(r#"{{"from": "2026-11-30", "hours_per_week": {hours}}}"#);
    // What a plan comes to: each milestone's range and cut line, and whom each issue is planned for.
    let kept = |text: &str| {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let milestones: Vec<String> = v["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| format!("{} {} {} {}", m["title"], m["p50"], m["p80"], m["cut_line"]))
            .collect();
        (milestones, planned_people(text))
    };
    for case in [
        "leave under a part-time week",
        "revision beside the hire",
        "past hire",
    ] {
        let (_tmp, dir) = quick_demo();
        let run = || {
            let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
            assert!(out.status.success(), "{out:?}");
            (
                std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        let ledger = dir.join("pm-state.md");
        let append = |more: &str| {
            let text = std::fs::read_to_string(&ledger).unwrap();
            std::fs::write(&ledger, format!("{text}{more}")).unwrap();
        };
        let base = kept(&run().0);
        if case == "past hire" {
            append(&entry(
                "D-0008",
                "zoe",
                r#"{"from": "2026-10-01", "to": "2026-11-20", "hours_per_week": 30}"#,
            ));
            commit_as_t(&dir, &["-a"], "Zoe worked here in the autumn");
            let (after, stderr) = run();
            assert!(!stderr.contains("joined the team"), "{stderr}");
            let after = kept(&after);
            assert_eq!(after.0, base.0, "{case}");
            assert!(after.1 == base.1, "{case}: the people of the plan before");
            continue;
        }
        let (who, first, second) = if case == "revision beside the hire" {
            ("zoe", week(30), week(15))
        } else {
            ("bjorn", week(10), week(0))
        };
        append(&entry("D-0008", who, &first));
        commit_as_t(&dir, &["-a"], "the first");
        let (text, _) = run();
        let with_first = kept(&text);
        assert_ne!(
            with_first.0, base.0,
            "{case}: the first directive moves the plan"
        );
        append(&entry("D-0009", who, &second));
        commit_as_t(&dir, &["-a"], "the second");
        let (text, _) = run();
        assert_ne!(
            kept(&text).0,
            with_first.0,
            "{case}: the second moves it too"
        );
        let text = std::fs::read_to_string(&ledger).unwrap();
        std::fs::write(&ledger, with_status(&text, "D-0009", "withdrawn")).unwrap();
        commit_as_t(&dir, &["-a"], "the second taken back");
        let (after, stderr) = run();
        assert!(
            stderr.contains("D-0009 no longer in force"),
            "{case}: {stderr}"
        );
        let after = kept(&after);
        assert_eq!(
            after.0, with_first.0,
            "{case}: the plan with the first only"
        );
        assert!(
            after.1 == with_first.1,
            "{case}: the people of the plan with the first only"
        );
    }
}

#[test]
fn a_run_that_does_not_commit_says_it_previews_directives_the_branch_has_not() {
    // Audit 193: `run --no-commit` forecast a directive not yet proposed, where a committing run (CI's)
    // leaves it out, and said nothing.
    let (_tmp, dir) = quick_demo();
    let out = commitea(
        &["directive", "--kind", "note", "--quote", "Ship it."],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    let out = commitea(
        &["run", "--offline", "--no-commit", "--trials", "100"],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "--no-commit: this run forecasts the checkout's pm-state.md, with 1 entry (D-0008) that the \
             branch does not have"
        ),
        "{stderr}"
    );
    // A committing run says it leaves it out, as before, and not this.
    let out = commitea(&["run", "--offline", "--trials", "100"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("has new entries that are not on the branch (D-0008)")
            && !stderr.contains("--no-commit:"),
        "{stderr}"
    );
}

#[test]
fn an_offline_run_says_it_read_nothing_from_gitea() {
    // Audit 193: a day with the server down, run offline as the error advises, read word for word as a
    // quiet day ("0 issues closed; 0 new; 1 working day passed").
    let (_tmp, dir) = quick_demo();
    let out = commitea(
        &["run", "--offline", "--now", "2026-11-30", "--trials", "200"],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    let message = git_out(&dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains(": Gitea not read (the snapshot of 2026-11-2"),
        "{message}"
    );
}

#[test]
fn a_template_that_fails_on_one_page_names_the_page() {
    // Audit 191: a field only some issues lack failed "issue.html", and nothing said which page.
    let (_tmp, dir) = quick_demo();
    std::fs::create_dir_all(dir.join("site-templates")).unwrap();
    std::fs::write(
        dir.join("site-templates/milestone.html"),
        "{{ it.no_such_field }}",
    )
    .unwrap();
    let out = commitea(&["render", "--trials", "100"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("site template milestone.html (")
            && stderr.contains(") failed to render milestones/"),
        "{stderr}"
    );
}

/// Whom a forecast's text plans each issue for: (issue, planned assignee), in its order.
fn planned_people(text: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["issue"].to_string(), i["planned_assignee"].to_string()))
        .collect()
}

/// `git commit ARGS -qm MESSAGE` in `dir`, as user t.
pub(crate) fn commit_as_t(dir: &Path, args: &[&str], message: &str) -> String {
    let mut all = vec![
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
    ];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-qm", message]);
    crate::pipeline::git(dir, &all)
}

/// The unassigned open issues the committed forecast in `dir` plans for `name`.
fn unassigned_planned_for(dir: &Path, name: &str) -> std::collections::BTreeSet<String> {
    let forecast: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap();
    forecast["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["planned_assignee"] == name && i["assignee"].is_null())
        .map(|i| i["issue"].as_str().unwrap().to_owned())
        .collect()
}

/// Turns the demo's abandonment model on (its history is shorter than the year the demo asks) and commits.
fn abandonment_model_on(dir: &Path) {
    edit(
        &dir.join("commitea.yaml"),
        "abandonment_min_history_days: 365",
        "abandonment_min_history_days: 90",
    );
    commit_as_t(dir, &["-a"], "the abandonment model on");
}

/// Records a set-deadline directive on milestone `id` (due `due`, in the PM's `quote`), which must succeed.
fn set_deadline(dir: &Path, id: u64, due: &str, quote: &str, by: &str) {
    let target = format!("milestone {id}");
    let params = format!(r#"{{"due": "{due}"}}"#);
    let out = commitea(
        &[
            "directive",
            "--kind",
            "set-deadline",
            "--quote",
            quote,
            "--target",
            &target,
            "--params",
            &params,
            "--by",
            by,
        ],
        dir,
    );
    assert!(out.status.success(), "{out:?}");
}

/// Replaces the first `from` in the file at `path` with `to`, which must change it.
fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let edited = text.replacen(from, to, 1);
    assert_ne!(edited, text, "{from:?} is not in {}", path.display());
    std::fs::write(path, edited).unwrap();
}

fn made_demo() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let demo = tmp.path().join("demo");
    let out = commitea(&["demo", demo.to_str().unwrap()], tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (tmp, demo)
}

#[test]
fn the_export_is_the_committed_forecasts_plan_and_has_room_for_it() {
    // The export dealt unassigned work out afresh, ignoring whom the committed forecast kept it for: 25 of
    // the demo's 160 open issues went to someone else than the site and the standup said.
    let (tmp, demo) = made_demo();
    let s = demo.to_string_lossy().into_owned();
    let out = commitea(&["export", "tjp", "-s", &s], tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tjp = String::from_utf8(out.stdout).unwrap();
    let mut resources = std::collections::HashMap::new();
    for l in tjp.lines() {
        if let Some(rest) = l.strip_prefix("resource ") {
            let (id, name) = rest.split_once(' ').unwrap();
            resources.insert(id.to_owned(), name.split('"').nth(1).unwrap().to_owned());
        }
    }
    let forecast: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(demo.join("forecast/forecast.json")).unwrap(),
    )
    .unwrap();
    let planned: std::collections::HashMap<String, String> = forecast["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| {
            let who = f["assignee"].as_str().or(f["planned_assignee"].as_str())?;
            Some((f["issue"].as_str()?.to_owned(), who.to_owned()))
        })
        .collect();
    let mut compared = 0;
    for task in tjp.split("\ntask ").skip(1) {
        // The name is the issue, then its title.
        let name = task.split('"').nth(1).unwrap();
        let key = name.split_once(' ').map_or(name, |(k, _)| k);
        let Some(r) = task
            .lines()
            .find_map(|l| l.trim().strip_prefix("allocate "))
        else {
            continue;
        };
        assert_eq!(
            resources.get(r).map(String::as_str),
            planned.get(key).map(String::as_str),
            "{key}"
        );
        compared += 1;
    }
    assert!(compared > 100, "{compared}");
    // A horizon shorter than the work: the project runs past it to the plan's last finish, so that tj3
    // can place the same work.
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["export", "tjp", "-s", &s])
        .env("COMMITEA_FORECAST_HORIZON_DAYS", "30")
        .output()
        .unwrap();
    let tjp = String::from_utf8(out.stdout).unwrap();
    let head = tjp.lines().next().unwrap();
    let end = head.split(" - ").nth(1).unwrap().split(' ').next().unwrap();
    let start = head
        .split('"')
        .nth(2)
        .unwrap()
        .trim()
        .split(' ')
        .next()
        .unwrap();
    let days = (chrono::NaiveDate::parse_from_str(end, "%Y-%m-%d").unwrap()
        - chrono::NaiveDate::parse_from_str(start, "%Y-%m-%d").unwrap())
    .num_days();
    assert!(days > 60, "{head}");
}

#[test]
fn a_backtest_with_no_cut_writes_nothing_over_the_last_one() {
    // `backtest --write` with no cut replaced forecast/backtest.json with an empty report, and the
    // Calibration page then showed a table of dashes with no reason.
    let (tmp, demo) = made_demo();
    let file = demo.join("forecast/backtest.json");
    let before = std::fs::read(&file).unwrap();
    let s = demo.to_string_lossy().into_owned();
    let out = commitea(
        &["backtest", "-s", &s, "--horizon-days", "365", "--write"],
        tmp.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no cut:") && err.contains("forecast/backtest.json is left as it was"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // Without --write it is refused too (it printed a table of dashes), and the horizon it advises gives
    // a cut (it advised a lower horizon where only a longer history would do).
    let out = commitea(&["backtest", "-s", &s, "--horizon-days", "365"], tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let advised: String = err
        .split("give --horizon-days (or backtest.horizon_days) at most ")
        .nth(1)
        .unwrap_or_else(|| panic!("no advice: {err}"))
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    // (At 20 trials, which is said: the quantiles of so few draws are coarse.)
    let out = commitea(
        &[
            "backtest",
            "-s",
            &s,
            "--horizon-days",
            &advised,
            "--json",
            "--trials",
            "20",
        ],
        tmp.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("20 trials per forecast make its p10, p50 and p80 coarse")
            && err.contains("--trials 100 or more"),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["cuts"].as_u64().unwrap() >= 1, "{report}");
    // A project younger than a cut's history: no horizon helps, and the day it can is said (it said
    // "longer than 90 days" of a history already longer, not counting the days a cut needs after it).
    let young = crate::pipeline::state_from_fixture("small");
    let s = young.path().to_string_lossy().into_owned();
    // With a horizon longer than the days a cut needs after it, the day is the horizon's (audit 186: the
    // message named the shortest horizon's day, where the one in force still failed).
    for (horizon, days) in [("7", 14), ("120", 120)] {
        let out = commitea(
            &["backtest", "-s", &s, "--horizon-days", horizon],
            tmp.path(),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let day_after = |words: &str| -> chrono::NaiveDate {
            err.split(words)
                .nth(1)
                .and_then(|r| r.get(..10))
                .and_then(|d| d.parse().ok())
                .unwrap_or_else(|| panic!("no day after {words:?}: {err}"))
        };
        let cut = day_after("the first cut is ");
        assert_eq!(
            (day_after("run it again from ") - cut).num_days(),
            days,
            "{err}"
        );
        assert_eq!((day_after("or from ") - cut).num_days(), 14, "{err}");
        assert!(err.contains("with --horizon-days 14"), "{err}");
    }
}

/// An issue whose p50 falls more than a week after the days the median plan gives it says why; one whose
/// p50 is within them does not (an audit read three weeks between the two with one line of definition).
#[test]
fn an_issue_page_says_why_its_p50_is_well_after_the_plan() {
    use commitea::forecast::When;
    let (_tmp, demo) = made_demo();
    let report: commitea::forecast::ForecastReport =
        serde_json::from_slice(&std::fs::read(demo.join("forecast/forecast.json")).unwrap())
            .unwrap();
    let page = |key: &commitea::domain::IssueKey| {
        std::fs::read_to_string(demo.join(format!(
            "public/issues/{}/{}/{}.html",
            key.repo.owner, key.repo.name, key.number
        )))
        .unwrap()
    };
    const NOTE: &str = "Its p50 falls well after the days the plan gives it";
    let gap = |f: &commitea::forecast::IssueForecast| match (f.p50, f.planned_end) {
        (When::Date(p50), When::Date(end)) => Some((p50 - end).num_days()),
        _ => None,
    };
    let late = report
        .issues
        .iter()
        .find(|f| gap(f).is_some_and(|g| g > 7))
        .expect("an issue whose p50 is weeks after its plan");
    assert!(page(&late.issue).contains(NOTE), "{}", late.issue);
    let close = report
        .issues
        .iter()
        .find(|f| gap(f).is_some_and(|g| (0..=7).contains(&g)))
        .expect("an issue whose p50 is near its plan");
    assert!(!page(&close.issue).contains(NOTE), "{}", close.issue);
}

#[test]
fn someone_whose_days_end_keeps_no_unassigned_work_they_cannot_finish_and_it_is_said() {
    // Gus taken out of commitea.yaml comes back for D-0006's five weeks (a capacity directive adds
    // someone not in the team): the work the last forecast planned for him stayed his, beyond the
    // horizon, and two milestones with it, without a word (audit 89).
    let (_tmp, dir) = quick_demo();
    edit(
        &dir.join("commitea.yaml"),
        "  - name: gus   # new hire\n    hours_per_week: 30\n    starts: 2026-12-07\n    repositories: [acme/api, acme/web]\n",
        "",
    );
    let out = commitea(&["plan", "--json", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains(
            "gus works until 2027-01-08 (D-0006's capacity period; gus is not in the team in commitea.yaml)"
        ),
        "{warnings}"
    );
    // What he cannot finish is only what Gitea assigns him.
    let left: Vec<&serde_json::Value> = report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["planned_assignee"] == "gus" && i["p80"] == "beyond horizon")
        .collect();
    assert!(!left.is_empty());
    assert!(left.iter().all(|i| i["assignee"] == "gus"), "{left:?}");
}

#[test]
fn a_demo_killed_half_way_is_built_again_whole() {
    // A killed demo left its folder half-built: the next `commitea demo` took it for a finished one (two
    // commits of four), or could not open its repository (audit 88). It is built beside the folder now;
    // what a killed one leaves there is cleared.
    let tmp = tempfile::tempdir().unwrap();
    let partial = tmp.path().join(".d.commitea-partial");
    std::fs::create_dir_all(partial.join(".git")).unwrap();
    std::fs::write(partial.join("commitea.yaml"), "team: []\n").unwrap();
    std::fs::create_dir(tmp.path().join("d")).unwrap();
    let out = commitea(&["demo", "d", "--trials", "200"], tmp.path());
    assert!(out.status.success(), "{out:?}");
    assert!(!partial.exists());
    let log = git_out(&tmp.path().join("d"), &["log", "--oneline"]);
    assert_eq!(log.lines().count(), 4, "{log}");
}

#[test]
fn a_committed_forecast_that_does_not_read_is_said_once() {
    // Said three times by one run, by each reader of the committed forecast (audit 88).
    let (_tmp, dir) = quick_demo();
    std::fs::write(dir.join("forecast/forecast.json"), "{ truncated").unwrap();
    git_out(
        &dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qam",
            "corrupt",
        ],
    );
    assert_eq!(git_count(&dir), "5");
    let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("not readable").count(), 1, "{err}");
}

#[test]
fn the_export_of_work_someone_leaves_undone_stays_in_years_tj3_reads() {
    // Amara leaves in two weeks with work on her queue: the project ran to 2038, which tj3 refuses
    // ("Year 2038 out of range"), audit 90.
    let (_tmp, dir) = quick_demo();
    edit(
        &dir.join("commitea.yaml"),
        "  - name: amara   # tech lead, works across all repositories\n",
        "  - name: amara   # tech lead, works across all repositories\n    ends: 2026-12-11\n",
    );
    let out = commitea(&["export", "tjp", "--now", "2026-11-30T12:00:00Z"], &dir);
    assert!(out.status.success(), "{out:?}");
    let tjp = String::from_utf8(out.stdout).unwrap();
    let header = tjp.lines().next().unwrap();
    let end_year: i32 = header.rsplit(" - ").next().unwrap()[..4].parse().unwrap();
    assert!(end_year <= 2029, "{header}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("left out of the export, as tj3 cannot place work no one can do")
            && err.contains("(the person the plan gives"),
        "{err}"
    );
}

#[test]
fn a_folder_without_a_snapshot_gets_advice_that_fits_it() {
    // An empty folder was told to run `commitea sync` first, which needs a commitea.yaml (audit 89).
    let tmp = tempfile::tempdir().unwrap();
    let out = commitea(&["export", "tjp", "-s", "."], tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is no CommiTea state repo (no commitea.yaml, no snapshot): make one with `commitea init`"),
        "{err}"
    );
    std::fs::write(tmp.path().join("commitea.yaml"), "").unwrap();
    let out = commitea(&["export", "tjp", "-s", "."], tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has no snapshot/meta.yaml: run `commitea sync` first"),
        "{err}"
    );
}

#[test]
fn many_directives_gitea_does_not_carry_are_one_warning() {
    // A ledger written by hand: 601 warnings a run said the same thing (audit 93).
    let (_tmp, dir) = quick_demo();
    let mut ledger = std::fs::read_to_string(dir.join("pm-state.md")).unwrap();
    for (n, issue) in [112, 114, 116, 117, 121].iter().enumerate() {
        ledger.push_str(&format!(
            "\n## D-{:04} · reprioritize · 2026-11-26T10:00:00Z\n\n> acme/api#{issue} first.\n\n- target: issue acme/api#{issue}\n- params: {{\"priority\": 0}}\n- status: active\n",
            20 + n
        ));
    }
    std::fs::write(dir.join("pm-state.md"), ledger).unwrap();
    let out = commitea(&["plan", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("does not carry").count(), 1, "{err}");
    assert!(
        err.contains("5 directives are in force but Gitea does not carry them (D-0020, D-0021, D-0022 and 2 more)"),
        "{err}"
    );
}

#[test]
fn a_shallow_checkout_runs_and_renders_and_an_op_file_beyond_its_history_is_said() {
    // actions/checkout's default depth is 1: every run and render of such a checkout failed on "an
    // object could not be found" (audit 103).
    let (tmp, dir) = quick_demo();
    let commit = |message: &str| commit_as_t(&dir, &[], message);
    let op = "ops/pending/C-0004.yaml";
    crate::pipeline::git(&dir, &["add", op]);
    commit("Merge C-0004");
    std::fs::write(dir.join("NOTES.md"), "notes\n").unwrap();
    crate::pipeline::git(&dir, &["add", "NOTES.md"]);
    commit("Notes");
    let shallow = tmp.path().join("shallow");
    let url = format!("file://{}", dir.display());
    crate::pipeline::git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    for args in [
        &["run", "--offline", "--trials", "200", "--now", "2026-11-30"][..],
        &["render"],
    ] {
        let out = commitea(args, &shallow);
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
    // The commit that brought the op file, which says who approved it, is beyond the boundary: said, with
    // what to do, where a whole history finds it.
    let open = |d: &Path| {
        let repo = gix::open(d).unwrap();
        let head = repo.head_id().unwrap().detach();
        commitea::state::git::introduced(&repo, head, op)
    };
    let err = open(&shallow).unwrap_err().to_string();
    assert!(
        err.contains("C-0004.yaml") && err.contains("fetch-depth: 0"),
        "{err}"
    );
    let (brought, later) = open(&dir).unwrap().unwrap();
    assert_eq!(later.len(), 1);
    assert_eq!(
        crate::pipeline::git(&dir, &["log", "-1", "--format=%s", &brought.to_string()]).trim(),
        "Merge C-0004"
    );
}

#[test]
fn the_forecast_history_is_counted_in_forecasts_not_commits() {
    // The milestone pages' "How the forecast moved" read the last 180 commits: merges, ledger and
    // config commits between the runs cut it short, silently (audit 103: 64 days of runs, 114 commits).
    let (_tmp, dir) = quick_demo();
    let out = commitea(
        &["run", "--offline", "--trials", "200", "--now", "2026-12-01"],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    for i in 0..181 {
        commit_as_t(&dir, &["--allow-empty"], &format!("Note {i}"));
    }
    let out = commitea(&["render"], &dir);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(dir.join("public/milestones/4.html")).unwrap();
    for day in ["2026-11-27", "2026-12-01"] {
        assert!(
            page.contains(&format!(
                "<td data-label=\"Forecast of\" class=\"date\">{day}</td>"
            )),
            "{day}: {page}"
        );
    }
}

#[test]
fn a_run_that_commits_lets_git_pack_the_repository_when_git_says_so() {
    // gix writes but never packs: a checkout kept on disk gathered every run's objects loose (audit 103:
    // 1,927 after 63 runs, 17 MB where 2 MB packed). A run asks `git gc --auto` after its commit; here
    // git's threshold is made one pack, so the two packs there are must become one.
    let (_tmp, dir) = quick_demo();
    crate::pipeline::git(&dir, &["repack", "-q"]);
    let packs = || {
        std::fs::read_dir(dir.join(".git/objects/pack"))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
            .count()
    };
    assert!(packs() >= 2, "{}", packs());
    crate::pipeline::git(&dir, &["config", "gc.autoPackLimit", "1"]);
    let out = commitea(
        &["run", "--offline", "--trials", "200", "--now", "2026-12-01"],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(git_count(&dir), "5", "the run committed");
    assert_eq!(packs(), 1);
    crate::pipeline::git(&dir, &["fsck", "--no-progress"]);
}

#[test]
fn a_close_that_teaches_the_calibration_says_so_beside_the_moves_it_makes() {
    // Audit 104: closing one 4-hour issue moved milestones of three other repositories, and nothing said
    // why: the close was a new sample, and the calibration fitted again moved every estimate's effort.
    let (tmp, demo) = quick_demo();
    let view = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(
            &std::fs::read_to_string(dir.join("forecast/views/calibration.json")).unwrap(),
        )
        .unwrap()
    };
    let before = view(&demo)["n"].as_u64().unwrap();
    // Assigned 2026-11-04T14:41 and open in the committed forecast: closed two working days after.
    let file = demo.join("snapshot/issues/acme/api/46.yaml");
    edit(&file, "state: open\n", "state: closed\n");
    edit(
        &file,
        "\nassignees:",
        "\nclosed_at: 2026-11-06T14:41:50Z\nassignees:",
    );
    commit_as_t(&demo, &["-a"], "acme/api#46 closed");
    let out = commitea(
        &["run", "--offline", "--trials", "200", "-s", "d"],
        tmp.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let after = view(&demo)["n"].as_u64().unwrap();
    assert_eq!(after, before + 1, "the close is one more sample");
    let message = git_out(&demo, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains(&format!(
            "1 issue closed; 0 new; calibration fitted again on {after} closed issues ({before} before): effort ×"
        )),
        "{message}"
    );
    let site = std::fs::read_to_string(demo.join("public/standup.html")).unwrap();
    assert!(
        site.contains(&format!(
            "calibration fitted again on {after} closed issues"
        )),
        "the standup page says it too"
    );
    // The closed issue is listed under the person it was planned for, not "nobody planned" (audit 108).
    let moved = site.split("id=\"moved-title\"").nth(1).unwrap();
    let group = moved
        .split("<h3>")
        .find(|g| g.contains(">acme/api#46</a>"))
        .unwrap_or_else(|| panic!("{moved}"));
    assert!(group.contains("<bdi>amara</bdi></a></h3>"), "{group}");
}

#[test]
fn a_close_in_a_hard_deadline_milestone_keeps_its_cut_line_or_trims_it() {
    // Audit 108: closing an issue of the milestone turned a cut of 10 issues into one of 13, and the 10
    // still met the deadline. The next forecast tries the committed cut first: here, closing acme/web#95
    // (in EAA, not in its cut) gave 8 issues of which 3 were not in the cut before; now a part of it.
    let (tmp, demo) = made_demo();
    let cut = |dir: &Path| -> Vec<String> {
        let f: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap(),
        )
        .unwrap();
        f["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|m| m["cut_line"]["issues"].as_array().cloned())
            .expect("EAA has a cut line")
            .iter()
            .map(|k| k.as_str().unwrap().to_owned())
            .collect()
    };
    let before = cut(&demo);
    assert!(!before.contains(&"acme/web#95".to_owned()), "{before:?}");
    let file = demo.join("snapshot/issues/acme/web/95.yaml");
    edit(&file, "state: open\n", "state: closed\n");
    edit(
        &file,
        "\nassignees:",
        "\nclosed_at: 2026-11-27T09:00:00Z\nassignees:",
    );
    commit_as_t(&demo, &["-a"], "acme/web#95 closed");
    let out = commitea(&["run", "--offline", "-s", "demo"], tmp.path());
    assert!(out.status.success(), "{out:?}");
    let after = cut(&demo);
    assert!(!after.is_empty());
    assert!(
        after.iter().all(|k| before.contains(k)),
        "before {before:?}, after {after:?}"
    );
    // Nothing changed since: the forecast is reused, its cut line with it.
    let head = git_out(&demo, &["rev-parse", "HEAD"]);
    let out = commitea(&["run", "--offline", "-s", "demo"], tmp.path());
    assert!(out.status.success(), "{out:?}");
    assert_eq!(git_out(&demo, &["rev-parse", "HEAD"]), head);
}

#[test]
fn the_only_change_since_is_named_on_every_move_it_made() {
    // Audit 108: one directive, the only change since, was named on 16 of the 22 moves it made; the other
    // six ("queue of ines", "waits on …") came from it through pushes too weak to follow. Here, 5 of 21.
    let tmp = tempfile::tempdir().unwrap();
    let out = commitea(
        &["demo", "d", "--issues", "1000", "--trials", "2000"],
        tmp.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let demo = tmp.path().join("d");
    let out = commitea(
        &[
            "directive",
            "-s",
            "d",
            "--kind",
            "reprioritize",
            "--quote",
            "Pull to refresh first.",
            "--target",
            "issue acme/mobile#222",
            "--params",
            r#"{"priority": 0}"#,
            "--trials",
            "2000",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let id = serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["directiveId"]
        .as_str()
        .unwrap()
        .to_owned();
    crate::pipeline::git(&demo, &["add", "-A", "pm-state.md", "ops"]);
    commit_as_t(&demo, &[], "the directive, as merged");
    let out = commitea(
        &["run", "--offline", "--trials", "2000", "-s", "d"],
        tmp.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let site = std::fs::read_to_string(demo.join("public/standup.html")).unwrap();
    let moved = site
        .split("id=\"moved-title\"")
        .nth(1)
        .and_then(|s| s.split("id=\"next-title\"").next())
        .unwrap();
    let rows: Vec<&str> = moved
        .split("<tr>")
        .skip(1)
        .filter(|r| r.contains("<td"))
        .collect();
    assert!(rows.len() > 5, "{moved}");
    let unnamed: Vec<&&str> = rows
        .iter()
        .filter(|r| !r.contains(&format!(">{id}</")))
        .collect();
    assert!(
        unnamed.is_empty(),
        "{} of {} moves do not name {id}: {unnamed:#?}",
        unnamed.len(),
        rows.len()
    );

    // On the same site, the steeping column holds more than the 200 cards the board shows: an issue
    // past the cut has a breadcrumb to where it is listed, not to a column without it (audit 155).
    let board = std::fs::read_to_string(demo.join("public/board.html")).unwrap();
    let view: serde_json::Value =
        serde_json::from_slice(&std::fs::read(demo.join("forecast/views/board.json")).unwrap())
            .unwrap();
    let steeping = view["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["state"] == "steeping")
        .unwrap();
    assert!(
        steeping["count"].as_u64().unwrap() > 200,
        "{}",
        steeping["count"]
    );
    let mut past_cut = 0;
    for card in steeping["issues"].as_array().unwrap() {
        let key = card["issue"].as_str().unwrap();
        let page = std::fs::read_to_string(
            demo.join("public/issues")
                .join(format!("{}.html", key.replace('#', "/"))),
        )
        .unwrap();
        let crumb = page
            .split("class=\"crumbs\"")
            .nth(1)
            .unwrap()
            .split("</p>")
            .next()
            .unwrap();
        let on_board = board.contains(&format!("data-key=\"{key}\""));
        assert_eq!(
            crumb.contains("board.html#steeping"),
            on_board,
            "{key}: {crumb}"
        );
        if !on_board {
            past_cut += 1;
            assert!(
                crumb.contains("milestones/") || crumb.contains("search.html?q="),
                "{key}: {crumb}"
            );
        }
    }
    assert!(past_cut > 0);
}

#[test]
fn the_milestone_page_gives_its_cut_lines_figures_as_the_runway_does() {
    // Audit 110: the runway and the run's warning said the cut takes about 226 h and gives 81% on time;
    // the milestone page listed its issues with none of that.
    let (tmp, demo) = made_demo();
    let out = commitea(
        &[
            "tool",
            "query_project",
            r#"{"view":"runway","filters":{"limit":100}}"#,
            "-s",
            "demo",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let runway: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (id, cut) = runway["milestones"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|m| Some((m["milestone"].as_u64()?, m.get("cutLine")?.clone())))
        .expect("the demo's hard deadline has a cut line");
    let page = std::fs::read_to_string(demo.join(format!("public/milestones/{id}.html"))).unwrap();
    let said = format!(
        "take these {} out (about {} h), lowest priority first: without them the p80 is {}, on time in {}% of the futures.",
        cut["issues"].as_array().unwrap().len(),
        cut["hours"].as_f64().unwrap().round(),
        cut["p80"].as_str().unwrap(),
        (cut["probabilityOnTime"].as_f64().unwrap() * 100.0).round()
    );
    assert!(page.contains(&said), "{said}\n{page}");
    // Gitea's own time estimate is in the forecast too, not only on the issue page (audit 110).
    let forecast: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(demo.join("forecast/forecast.json")).unwrap(),
    )
    .unwrap();
    let native: Vec<&serde_json::Value> = forecast["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["estimate_source"] == "native")
        .collect();
    assert!(!native.is_empty());
    assert!(
        native
            .iter()
            .all(|i| i["estimate"].as_str().is_some_and(|e| e.ends_with('h'))),
        "{native:?}"
    );
}

#[test]
fn a_run_that_grows_the_cut_line_through_a_new_dependency_says_both() {
    // Audit 112: acme/web#29 made to wait on acme/web#146 (in the cut) grew the cut line from 8 issues to
    // 9, and the commit said only "2 warnings".
    let (tmp, demo) = made_demo();
    edit(
        &demo.join("snapshot/issues/acme/web/29.yaml"),
        "\nbody:",
        "\ndepends_on:\n- acme/web#146\nbody:",
    );
    commit_as_t(&demo, &["-a"], "acme/web#29 waits on acme/web#146");
    let out = commitea(&["run", "--offline", "-s", "demo"], tmp.path());
    assert!(out.status.success(), "{out:?}");
    let message = git_out(&demo, &["log", "-1", "--format=%B"]);
    assert!(
        message
            .lines()
            .any(|l| l.starts_with("- Accessibility compliance (EAA): ")
                && l.contains("cut line 8 → 9 issues (acme/web#29 joined)")),
        "{message}"
    );
    assert!(
        message.contains("; on Gitea, 1 issue given other dependencies"),
        "{message}"
    );
}

/// A capacity directive of no hours from a day on is someone leaving: the work the last forecast planned
/// for them goes to the others, and what is assigned to them and cannot be done by then is said, naming the
/// directive (audit 123: seven unassigned issues stayed with chen, beyond the horizon, without a word). A
/// new hire's second period, after the first one's end, is worked (it was ignored: the first period's end
/// was their last day).
#[test]
fn a_member_taken_to_no_hours_leaves_and_a_new_hires_later_period_is_worked() {
    let (_tmp, dir) = quick_demo();
    let s = dir.to_str().unwrap();
    let record = |quote: &str, target: &str, params: &str| {
        let out = commitea(
            &[
                "directive",
                "--kind",
                "capacity",
                "--quote",
                quote,
                "--target",
                target,
                "--params",
                params,
                "--by",
                "pm",
                "-s",
                s,
            ],
            &dir,
        );
        assert!(out.status.success(), "{out:?}");
    };
    record(
        "Chen leaves the team after the holidays.",
        "member chen",
        r#"{"from":"2027-01-04","hours_per_week":0}"#,
    );
    record(
        "Zoe starts part time in January.",
        "member zoe",
        r#"{"from":"2027-01-04","to":"2027-01-31","hours_per_week":15}"#,
    );
    record(
        "Zoe goes full time in February.",
        "member zoe",
        r#"{"from":"2027-02-01","hours_per_week":30}"#,
    );
    commit_as_t(&dir, &["-a"], "directives");
    let out = commitea(&["run", "--offline", "--trials", "200", "-s", s], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let forecast: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap();
    let issues = forecast["issues"].as_array().unwrap();
    let planned_for = |who: &str| {
        issues
            .iter()
            .filter(|i| i["planned_assignee"] == who)
            .map(|i| {
                (
                    i["assignee"].as_str().is_some(),
                    i["planned_end"].as_str().unwrap().to_owned(),
                )
            })
            .collect::<Vec<_>>()
    };
    let chen = planned_for("chen");
    assert!(
        chen.iter()
            .all(|(assigned, end)| *assigned || end.as_str() < "2027-01-04"),
        "{chen:?}"
    );
    if chen.iter().any(|(_, end)| end.as_str() >= "2027-01-04") {
        assert!(
            stderr.contains("chen works until 20")
                && stderr.contains("(D-0008's capacity of 0 hours a week from 2027-01-04)"),
            "{stderr}"
        );
    }
    let zoe = planned_for("zoe");
    assert!(
        zoe.iter().any(|(_, end)| end.as_str() >= "2027-02-01")
            && zoe.iter().all(|(_, end)| end.as_str() < "9"),
        "{zoe:?}"
    );
    let page = std::fs::read_to_string(dir.join("public/people/zoe.html")).unwrap();
    assert!(!page.contains("Works until"), "{page}");
}

/// Someone leaving in three months: unassigned work the median plan ends before their last day, but the
/// futures often after it, goes to the others; their own work that may miss the day is said (audit 124:
/// six unassigned issues stayed with chen, beyond the horizon, and Public API v2 with them; the warning
/// counted only the median plan's misses).
#[test]
fn unassigned_work_that_may_miss_a_leavers_last_day_goes_to_the_others() {
    let (_tmp, dir) = quick_demo();
    let s = dir.to_str().unwrap();
    let out = commitea(
        &[
            "directive",
            "--kind",
            "capacity",
            "--quote",
            "Chen leaves at the end of February.",
            "--target",
            "member chen",
            "--params",
            r#"{"from":"2027-03-01","hours_per_week":0}"#,
            "--by",
            "pm",
            "-s",
            s,
        ],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    commit_as_t(&dir, &["-a"], "chen leaves");
    let unassigned_for_chen = || unassigned_planned_for(&dir, "chen");
    let before = unassigned_for_chen();
    let out = commitea(&["run", "--offline", "--trials", "500", "-s", s], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Every unassigned issue the last forecast planned for chen and this one does not is counted as gone
    // to the others, whichever step moved it (audit 126: "6 went" beside seven moved).
    let moved = before.difference(&unassigned_for_chen()).count();
    assert!(moved > 0, "{before:?}");
    assert!(
        stderr.contains(&format!(
            "{moved} unassigned issue{} planned for chen went to the others",
            if moved == 1 { "" } else { "s" }
        )),
        "{moved} moved: {stderr}"
    );
    let forecast: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap();
    let chens: Vec<(bool, String)> = forecast["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["planned_assignee"] == "chen")
        .map(|i| {
            (
                i["assignee"].is_string(),
                i["p80"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        chens
            .iter()
            .all(|(assigned, p80)| *assigned || p80.as_str() <= "2027-02-26"),
        "{chens:?}"
    );
    if chens.iter().any(|(_, p80)| p80 == "beyond horizon") {
        assert!(
            stderr.contains(
                "chen works until 2027-02-25 (D-0008's capacity of 0 hours a week from 2027-03-01) and may not finish"
            ),
            "{stderr}"
        );
    }
}

/// A leaver's work counted against the last forecast: what it planned for them that now goes to someone
/// else, not what this run's first plan gave them and a pass took back (audit 160: "13 unassigned issues
/// planned for bjorn went to the others" of the 14 the last forecast planned for him, 7 still his).
#[test]
fn the_work_said_to_go_from_a_leaver_is_what_the_last_forecast_planned_for_them() {
    let (_tmp, dir) = quick_demo();
    let s = dir.to_str().unwrap();
    let unassigned_for_bjorn = || unassigned_planned_for(&dir, "bjorn");
    let before = unassigned_for_bjorn();
    // A sabbatical past a four-month horizon makes bjorn a leaver; the new hire starts after it.
    let config = dir.join("commitea.yaml");
    edit(&config, "horizon_days: 730", "horizon_days: 120");
    edit(&config, "    starts: 2026-12-07", "    starts: 2027-05-03");
    edit(
        &config,
        "# parental leave\n",
        "# parental leave\n      - { from: 2027-02-15, to: 2027-06-30 }\n",
    );
    commit_as_t(&dir, &["-a"], "bjorn's sabbatical");
    // With the last forecast's people not kept, the count is against them all the same (audit 165: it
    // went back to this run's own moves).
    let out = Command::new(env!("CARGO_BIN_EXE_commitea"))
        .args(["run", "--offline", "--trials", "500", "-s", s])
        .current_dir(&dir)
        .env_remove("COMMITEA_STATE")
        .env("COMMITEA_FORECAST_KEEP_PLANNED_PEOPLE", "false")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let after = unassigned_for_bjorn();
    let moved = before.difference(&after).count();
    // Some stay with him, and he takes new work that ends before his last day: what went is fewer than
    // what was his.
    assert!(moved > 0 && moved < before.len(), "{before:?} {after:?}");
    assert!(
        stderr.contains(&format!(
            "{moved} unassigned issue{} planned for bjorn went to the others",
            if moved == 1 { "" } else { "s" }
        )),
        "{moved} moved: {stderr}"
    );
}

/// An issue in a dependency cycle is shown as not forecast, with the cycle, not as dates "not within 2
/// years"; what an issue waits for outside the plan says what it is and links to Gitea (audit 128).
#[test]
fn the_site_says_a_cycle_is_not_forecast_and_what_a_blocker_outside_the_plan_is() {
    let (_tmp, dir) = quick_demo();
    for (n, other) in [(121, 126), (126, 121)] {
        edit(
            &dir.join(format!("snapshot/issues/acme/api/{n}.yaml")),
            "\nbody: ",
            &format!("\ndepends_on:\n- acme/api#{other}\nbody: "),
        );
    }
    // web#101 waits on a closed issue of the plan as well, and on acme/docs#5, a repository not synced.
    edit(
        &dir.join("snapshot/issues/acme/web/101.yaml"),
        "- acme/mobile#112\n",
        "- acme/mobile#112\n- acme/api#1\n- acme/docs#5\n",
    );
    // And bjorn is assigned too: only the first assignee's plan has it.
    edit(
        &dir.join("snapshot/issues/acme/web/101.yaml"),
        "assignees:\n- dana\n",
        "assignees:\n- dana\n- bjorn\n",
    );
    commit_as_t(&dir, &["-a"], "a cycle");
    let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(dir.join("public/issues/acme/api/121.html")).unwrap();
    assert!(
        page.contains("Not forecast: it is in a dependency cycle with <a href=\"../../../issues/acme/api/126.html\">acme/api#126</a>."),
        "{page}"
    );
    assert!(!page.contains("Done by (p10"), "no range for it");
    let board = std::fs::read_to_string(dir.join("public/board.html")).unwrap();
    let card = board
        .split(">acme/api#121</a>")
        .nth(1)
        .unwrap()
        .split("</li>")
        .next()
        .unwrap();
    assert!(
        card.contains("in a dependency cycle") && !card.contains("p50 – p80"),
        "{card}"
    );
    // Its person's page says why it is in no queue, and the search index marks it (audit 131).
    let person = std::fs::read_to_string(dir.join("public/people/amara.html")).unwrap();
    assert!(
        person.contains("Not in the queue, as not forecast: <a href=\"../issues/acme/api/121.html\">acme/api#121</a>"),
        "{person}"
    );
    let index = std::fs::read_to_string(dir.join("public/search-index.js")).unwrap();
    assert!(
        index.contains("\"cycles\":[\"acme/api#121\",\"acme/api#126\"]"),
        "{}",
        &index[index.len().saturating_sub(300)..]
    );
    let page = std::fs::read_to_string(dir.join("public/issues/acme/web/101.html")).unwrap();
    assert!(
        page.contains("<a href=\"https://gitea.example.com/acme/docs/issues/5\">acme/docs#5</a>")
            && page
                .contains("(in acme/docs, which is not synced: its dates assume that wait is over"),
        "{page}"
    );
    assert!(
        page.contains("<span class=\"muted\">(closed)</span>"),
        "{page}"
    );
    assert!(
        page.contains("<bdi>bjorn</bdi></a> (not planned: the plan gives it to dana alone)"),
        "{page}"
    );
    // And the co-assignee's own page lists it (audit 133).
    let person = std::fs::read_to_string(dir.join("public/people/bjorn.html")).unwrap();
    assert!(
        person.contains("Also assigned, planned for someone else: <a href=\"../issues/acme/web/101.html\">acme/web#101</a>")
            && person.contains("(the plan gives it to dana)")
            && !person.contains("(the plan gives it to bjorn)"),
        "{person}"
    );
    // The pull request that puts an issue in review is named and linked (audit 129).
    let page = std::fs::read_to_string(dir.join("public/issues/acme/api/175.html")).unwrap();
    assert!(
        page.contains(
            "<dt>Pull requests</dt><dd><a href=\"https://gitea.example.com/acme/api/pulls/201\">acme/api#201</a> <bdi>chore: refactor refunds</bdi> <span class=\"muted\">(open)</span>"
        ),
        "{page}"
    );
}

/// Milestones changed on Gitea are said in the run's commit as what happened to them: deleted (and its
/// issues left with no milestone, not "moved to another"), renamed, reopened (audit 132).
#[test]
fn a_milestone_deleted_renamed_or_reopened_on_gitea_is_said_so() {
    let (_tmp, dir) = quick_demo();
    // A directive about Public API v2, before it is deleted.
    set_deadline(&dir, 4, "2027-05-28", "API v2 by the end of May.", "pm");
    let ms = dir.join("snapshot/milestones.yaml");
    // Public API v2 (4) deleted: its issues are in none now.
    edit(
        &ms,
        "- id: 4\n  title: Public API v2\n  description: 'The next major version: cursor pagination, consistent errors, webhooks v2.'\n  state: open\n  due_on: 2027-04-30T23:59:59Z\n  created_at: 2026-09-28T13:38:32Z\n",
        "",
    );
    let mut emptied = 0;
    for entry in std::fs::read_dir(dir.join("snapshot/issues/acme/api")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("\nmilestone: 4\n") {
            std::fs::write(&path, text.replace("\nmilestone: 4\n", "\n")).unwrap();
            emptied += 1;
        }
    }
    assert!(emptied > 0);
    // Accessibility compliance renamed; Q3 hardening reopened.
    edit(
        &ms,
        "title: Accessibility compliance (EAA)",
        "title: EAA audit",
    );
    edit(
        &ms,
        "  state: closed\n  due_on: 2026-09-30T23:59:59Z\n",
        "  state: open\n  due_on: 2026-09-30T23:59:59Z\n",
    );
    // Mobile 3.0's due date taken off: its page does not explain a due date it has not.
    edit(&ms, "  due_on: 2026-12-18T23:59:59Z\n", "");
    commit_as_t(&dir, &["-a"], "milestones changed on Gitea");
    let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("target milestone 4 is not on Gitea (deleted there"),
        "{said}"
    );
    let page = std::fs::read_to_string(dir.join("public/directives.html")).unwrap();
    assert!(!page.contains("milestone milestone"), "{page}");
    let message = git_out(&dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("- Public API v2: gone from Gitea (deleted),"),
        "{message}"
    );
    assert!(
        message.contains("left with no milestone")
            && !message.contains("moved to another milestone"),
        "{message}"
    );
    assert!(
        message.contains("- EAA audit: renamed from \"Accessibility compliance (EAA)\""),
        "{message}"
    );
    // The run's standup says it was deleted (audit 133: only which issues left it).
    let standup = std::fs::read_to_string(dir.join("public/standup.html")).unwrap();
    assert!(standup.contains("deleted on Gitea"), "{standup}");
    let page = std::fs::read_to_string(dir.join("public/milestones/3.html")).unwrap();
    assert!(
        !page.contains("the triangle the due date") && !page.contains("P(on time) at the due date"),
        "{page}"
    );
    // With nothing open in it, it has no p80 to give.
    assert!(
        message.contains("- Q3 hardening: reopened on Gitea\n"),
        "{message}"
    );
}

/// A directive's due date on a milestone closed on Gitea plans nothing: no "carry it out" advice that
/// Gitea would refuse (audit 132).
#[test]
fn a_directive_on_a_milestone_closed_on_gitea_is_not_advised_to_be_carried_out() {
    let (_tmp, dir) = quick_demo();
    let ms = dir.join("snapshot/milestones.yaml");
    // Gitea's due date of EAA (2) moves off D-0001's: the directive is in force and Gitea lacks it.
    edit(
        &ms,
        "  due_on: 2027-01-29T23:59:59Z\n",
        "  due_on: 2027-02-26T23:59:59Z\n",
    );
    let plan = |dir: &std::path::Path| {
        String::from_utf8_lossy(&commitea(&["plan", "--trials", "100"], dir).stderr).into_owned()
    };
    let said = plan(&dir);
    assert!(
        said.contains("D-0001 is in force but Gitea does not carry it"),
        "{said}"
    );
    // Closed on Gitea, it plans nothing.
    edit(
        &ms,
        "  state: open\n  due_on: 2027-02-26T23:59:59Z\n",
        "  state: closed\n  due_on: 2027-02-26T23:59:59Z\n  closed_at: 2026-11-20T10:00:00Z\n",
    );
    let said = plan(&dir);
    assert!(
        !said.contains("D-0001 is in force but Gitea does not carry it"),
        "{said}"
    );
    // Asked to carry it out all the same, the answer is why not, not "Gitea already carries it"
    // (audit 133).
    let out = commitea(&["directive", "--carry-out", "D-0001"], &dir);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && said.contains("milestone 2 (Accessibility compliance (EAA)) is closed on Gitea")
            && !said.contains("already carries"),
        "{said}"
    );
}

/// An approved directive on a milestone deleted on Gitea since is not said to be carried out at the next
/// run: the Directives page says it changes nothing, and why (audit 133).
#[test]
fn an_approved_directive_on_a_deleted_milestone_is_not_said_to_be_carried_out() {
    let (_tmp, dir) = quick_demo();
    set_deadline(&dir, 3, "2027-01-08", "Mobile 3.0 by January 8.", "pat");
    // A second one on the same milestone waits beside it (audit 137: listed without a word).
    set_deadline(&dir, 3, "2027-01-15", "No, by January 15.", "pat");
    crate::pipeline::git(&dir, &["add", "-A"]);
    commit_as_t(&dir, &[], "D-0008 and D-0009 approved");
    let run = |dir: &Path| {
        let out = commitea(&["run", "--offline", "--trials", "100"], dir);
        assert!(out.status.success(), "{out:?}");
        std::fs::read_to_string(dir.join("public/directives.html")).unwrap()
    };
    let page = run(&dir);
    assert!(
        page.contains("Approved, carried out at the next run that reaches Gitea: D-0009"),
        "{page}"
    );
    // Milestone 3 deleted on Gitea.
    let ms = dir.join("snapshot/milestones.yaml");
    let text = std::fs::read_to_string(&ms).unwrap();
    let from = text.find("acme/mobile:\n- id: 3").unwrap();
    let to = text.find("\nacme/web:").unwrap();
    std::fs::write(
        &ms,
        format!("{}acme/mobile: []{}", &text[..from], &text[to..]),
    )
    .unwrap();
    commit_as_t(&dir, &["-a"], "milestone 3 deleted on Gitea");
    let page = run(&dir);
    assert!(
        !page.contains("carried out at the next run")
            && page.contains("Approved, but it changes nothing: D-0009")
            && page.contains("Left out of the plan: target milestone 3 is not on Gitea"),
        "{page}"
    );
    let older = page
        .split("<strong>D-0008</strong>: ")
        .nth(1)
        .unwrap_or_default();
    assert!(
        older.split("</li>").next().is_some_and(
            |li| li.contains("(it changes nothing: target milestone 3 is not on Gitea")
        ),
        "{page}"
    );
}

/// A snapshot file broken by a hand edit stops the run with the way out, and the way out works: the
/// snapshot is read as committed, so the undo is committed too (audit 137: the advice led back to the
/// broken file).
#[test]
fn a_snapshot_file_broken_by_hand_says_how_to_undo_it_and_that_works() {
    let (_tmp, dir) = quick_demo();
    let rel = "snapshot/issues/acme/api/121.yaml";
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("title: Twice\n{text}")).unwrap();
    commit_as_t(&dir, &["-a"], "a hand edit");
    let out = commitea(&["run", "--offline", "--trials", "100"], &dir);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "git checkout <that commit>~1 -- {rel} && git commit -m"
        )) && said.contains("git revert"),
        "{said}"
    );
    let bad = crate::pipeline::git(&dir, &["log", "-1", "--format=%H", "--", rel]);
    crate::pipeline::git(&dir, &["checkout", &format!("{}~1", bad.trim()), "--", rel]);
    commit_as_t(&dir, &[rel], "Undo a hand edit of the snapshot");
    let out = commitea(&["run", "--offline", "--trials", "100"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A directive recorded and not yet proposed: its entry and its op file are both only in the checkout, and
/// the run says so once, not that the file's directive is missing and the file should go (audit 166:
/// "renumber the other entry, or remove the file", of the file `commitea directive` had just written).
#[test]
fn a_directive_not_yet_proposed_is_not_told_to_remove_its_op_file() {
    let (_tmp, dir) = quick_demo();
    let s = dir.to_str().unwrap();
    let out = commitea(
        &[
            "directive",
            "--kind",
            "reprioritize",
            "--quote",
            "Top priority.",
            "--target",
            "acme/web#101",
            "--params",
            r#"{"priority":0}"#,
            "--by",
            "amara",
            "-s",
            s,
        ],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    let out = commitea(&["run", "--offline", "--trials", "100", "-s", s], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("not on the branch"), "{stderr}");
    assert!(
        !stderr.contains("does not have") && !stderr.contains("remove the file"),
        "{stderr}"
    );
}

/// `plan --now D` of the committed forecast's day is that forecast: the day's moment is taken as the run
/// takes it, so a close made that day before the sync counts in the closing-rate history as it does in the
/// open work (audit 165: 160 closes against the run's 161, and another Mobile 3.0 p50).
#[test]
fn a_preview_of_the_committed_forecasts_day_is_that_forecast() {
    let (_tmp, dir) = quick_demo();
    abandonment_model_on(&dir);
    // The demo's snapshot was taken at 17:00 on 2026-11-27, after acme/mobile#79 closed that day.
    let meta = std::fs::read_to_string(dir.join("snapshot/meta.yaml")).unwrap();
    assert!(meta.contains("synced_at: 2026-11-27T17:00:00Z"), "{meta}");
    let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let committed = std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap();
    assert!(
        committed.contains("\"as_of\": \"2026-11-27\""),
        "not as of the snapshot's day"
    );
    let out = commitea(&["plan", "--now", "2026-11-27", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let previewed = std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap();
    assert!(
        committed == previewed,
        "plan --now 2026-11-27 wrote another forecast"
    );
}

/// With the abandonment model on, a dependency on rarely done work makes the issue rarely done, and the
/// consequence names it with its chance, not only its milestone looking earlier as it leaves (audit 131).
#[test]
fn a_dependency_on_rarely_done_work_is_named_in_the_consequence() {
    let (_tmp, dir) = quick_demo();
    abandonment_model_on(&dir);
    let out = commitea(&["run", "--offline", "--trials", "1000"], &dir);
    assert!(out.status.success(), "{out:?}");
    let forecast: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap();
    let issues = forecast["issues"].as_array().unwrap();
    let chance = |i: &serde_json::Value| i["probability_done"].as_f64().unwrap_or(1.0);
    let free = |i: &&serde_json::Value| {
        i["depends_on"].is_null()
            && !issues.iter().any(|o| {
                o["depends_on"]
                    .to_string()
                    .contains(&format!("\"{}\"", i["issue"].as_str().unwrap()))
            })
    };
    // A likely issue waiting on nothing, and a rarely done one nothing waits on.
    let likely = issues
        .iter()
        .filter(free)
        .find(|i| chance(i) > 0.6 && i["p80"] == "beyond horizon")
        .expect("a likely issue with no p80");
    // (Under a fifth: since silent strata stopped sinking toward a rate of zero, audit 163, no free
    // issue of the demo is under a tenth.)
    let rare = issues
        .iter()
        .filter(free)
        .find(|i| chance(i) < 0.2)
        .expect("a rarely done issue");
    let op = serde_json::json!({"ops": [{"op": "add_dep", "issue": likely["issue"], "dependsOn": rare["issue"]}], "preview": true});
    let out = commitea(
        &["tool", "apply_changes", &op.to_string(), "--by", "pat"],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(
        answer.contains(&format!("{} done in ", likely["issue"].as_str().unwrap())),
        "{answer}"
    );
    // One whose p80 had a date, now beyond the horizon, is named the same way (audit 133: "1 issue
    // moved" for one that fell from 97% to 6%).
    let dated = issues
        .iter()
        .filter(free)
        .find(|i| chance(i) > 0.9 && i["p80"] != "beyond horizon" && i["issue"] != rare["issue"])
        .expect("a likely issue with a p80");
    let op = serde_json::json!({"ops": [{"op": "add_dep", "issue": dated["issue"], "dependsOn": rare["issue"]}], "preview": true});
    let out = commitea(
        &["tool", "apply_changes", &op.to_string(), "--by", "pat"],
        &dir,
    );
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(
        answer.contains(&format!("{} done in ", dated["issue"].as_str().unwrap())),
        "{answer}"
    );
    // Made on Gitea and synced, the dependent's page names what makes it rare.
    let (likely, rare) = (
        likely["issue"].as_str().unwrap().to_owned(),
        rare["issue"].as_str().unwrap().to_owned(),
    );
    let key: commitea::domain::IssueKey = likely.parse().unwrap();
    edit(
        &dir.join(format!("snapshot/issues/{}/{}.yaml", key.repo, key.number)),
        "\nbody: ",
        &format!("\ndepends_on:\n- {rare}\nbody: "),
    );
    commit_as_t(&dir, &["-a"], "the dependency on Gitea");
    let out = commitea(&["run", "--offline", "--trials", "1000"], &dir);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(
        dir.join(format!("public/issues/{}/{}.html", key.repo, key.number)),
    )
    .unwrap();
    let rare_key: commitea::domain::IssueKey = rare.parse().unwrap();
    assert!(
        page.contains(&format!(
            "It waits for <a href=\"../../../issues/{}/{}.html\">{rare}</a> (done in ",
            rare_key.repo, rare_key.number
        )) && page.contains("with what it waits for (below), it is more often left undone"),
        "{page}"
    );
}

/// A leave withdrawn gives the leaver's unassigned work back to be shared out again, and says why (audit
/// 124: after a mistaken "chen leaves" was withdrawn, the seven issues moved off chen stayed with the
/// others, as plans are kept, and Public API v2 stayed two weeks later than before the directive).
#[test]
fn a_withdrawn_leave_shares_the_work_out_again() {
    let (_tmp, dir) = quick_demo();
    let s = dir.to_str().unwrap();
    let unassigned_for_chen = || -> usize {
        let forecast: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap(),
        )
        .unwrap();
        forecast["issues"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["planned_assignee"] == "chen" && i["assignee"].is_null())
            .count()
    };
    let before = unassigned_for_chen();
    assert!(before > 0);
    let out = commitea(
        &[
            "directive",
            "--kind",
            "capacity",
            "--quote",
            "Chen leaves after the holidays.",
            "--target",
            "member chen",
            "--params",
            r#"{"from":"2027-01-04","hours_per_week":0}"#,
            "--by",
            "pm",
            "-s",
            s,
        ],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    commit_as_t(&dir, &["-a"], "chen leaves");
    let out = commitea(&["run", "--offline", "--trials", "300", "-s", s], &dir);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(unassigned_for_chen(), 0);
    let forecast = std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap();
    assert!(
        forecast.contains("\"last_day\": \"2026-12-23\""),
        "chen's last day is kept"
    );
    // The directive just recorded is the ledger's last entry.
    let ledger = std::fs::read_to_string(dir.join("pm-state.md")).unwrap();
    let at = ledger.rfind("- status: active").unwrap();
    assert!(
        ledger[..at].contains("Chen leaves") && !ledger[at..].contains("\n## "),
        "{ledger}"
    );
    let ledger = format!("{}- status: withdrawn{}", &ledger[..at], &ledger[at + 16..]);
    std::fs::write(dir.join("pm-state.md"), ledger).unwrap();
    commit_as_t(&dir, &["-a"], "chen stays after all");
    let out = commitea(&["run", "--offline", "--trials", "300", "-s", s], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Taken back, the leave gives back the plan before it (audit 175), not a new sharing out.
    assert!(
        stderr.contains(
            "D-0008 no longer in force: the plan takes up whom the forecast before it planned each issue for"
        ),
        "{stderr}"
    );
    assert_eq!(
        unassigned_for_chen(),
        before,
        "chen gets her unassigned work back"
    );
    // And then the plan holds still again.
    let out = commitea(&["run", "--offline", "--trials", "300", "-s", s], &dir);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("shared out again"),
        "{out:?}"
    );
}

/// Holidays added to commitea.yaml are what the run's commit and the standup put the moves down to, not
/// each person's capacity (audit 124: the plan the standup compared with took today's holidays, so the
/// words "holidays … added" were never said).
#[test]
fn holidays_added_are_the_reason_the_run_gives() {
    let (_tmp, dir) = quick_demo();
    edit(
        &dir.join("commitea.yaml"),
        "  holidays:\n",
        "  holidays:\n    - 2027-02-15\n    - 2027-02-16\n",
    );
    commit_as_t(&dir, &["-a"], "two more holidays");
    let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let message = git_out(&dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("holidays Feb 15 2027 and Feb 16 2027 added")
            && !message.contains("capacity of"),
        "{message}"
    );
    let standup = std::fs::read_to_string(dir.join("public/standup.html")).unwrap();
    assert!(
        standup.contains("holidays Feb 15 2027 and Feb 16 2027 added"),
        "the standup page does not say the holidays"
    );
}

/// West of UTC, an evening sync does not hold the next day back, and an instant exactly at midnight UTC is
/// the team's date then, not a bare UTC day (audit 127: a New York team's runs of Dec 8 stayed "as of
/// 2026-12-07" after a sync at 20:00 on Dec 7; `--now 2026-12-07T13:00:00-11:00` was Dec 8 in Pago Pago).
#[test]
fn day_zero_is_the_teams_day_west_of_utc() {
    let (_tmp, dir) = quick_demo();
    let s = dir.to_str().unwrap();
    edit(
        &dir.join("commitea.yaml"),
        "calendar:\n",
        "calendar:\n  timezone: America/New_York\n",
    );
    // The last sync that changed anything: 20:00 on Dec 7 in New York.
    edit(
        &dir.join("snapshot/meta.yaml"),
        "synced_at: 2026-11-27T17:00:00Z",
        "synced_at: 2026-12-08T01:00:00Z",
    );
    commit_as_t(&dir, &["-a"], "New York, synced on the evening of Dec 7");
    let as_of = |args: &[&str]| {
        let mut all = vec!["plan", "--json", "--trials", "100", "-s", s];
        all.extend_from_slice(args);
        let out = commitea(&all, &dir);
        assert!(out.status.success(), "{out:?}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        report["as_of"].as_str().unwrap().to_owned()
    };
    // 09:00 on Dec 8 there: a run commits Dec 8, and a reader of that state answers Dec 8.
    let out = commitea(
        &[
            "run",
            "--offline",
            "--trials",
            "100",
            "--now",
            "2026-12-08T14:00:00Z",
            "-s",
            s,
        ],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    let message = git_out(&dir, &["log", "-1", "--format=%s"]);
    assert!(message.contains("forecast as of 2026-12-08"), "{message}");
    assert_eq!(as_of(&[]), "2026-12-08");
    // An instant exactly at midnight UTC is still 19:00 on Dec 7 in New York.
    assert_eq!(as_of(&["--now", "2026-12-08T00:00:00Z"]), "2026-12-07");
    assert_eq!(as_of(&["--now", "2026-12-07T19:00:00-05:00"]), "2026-12-07");
    // A date given is that day.
    assert_eq!(as_of(&["--now", "2026-12-09"]), "2026-12-09");
}

/// Three people leaving at once: work moved off one does not land on another, beyond the horizon (audit
/// 126: ten unassigned issues went from one leaver to the next).
#[test]
fn unassigned_work_does_not_go_from_one_leaver_to_another() {
    let (_tmp, dir) = quick_demo();
    let s = dir.to_str().unwrap();
    for name in [
        "chen   # full stack, four-day week",
        "bjorn   # backend",
        "amara   # tech lead, works across all repositories",
    ] {
        edit(
            &dir.join("commitea.yaml"),
            &format!("  - name: {name}\n"),
            &format!("  - name: {name}\n    ends: 2027-02-26\n"),
        );
    }
    commit_as_t(&dir, &["-a"], "three leave");
    let out = commitea(&["run", "--offline", "--trials", "500", "-s", s], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let forecast: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("forecast/forecast.json")).unwrap())
            .unwrap();
    let late: Vec<String> = forecast["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| {
            i["assignee"].is_null()
                && ["chen", "bjorn", "amara"]
                    .contains(&i["planned_assignee"].as_str().unwrap_or(""))
                && i["p80"].as_str().unwrap() > "2027-02-26"
        })
        .map(|i| format!("{} {} {}", i["issue"], i["planned_assignee"], i["p80"]))
        .collect();
    assert!(late.is_empty(), "{late:?}\n{stderr}");
}

/// Unassigned work that may miss a leaver's last day and that nobody else may take (team[].repositories)
/// is said, with the way out, not counted as work to reassign on Gitea (audit 126).
#[test]
fn work_only_a_leaver_may_take_is_said_with_the_way_out() {
    let (_tmp, dir) = quick_demo();
    let s = dir.to_str().unwrap();
    let config = dir.join("commitea.yaml");
    edit(
        &config,
        "  - name: amara   # tech lead, works across all repositories\n",
        "  - name: amara   # tech lead, works across all repositories\n    repositories: [acme/api, acme/web]\n",
    );
    edit(
        &config,
        "repositories: [acme/web, acme/mobile]",
        "repositories: [acme/web]",
    );
    edit(
        &config,
        "  - name: farah   # mobile\n",
        "  - name: farah   # mobile\n    ends: 2027-01-08\n",
    );
    commit_as_t(&dir, &["-a"], "farah alone on mobile, and leaving");
    let out = commitea(&["run", "--offline", "--trials", "300", "-s", s], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "planned for farah may not be done by their last day (2027-01-08, team[].ends)"
        ) && stderr.contains("add someone to their repositories under `team:`"),
        "{stderr}"
    );
}

/// `--version` names the build as a forecast records it (audit 141: two builds both said 0.1.0, and only
/// `forecast.json` told them apart).
#[test]
fn the_version_is_the_engine_a_forecast_records() {
    let tmp = tempfile::tempdir().unwrap();
    let out = commitea(&["--version"], tmp.path());
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("commitea {}", commitea::forecast::ENGINE)
    );
    assert!(commitea::forecast::ENGINE.contains('+'));
}

/// Someone helping for three weeks keeps no unassigned work they may not finish by their last day
/// without a word (audit 150: an issue whose p50 was beyond the horizon stayed with them, and the run
/// said their work had gone to the others).
#[test]
fn work_a_temporary_helper_may_not_finish_is_named() {
    let (_tmp, dir) = quick_demo();
    let s = dir.to_string_lossy().into_owned();
    let out = commitea(
        &[
            "directive",
            "--kind",
            "capacity",
            "--quote",
            "Zelda helps in December.",
            "--target",
            "member zelda",
            "--params",
            r#"{"from":"2026-12-01","to":"2026-12-20","hours_per_week":10}"#,
            "-s",
            &s,
        ],
        &dir,
    );
    assert!(out.status.success(), "{out:?}");
    let out = commitea(&["plan", "--json", "--trials", "10000", "-s", &s], &dir);
    assert!(out.status.success(), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    let late: Vec<&str> = report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["planned_assignee"] == "zelda" && i["assignee"].is_null())
        .filter(|i| {
            let p50 = i["p50"].as_str().unwrap_or("");
            p50 == "beyond horizon" || p50 > "2026-12-20"
        })
        .map(|i| i["issue"].as_str().unwrap())
        .collect();
    for key in &late {
        assert!(
            warnings.iter().any(|w| w.contains(key)
                && w.contains("planned for zelda may not be done by their last day")),
            "{key} is left with zelda unsaid: {warnings:#?}"
        );
    }
    eprintln!("late with zelda: {late:?}");
}

#[test]
fn time_off_past_the_horizon_is_leaving_as_far_as_the_forecast_sees() {
    // bjorn off from the Monday after day 0 to the end of 2029: 14 unassigned issues stayed planned for
    // him beyond the horizon, without a word, where `ends` gave them to the others (audit 157).
    let (_tmp, dir) = quick_demo();
    let path = dir.join("commitea.yaml");
    let config = std::fs::read_to_string(&path).unwrap().replace(
        "      - { from: 2027-01-04, to: 2027-01-15 }   # parental leave\n",
        "      - { from: 2027-01-04, to: 2027-01-15 }   # parental leave\n      - { from: 2026-11-30, to: 2029-12-31 }   # sabbatical\n",
    );
    assert!(config.contains("sabbatical"));
    std::fs::write(&path, config).unwrap();
    let out = commitea(&["plan", "--json", "--trials", "300"], &dir);
    assert!(out.status.success(), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kept: Vec<&serde_json::Value> = report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["planned_assignee"] == "bjorn" && i["assignee"] != "bjorn")
        .collect();
    assert!(kept.is_empty(), "unassigned work left with bjorn: {kept:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bjorn works until 2026-11-27 (their calendar (time off, a later start) gives them no hour in the horizon after it)"),
        "{stderr}"
    );
    // Someone starting after the horizon has no last day: said once, as a start (audit 160: "gus works
    // until 2026-11-27", twice).
    let config = std::fs::read_to_string(&path)
        .unwrap()
        .replace("    starts: 2026-12-07\n", "    starts: 2029-05-03\n");
    std::fs::write(&path, config).unwrap();
    let out = commitea(&["plan", "--trials", "300"], &dir);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("gus works until"), "{stderr}");
}

/// An entry taken out of the ledger by a commit (a revert, a hand edit), or made to ask otherwise, is what
/// the run's commit and the standup put the moves down to (audit 167: removing D-0006, gus at 15 h a week,
/// moved 47 issues, put down to "queue of gus", and the standup said "no directive recorded").
#[test]
fn a_directive_removed_or_edited_by_a_commit_is_said_with_the_moves() {
    let (_tmp, dir) = quick_demo();
    let ledger = dir.join("pm-state.md");
    let text = std::fs::read_to_string(&ledger).unwrap();
    let (from, to) = (
        text.find("## D-0006").unwrap(),
        text.find("## D-0007").unwrap(),
    );
    std::fs::write(&ledger, format!("{}{}", &text[..from], &text[to..])).unwrap();
    edit(&ledger, r#"{"estimate": "3d"}"#, r#"{"estimate": "1w"}"#);
    commit_as_t(&dir, &["-a"], "gus stays full time; D-0004 asks a week");
    let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let message = git_out(&dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("D-0004 edited and D-0006 removed from the ledger"),
        "{message}"
    );
    let standup = std::fs::read_to_string(dir.join("public/standup.html")).unwrap();
    assert!(
        standup.contains("</a> edited and <a") && standup.contains("</a> removed from the ledger"),
        "the standup does not say the entries changed"
    );
    // Withdrawn, then back in force by a commit (a revert of the withdrawal): said too (audit 170).
    let active = std::fs::read_to_string(&ledger).unwrap();
    let at = active.find("## D-0003").unwrap();
    let status = at + active[at..].find("- status: active").unwrap();
    let withdrawn = format!(
        "{}- status: withdrawn{}",
        &active[..status],
        &active[status + "- status: active".len()..]
    );
    for (text, message) in [(&withdrawn, "withdraw D-0003"), (&active, "revert it")] {
        std::fs::write(&ledger, text).unwrap();
        commit_as_t(&dir, &["-a"], message);
        let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
        assert!(out.status.success(), "{out:?}");
    }
    let message = git_out(&dir, &["log", "-1", "--format=%B"]);
    assert!(message.contains("D-0003 back in force"), "{message}");
}

/// Records in `dir` the directive "web 30 first" (acme/web#30 to p/0), with its op file; its id.
fn web_30_first(dir: &Path) -> String {
    let out = commitea(
        &[
            "directive",
            "--kind",
            "reprioritize",
            "--quote",
            "web 30 first",
            "--target",
            "acme/web#30",
            "--params",
            r#"{"priority": 0}"#,
        ],
        dir,
    );
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["directiveId"].as_str().unwrap().to_owned()
}

/// An op file committed with a merge conflict left in is said as that, at the marker's line, and the
/// directive it carries is not advised to be carried out again beside it (audit 167: "line 4 … the YAML
/// syntax is broken" of a marker on line 3, then "no op file is pending … --carry-out D-0008").
#[test]
fn an_op_file_with_a_merge_conflict_left_in_is_named_as_one() {
    let (_tmp, dir) = quick_demo();
    let id = web_30_first(&dir);
    let file = dir.join(format!("ops/pending/{id}.yaml"));
    let text = std::fs::read_to_string(&file).unwrap();
    let (head, rest) = text.split_at(text.find("ops:").unwrap());
    std::fs::write(
        &file,
        format!("{head}<<<<<<< HEAD\n{rest}=======\n{rest}>>>>>>> pmB\n"),
    )
    .unwrap();
    let marker_line = head.lines().count() + 1;
    git_out(&dir, &["add", "-A"]);
    commit_as_t(&dir, &[], "both merged");
    let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "ops/pending/{id}.yaml line {marker_line} column 1: a git merge-conflict marker (<<<<<<<)"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "its id's op file ops/pending/{id}.yaml does not read (as said)"
        )) && !stderr.contains(&format!("--carry-out {id}")),
        "{stderr}"
    );
}

/// A directive's op file on the branch without its entry waits, and the Changes page says why, not
/// "approved: applied at the next run" (audit 170).
#[test]
fn an_approved_directive_file_without_its_entry_says_why_it_waits() {
    let (_tmp, dir) = quick_demo();
    let id = web_30_first(&dir);
    let ledger = dir.join("pm-state.md");
    let text = std::fs::read_to_string(&ledger).unwrap();
    std::fs::write(&ledger, &text[..text.find(&format!("## {id}")).unwrap()]).unwrap();
    git_out(&dir, &["add", "-A"]);
    commit_as_t(&dir, &[], "the file without its entry");
    let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(dir.join("public/changes.html")).unwrap();
    assert!(
        page.contains(&format!(
            "approved, but it carries out directive {id}, which pm-state.md does not have"
        )),
        "{page}"
    );
    // A later file about the same issue waits behind it, though its id sorts first (audit 173).
    std::fs::write(
        dir.join("ops/pending/C-0001.yaml"),
        "id: C-0001\nsource: apply_changes\ncreated_at: 2026-11-27T17:00:00Z\napproved: true\n\
         destructive: false\nops:\n- op: set_priority\n  issue: acme/web#30\n  priority: p/1\n\
         summary: hand-written\nconsequence: []\n",
    )
    .unwrap();
    git_out(&dir, &["add", "-A"]);
    commit_as_t(&dir, &[], "a later file");
    let out = commitea(&["run", "--offline", "--trials", "200"], &dir);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(dir.join("public/changes.html")).unwrap();
    assert!(
        page.contains(&format!(
            "approved, but it changes acme/web#30, as {id} does, which waits"
        )),
        "{page}"
    );
}

/// A directive with no op file (a capacity, a note) removed by a commit keeps its id taken: the ledger's
/// history holds it (audit 170: the next directive became a new D-0008, and the standup said "edited").
#[test]
fn the_id_of_a_directive_removed_by_a_commit_is_not_given_again() {
    let (_tmp, dir) = quick_demo();
    let note = |quote: &str| {
        let out = commitea(&["directive", "--kind", "note", "--quote", quote], &dir);
        assert!(out.status.success(), "{out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["directiveId"].as_str().unwrap().to_owned()
    };
    let first = note("Remember the offsite.");
    assert!(!dir.join(format!("ops/pending/{first}.yaml")).exists());
    git_out(&dir, &["add", "-A"]);
    commit_as_t(&dir, &[], "a note");
    let ledger = dir.join("pm-state.md");
    let text = std::fs::read_to_string(&ledger).unwrap();
    std::fs::write(&ledger, &text[..text.find(&format!("## {first}")).unwrap()]).unwrap();
    commit_as_t(&dir, &["-a"], "not that note");
    let second = note("Remember the retro.");
    assert_ne!(second, first);
    assert!(second > first, "{second} after {first}");
}
