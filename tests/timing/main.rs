//! The timing-sensitive integration tests, built as a binary of their own: `bench` and `soak`
//! measure rates, latencies and goodput against fake servers with known delays, so they must not
//! share the CPU with the CPU-heavy tests of `tests/integration/` (which `cargo test` runs 8 at a
//! time: `.cargo/config.toml`). Cargo runs test binaries one after another, and each test here
//! holds `common::serial()`, so these run alone, one at a time.
//!
//! Run one area with a filter, e.g. `cargo test --test timing soak::`.

// The integration tests' helpers, shared; those only they use are dead code here.
#[allow(dead_code)]
#[path = "../integration/common.rs"]
mod common;

mod bench;
mod soak;
