//! Talking to Gitea: the REST client, the wire types it decodes, and the sync into a snapshot. (The API
//! emulator the tests run against lives in `crates/testkit`, outside the shipped binary.)

pub mod client;
pub mod sync;
pub mod wire;
