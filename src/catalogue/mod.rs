//! The prompt catalogue: `prompts/*.toml`, one file per category, loaded and validated, from a
//! folder or from the copy compiled into the binary.

mod check;
pub mod embedded;
mod load;
mod spec;

pub use check::{category_counts, self_test, self_test_all, CategoryCount};
pub use load::{load_catalogue, Catalogue, CatalogueError};
pub use spec::{Message, Prompt, PromptRequest, Role, SourceLocation, CATEGORIES};
