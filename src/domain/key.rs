//! Repository names (`owner/repo`) and issue keys (`owner/repo#N`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a repository name or issue key could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseKeyError {
    /// The text is not `owner/repo`.
    #[error(
        "repository \"{0}\" is not of the form owner/repo, each part ASCII letters, digits, '-', '_' and '.' \
         as Gitea allows"
    )]
    Repo(String),
    /// A name Gitea reserves (`*.git`, `*.wiki`, `*.rss`, `*.atom`: `reservedRepoPatterns`), which no
    /// repository has: a clone URL's `.git` pasted, most likely.
    #[error(
        "repository \"{0}\" ends in \"{1}\", which Gitea never gives a repository (its clone or feed \
         address does): write {2}"
    )]
    Reserved(String, &'static str, String),
    /// The text is not `owner/repo#N`.
    #[error("issue key \"{0}\" is not of the form owner/repo#N")]
    Issue(String),
    /// The number has more digits than any issue's (audit 136: said as a key of the wrong form).
    #[error("issue key \"{0}\": {1} is too large for an issue number")]
    NumberTooLarge(String, String),
}

/// A Gitea repository, `owner/repo`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoName {
    /// The owning user or organisation.
    pub owner: String,
    /// The repository's name.
    pub name: String,
}

impl RepoName {
    /// Builds a repository name from its two parts.
    pub fn new(owner: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            owner: owner.into(),
            name: name.into(),
        }
    }

    /// The key of issue `number` in this repository.
    pub fn issue(&self, number: u64) -> IssueKey {
        IssueKey {
            repo: self.clone(),
            number,
        }
    }

    /// Whether `said` names this repository, without case: `owner/name`, or the name alone as people
    /// say it (`web#30`, where one owner's repositories are configured).
    pub fn is_named(&self, said: &str) -> bool {
        match said.split_once('/') {
            Some((o, n)) => {
                o.eq_ignore_ascii_case(&self.owner) && n.eq_ignore_ascii_case(&self.name)
            }
            None => said.eq_ignore_ascii_case(&self.name),
        }
    }

    /// This repository as `repos` spell it, where one of them is it but for case (Gitea's names ignore
    /// case: an agent's `ACME/API#12` is `acme/api#12`); itself otherwise.
    pub fn as_configured(self, repos: &[RepoName]) -> Self {
        repos
            .iter()
            .find(|r| {
                r.owner.eq_ignore_ascii_case(&self.owner) && r.name.eq_ignore_ascii_case(&self.name)
            })
            .cloned()
            .unwrap_or(self)
    }

    /// Whether `said` could name a repository: `owner/name` or a name alone, each part of the
    /// characters Gitea allows.
    pub fn could_be(said: &str) -> bool {
        match said.split_once('/') {
            Some((o, n)) => valid_part(o) && valid_part(n),
            None => valid_part(said),
        }
    }
}

fn valid_part(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl FromStr for RepoName {
    type Err = ParseKeyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('/') {
            Some((o, n)) if valid_part(o) && valid_part(n) => {
                // Gitea's `reservedRepoPatterns` (audit 189: `--repo acme/api.git` read a repository in
                // full, then failed on one that cannot exist).
                let lower = n.to_ascii_lowercase();
                if let Some(suffix) = [".git", ".wiki", ".rss", ".atom"]
                    .into_iter()
                    .find(|x| lower.ends_with(x) && lower.len() > x.len())
                {
                    return Err(ParseKeyError::Reserved(
                        s.to_owned(),
                        suffix,
                        format!("{o}/{}", &n[..n.len() - suffix.len()]),
                    ));
                }
                Ok(Self::new(o, n))
            }
            _ => Err(ParseKeyError::Repo(s.to_owned())),
        }
    }
}

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// One issue, `owner/repo#N`: issue numbers are only unique within a repository.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IssueKey {
    /// The repository the issue lives in.
    pub repo: RepoName,
    /// The issue's number (shared with pull requests in Gitea).
    pub number: u64,
}

impl FromStr for IssueKey {
    type Err = ParseKeyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseKeyError::Issue(s.to_owned());
        let (repo, n) = s.split_once('#').ok_or_else(err)?;
        let repo = repo.parse::<RepoName>().map_err(|e| match e {
            // The name to write, with its number (audit 197: "not of the form owner/repo#N").
            ParseKeyError::Reserved(_, suffix, name) => {
                ParseKeyError::Reserved(repo.to_owned(), suffix, format!("{name}#{n}"))
            }
            _ => err(),
        })?;
        let number = n.parse::<u64>().map_err(|_| {
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                ParseKeyError::NumberTooLarge(s.to_owned(), n.to_owned())
            } else {
                err()
            }
        })?;
        Ok(Self { repo, number })
    }
}

impl fmt::Display for IssueKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.repo, self.number)
    }
}

macro_rules! string_serde {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
string_serde!(RepoName);
string_serde!(IssueKey);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_reject_junk() {
        let k: IssueKey = "acme/api#42".parse().unwrap();
        assert_eq!(k.repo, RepoName::new("acme", "api"));
        assert_eq!(k.number, 42);
        assert_eq!(k.to_string(), "acme/api#42");
        for bad in [
            "acme#1",
            "acme/api",
            "acme/api#x",
            "/api#1",
            "a/b/c#1",
            "acme/..#1",
        ] {
            assert!(bad.parse::<IssueKey>().is_err(), "{bad} should not parse");
        }
        // A name Gitea reserves: what to write instead (audit 189: a clone URL's `.git`).
        let e = "acme/api.git".parse::<RepoName>().unwrap_err().to_string();
        assert!(
            e.contains("ends in \".git\"") && e.ends_with("write acme/api"),
            "{e}"
        );
        assert!("acme/Docs.Wiki".parse::<RepoName>().is_err());
        let e = "acme/api.git#64"
            .parse::<IssueKey>()
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("write acme/api#64"), "{e}");
        assert!(
            "acme/git".parse::<RepoName>().is_ok() && "acme/api.gitea".parse::<RepoName>().is_ok()
        );
    }

    #[test]
    fn a_number_too_large_is_said_as_such() {
        let e = "acme/api#99999999999999999999999"
            .parse::<IssueKey>()
            .unwrap_err();
        assert!(
            e.to_string()
                .ends_with("99999999999999999999999 is too large for an issue number"),
            "{e}"
        );
        assert!(matches!(
            "acme/api#12a".parse::<IssueKey>(),
            Err(ParseKeyError::Issue(_))
        ));
    }

    #[test]
    fn keys_order_by_repo_then_number() {
        let mut v: Vec<IssueKey> = ["b/x#1", "a/y#10", "a/y#9"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        v.sort();
        let s: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(s, ["a/y#9", "a/y#10", "b/x#1"]);
    }
}

/// An issue as a caller names it: a number (enough when one repository is configured) or `owner/repo#N`
/// (also `#N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
#[schemars(
    description = "An issue: its number when one repository is configured, or \"owner/repo#N\" (always accepted; needed when several repositories are configured)"
)]
pub enum IssueRef {
    /// `12`.
    Number(#[schemars(range(min = 1))] u64),
    /// `owner/repo#12` or `#12`.
    Key(#[schemars(regex(pattern = r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#|#)?[0-9]+$"))] String),
}

impl IssueRef {
    /// The issue it names in full (`owner/repo#N`); `None` for a bare number or a bad key, which only the
    /// configured repositories can resolve ([`Self::resolve`]).
    pub fn key(&self) -> Option<IssueKey> {
        match self {
            Self::Key(k) => k.parse().ok(),
            Self::Number(_) => None,
        }
    }

    /// Resolves the reference against the configured repositories: a bare number needs exactly one.
    pub(crate) fn resolve(&self, repos: &[RepoName]) -> Result<IssueKey, String> {
        let text = match self {
            Self::Number(n) => n.to_string(),
            Self::Key(s) => s.trim().to_owned(),
        };
        // Digits too many for any issue: said as such, not as a key of the wrong form (audit 91).
        let number = text.rsplit('#').next().unwrap_or(&text);
        if !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
            && number.parse::<u64>().is_err()
        {
            return Err(format!(
                "\"{text}\": {number} is too large for an issue number"
            ));
        }
        if text.contains('/') {
            return text
                .parse::<IssueKey>()
                .map(|k| IssueKey {
                    repo: k.repo.as_configured(repos),
                    number: k.number,
                })
                .map_err(|e| format!("\"{text}\" is not an issue key: {e}"));
        }
        let n: u64 = text
            .trim_start_matches('#')
            .parse()
            .map_err(|_| format!("\"{text}\" is not an issue number or owner/repo#N"))?;
        match repos {
            [one] => Ok(IssueKey {
                repo: one.clone(),
                number: n,
            }),
            [] => Err(format!(
                "issue {n}: no repository is configured; name it as owner/repo#{n}"
            )),
            many => Err(format!(
                "issue {n} is ambiguous: {} repositories are configured; name it as owner/repo#{n} (one of {})",
                many.len(),
                many.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl fmt::Display for IssueRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::Key(s) => f.write_str(s),
        }
    }
}
