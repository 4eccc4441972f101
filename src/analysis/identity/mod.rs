//! Identity, the first answer: does B compute what A computes? The first divergence against the
//! reference's own repeat (`numerics`), teacher-forced token agreement, and prompt-token parity.

pub mod numerics;
pub(super) mod parity;
pub(super) mod token_agreement;
