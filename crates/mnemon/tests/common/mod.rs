//! Helpers shared by the library's integration tests (from the test kit).
#![allow(unused_imports)]

pub use mnemon_testkit::events;
pub use mnemon_testkit::fixtures::{copy_into, fresh, loopal_fixtures, siblings, write_note};
