//! Talking to Gitea: for now the loopback API emulator that the sync and apply tests run against.

pub mod client;
pub mod emulator;
pub mod sync;
