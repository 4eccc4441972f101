//! The prompt catalogue: `prompts/*.toml`, one file per category, loaded and validated.

mod load;
mod spec;

pub use load::{load_catalogue, Catalogue, CatalogueError};
pub use spec::{Message, Prompt, PromptRequest, Role, SourceLocation, CATEGORIES};
