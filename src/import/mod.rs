//! Importers that turn other trackers' histories into CommiTea state repos, in Gitea's shapes.
//!
//! Today there is one: [`jira`], for the flattened Jira histories (three CSV files per dataset) described in
//! `docs/import.md`. An import is pure up to [`jira::write_state`]: the same input files always give the same
//! bytes and the same git commit, with no clock read anywhere.

pub mod jira;

use std::path::PathBuf;

pub use jira::{
    ImportStats, ImportedProject, JiraDataset, JiraHistory, JiraIssue, JiraMilestone, load_dataset,
    to_state, write_state,
};

/// What a dataset has, in words, from its project keys (comma-separated, perhaps none).
fn has_words(known: &str) -> String {
    if known.is_empty() {
        "it has no issues at all".to_owned()
    } else {
        format!("it has: {known}")
    }
}

/// Why an import failed: every message names the file, and the line when one is at fault.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read.
    #[error(
        "cannot read {path}: {source}; a Jira export is three files in one folder, DATASET_issues.csv, \
         DATASET_history.csv and DATASET_milestones.csv (docs/import.md)"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A record or field is malformed, e.g. `duraspace_issues.csv line 42: column "created": not a
    /// timestamp "x"`.
    #[error("{file} line {line}: {message}")]
    Row {
        /// The file's name.
        file: String,
        /// The 1-based line the record starts on.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The asked-for project is not in the dataset.
    #[error(
        "project \"{project}\" is not in dataset \"{dataset}\"; {}",
        has_words(known)
    )]
    UnknownProject {
        /// The project key asked for.
        project: String,
        /// The dataset.
        dataset: String,
        /// The project keys it has, comma-separated.
        known: String,
    },
    /// `--project all` found no project with enough issues.
    #[error(
        "dataset \"{dataset}\" has no project with {min_issues} issues or more ({}); name one with \
         --project, or lower --min-issues",
        has_words(known)
    )]
    NoProject {
        /// The dataset.
        dataset: String,
        /// The fewest issues a project is imported with.
        min_issues: usize,
        /// The project keys it has with their issue counts, comma-separated.
        known: String,
    },
    /// A project key that cannot name a repository (`jira/KEY`) or a folder.
    #[error(
        "project key \"{project}\" of dataset \"{dataset}\" cannot name a repository or a folder (letters, digits, `-`, `_` and `.`)"
    )]
    ProjectName {
        /// The project key.
        project: String,
        /// The dataset.
        dataset: String,
    },
    /// The state repo could not be written.
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    /// The state repo could not be committed.
    #[error(transparent)]
    Git(#[from] crate::state::git::GitError),
}

/// A CSV syntax error: the 1-based line it was found on and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvError {
    /// The line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// One CSV record: the 1-based line it starts on and its fields.
pub(crate) type CsvRecord = (usize, Vec<String>);

/// Parses RFC 4180 CSV: fields separated by commas, records by `\n` or `\r\n`; a field may be quoted with
/// `"`, and then holds commas, newlines and doubled quotes (`""` for one `"`).
///
/// A quote inside an unquoted field, text after a closing quote, and a quote left open at the end are
/// errors. A final empty line is not a record. Each record comes with the line it starts on.
pub fn parse_csv(text: &str) -> Result<Vec<CsvRecord>, CsvError> {
    let mut records = Vec::new();
    let mut record: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut line = 1usize;
    let mut start_line = 1usize;
    // Field state: at its start, inside an unquoted field, inside quotes, or just after the closing quote.
    #[derive(PartialEq)]
    enum S {
        Start,
        Plain,
        Quoted,
        AfterQuote,
    }
    let mut s = S::Start;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        match s {
            S::Quoted => match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => s = S::AfterQuote,
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            },
            _ => match c {
                ',' => {
                    record.push(std::mem::take(&mut field));
                    s = S::Start;
                }
                '\r' if chars.peek() == Some(&'\n') => {}
                '\n' => {
                    record.push(std::mem::take(&mut field));
                    records.push((start_line, std::mem::take(&mut record)));
                    line += 1;
                    start_line = line;
                    s = S::Start;
                    any = false;
                }
                '"' if s == S::Start => s = S::Quoted,
                '"' => {
                    return Err(CsvError {
                        line,
                        message: "a quote inside an unquoted field (quote the whole field and double the quote)".into(),
                    });
                }
                _ if s == S::AfterQuote => {
                    return Err(CsvError {
                        line,
                        message: format!("text {c:?} after a closing quote"),
                    });
                }
                _ => {
                    field.push(c);
                    s = S::Plain;
                }
            },
        }
    }
    if s == S::Quoted {
        return Err(CsvError {
            line: start_line,
            message: "a quoted field is never closed".into(),
        });
    }
    if any {
        record.push(field);
        records.push((start_line, record));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Vec<Vec<String>> {
        parse_csv(text)
            .unwrap()
            .into_iter()
            .map(|(_, f)| f)
            .collect()
    }

    #[test]
    fn plain_records_and_empty_fields() {
        assert_eq!(
            fields("a,b,c\n1,,3\n"),
            vec![vec!["a", "b", "c"], vec!["1", "", "3"]]
        );
        assert_eq!(fields("a,b\r\n1,2"), vec![vec!["a", "b"], vec!["1", "2"]]);
        assert_eq!(fields("x,\n"), vec![vec!["x", ""]]);
        assert!(fields("").is_empty());
    }

    #[test]
    fn quoted_fields_hold_commas_quotes_and_newlines() {
        let recs = parse_csv("k,t\n1,\"a, \"\"b\"\"\nc\"\n2,\"\"\n").unwrap();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[1], (2, vec!["1".into(), "a, \"b\"\nc".into()]));
        // The record after a quoted newline starts on the right line.
        assert_eq!(recs[2], (4, vec!["2".into(), String::new()]));
    }

    #[test]
    fn malformed_quotes_are_errors_with_their_line() {
        let e = parse_csv("a\nb\"c\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse_csv("a\n\"x\"y\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("after a closing quote"));
        let e = parse_csv("a\n1\n\"open\nstill").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("never closed"));
    }
}
