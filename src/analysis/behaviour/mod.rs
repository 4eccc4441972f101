//! Behaviour, the second answer: does it matter? Each generated family's level, calibrated on the
//! reference (`calibration`, `difficulty`), paired accuracy overall and per family, the
//! anytime-valid decision and its rounds, the behaviour verdict and the headline that joins it to
//! identity.

pub mod calibration;
pub(super) mod decision;
pub mod difficulty;
pub mod families;
pub(super) mod quality;
pub(super) mod rounds;
pub(super) mod same_model;
pub(super) mod selection;
pub mod sequential;
pub(super) mod weak_reads;
