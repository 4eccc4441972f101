//! `coherence watch`: a deployment checked over time against a pinned baseline run, with a
//! small probe chosen for sensitivity, a substituted share per check, and every check kept in
//! the history (`crate::history`).

pub mod alert;
pub mod probe;
pub mod share;
