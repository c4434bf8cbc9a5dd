//! What time is it? The clock that recall weighs recency by and the event log dates events by:
//! injectable, so recency and TTL are testable and a memory can be read as of another time.
//! Low enough (it imports only `notes`, for the dates) that both `recall` and `events` use it.
//! Beside it, the frontmatter's dates: what a note's `created_at` and `updated_at` say, read and
//! written as UTC days.

pub use crate::notes::{format_date_unix_s, parse_date_unix_s};

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// Seconds since the Unix epoch.
    fn now_s(&self) -> i64;

    /// Milliseconds since the Unix epoch: what file times are compared with (a segment written
    /// this second is older than "now" once its millisecond has passed).
    fn now_ms(&self) -> i64 {
        self.now_s().saturating_mul(1000)
    }
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_s(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }

    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock stopped at a given time.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub i64);

impl Clock for FixedClock {
    fn now_s(&self) -> i64 {
        self.0
    }
}
