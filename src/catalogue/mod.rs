//! The prompt catalogue: `prompts/*.toml`, one file per category, loaded and validated, from a
//! folder or from the copy compiled into the binary (the `core` suite), and the seeded items of
//! the `generated` suite (`generator/`), the long-context ladder of the `long` suite (`long/`),
//! chosen by suite (`suite.rs`).

mod check;
pub mod embedded;
pub mod generator;
mod load;
pub mod long;
mod spec;
mod suite;
pub mod tools;

pub use check::{category_counts, self_test, self_test_all};
pub use load::{load_catalogue, Catalogue};
pub use spec::{Message, Prompt, PromptRequest, Role, SourceLocation, ToolUse, CATEGORIES};
pub use suite::{Suite, SuiteChoice};
