//! Integration tests: one binary, one module per area, fixtures under `tests/fixtures/<scenario>/`.

mod demo;
