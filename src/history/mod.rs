//! The watch history: every check of every watched endpoint, kept in one SQLite database.

pub mod check;
pub mod page;
pub mod store;

pub use check::{Check, CheckStatus};
pub use store::{default_db, History};
