//! Tooling around the mnemon engine, outside the library: what tests, benches and the CLI's
//! `eval`, `gen` and `__worker` commands share.
//!
//! - [`corpus`]: a deterministic synthetic corpus (notes and ground-truth queries) of any size;
//! - [`eval`]: ground-truth files, retrieval metrics and the eval runner (loopal-58 protocol);
//! - [`worker`]: one simulated agent of the multi-process stress test;
//! - [`fixtures`] and [`events`]: helpers of the integration tests.

pub mod corpus;
pub mod eval;
pub mod events;
pub mod fixtures;
pub mod worker;
