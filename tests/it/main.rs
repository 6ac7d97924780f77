//! Integration tests: one binary, one module per area, fixtures under `tests/fixtures/<scenario>/`.

// Test helpers outside `#[test]` functions panic on purpose: a failed set-up is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approvals;
mod backtest;
mod browser;
mod cli;
mod consequence;
mod demo;
mod docs;
mod emulator;
mod engine;
mod import;
mod ledger;
mod mcp;
mod model;
mod online;
mod pipeline;
#[path = "../support/stability.rs"]
mod plans;
mod props;
mod record;
mod replay;
mod robust;
mod scale;
mod site;
mod stability;
mod support;
mod sync;
mod tj3;
mod toolcli;
mod tools;
