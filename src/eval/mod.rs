//! How good is recall? Ground truth files and the retrieval metrics computed against them.

pub mod metrics;
pub mod truth;
