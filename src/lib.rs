//! CommiTea: a git-native project manager and forecaster for teams on Gitea and Forgejo.
//!
//! The library is the whole program; `main.rs` only parses the command line. Data flows one way through
//! the pipeline stages, each a module with typed hand-offs:
//! [`state`] (read the snapshot) → [`ledger`] (replay the PM's directives into a [`plan::Plan`]) →
//! [`forecast`] (calibrate, schedule, simulate: the pure [`engine`]) → [`views`] → [`site`], with
//! [`state`] committing the results to git. [`pipeline`] runs the stages in order.

pub mod apply;
pub mod backtest;
pub mod cli;
pub mod config;
pub mod consequence;
pub mod demo;
pub mod domain;
pub mod engine;
pub mod forecast;
pub mod gitea;
pub mod import;
pub mod ledger;
pub(crate) mod limits;
pub mod model;
pub mod ops;
pub mod pipeline;
pub mod plan;
pub(crate) mod prose;
pub(crate) mod secret;
pub(crate) mod site;
pub mod state;
pub mod terminal;
pub mod tools;
pub mod views;
pub mod yamlfile;
