//! Test support for CommiTea, kept out of the shipped binary (jj's `lib/testutils`): the Gitea API
//! emulator the sync, apply and workflow tests run against, the `commitea-dev` binary that serves
//! it by hand, the backtest through the user's path (emulator → sync → run), and the scripted OpenAI-compatible server the model layer's tests talk to.

pub mod backtest;
pub mod gitea;
pub mod model;
