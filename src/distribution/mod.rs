//! `coherence distribution`: whether two endpoints sample the same distribution at a served
//! temperature, by a kernel two-sample test (MMD) on N samples per prompt and endpoint, with an
//! A-vs-A control per endpoint and accuracy at temperature on the graded prompts.
//!
//! `kernel` and `mmd` are the statistic (pure); `limits` the bounds of the settings; `prompts`
//! the built-in set and how a sample is read; `analyse` the figures; `answer` "same model?" and
//! the gate; `pipeline` the run on the request engine and the names of its folder's files;
//! `results` and `report` its outputs.

pub mod analyse;
pub mod answer;
pub mod kernel;
pub mod limits;
pub mod mmd;
pub mod pipeline;
pub mod prompts;
pub mod report;
pub mod results;

pub use pipeline::{
    folder, run, DistributionError, DistributionManifest, DistributionPlan, MANIFEST, REPORT_HTML,
    REPORT_MD, RESULTS,
};
