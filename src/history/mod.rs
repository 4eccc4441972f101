//! The watch history: every check of every watched endpoint, kept in one SQLite database.

pub mod check;

pub use check::Check;
