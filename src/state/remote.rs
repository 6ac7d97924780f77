//! The state repo's remote, through the `git` CLI: fetch and push.
//!
//! The token never appears in an argument, a remote URL, `.git/config` or a log: it reaches git only
//! through the environment of the one command that needs it (`GIT_CONFIG_COUNT` with an
//! `http.extraHeader` of `Authorization: token …`), and anything git prints is scrubbed of it before it
//! is shown.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::secret::{Secret, scrub};

/// Why a git command on the remote failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// `git` could not be started.
    #[error("cannot run git (is it installed and on PATH?)")]
    Spawn(#[source] std::io::Error),
    /// The checkout has no remote of that name.
    #[error(
        "the checkout has no git remote \"{name}\": add it with `git remote add {name} URL` (the state repo's clone URL), \
         or name another remote in approvals.remote in commitea.yaml"
    )]
    NoRemote {
        /// The remote's name.
        name: String,
    },
    /// The server refused a push (a protected branch): what it said, and what to do.
    #[error("the server refused `git {what}`: {reason}. {advice}")]
    Refused {
        /// What was being done, e.g. `push origin commitea/C-0007`.
        what: String,
        /// What the server said (its hook's words), the token removed.
        reason: String,
        /// What the user can do about it.
        advice: String,
    },
    /// git said no.
    #[error("git {what} failed: {stderr}")]
    Failed {
        /// What was being done, e.g. `push origin commitea/C-0007`.
        what: String,
        /// What git printed, the token removed.
        stderr: String,
    },
}

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// The remote took it.
    Done,
    /// The remote moved on meanwhile (someone merged): not a fast-forward.
    Rejected,
    /// The server's hook refused it (Gitea's protected branches: "Not allowed to push to protected branch
    /// main"); trying again will not help.
    Refused {
        /// What the server said, the token removed.
        reason: String,
    },
}

/// Whether a push failed because the branch moved under it: `--porcelain` marks a rejected ref with `!`,
/// and a rejection for not being a fast-forward is a race. So is a ref the server could not update because
/// another push moved it between its check and its write (`failed to update ref`, `cannot lock ref …: is
/// at X but expected Y`): two jobs at once, which an audit saw called a protected branch.
fn lost_a_race(stdout: &str, stderr: &str) -> bool {
    let rejected = |l: &&str| l.starts_with('!');
    stdout.lines().filter(rejected).any(|l| {
        l.contains("non-fast-forward")
            || l.contains("fetch first")
            || (l.contains("[remote rejected]") && l.contains("failed to update ref"))
    }) || (stdout.lines().any(|l| rejected(&l))
        && stderr
            .lines()
            .any(|l| l.contains("cannot lock ref") && l.contains("but expected")))
}

/// Why the server refused a push, from `git push --porcelain`'s output: the `remote:` lines its hook printed
/// (Gitea prints `Gitea: …`), else git's own reason; `None` when no ref was refused.
fn refusal(stdout: &str, stderr: &str) -> Option<String> {
    let refused = stdout
        .lines()
        .find(|l| l.starts_with('!') && l.contains("[remote rejected]"))?;
    let said: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("remote:"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    Some(if said.is_empty() {
        refused
            .rsplit('\t')
            .next()
            .unwrap_or(refused)
            .trim()
            .to_owned()
    } else {
        said.join(" ")
    })
}

/// The state repo's remote, with the token to reach it.
#[derive(Clone)]
pub struct Remote {
    dir: PathBuf,
    name: String,
    token: Option<Secret>,
    /// The servers the token is sent to (their roots): only those, whatever the remote's URL.
    servers: Vec<String>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("dir", &self.dir)
            .field("name", &self.name)
            .field("token", &self.token)
            .field("servers", &self.servers)
            .finish()
    }
}

impl Remote {
    /// The remote `name` of the repository at `dir`, reached with `token` where its URL is on one of
    /// `servers` (the Gitea server, and the Actions job's): a remote elsewhere (a mirror, another forge)
    /// never gets the token (an audit's header-logging remote received it).
    pub fn new(dir: &Path, name: &str, token: Option<String>, servers: &[String]) -> Self {
        let mut roots: Vec<String> = servers
            .iter()
            .map(|s| crate::gitea::client::server_root(s).to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        roots.dedup();
        Self {
            dir: dir.to_path_buf(),
            name: name.to_owned(),
            token: token.as_deref().and_then(Secret::new),
            servers: roots,
        }
    }

    /// The remote's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A `git` command in the repository, the token (if any) in its environment only. Each command that
    /// names the remote puts `--end-of-options` before it: a name the config did not check is never an
    /// option to git.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("git");
        c.arg("-C").arg(&self.dir).args(args);
        c.env("GIT_TERMINAL_PROMPT", "0");
        if let Some(t) = &self.token {
            // `http.<url>.extraHeader`: git sends it only to URLs under that one (scheme, host, port and
            // path prefix).
            c.env("GIT_CONFIG_COUNT", self.servers.len().to_string());
            for (k, server) in self.servers.iter().enumerate() {
                c.env(
                    format!("GIT_CONFIG_KEY_{k}"),
                    format!("http.{server}/.extraHeader"),
                )
                .env(
                    format!("GIT_CONFIG_VALUE_{k}"),
                    format!("Authorization: token {}", t.expose()),
                );
            }
        }
        c
    }

    /// Runs `git args`; its stdout on success.
    fn run(&self, what: &str, args: &[&str]) -> Result<String, RemoteError> {
        let out = self.command(args).output().map_err(RemoteError::Spawn)?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(self.failure(what, &String::from_utf8_lossy(&out.stderr)))
        }
    }

    /// Why a command on the remote failed: the remote is missing (git's own words for that are a
    /// puzzle), or what git said, the token removed.
    fn failure(&self, what: &str, stderr: &str) -> RemoteError {
        // Asked once: whether git knows the remote, and where it points.
        if let Some(url) = self.url() {
            let mut said = self.scrub(stderr);
            // A remote on another server never got the token: say so beside git's own words.
            if let Some(url) = Some(url).filter(|u| {
                self.token.is_some()
                    && (u.starts_with("http://") || u.starts_with("https://"))
                    // Host names are case-blind (git's own match too); a hint need be no finer.
                    && !self.servers.iter().any(|s| {
                        u.to_ascii_lowercase()
                            .starts_with(&format!("{}/", s.to_ascii_lowercase()))
                    })
            }) {
                said.push_str(&format!(
                    " ({} is {url}, not on the Gitea server {}: the token is sent only there; give {} \
                     credentials of its own, or point it at the server)",
                    self.name,
                    self.servers.join(" or "),
                    self.name
                ));
            }
            RemoteError::Failed {
                what: what.to_owned(),
                stderr: said,
            }
        } else {
            RemoteError::NoRemote {
                name: self.name.clone(),
            }
        }
    }

    /// The remote's URL without any user or password in it, when git knows the remote.
    fn url(&self) -> Option<String> {
        let out = self
            .command(&["remote", "get-url", "--end-of-options", &self.name])
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let url = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Some(match reqwest::Url::parse(&url) {
            Ok(mut parsed) => {
                let _ = parsed.set_username("");
                let _ = parsed.set_password(None);
                parsed.to_string()
            }
            Err(_) => url,
        })
    }

    /// `text` with the token replaced by `***`.
    fn scrub(&self, text: &str) -> String {
        scrub(text.trim(), self.token.as_ref())
    }

    /// Fetches `branch` from the remote into `refs/remotes/NAME/BRANCH`.
    pub fn fetch(&self, branch: &str) -> Result<(), RemoteError> {
        let refspec = format!("+refs/heads/{branch}:refs/remotes/{}/{branch}", self.name);
        self.run(
            &format!("fetch {} {branch}", self.name),
            &["fetch", "--quiet", "--end-of-options", &self.name, &refspec],
        )
        .map(|_| ())
    }

    /// Pushes `commit` to the remote's `branch`; `force` replaces what is there. A non-fast-forward is
    /// [`Pushed::Rejected`], not an error.
    pub fn push(&self, commit: &str, branch: &str, force: bool) -> Result<Pushed, RemoteError> {
        let refspec = format!(
            "{}{commit}:refs/heads/{branch}",
            if force { "+" } else { "" }
        );
        self.push_refspec(&format!("push {} {branch}", self.name), &refspec)
    }

    /// `git push --porcelain` of one refspec, told apart as [`Pushed`]; `what` names it in an error.
    fn push_refspec(&self, what: &str, refspec: &str) -> Result<Pushed, RemoteError> {
        let out = self
            .command(&[
                "push",
                "--porcelain",
                "--end-of-options",
                &self.name,
                refspec,
            ])
            .output()
            .map_err(RemoteError::Spawn)?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if out.status.success() {
            return Ok(Pushed::Done);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        if lost_a_race(&stdout, &stderr) {
            return Ok(Pushed::Rejected);
        }
        if let Some(reason) = refusal(&stdout, &stderr) {
            return Ok(Pushed::Refused {
                reason: self.scrub(&reason),
            });
        }
        Err(self.failure(what, &format!("{stdout}{stderr}")))
    }

    /// Replaces the remote's `branch` with `commit` (a proposal's own branch); a refusal is an error that
    /// ends with `advice`.
    pub fn force_push(&self, commit: &str, branch: &str, advice: &str) -> Result<(), RemoteError> {
        match self.push(commit, branch, true)? {
            Pushed::Done => Ok(()),
            // A forced push is never out of date; anything else is the server's no.
            Pushed::Rejected => Err(RemoteError::Failed {
                what: format!("push --force {} {branch}", self.name),
                stderr: "rejected".into(),
            }),
            Pushed::Refused { reason } => Err(RemoteError::Refused {
                what: format!("push --force {} {branch}", self.name),
                reason,
                advice: advice.to_owned(),
            }),
        }
    }

    /// Deletes the remote's `branch` (a proposal that was closed without merging).
    pub fn delete_branch(&self, branch: &str) -> Result<(), RemoteError> {
        let what = format!("push {} --delete {branch}", self.name);
        match self.push_refspec(&what, &format!(":refs/heads/{branch}"))? {
            Pushed::Done => Ok(()),
            Pushed::Rejected => Err(RemoteError::Failed {
                what,
                stderr: "rejected".into(),
            }),
            Pushed::Refused { reason } => Err(RemoteError::Refused {
                what,
                reason,
                advice: "the branch stays; delete it on the server if it is not wanted".into(),
            }),
        }
    }

    /// The remote's branches under `prefix` (e.g. `commitea/`), asked of the remote now.
    pub fn branches(&self, prefix: &str) -> Result<Vec<String>, RemoteError> {
        let pattern = format!("refs/heads/{prefix}*");
        let out = self.run(
            &format!("ls-remote {}", self.name),
            &[
                "ls-remote",
                "--heads",
                "--end-of-options",
                &self.name,
                &pattern,
            ],
        )?;
        Ok(out
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .filter_map(|r| r.strip_prefix("refs/heads/"))
            .map(str::to_owned)
            .collect())
    }

    /// The commit the remote's `branch` points at, as last fetched.
    pub fn tracking(&self, branch: &str) -> Option<String> {
        self.run(
            "rev-parse",
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/remotes/{}/{branch}^{{commit}}", self.name),
            ],
        )
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
    }

    /// Whether the repository has a remote of this name.
    pub fn exists(&self) -> bool {
        self.run("remote", &["remote"])
            .is_ok_and(|out| out.lines().any(|l| l.trim() == self.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ref_moved_under_the_push_is_a_race_and_a_hook_refusal_is_not() {
        let line =
            |why: &str| format!("To origin\n!\trefs/heads/main:refs/heads/main\t{why}\nDone\n");
        for (stdout, stderr) in [
            (line("[rejected] (non-fast-forward)"), String::new()),
            (line("[rejected] (fetch first)"), String::new()),
            (
                line("[remote rejected] (failed to update ref)"),
                "remote: error: cannot lock ref 'refs/heads/main': is at 117e but expected 1023\n"
                    .to_owned(),
            ),
            (
                line("[remote rejected] (cannot lock ref 'refs/heads/main')"),
                "error: cannot lock ref 'refs/heads/main': is at 117e but expected 1023\n"
                    .to_owned(),
            ),
        ] {
            assert!(lost_a_race(&stdout, &stderr), "{stdout}{stderr}");
        }
        // A lock left on the server is no race: the branch did not move, and running again will not help.
        assert!(!lost_a_race(
            &line("[remote rejected] (failed to lock)"),
            "remote: error: cannot lock ref 'refs/heads/main': Unable to create 'main.lock': File exists\n"
        ));
        let hook = line("[remote rejected] (pre-receive hook declined)");
        let said = "remote: Gitea: Not allowed to push to protected branch main\n";
        assert!(!lost_a_race(&hook, said));
        assert_eq!(
            refusal(&hook, said).as_deref(),
            Some("Gitea: Not allowed to push to protected branch main")
        );
        assert!(!lost_a_race(
            "To origin\n=\trefs/heads/main\t[up to date]\n",
            ""
        ));
    }

    #[test]
    fn the_token_is_in_the_environment_only() {
        let r = Remote::new(
            Path::new("/tmp"),
            "origin",
            Some("s3cret-tok".into()),
            &["https://gitea.example.com/api/v1/".to_owned()],
        );
        let c = r.command(&["push", "origin", "main"]);
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(!args.iter().any(|a| a.contains("s3cret-tok")), "{args:?}");
        let env: Vec<(String, String)> = c
            .get_envs()
            .filter_map(|(k, v)| {
                Some((
                    k.to_string_lossy().into_owned(),
                    v?.to_string_lossy().into_owned(),
                ))
            })
            .collect();
        assert!(
            env.contains(&(
                "GIT_CONFIG_VALUE_0".into(),
                "Authorization: token s3cret-tok".into()
            )),
            "{env:?}"
        );
        // Only for the server's URLs, not every remote's.
        assert!(
            env.contains(&(
                "GIT_CONFIG_KEY_0".into(),
                "http.https://gitea.example.com/.extraHeader".into()
            )),
            "{env:?}"
        );
        assert_eq!(
            r.scrub("fatal: token s3cret-tok refused"),
            "fatal: token *** refused"
        );
        assert!(!format!("{r:?}").contains("s3cret-tok"));
    }
}
