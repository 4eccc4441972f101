//! `coherence watch`: a deployment checked over time against a pinned baseline run, with a
//! small probe chosen for sensitivity, a substituted share per check, and every check kept in
//! the history (`crate::history`); a fleet of them checked side by side, and their latest checks
//! as Prometheus metrics.

pub mod alert;
pub mod fleet;
pub mod metrics;
pub mod probe;
pub mod share;
