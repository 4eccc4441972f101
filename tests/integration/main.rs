//! The integration tests, built as one test binary: one module per area, sharing `common`.
//! (One binary links once and lets unused helpers show up as dead code.)
//!
//! Run one area with a filter, e.g. `cargo test --test integration watch::`. The timing-sensitive
//! tests (bench, soak) are a binary of their own: tests/timing/main.rs.

mod common;

mod baseline;
mod catalogue;
mod catalogue_compare;
mod catalogue_errors;
mod code_generation;
mod compare;
mod contract;
mod determinism;
mod difficulty;
mod distribution;
mod failures;
mod generated;
mod history;
mod identity;
mod js_sandbox;
mod large_replies;
mod limits;
mod load;
mod logprobs;
mod long_context;
mod long_tokens;
mod offline;
mod project;
mod real_endpoints;
mod real_llama_server;
mod real_prompt_logprobs;
mod reasoning;
mod regrade;
mod resume;
mod robustness;
mod run_folder_values;
mod run_folder_writes;
mod secrets;
mod selftest;
mod smoke;
mod standalone;
mod teacher_forcing;
mod terminal;
mod tool_calls;
mod verdicts;
mod watch;
mod watch_fleet;
