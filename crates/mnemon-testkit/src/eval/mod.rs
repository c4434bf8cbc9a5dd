//! How good is recall? Ground truth files, the retrieval metrics, and the eval runner.

pub mod metrics;
pub mod run;
pub mod truth;
