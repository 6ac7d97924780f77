//! `commitea import`: another tracker's history as new state repos.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::CommandResult;

/// `commitea import`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where the history comes from.
    #[command(subcommand)]
    source: ImportSource,
}

/// The trackers `commitea import` reads.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum ImportSource {
    /// Jira, flattened to DATASET_issues.csv, DATASET_history.csv and DATASET_milestones.csv: one state repo
    /// per project, its issues in the Gitea repository `jira/<PROJECT>`.
    Jira {
        /// The folder holding the CSV files.
        #[arg(long)]
        data: PathBuf,
        /// The dataset, the files' prefix: `duraspace` or `apache`.
        #[arg(long)]
        dataset: String,
        /// The Jira project key, or `all` for every project with at least --min-issues issues.
        #[arg(long)]
        project: String,
        /// Where to write the state repo; with `--project all`, one sub-folder per project.
        #[arg(long)]
        out: PathBuf,
        /// With `--project all`: skip projects with fewer issues.
        #[arg(long, default_value_t = 50)]
        min_issues: usize,
    },
}

/// Imports and prints each state repo's path.
pub fn run(a: Args) -> CommandResult {
    match a.source {
        ImportSource::Jira {
            data,
            dataset,
            project,
            out,
            min_issues,
        } => import_jira(&data, &dataset, &project, &out, min_issues)?,
    }
    Ok(())
}

/// `commitea import jira`: one state repo per project.
fn import_jira(
    data: &Path,
    dataset: &str,
    project: &str,
    out: &Path,
    min_issues: usize,
) -> anyhow::Result<()> {
    let ds = crate::import::load_dataset(data, dataset)?;
    ds.check_not_after(chrono::Utc::now())?;
    let projects: Vec<(String, PathBuf)> = if project == "all" {
        let all = ds.projects();
        // Nothing to import is an error: an export of headers only printed nothing and exited 0.
        if all.iter().all(|(_, n)| *n < min_issues) {
            return Err(crate::import::ImportError::NoProject {
                dataset: dataset.to_owned(),
                min_issues,
                known: all
                    .iter()
                    .map(|(p, n)| format!("{p} {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            }
            .into());
        }
        all.into_iter()
            .filter(|(p, n)| {
                if *n < min_issues {
                    tracing::info!(
                        "skipping {p}: {}, fewer than {min_issues}",
                        crate::prose::count(*n, "issue", "issues")
                    );
                }
                *n >= min_issues
            })
            .map(|(p, _)| {
                // A project key names a folder under OUT: only a plain name may (`../x` or `/x` would
                // leave it), checked before the path is made.
                if format!("jira/{p}")
                    .parse::<crate::domain::RepoName>()
                    .is_err()
                {
                    return Err(crate::import::ImportError::ProjectName {
                        project: crate::limits::excerpt(&p),
                        dataset: dataset.to_owned(),
                    }
                    .into());
                }
                let dir = out.join(&p);
                Ok((p, dir))
            })
            .collect::<anyhow::Result<_>>()?
    } else {
        vec![(project.to_owned(), out.to_path_buf())]
    };
    // Every project is converted before any is written: one that cannot be stops the import with
    // nothing written, not halfway through `--project all`.
    let mut converted = Vec::with_capacity(projects.len());
    for (p, dir) in projects {
        let config = crate::config::Config::path_in(&dir);
        if dir.exists() && !dir.is_dir() {
            bail!(
                "{} is a file, not a folder: give --out a new or empty folder",
                dir.display()
            );
        }
        if dir.exists() && !config.exists() && std::fs::read_dir(&dir)?.next().is_some() {
            bail!(
                "{} exists and is not a CommiTea state repo; choose an empty or new folder",
                dir.display()
            );
        }
        // Importing again refreshes the snapshot of the state repo an import of this project made; any
        // other state repo (the demo's, another project's) is not this import's to replace (audit 118:
        // the demo's directives and config were replaced and its uncommitted proposals committed).
        if config.exists() {
            let text = crate::state::read_text_file(&config)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", config.display()))?;
            let repos = crate::config::Config::parse(&text, &config)?.repositories;
            let own = format!("jira/{p}");
            if repos.len() != 1 || repos[0].to_string() != own {
                let named: Vec<String> = repos.iter().map(ToString::to_string).collect();
                bail!(
                    "{} is the state repo of {}, not of the Jira project {p} ({own}): importing would \
                     replace it; choose an empty or new folder (importing again refreshes only a state \
                     repo an import of {p} made)",
                    dir.display(),
                    if named.is_empty() {
                        "no repository".to_owned()
                    } else {
                        crate::prose::and_list(&named)
                    }
                );
            }
        }
        converted.push((p.clone(), dir, crate::import::to_state(&ds, &p)?));
    }
    for (p, dir, imported) in converted {
        let s = &imported.stats;
        tracing::info!(
            "{p}: {} issues ({} open, {} with a milestone, {} with an estimate), {} events, as of {}",
            s.issues,
            s.open,
            s.with_milestone,
            s.with_estimate,
            s.events,
            imported.snapshot.meta.synced_at.to_rfc3339()
        );
        tracing::info!(
            "{p}: dropped {} dependencies on other projects, {} on issues not in the data, {} unknown \
             fixVersion references, {} in-progress moments, {} history rows of unmapped fields",
            s.dependencies_other_project,
            s.dependencies_missing,
            s.unknown_milestone_refs,
            s.in_progress_dropped,
            s.history_rows_ignored
        );
        if s.history_rows_orphaned > 0 {
            tracing::warn!(
                "{p}: {} of {dataset}_history.csv name {} that {dataset}_issues.csv does not have ({}), \
                 dropped: the files may not belong together, or the issues file was cut short; export \
                 both again",
                crate::prose::count(s.history_rows_orphaned, "row", "rows"),
                crate::prose::count(s.orphaned_keys.len(), "issue", "issues"),
                crate::prose::and_list_at_most(&s.orphaned_keys, 5),
            );
        }
        if !s.estimates_capped.is_empty() {
            tracing::warn!(
                "{p}: {} estimated at more than twice the ladder's top rung ({}), imported as that rung: \
                 an open one is forecast as that much work, a closed one calibrates as if estimated so; \
                 split such work, or re-estimate it on Gitea",
                crate::prose::count(s.estimates_capped.len(), "issue is", "issues are"),
                crate::prose::and_list_at_most(&s.estimates_capped, 5),
            );
        }
        if !s.titles_cut.is_empty() {
            tracing::warn!(
                "{p}: {} a title longer than the {} characters Gitea takes, cut to them: {}",
                crate::prose::count(s.titles_cut.len(), "issue has", "issues have"),
                crate::limits::TITLE_CHARS,
                crate::prose::and_list_at_most(&s.titles_cut, 5),
            );
        }
        tracing::debug!("{p}: {s:?}");
        crate::import::write_state(&dir, &imported)?;
        println!("{}", dir.display());
    }
    Ok(())
}
