//! Frontmatter dates: `YYYY-MM-DD`, optionally followed by a time (`T10:00:00Z`), read as UTC.

/// Seconds since the Unix epoch at the start (or the given time) of a `YYYY-MM-DD[THH:MM[:SS]][Z]`
/// date, or `None` when it is not such a date. Time zones other than `Z` are ignored (read as UTC).
pub fn parse_date_unix_s(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year: i64 = s.get(0..4)?.parse().ok()?;
    let month: u32 = s.get(5..7)?.parse().ok()?;
    let day: u32 = s.get(8..10)?.parse().ok()?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let mut secs = days_from_civil(year, month, day) * 86_400;
    let rest = &s[10..];
    if let Some(t) = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' ')) {
        let h: i64 = t.get(0..2)?.parse().ok()?;
        let m: i64 = t.get(3..5)?.parse().ok()?;
        let sec: i64 = t.get(6..8).and_then(|x| x.parse().ok()).unwrap_or(0);
        if h > 23 || m > 59 || sec > 60 {
            return None;
        }
        secs += h * 3600 + m * 60 + sec;
    } else if !rest.is_empty() {
        return None;
    }
    Some(secs)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The `YYYY-MM-DD` (UTC) of `unix_s`: what [`parse_date_unix_s`] reads back as that day's
/// midnight. Years outside 0..=9999 are clamped to them (a frontmatter date has four digits).
pub fn format_date_unix_s(unix_s: i64) -> String {
    let (y, m, d) = civil_from_days(unix_s.div_euclid(86_400));
    format!("{:04}-{m:02}-{d:02}", y.clamp(0, 9999))
}

/// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`, the inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formatted_date_reads_back_as_its_midnight() {
        assert_eq!(format_date_unix_s(0), "1970-01-01");
        assert_eq!(format_date_unix_s(1_779_962_400), "2026-05-28");
        assert_eq!(format_date_unix_s(1_709_164_800 + 86_399), "2024-02-29");
        assert_eq!(format_date_unix_s(-1), "1969-12-31");
        for day in (-719_000i64..2_900_000).step_by(997) {
            let s = day * 86_400 + 5;
            assert_eq!(
                parse_date_unix_s(&format_date_unix_s(s)),
                Some(day * 86_400),
                "day {day}"
            );
        }
    }

    #[test]
    fn dates_read_as_unix_seconds_and_impossible_dates_are_refused() {
        assert_eq!(parse_date_unix_s("1970-01-01"), Some(0));
        assert_eq!(parse_date_unix_s("2000-03-01"), Some(951_868_800));
        assert_eq!(
            parse_date_unix_s("2026-05-28T10:00:00Z"),
            Some(1_779_962_400)
        );
        assert_eq!(parse_date_unix_s("2024-02-29"), Some(1_709_164_800));
        assert_eq!(parse_date_unix_s("2023-02-29"), None);
        assert_eq!(parse_date_unix_s("yesterday"), None);
        assert_eq!(parse_date_unix_s("2026-13-01"), None);
    }
}
