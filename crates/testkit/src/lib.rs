//! Test support for CommiTea, kept out of the shipped binary (jj's `lib/testutils`): the Gitea API
//! emulator the sync, apply and workflow tests run against, and the `commitea-dev` binary that serves
//! it by hand.

pub mod gitea;
