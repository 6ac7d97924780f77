//! Talking to Gitea: the REST client, the wire types it decodes, the sync into a snapshot, and the
//! loopback API emulator the tests run against.

pub mod client;
pub mod emulator;
pub mod sync;
pub mod wire;
