//! The model layer: a small local model that reports, a big one that decomposes, and a checker that keeps
//! both from computing.
//!
//! Everything here talks to OpenAI-compatible chat endpoints through [`client`]. Routing follows the seed:
//! answers and prose ([`Task::Ask`], [`Task::Prose`]) run on `models.small`; turning a braindump into issues
//! ([`Task::Capture`]) and drafting a directive from the PM's words ([`Task::Negotiate`]) run on
//! `models.big`, and without one they say so, naming the setting, unless `models.small_for_big` opts into
//! the small model. [`agent`] is the tool loop of `commitea ask`; [`check`] holds every number, date,
//! percentage, issue and person in a model's prose against the tool answers it was given; [`capture`] and
//! [`negotiate`] validate what the big model drafts, repair it once, and let the engine compute every
//! consequence; [`words`] is the deterministic text a checked-out answer falls back to.

pub mod agent;
pub(crate) mod capture;
pub mod check;
pub mod client;
pub(crate) mod negotiate;
pub mod words;

use crate::config::Config;

/// What a model is asked to do; it decides which model does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// `commitea ask`: a question answered through the tools.
    Ask,
    /// Prose from a payload: the standup in words.
    Prose,
    /// `capture_work`: a braindump turned into issues.
    Capture,
    /// A directive drafted from the PM's words.
    Negotiate,
}

impl Task {
    /// The task in words, for errors.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ask => "commitea ask",
            Self::Prose => "prose",
            Self::Capture => "capture_work",
            Self::Negotiate => "directive negotiation",
        }
    }

    /// Whether the seed routes it to the big model.
    pub fn wants_big(self) -> bool {
        matches!(self, Self::Capture | Self::Negotiate)
    }
}

/// Why a model could not do its part.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The task needs the big model and none is configured.
    #[error(
        "no model configured for {task}: it runs on the big model; set `models.big` in commitea.yaml (url, model, api_key_env; see docs/models.md), or `models.small_for_big: true` to use the small one"
    )]
    NoModel {
        /// The task.
        task: &'static str,
    },
    /// A setting is unusable.
    #[error("{setting}: {reason}")]
    Setting {
        /// The setting, `models.big.url`.
        setting: String,
        /// What is wrong.
        reason: String,
    },
    /// The key's environment variable is not set, or empty.
    #[error(
        "the environment variable {var} ({setting}) is {}: export the model server's API key there (CommiTea never reads a key from a file)",
        if *empty { "set but empty" } else { "not set" }
    )]
    MissingKey {
        /// The variable's name.
        var: String,
        /// The setting that names it.
        setting: String,
        /// Whether it is set, to nothing (a CI secret that is not defined).
        empty: bool,
    },
    /// The server did not answer in time.
    #[error("the model of {setting} did not answer within {seconds} s ({setting}.timeout_seconds)")]
    Timeout {
        /// `models.small` or `models.big`.
        setting: &'static str,
        /// The timeout.
        seconds: u64,
    },
    /// The server could not be reached, or the connection broke.
    #[error("cannot reach the model of {setting} ({setting}.url): {reason}")]
    Connect {
        /// `models.small` or `models.big`.
        setting: &'static str,
        /// What happened.
        reason: String,
    },
    /// The server answered an error status.
    #[error(
        "the model server of {setting} answered {status}: {message}{}{}",
        retry_after.map_or_else(String::new, |s| format!(
            "; it asks to be left alone for {s} s (Retry-After), longer than CommiTea waits: try again then"
        )),
        // The setting to fix, where the status says which (audit 188: a 401 named none).
        match status {
            401 | 403 => format!(
                "; check the key: the variable {setting}.api_key_env names, and that the server takes it"
            ),
            404 => format!("; check {setting}.url and {setting}.model"),
            _ => String::new(),
        }
    )]
    Status {
        /// `models.small` or `models.big`.
        setting: &'static str,
        /// The HTTP status.
        status: u16,
        /// An excerpt of what it said.
        message: String,
        /// How long it asked to be left alone (`Retry-After`, in seconds), if it said.
        retry_after: Option<u64>,
    },
    /// The answer did not end within the byte limit.
    #[error(
        "the answer of the model of {setting} did not end within {limit} bytes and was refused"
    )]
    TooLong {
        /// `models.small` or `models.big`.
        setting: &'static str,
        /// The limit.
        limit: usize,
    },
    /// The reply was cut at the token limit.
    #[error(
        "the reply of the model of {setting} hit its token limit ({setting}.max_tokens = {max_tokens}) and was cut; nothing of it was used"
    )]
    Truncated {
        /// `models.small` or `models.big`.
        setting: &'static str,
        /// The limit.
        max_tokens: u32,
    },
    /// The answer is not a chat completion.
    #[error(
        "the model server of {setting} sent an answer CommiTea cannot read: {reason}; is {setting}.url the \
         server's OpenAI-compatible API (…/v1), not a web page or a proxy's?"
    )]
    BadReply {
        /// `models.small` or `models.big`.
        setting: &'static str,
        /// What is missing.
        reason: String,
    },
    /// The conversation used up its turns or tokens.
    #[error("{task} stopped: it used up {what}")]
    Budget {
        /// The task.
        task: &'static str,
        /// `its 8 model calls (models.max_turns)`.
        what: String,
    },
    /// What the model drafted is still invalid after the one repair round.
    #[error("the model's {task} is not valid, even after one repair round: {reason}")]
    Invalid {
        /// The task.
        task: &'static str,
        /// The last validation error.
        reason: String,
    },
}

impl ModelError {
    /// Whether one more try may help: a server error or a dropped connection (not a timeout, which would
    /// double the wait).
    pub(crate) fn retryable(&self) -> bool {
        match self {
            Self::Status { status, .. } => *status >= 500 || *status == 429,
            Self::Connect { .. } => true,
            _ => false,
        }
    }

    /// Whether the caller can fix it by configuring a model (an input error on the command line).
    pub fn is_setup(&self) -> bool {
        matches!(
            self,
            Self::NoModel { .. } | Self::Setting { .. } | Self::MissingKey { .. }
        )
    }
}

/// What the model calls of one conversation have spent, shared with the conversations it starts through
/// a tool (the big model's `capture_work` inside an `ask`): one ask is bounded by `models.max_turns` and
/// `models.max_total_tokens` whichever model answers (audit 113: a capture inside an ask made 56 calls to
/// the big model, 285,600 tokens, against 8 and 32,000). The clones of a tool context share it; the
/// outermost conversation open starts it at zero.
#[derive(Clone, Default)]
pub struct Spent(std::sync::Arc<std::sync::Mutex<SpentSoFar>>);

#[derive(Default)]
struct SpentSoFar {
    /// Conversations open now (the outer one and those it started).
    open: u32,
    turns: u32,
    tokens: u64,
}

impl std::fmt::Debug for Spent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spent")
    }
}

impl Spent {
    fn with<T>(&self, f: impl FnOnce(&mut SpentSoFar) -> T) -> T {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }

    /// A conversation opens: the first of a nest starts from nothing.
    pub(crate) fn open(&self) {
        self.with(|s| {
            if s.open == 0 {
                s.turns = 0;
                s.tokens = 0;
            }
            s.open += 1;
        });
    }

    /// A conversation closes.
    pub(crate) fn close(&self) {
        self.with(|s| s.open = s.open.saturating_sub(1));
    }

    /// Model calls and tokens spent so far in the nest.
    pub(crate) fn so_far(&self) -> (u32, u64) {
        self.with(|s| (s.turns, s.tokens))
    }

    /// One model call more, of `tokens`.
    pub(crate) fn add(&self, turns: u32, tokens: u64) {
        self.with(|s| {
            s.turns = s.turns.saturating_add(turns);
            s.tokens = s.tokens.saturating_add(tokens);
        });
    }
}

/// The client for `task`, as `config.models` routes it; `env` is where an API key's variable is looked up
/// first (then the process environment).
pub fn client_for(
    config: &Config,
    task: Task,
    env: &[(String, String)],
) -> Result<client::Client, ModelError> {
    let models = &config.models;
    let (setting, endpoint) = match (task.wants_big(), &models.big) {
        (false, _) => ("models.small", &models.small),
        (true, Some(big)) => ("models.big", big),
        (true, None) if models.small_for_big => ("models.small", &models.small),
        (true, None) => return Err(ModelError::NoModel { task: task.name() }),
    };
    client::Client::new(
        client::Endpoint::new(setting, endpoint, env)?.masking(secrets_held(config, env)),
    )
}

/// Every secret this process holds that a model's answer could echo: the Gitea token (each variable it is
/// read from) and both models' keys. Set ones only; `env` first, then the process environment.
fn secrets_held(config: &Config, env: &[(String, String)]) -> Vec<crate::secret::Secret> {
    let models = &config.models;
    let keys = std::iter::once(&models.small)
        .chain(models.big.as_ref())
        .filter_map(|m| m.api_key_env.as_deref().map(str::trim));
    crate::gitea::client::TOKEN_ENV_VARS
        .iter()
        .copied()
        .chain(keys)
        .filter_map(|var| {
            client::variable(var, env)
                .as_deref()
                .and_then(crate::secret::Secret::new)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_conversation_spends_from_the_outer_ones_bounds_and_the_next_starts_afresh() {
        let spent = Spent::default();
        spent.open();
        spent.add(1, 100);
        // A capture inside the ask: the same count goes on.
        spent.open();
        assert_eq!(spent.so_far(), (1, 100));
        spent.add(2, 50);
        spent.close();
        assert_eq!(spent.so_far(), (3, 150));
        spent.close();
        // The next ask starts from nothing; a context of its own shares nothing.
        spent.open();
        assert_eq!(spent.so_far(), (0, 0));
        assert_eq!(Spent::default().so_far(), (0, 0));
    }

    #[test]
    fn routing_follows_the_seed_and_names_the_setting() {
        let mut config = Config::default();
        assert_eq!(
            client_for(&config, Task::Ask, &[])
                .unwrap()
                .endpoint()
                .setting,
            "models.small"
        );
        assert_eq!(
            client_for(&config, Task::Ask, &[])
                .unwrap()
                .endpoint()
                .model,
            "qwen3:4b"
        );
        let e = client_for(&config, Task::Capture, &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("models.big") && e.contains("capture_work"),
            "{e}"
        );
        config.models.small_for_big = true;
        assert_eq!(
            client_for(&config, Task::Negotiate, &[])
                .unwrap()
                .endpoint()
                .setting,
            "models.small"
        );
        config.models.big = Some(crate::config::ModelEndpoint {
            model: "big-one".into(),
            ..Default::default()
        });
        let c = client_for(&config, Task::Capture, &[]).unwrap();
        assert_eq!(
            (c.endpoint().setting, c.endpoint().model.as_str()),
            ("models.big", "big-one")
        );
        assert_eq!(
            client_for(&config, Task::Prose, &[])
                .unwrap()
                .endpoint()
                .setting,
            "models.small"
        );
    }
}
