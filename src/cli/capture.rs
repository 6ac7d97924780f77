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
    fn line(&mut self) -> Result<String, CommandError> {
        match self {
            Self::Terminal => {
                let mut s = String::new();
                std::io::stdin().lock().read_line(&mut s)?;
                Ok(s.trim().to_owned())
            }
            Self::Script(lines) => Ok(lines.pop_front().unwrap_or_default().trim().to_owned()),
        }
    }
}

/// Runs the capture; prints `apply_changes`' answer (one line of JSON) when something was filed.
pub fn run(a: Args) -> CommandResult {
    let ctx = super::tool::context(&a.state, a.by, None, &a.forecast);
    let (braindump, mut input) = if std::io::stdin().is_terminal() {
        let text = edit(
            "# Your braindump: what needs doing, in your words. Lines starting with # are ignored.\n",
            "braindump.md",
        )?;
        let text: String = text
            .lines()
            .filter(|l| !l.starts_with('#'))
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
    let mut answers: Vec<Answer> = Vec::new();
    let mut proposal = None;
    for round in 0..=ROUNDS {
        let mut call = json!({"braindump": braindump});
        if !answers.is_empty() {
            call["answers"] = serde_json::to_value(&answers)?;
        }
        let out: CaptureOutput = serde_json::from_value(
            tools::call(&ctx, tools::CAPTURE_WORK, &call).map_err(super::tool_error)?,
        )?;
        match (out.needs_more_info, out.proposal) {
            (_, Some(p)) => {
                proposal = Some(p);
                break;
            }
            (Some(questions), None) if round < ROUNDS => {
                for q in questions {
                    eprint!("{q}\n> ");
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
    eprintln!(
        "Proposed {}; {}",
        crate::prose::count(proposal.issues.len(), "issue", "issues"),
        proposal.consequence
    );
    let world = crate::model::capture::World::load(&ctx).map_err(super::tool_error)?;
    let file = Path::new("proposal.yaml");
    let mut text = format!(
        "# The proposal of capture_work: edit it, save and close to file it (empty the list to file nothing).\n# Each issue: title, body, estimate (a rung of the ladder), priority (p/0..p/3), deps (owner/repo#N or new:K,\n# the K-th issue of this list), milestone (an id), repo.\n# Consequence as proposed: {}\n{}",
        proposal.consequence,
        crate::yamlfile::to_string(
            &Tray {
                issues: proposal.issues
            },
            file
        )?
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
        let result = tray.and_then(|t| {
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
    let consequence =
        crate::model::capture::consequence(&world, &checked, &ctx).map_err(super::tool_error)?;
    eprintln!(
        "Filing {}; {consequence}",
        crate::prose::count(checked.ops.len(), "issue", "issues")
    );
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
    println!("{}", serde_json::to_string(&answer)?);
    Ok(())
}

/// Opens `text` in `$VISUAL` or `$EDITOR` (default `vi`) and returns what was saved.
fn edit(text: &str, name: &str) -> Result<String, CommandError> {
    let path: PathBuf =
        std::env::temp_dir().join(format!("commitea-{}-{}", std::process::id(), name));
    std::fs::write(&path, text)?;
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_owned());
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
        Ok(s) if s.success() => Ok(read?),
        Ok(s) => Err(CommandError::Input(format!(
            "the editor ({editor}) exited with {s}; nothing filed"
        ))),
        Err(e) => Err(CommandError::Failed(anyhow::anyhow!(
            "cannot run the editor ({editor}): {e}"
        ))),
    }
}
