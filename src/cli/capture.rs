//! `commitea capture`: the seed's review tray on a terminal. The braindump (from stdin, or `$EDITOR` on a
//! terminal) goes to `capture_work`; its follow-up questions are asked one at a time; the proposal opens in
//! `$EDITOR` as YAML to edit; the edited proposal is checked again (its consequence recomputed by the
//! engine) and filed through `apply_changes` as an op file for review, proposed where the config says so.
//!
//! With stdin not a terminal (a script), the braindump is stdin up to a line holding only `.` (or its
//! end), and each answer to a follow-up question is the next line.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{CommandError, CommandResult, ForecastArgs, StateArg};
use crate::tools;
use crate::tools::schema::{Answer, CaptureOutput, ProposedIssue};

/// `commitea capture`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    state: StateArg,
    /// Who is capturing (a Gitea username), written into the op file.
    #[arg(long, value_parser = super::parse_by)]
    by: Option<String>,
    #[command(flatten)]
    forecast: ForecastArgs,
}

/// Rounds of follow-up questions before the proposal is asked for regardless.
const ROUNDS: usize = 4;
/// Times the edited proposal may fail its check before the capture stops.
const EDITS: usize = 3;

/// The proposal as the person edits it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tray {
    issues: Vec<ProposedIssue>,
}

/// Where the person's words come from: a terminal, or the lines of a script.
enum Input {
    Terminal,
    Script(std::collections::VecDeque<String>),
}

impl Input {
    /// The next answer; the end of the input (Ctrl-D, a script run out) stops the capture rather than
    /// send the model an empty answer.
    fn line(&mut self) -> Result<String, CommandError> {
        let stop = || {
            CommandError::Input(
                "no answer (the input ended): the capture stops; nothing filed".to_owned(),
            )
        };
        match self {
            Self::Terminal => {
                let mut s = String::new();
                if std::io::stdin().lock().read_line(&mut s)? == 0 {
                    return Err(stop());
                }
                Ok(s.trim().to_owned())
            }
            Self::Script(lines) => lines
                .pop_front()
                .map(|l| l.trim().to_owned())
                .ok_or_else(stop),
        }
    }
}

/// The instruction line the braindump opens with, left out of what is sent (only it: a `# heading` or a
/// `#123` of the PM's is their words).
const BRAINDUMP_HEAD: &str =
    "# Your braindump: what needs doing, in your words (this line is left out).";

/// Whether an editor is named (`$VISUAL`, `$EDITOR`).
fn editor_named() -> Option<String> {
    ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
}

/// The tray's `deps` as the person reads them: a proposed issue by its title (`new:Delivery log table`),
/// so that deleting or moving an issue in the editor never points a dependency at another one.
fn deps_by_title(issues: &mut [ProposedIssue]) {
    let titles: Vec<String> = issues.iter().map(|i| i.title.clone()).collect();
    for i in issues.iter_mut() {
        for d in i.deps.iter_mut().flatten() {
            if let crate::tools::schema::ProposedDep::Ref(r) = d
                && let Some(t) = r
                    .strip_prefix("new:")
                    .and_then(|k| k.parse::<usize>().ok())
                    .and_then(|k| titles.get(k.checked_sub(1)?))
            {
                *r = format!("new:{t}");
            }
        }
    }
}

/// The tray's `deps` back to `new:K`, K the place in the list as edited: `new:TITLE` names the issue of
/// that title (a number stays as written); a title no issue or two issues have is an error naming both.
fn deps_by_place(issues: &mut [ProposedIssue]) -> Result<(), String> {
    let titles: Vec<String> = issues.iter().map(|i| i.title.trim().to_owned()).collect();
    for (n, i) in issues.iter_mut().enumerate() {
        let title = i.title.clone();
        for d in i.deps.iter_mut().flatten() {
            let crate::tools::schema::ProposedDep::Ref(r) = d else {
                continue;
            };
            let Some(t) = r.strip_prefix("new:").map(str::trim) else {
                continue;
            };
            if t.parse::<usize>().is_ok() {
                continue;
            }
            let places: Vec<usize> = (0..titles.len()).filter(|k| titles[*k] == t).collect();
            match places.as_slice() {
                [k] => *r = format!("new:{}", k + 1),
                [] => {
                    return Err(format!(
                        "issue {} (\"{}\") depends on new:{t}, and no issue of the list has that title \
                         (deleted or renamed?): remove the dependency, or name an issue of the list",
                        n + 1,
                        crate::limits::excerpt(&title)
                    ));
                }
                _ => {
                    return Err(format!(
                        "issue {} (\"{}\") depends on new:{t}, and {} issues of the list have that title: \
                         give them different titles",
                        n + 1,
                        crate::limits::excerpt(&title),
                        places.len()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Runs the capture; prints `apply_changes`' answer (one line of JSON) when something was filed.
pub fn run(a: Args) -> CommandResult {
    let ctx = super::tool::context(&a.state, a.by, None, &a.forecast);
    // The proposal is reviewed in an editor: with none named and no terminal for `vi`, a script or a CI
    // job sat in an invisible vi until it was killed.
    if editor_named().is_none() && !std::io::stdin().is_terminal() {
        return Err(CommandError::Input(
            "no editor: the proposal opens in $VISUAL or $EDITOR for review, and with no terminal vi \
             cannot; set EDITOR"
                .to_owned(),
        ));
    }
    let (braindump, input) = if std::io::stdin().is_terminal() {
        let text = edit(&format!("{BRAINDUMP_HEAD}\n"), "braindump.txt")?;
        let text: String = text
            .lines()
            .filter(|l| l.trim_end() != BRAINDUMP_HEAD)
            .collect::<Vec<_>>()
            .join("\n");
        (text, Input::Terminal)
    } else {
        let mut lines = std::collections::VecDeque::new();
        for l in std::io::stdin().lock().lines() {
            lines.push_back(l?);
        }
        let mut dump = Vec::new();
        while let Some(l) = lines.pop_front() {
            if l.trim() == "." {
                break;
            }
            dump.push(l);
        }
        (dump.join("\n"), Input::Script(lines))
    };
    if braindump.trim().is_empty() {
        return Err(CommandError::Input(
            "the braindump is empty: say what needs doing".to_owned(),
        ));
    }
    let typed = matches!(input, Input::Terminal);
    let result = capture(&ctx, &braindump, input);
    // Typed in an editor, the braindump is the person's work: a failure after it (the model down, an
    // edit that never passed) keeps it, where they are told.
    if result.is_err()
        && typed
        && let Ok(kept) = private_file("braindump.txt", &braindump)
    {
        eprintln!("Your braindump is kept in {}.", kept.display());
    }
    result
}

/// A new file in the temporary folder holding `text`, readable by its owner alone and made anew (never
/// one already there, a link someone left in its place): a braindump is the person's own words (audit
/// 162: kept readable by every user of the machine, under a name anyone could tell from the pid).
fn private_file(name: &str, text: &str) -> std::io::Result<PathBuf> {
    use std::io::Write as _;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last = None;
    for attempt in 0..16u32 {
        let path = std::env::temp_dir().join(format!(
            "commitea-{}-{:08x}-{name}",
            std::process::id(),
            stamp.wrapping_add(attempt.wrapping_mul(0x9e37_79b9))
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(mut file) => {
                file.write_all(text.as_bytes())?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free name in the temporary folder")))
}

/// The capture from the braindump on: the questions, the tray, the filing.
fn capture(ctx: &tools::Context, braindump: &str, mut input: Input) -> CommandResult {
    let mut answers: Vec<Answer> = Vec::new();
    let mut proposal = None;
    for round in 0..=ROUNDS {
        let mut call = json!({"braindump": braindump});
        if !answers.is_empty() {
            call["answers"] = serde_json::to_value(&answers)?;
        }
        let out: CaptureOutput = serde_json::from_value(
            tools::call(ctx, tools::CAPTURE_WORK, &call).map_err(super::tool_error)?,
        )?;
        match (out.needs_more_info, out.proposal) {
            (_, Some(p)) => {
                proposal = Some(p);
                break;
            }
            (Some(questions), None) if round < ROUNDS => {
                for q in questions {
                    // The model's words, on one line and without control characters (an escape sequence
                    // would redraw the terminal).
                    eprint!("{}\n> ", crate::prose::one_line(&q));
                    let _ = std::io::stderr().flush();
                    let answer = input.line()?;
                    eprintln!();
                    answers.push(Answer {
                        question: q,
                        answer,
                    });
                }
            }
            _ => {
                return Err(CommandError::Failed(anyhow::anyhow!(
                    "capture_work asked questions for {ROUNDS} rounds without proposing; nothing filed"
                )));
            }
        }
    }
    let Some(proposal) = proposal else {
        return Err(CommandError::Failed(anyhow::anyhow!(
            "capture_work proposed nothing; nothing filed"
        )));
    };
    // The consequence names milestones by their titles, which anyone on Gitea writes: one line of
    // plain text, on the terminal and in the tray's comment (audit 87: an escape sequence in a title
    // reached the terminal, and made the tray a file its own YAML reader refused).
    let consequence = crate::prose::one_line(&proposal.consequence);
    eprintln!(
        "Proposed {}; {consequence}",
        crate::prose::count(proposal.issues.len(), "issue", "issues"),
    );
    let world = crate::model::capture::World::load(ctx).map_err(super::tool_error)?;
    let file = Path::new("proposal.yaml");
    let mut issues = proposal.issues;
    deps_by_title(&mut issues);
    let mut text = format!(
        "# The proposal of capture_work: edit it, save and close to file it (empty the list to file nothing).\n# Each issue: title, body, estimate (a rung of the ladder), priority (p/0..p/3), deps (owner/repo#N, or\n# new:TITLE for an issue of this list), milestone (an id), repo.\n# Consequence as proposed: {consequence}\n{}",
        crate::yamlfile::to_string(&Tray { issues }, file)?
    );
    let mut edits = 0;
    let checked = loop {
        let edited = edit(&text, "proposal.yaml")?;
        let tray: Result<Tray, String> = if edited
            .lines()
            .all(|l| l.trim().is_empty() || l.starts_with('#'))
        {
            Ok(Tray { issues: Vec::new() })
        } else {
            crate::yamlfile::parse(&edited, file).map_err(|e| e.to_string())
        };
        let result = tray.and_then(|mut t| {
            deps_by_place(&mut t.issues)?;
            if t.issues.is_empty() {
                Ok(None)
            } else {
                // A person counts the issues from 1 and knows them by title.
                let name = |i: usize| {
                    let title = t.issues.get(i).map_or("", |x| x.title.as_str());
                    format!("issue {} (\"{}\")", i + 1, crate::limits::excerpt(title))
                };
                crate::model::capture::check_issues(&world, &t.issues, &name).map(Some)
            }
        });
        match result {
            Ok(None) => {
                eprintln!("The proposal is empty: nothing filed.");
                return Ok(());
            }
            Ok(Some(c)) => break c,
            Err(e) => {
                edits += 1;
                if edits >= EDITS {
                    return Err(CommandError::Input(format!(
                        "the edited proposal is still not valid: {e}; nothing filed"
                    )));
                }
                eprintln!("The edited proposal is not valid: {e}");
                let kept: String = edited
                    .lines()
                    .filter(|l| !l.starts_with("# error:"))
                    .map(|l| format!("{l}\n"))
                    .collect();
                text = format!("# error: {}\n{kept}", e.replace('\n', " "));
            }
        }
    };
    let wanted = checked.ops.len();
    let ops: Vec<Value> = crate::model::capture::ops(&checked)
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?;
    // The issues are the big model's draft, from issue text anyone can write: marked as a model's, so
    // they go through a pull request however additive (as a directive drafted with --say does), whoever
    // saved the editor (audit 69: an editor that saves unread filed them straight to the branch).
    let drafted = tools::Context {
        model: true,
        ..ctx.clone()
    };
    let answer = tools::call(
        &drafted,
        tools::APPLY_CHANGES,
        &json!({"ops": ops, "source": "capture_work"}),
    )
    .map_err(super::tool_error)?;
    super::print_json(&answer, false)?;
    // What was filed, as apply_changes filed it: an issue proposed already is refused there, and its
    // consequence is of what it kept (audit 83: "Filing 4 issues" was said of a file of two).
    let filed = answer["applied"].as_u64().unwrap_or(0);
    let consequence = crate::prose::one_line(answer["consequence"].as_str().unwrap_or_default());
    match answer["opsFile"].as_str() {
        Some(file) => eprintln!(
            "Filed {filed} of {} in {file}; {consequence}",
            crate::prose::count(wanted, "issue", "issues")
        ),
        None => eprintln!("Nothing filed."),
    }
    let refused: Vec<String> = answer["rejected"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            format!(
                "\"{}\": {}",
                crate::limits::excerpt(r["op"]["title"].as_str().unwrap_or_default()),
                r["reason"].as_str().unwrap_or_default()
            )
        })
        .collect();
    if refused.is_empty() {
        Ok(())
    } else {
        Err(CommandError::Input(format!(
            "{} of the proposal not filed: {}",
            crate::prose::count(refused.len(), "issue", "issues"),
            refused.join("; ")
        )))
    }
}

/// Opens `text` in `$VISUAL` or `$EDITOR` (default `vi`) and returns what was saved.
fn edit(text: &str, name: &str) -> Result<String, CommandError> {
    let path = private_file(name, text)?;
    let editor = editor_named().unwrap_or_else(|| "vi".to_owned());
    // Through the shell, as git does, so `EDITOR="code --wait"` works.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status();
    let read = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    match status {
        Ok(s) if s.success() => read.map_err(|e| {
            CommandError::Input(format!(
                "the editor ({editor}) left no file to read at {} ({e}); nothing filed",
                path.display()
            ))
        }),
        Ok(s) => Err(CommandError::Input(format!(
            "the editor ({editor}) exited with {s}; nothing filed"
        ))),
        Err(e) => Err(CommandError::Failed(anyhow::anyhow!(
            "cannot run the editor ({editor}): {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::{deps_by_place, deps_by_title, private_file};
    use crate::tools::schema::{ProposedDep, ProposedIssue};

    #[test]
    fn a_braindump_file_is_its_owners_alone_and_new() {
        let (a, b) = (
            private_file("t-braindump.txt", "ours").expect("a file"),
            private_file("t-braindump.txt", "ours too").expect("another"),
        );
        assert_ne!(a, b);
        assert_eq!(std::fs::read_to_string(&a).ok().as_deref(), Some("ours"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&a).map(|m| m.permissions().mode() & 0o777);
            assert_eq!(mode.ok(), Some(0o600));
        }
        for p in [a, b] {
            let _ = std::fs::remove_file(p);
        }
    }

    fn issue(title: &str, deps: &[&str]) -> ProposedIssue {
        ProposedIssue {
            title: title.into(),
            body: String::new(),
            estimate: "est/1d".into(),
            priority: None,
            deps: (!deps.is_empty())
                .then(|| deps.iter().map(|d| ProposedDep::Ref((*d).into())).collect()),
            milestone: None,
            repo: None,
        }
    }

    fn deps(i: &ProposedIssue) -> Vec<String> {
        i.deps.iter().flatten().map(ToString::to_string).collect()
    }

    #[test]
    fn a_dependency_follows_its_issue_when_the_list_is_edited() {
        // Audit 83: deleting the first issue made "new:2" point at another issue, filed unasked.
        let mut tray = vec![
            issue("Webhook retry queue", &[]),
            issue("Delivery log table", &[]),
            issue("Backoff config", &[]),
            issue("Retry dashboard", &["new:2", "acme/api#7"]),
        ];
        deps_by_title(&mut tray);
        assert_eq!(deps(&tray[3]), ["new:Delivery log table", "acme/api#7"]);
        // The PM deletes the first issue and moves the dashboard up.
        let mut edited = vec![tray[3].clone(), tray[1].clone(), tray[2].clone()];
        deps_by_place(&mut edited).unwrap();
        assert_eq!(deps(&edited[0]), ["new:2", "acme/api#7"]);
        // A number the PM writes stays theirs; a title no issue has, or two have, is said.
        let mut numbered = vec![issue("A", &[]), issue("B", &["new:1"])];
        deps_by_place(&mut numbered).unwrap();
        assert_eq!(deps(&numbered[1]), ["new:1"]);
        let mut gone = vec![tray[3].clone(), tray[2].clone()];
        let e = deps_by_place(&mut gone).unwrap_err();
        assert!(
            e.contains(
                "issue 1 (\"Retry dashboard\") depends on new:Delivery log table, and no issue"
            ),
            "{e}"
        );
        let mut twice = vec![tray[3].clone(), tray[1].clone(), tray[1].clone()];
        assert!(
            deps_by_place(&mut twice)
                .unwrap_err()
                .contains("2 issues of the list have that title")
        );
    }
}
