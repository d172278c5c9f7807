//! A schedule's due times (W6): a cron pattern (5 fields, or 6 with leading seconds)
//! evaluated in an IANA time zone by `croner` over the `chrono-tz` database. Pure: no
//! I/O, no clock (the caller passes "now").
//!
//! Daylight-saving changes follow the zone's clocks the way cron does (OCPS, Vixie cron):
//! - a due time inside a skipped hour (spring forward): a fixed time (`30 2 * * *`) runs
//!   once, at the first valid minute after the gap that day (03:00 local); a wildcard
//!   or step in the hour field (`*/15 * * * *`) simply has no occurrences in the gap;
//! - a repeated hour (fall back): a fixed time runs once, at its first occurrence; a
//!   wildcard or step hour runs on both passes of the repeated hour.
//!
//! Due times are instants (UTC): two runs never share one, and a search moves in real
//! time, so the next due time is always after the one given.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;

/// How many due times [`Spec::min_gap`] looks at to find the shortest interval.
pub const GAP_SAMPLE: usize = 400;

/// A parsed schedule pattern in its zone.
#[derive(Debug, Clone)]
pub struct Spec {
    cron: Cron,
    tz: Tz,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("cron must have 5 fields (minute hour day-of-month month day-of-week) or 6 with leading seconds; got {0}")]
    FieldCount(usize),
    #[error("cron '{pattern}' is not valid: {reason}")]
    Pattern { pattern: String, reason: String },
    #[error(
        "timezone '{0}' is not an IANA time zone name (e.g. Europe/Paris, America/New_York, UTC)"
    )]
    Zone(String),
}

impl Spec {
    pub fn parse(cron: &str, timezone: &str) -> Result<Self, SpecError> {
        let fields = cron.split_whitespace().count();
        // nicknames (`@daily`) and the year field are not part of the contract
        if !(5..=6).contains(&fields) || cron.trim_start().starts_with('@') {
            return Err(SpecError::FieldCount(fields));
        }
        let tz = Tz::from_str(timezone).map_err(|_| SpecError::Zone(timezone.to_string()))?;
        let cron = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build()
            .parse(cron)
            .map_err(|e| SpecError::Pattern {
                pattern: cron.to_string(),
                reason: e.to_string(),
            })?;
        Ok(Spec { cron, tz })
    }

    /// The first due time strictly after `t`; `None` when the pattern never fires again
    /// (e.g. `0 0 30 2 *`, the 30th of February).
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = t.with_timezone(&self.tz);
        self.cron
            .find_next_occurrence(&local, false)
            .ok()
            .map(|d| d.with_timezone(&Utc))
    }

    /// Up to `n` due times strictly after `t`, in order.
    pub fn upcoming(&self, t: DateTime<Utc>, n: usize) -> Vec<DateTime<Utc>> {
        let mut out = Vec::with_capacity(n);
        let mut at = t;
        while out.len() < n {
            match self.next_after(at) {
                Some(d) => {
                    out.push(d);
                    at = d;
                }
                None => break,
            }
        }
        out
    }

    /// The latest due time in `(after, until]`, and how many due times that range
    /// holds (counted up to `cap`, the bound on the work done here); `None` when none.
    pub fn latest_in(
        &self,
        after: DateTime<Utc>,
        until: DateTime<Utc>,
        cap: usize,
    ) -> Option<(DateTime<Utc>, usize)> {
        let mut latest = None;
        let mut count = 0;
        let mut at = after;
        while count < cap {
            match self.next_after(at) {
                Some(d) if d <= until => {
                    latest = Some(d);
                    count += 1;
                    at = d;
                }
                _ => return latest.map(|l| (l, count)),
            }
        }
        // too many to walk one by one: the latest is the last one before `until`
        self.cron
            .iter_from(until.with_timezone(&self.tz), croner::Direction::Backward)
            .next()
            .map(|d| d.with_timezone(&Utc))
            .filter(|d| *d > after)
            .map(|d| (d, count))
    }

    /// The shortest interval between consecutive due times among the next
    /// [`GAP_SAMPLE`] after `t` (`None`: fewer than two).
    pub fn min_gap(&self, t: DateTime<Utc>) -> Option<chrono::Duration> {
        let times = self.upcoming(t, GAP_SAMPLE);
        times.windows(2).map(|w| w[1] - w[0]).min()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use chrono::{NaiveDate, TimeZone};

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    /// The instant of a local wall-clock time, computed with the tz database alone
    /// (not with the cron crate), `earliest` of two in a repeated hour.
    fn local(tz: Tz, y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
        let naive = NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(h, min, 0)
            .unwrap();
        tz.from_local_datetime(&naive)
            .earliest()
            .expect("a wall time that exists")
            .with_timezone(&Utc)
    }

    #[test]
    fn five_and_six_fields_and_bad_input_w6() {
        assert!(Spec::parse("0 7 * * 1-5", "Europe/Paris").is_ok());
        assert!(Spec::parse("*/2 * * * * *", "UTC").is_ok());
        assert_eq!(
            Spec::parse("0 7 * *", "UTC").unwrap_err(),
            SpecError::FieldCount(4)
        );
        assert_eq!(
            Spec::parse("0 0 7 * * 1 2026", "UTC").unwrap_err(),
            SpecError::FieldCount(7)
        );
        assert!(matches!(
            Spec::parse("@daily", "UTC").unwrap_err(),
            SpecError::FieldCount(1)
        ));
        assert!(matches!(
            Spec::parse("61 * * * *", "UTC").unwrap_err(),
            SpecError::Pattern { .. }
        ));
        assert_eq!(
            Spec::parse("0 7 * * *", "Mars/Olympus").unwrap_err(),
            SpecError::Zone("Mars/Olympus".into())
        );
    }

    #[test]
    fn weekday_mornings_in_the_zone_w6() {
        let s = Spec::parse("0 7 * * 1-5", "America/New_York").unwrap();
        // Friday 2026-03-06 12:00 UTC: next are Mon 9, Tue 10, Wed 11 at 07:00 New York;
        // the 9th is after the 8 March change, so 11:00 UTC instead of 12:00
        let tz: Tz = "America/New_York".parse().unwrap();
        let got = s.upcoming(utc("2026-03-06T12:00:00Z"), 3);
        assert_eq!(
            got,
            vec![
                local(tz, 2026, 3, 9, 7, 0),
                local(tz, 2026, 3, 10, 7, 0),
                local(tz, 2026, 3, 11, 7, 0)
            ]
        );
        assert_eq!(got[0], utc("2026-03-09T11:00:00Z"));
    }

    #[test]
    fn a_fixed_time_in_the_skipped_hour_runs_once_after_the_gap_w6() {
        // Europe/Berlin springs forward on 2026-03-29: 02:00 CET becomes 03:00 CEST
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        assert!(tz
            .from_local_datetime(
                &NaiveDate::from_ymd_opt(2026, 3, 29)
                    .unwrap()
                    .and_hms_opt(2, 30, 0)
                    .unwrap()
            )
            .earliest()
            .is_none());
        let s = Spec::parse("30 2 * * *", "Europe/Berlin").unwrap();
        let got = s.upcoming(local(tz, 2026, 3, 28, 12, 0), 3);
        assert_eq!(
            got,
            vec![
                local(tz, 2026, 3, 29, 3, 0),
                local(tz, 2026, 3, 30, 2, 30),
                local(tz, 2026, 3, 31, 2, 30)
            ]
        );
        assert_eq!(got[0], utc("2026-03-29T01:00:00Z"));
    }

    #[test]
    fn a_stepped_hour_has_nothing_in_the_gap_w6() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let s = Spec::parse("0,30 * * * *", "Europe/Berlin").unwrap();
        let got = s.upcoming(local(tz, 2026, 3, 29, 1, 0), 3);
        // 01:30 CET, then 03:00 and 03:30 CEST: 02:00 and 02:30 never exist
        assert_eq!(
            got,
            vec![
                utc("2026-03-29T00:30:00Z"),
                utc("2026-03-29T01:00:00Z"),
                utc("2026-03-29T01:30:00Z")
            ]
        );
    }

    #[test]
    fn a_fixed_time_in_the_repeated_hour_runs_once_w6() {
        // Europe/Berlin falls back on 2026-10-25: 03:00 CEST becomes 02:00 CET, so
        // 02:30 happens twice (00:30 and 01:30 UTC)
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let naive = NaiveDate::from_ymd_opt(2026, 10, 25)
            .unwrap()
            .and_hms_opt(2, 30, 0)
            .unwrap();
        let both = tz.from_local_datetime(&naive);
        let (first, second) = (both.earliest().unwrap(), both.latest().unwrap());
        assert_eq!(second - first, chrono::Duration::hours(1));
        let s = Spec::parse("30 2 * * *", "Europe/Berlin").unwrap();
        let got = s.upcoming(local(tz, 2026, 10, 24, 12, 0), 2);
        assert_eq!(
            got,
            vec![first.with_timezone(&Utc), local(tz, 2026, 10, 26, 2, 30)]
        );
    }

    #[test]
    fn a_wildcard_hour_runs_on_both_passes_of_the_repeated_hour_w6() {
        let s = Spec::parse("30 * * * *", "Europe/Berlin").unwrap();
        let got = s.upcoming(utc("2026-10-24T23:00:00Z"), 4);
        // 01:30 CEST, 02:30 CEST, 02:30 CET, 03:30 CET: one hour apart in real time
        assert_eq!(
            got,
            vec![
                utc("2026-10-24T23:30:00Z"),
                utc("2026-10-25T00:30:00Z"),
                utc("2026-10-25T01:30:00Z"),
                utc("2026-10-25T02:30:00Z")
            ]
        );
    }

    #[test]
    fn never_again_and_latest_missed_w6() {
        let s = Spec::parse("0 0 30 2 *", "UTC").unwrap();
        assert_eq!(s.next_after(utc("2026-01-01T00:00:00Z")), None);
        let every_min = Spec::parse("* * * * *", "UTC").unwrap();
        // none in an empty range; the latest of three; exactly at `until` counts
        assert_eq!(
            every_min.latest_in(utc("2026-01-01T00:00:00Z"), utc("2026-01-01T00:00:30Z"), 10),
            None
        );
        assert_eq!(
            every_min.latest_in(utc("2026-01-01T00:00:00Z"), utc("2026-01-01T00:03:00Z"), 10),
            Some((utc("2026-01-01T00:03:00Z"), 3))
        );
        // past the cap, still the right latest one
        let (latest, counted) = every_min
            .latest_in(utc("2026-01-01T00:00:00Z"), utc("2026-01-02T00:00:30Z"), 10)
            .unwrap();
        assert_eq!((latest, counted), (utc("2026-01-02T00:00:00Z"), 10));
    }

    #[test]
    fn shortest_interval_w6() {
        let t = utc("2026-01-01T00:00:00Z");
        let gap = |c: &str| Spec::parse(c, "UTC").unwrap().min_gap(t).unwrap();
        assert_eq!(gap("*/2 * * * * *"), chrono::Duration::seconds(2));
        assert_eq!(gap("* * * * *"), chrono::Duration::seconds(60));
        assert_eq!(gap("0 7 * * 1-5"), chrono::Duration::hours(24));
        // uneven: minutes 0 and 1 of every hour
        assert_eq!(gap("0,1 * * * *"), chrono::Duration::seconds(60));
        assert_eq!(Spec::parse("0 0 30 2 *", "UTC").unwrap().min_gap(t), None);
    }
}
