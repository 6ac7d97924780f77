//! The demo generator: a realistic, deterministic team and its history, at any scale.
