//! Recognising a Claude usage limit from its *text*, and when it lifts (A15).
//!
//! Baton detects usage limits from structured stream signals first
//! (`rate_limit_event` with status `rejected` and `resetsAt`, the synthetic
//! assistant line's `"error":"rate_limit"`). This module is the fallback for
//! when only text is available: the `result` line or stderr. Claude Code's
//! wording has changed over time — raymond only knows "hit your limit" and so
//! misses today's "hit your session limit" — so the table here covers the
//! older and current forms (`../claude-code-cli.md` §4.2):
//!
//! - "You've hit your limit · resets 3pm (America/Chicago)"
//! - "You've hit your session limit · resets 9pm (America/Chicago)", also
//!   "weekly limit", "Opus limit" and (2.1.330) "5-hour limit"; minutes when the reset is not on the hour:
//!   "resets 1:30am (Europe/Paris)"
//! - "resets Apr 23 at 4pm (UTC)" for resets more than a day away
//! - "Claude AI usage limit reached|1795316400" (epoch seconds)
//! - "out of extra usage"
//!
//! [`parse_reset`] returns the reset instant itself; the caller adds its safety
//! margin (raymond waits 5 minutes past it). A text that says "limit" but whose
//! reset cannot be read gives `None`, and the caller polls with backoff rather
//! than giving up. Everything here is total: no input makes it panic.

use std::sync::LazyLock;

use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use regex::{Captures, Regex};

/// The wordings that mean "usage limit reached" (case-insensitive).
static LIMIT_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)hit\s+your\s+(?:[\w-]+\s+)?limit|out\s+of\s+extra\s+usage|claude\s+ai\s+usage\s+limit\s+reached")
        .expect("the usage-limit pattern is valid")
});

/// "Claude AI usage limit reached|<epoch seconds>".
static EPOCH_RESET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)claude\s+ai\s+usage\s+limit\s+reached\s*\|\s*(\d{1,19})\b").expect("the epoch pattern is valid")
});

/// "resets [Mon D[,] [at]] H[:MM]am|pm (Zone)".
static CLOCK_RESET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)
        \bresets \s+ (?:at\s+)?
        (?: (?P<month>[a-z]{3,9}) \.? \s+ (?P<day>\d{1,2}) (?:st|nd|rd|th)? ,? \s+ (?:at\s+)? )?
        (?P<hour>\d{1,2}) (?: : (?P<minute>\d{2}) )? \s* (?P<meridiem>am|pm)
        \s* \( (?P<zone>[^()]+) \)",
    )
    .expect("the reset-time pattern is valid")
});

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Whether `text` is one of Claude Code's usage-limit messages.
pub(crate) fn is_usage_limit_text(text: &str) -> bool {
    LIMIT_TEXT.is_match(text)
}

/// When the limit described by `text` lifts, or `None` when no known form is found
/// (or its time zone is unknown).
///
/// A time of day ("resets 3pm (Zone)") is its next occurrence strictly after `now`
/// in that zone: today, else tomorrow. A date ("resets Apr 23 at 4pm (Zone)") is in
/// the current year of that zone, else the next year when already past. An epoch
/// ("…limit reached|1795316400") is taken as is.
pub(crate) fn parse_reset(text: &str, now: Zoned) -> Option<Timestamp> {
    if let Some(captures) = EPOCH_RESET.captures(text) {
        let seconds: i64 = captures.get(1)?.as_str().parse().ok()?;
        return Timestamp::from_second(seconds).ok();
    }
    CLOCK_RESET.captures_iter(text).find_map(|captures| clock_reset(&captures, &now))
}

/// One "resets …" match turned into an instant.
fn clock_reset(captures: &Captures<'_>, now: &Zoned) -> Option<Timestamp> {
    let zone = TimeZone::get(captures.name("zone")?.as_str().trim()).ok()?;
    let hour = hour_24(number(captures, "hour")?, captures.name("meridiem")?.as_str())?;
    let minute = match captures.name("minute") {
        Some(minute) => minute.as_str().parse::<i8>().ok()?,
        None => 0,
    };
    let time = Time::new(hour, minute, 0, 0).ok()?;
    let local_now = now.with_time_zone(zone.clone());
    let after_now = |date: Date| -> Option<Timestamp> {
        let candidate = date.to_datetime(time).to_zoned(zone.clone()).ok()?.timestamp();
        (candidate > now.timestamp()).then_some(candidate)
    };

    match captures.name("month") {
        Some(month) => {
            let month = month_number(month.as_str())?;
            let day = number(captures, "day")?;
            let year = local_now.year();
            [year, year.checked_add(1)?]
                .into_iter()
                .find_map(|year| Date::new(year, month, day).ok().and_then(&after_now))
        }
        None => {
            let today = local_now.date();
            // Two days suffice: tomorrow at that time is always after now. The loop stays
            // total when a DST gap moves today's candidate.
            after_now(today).or_else(|| after_now(today.tomorrow().ok()?))
        }
    }
}

fn number(captures: &Captures<'_>, name: &str) -> Option<i8> {
    captures.name(name)?.as_str().parse().ok()
}

/// 12-hour clock to 24-hour: 12am → 0, 12pm → 12, 1pm → 13. Hours outside 1–12 are refused.
fn hour_24(hour: i8, meridiem: &str) -> Option<i8> {
    if !(1..=12).contains(&hour) {
        return None;
    }
    let pm = meridiem.eq_ignore_ascii_case("pm");
    Some(match (hour, pm) {
        (12, false) => 0,
        (12, true) => 12,
        (hour, false) => hour,
        (hour, true) => hour + 12,
    })
}

/// `Apr`, `april`, `Sept` → 4, 4, 9. A word must be at least three letters and a prefix of a month name.
fn month_number(word: &str) -> Option<i8> {
    let word = word.to_ascii_lowercase();
    let index = MONTHS.iter().position(|month| month.starts_with(&word))?;
    i8::try_from(index + 1).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn at(text: &str) -> Result<Zoned, jiff::Error> {
        text.parse()
    }

    fn instant(text: &str) -> Result<Timestamp, jiff::Error> {
        Ok(at(text)?.timestamp())
    }

    #[test]
    fn a15_recognises_old_and_current_wordings() {
        for text in [
            "You've hit your limit · resets 3pm (America/Chicago)",
            "You've hit your session limit · resets 9pm (America/Chicago)",
            "You've hit your weekly limit · resets Apr 23 at 4pm (UTC)",
            "You've hit your Opus limit · resets 1:30am (Europe/Paris)",
            "You've hit your 5-hour limit · resets 8pm (UTC)",
            "API Error: 400 You've hit your limit · resets 3pm (America/Chicago)",
            "YOU'VE HIT YOUR LIMIT",
            "You're out of extra usage · resets 5am (UTC)",
            "Claude AI usage limit reached|1795316400",
            "claude ai usage limit reached",
        ] {
            assert!(is_usage_limit_text(text), "{text:?}");
        }
    }

    #[test]
    fn a15_other_errors_are_not_limits() {
        for text in [
            "API Error: Request rejected (429) · nope",
            "API Error: 529 Overloaded. This is a server-side issue",
            "Invalid API key · Fix external API key",
            "you hit the limit",
            "hit your head on the limit",
            "",
        ] {
            assert!(!is_usage_limit_text(text), "{text:?}");
        }
    }

    #[test]
    fn a15_time_of_day_later_today() -> TestResult {
        let now = at("2026-05-10T10:00:00-05:00[America/Chicago]")?;
        let text = "You've hit your limit · resets 3pm (America/Chicago)";
        assert_eq!(parse_reset(text, now), Some(instant("2026-05-10T15:00:00-05:00[America/Chicago]")?));
        Ok(())
    }

    #[test]
    fn a15_time_of_day_already_past_is_tomorrow() -> TestResult {
        let now = at("2026-05-10T21:00:00-05:00[America/Chicago]")?;
        let text = "You've hit your session limit · resets 9pm (America/Chicago)";
        assert_eq!(parse_reset(text, now), Some(instant("2026-05-11T21:00:00-05:00[America/Chicago]")?));
        Ok(())
    }

    #[test]
    fn a15_minutes_and_another_zone_than_now() -> TestResult {
        // 10:00 in Chicago is 17:00 in Paris, so 1:30am Paris is tomorrow there.
        let now = at("2026-05-10T10:00:00-05:00[America/Chicago]")?;
        let text = "You've hit your Opus limit · resets 1:30am (Europe/Paris)";
        assert_eq!(parse_reset(text, now), Some(instant("2026-05-11T01:30:00+02:00[Europe/Paris]")?));
        Ok(())
    }

    #[test]
    fn a15_twelve_am_and_pm() -> TestResult {
        let now = at("2026-05-10T06:00:00+00:00[UTC]")?;
        assert_eq!(parse_reset("resets 12am (UTC)", now.clone()), Some(instant("2026-05-11T00:00:00Z[UTC]")?));
        assert_eq!(parse_reset("resets 12pm (UTC)", now.clone()), Some(instant("2026-05-10T12:00:00Z[UTC]")?));
        assert_eq!(parse_reset("resets 12:45PM (UTC)", now), Some(instant("2026-05-10T12:45:00Z[UTC]")?));
        Ok(())
    }

    #[test]
    fn a15_date_form_this_year_or_next() -> TestResult {
        let text = "You've hit your weekly limit · resets Apr 23 at 4pm (UTC)";
        let april = at("2026-04-01T00:00:00+00:00[UTC]")?;
        assert_eq!(parse_reset(text, april), Some(instant("2026-04-23T16:00:00Z[UTC]")?));
        let may = at("2026-05-10T00:00:00+00:00[UTC]")?;
        assert_eq!(parse_reset(text, may), Some(instant("2027-04-23T16:00:00Z[UTC]")?));
        Ok(())
    }

    #[test]
    fn a15_date_form_variants() -> TestResult {
        let now = at("2026-01-01T00:00:00+00:00[UTC]")?;
        let expected = Some(instant("2026-09-03T04:30:00Z[UTC]")?);
        assert_eq!(parse_reset("resets Sept 3, 4:30am (UTC)", now.clone()), expected);
        assert_eq!(parse_reset("resets september 3rd at 4:30am (UTC)", now.clone()), expected);
        assert_eq!(parse_reset("resets Sep. 3 4:30am (UTC)", now.clone()), expected);
        assert_eq!(parse_reset("resets Se 3 at 4:30am (UTC)", now.clone()), None);
        assert_eq!(parse_reset("resets Foo 3 at 4:30am (UTC)", now.clone()), None);
        assert_eq!(parse_reset("resets Feb 30 at 4pm (UTC)", now), None);
        Ok(())
    }

    #[test]
    fn a15_date_form_in_the_reset_zone_year() -> TestResult {
        // New Year's Eve in Chicago is already 2027 in Tokyo: "Jan 1" there is this Tokyo year.
        let now = at("2026-12-31T12:00:00-06:00[America/Chicago]")?;
        assert_eq!(
            parse_reset("resets Jan 1 at 11pm (Asia/Tokyo)", now),
            Some(instant("2027-01-01T23:00:00+09:00[Asia/Tokyo]")?)
        );
        Ok(())
    }

    #[test]
    fn a15_epoch_form() -> TestResult {
        let now = at("2026-05-10T10:00:00+00:00[UTC]")?;
        assert_eq!(
            parse_reset("Claude AI usage limit reached|1795316400", now.clone()),
            Some(Timestamp::from_second(1795316400)?)
        );
        assert_eq!(parse_reset("Claude AI usage limit reached|99999999999999999", now.clone()), None);
        assert_eq!(parse_reset("Claude AI usage limit reached|", now), None);
        Ok(())
    }

    #[test]
    fn a15_unknown_zone_or_form_is_none() -> TestResult {
        let now = at("2026-05-10T10:00:00+00:00[UTC]")?;
        for text in [
            "You've hit your limit · resets 3pm (Mars/Olympus_Mons)",
            "You've hit your limit · resets 3pm",
            "You've hit your limit · resets soon (UTC)",
            "You've hit your limit · resets 13pm (UTC)",
            "You've hit your limit · resets 0am (UTC)",
            "You've hit your limit · resets 3:75pm (UTC)",
            "You've hit your limit",
            "",
        ] {
            assert_eq!(parse_reset(text, now.clone()), None, "{text:?}");
        }
        Ok(())
    }

    #[test]
    fn a15_first_readable_reset_wins() -> TestResult {
        let now = at("2026-05-10T10:00:00+00:00[UTC]")?;
        let text = "resets 3pm (Nowhere/Land) or resets 4pm (UTC)";
        assert_eq!(parse_reset(text, now), Some(instant("2026-05-10T16:00:00Z[UTC]")?));
        Ok(())
    }

    #[test]
    fn a15_dst_gap_moves_forward() -> TestResult {
        // 2026-03-08 02:30 does not exist in Chicago; the compatible reading is 03:30 CDT.
        let now = at("2026-03-08T01:00:00-06:00[America/Chicago]")?;
        assert_eq!(
            parse_reset("resets 2:30am (America/Chicago)", now),
            Some(instant("2026-03-08T03:30:00-05:00[America/Chicago]")?)
        );
        Ok(())
    }

    #[test]
    fn a15_exactly_now_is_tomorrow() -> TestResult {
        let now = at("2026-05-10T15:00:00+00:00[UTC]")?;
        assert_eq!(parse_reset("resets 3pm (UTC)", now), Some(instant("2026-05-11T15:00:00Z[UTC]")?));
        Ok(())
    }

    #[test]
    fn s16_42_limit_text_and_reset() -> TestResult {
        let text = "You've hit your limit · resets 3pm (America/Chicago)";
        assert!(is_usage_limit_text(text));
        let now = at("2026-05-10T08:00:00-05:00[America/Chicago]")?;
        let reset = parse_reset(text, now).ok_or("no reset parsed")?;
        assert_eq!(reset, instant("2026-05-10T15:00:00-05:00[America/Chicago]")?);
        Ok(())
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn any_now() -> impl Strategy<Value = Zoned> {
            let zones = prop::sample::select(vec![
                "UTC",
                "America/Chicago",
                "Europe/Paris",
                "Asia/Kolkata",
                "Pacific/Kiritimati",
            ]);
            (Timestamp::MIN.as_second()..=Timestamp::MAX.as_second(), zones).prop_filter_map(
                "representable",
                |(seconds, zone)| {
                    let zone = TimeZone::get(zone).ok()?;
                    Some(Timestamp::from_second(seconds).ok()?.to_zoned(zone))
                },
            )
        }

        proptest! {
            #[test]
            fn parse_reset_never_panics(text in any::<String>(), now in any_now()) {
                let _ = parse_reset(&text, now);
                let _ = is_usage_limit_text(&text);
            }

            #[test]
            fn parse_reset_never_panics_on_near_misses(
                hour in 0u32..100,
                minute in prop::option::of(0u32..100),
                meridiem in prop::sample::select(vec!["am", "pm", "AM", "xm"]),
                date in prop::option::of(("[A-Za-z]{1,10}", 0u32..100)),
                zone in prop::sample::select(vec!["UTC", "America/Chicago", "Asia/Kolkata", "", " ", "../etc", "Nowhere"]),
                now in any_now(),
            ) {
                let date = date.map(|(month, day)| format!("{month} {day} at ")).unwrap_or_default();
                let minute = minute.map(|m| format!(":{m:02}")).unwrap_or_default();
                let text = format!("You've hit your limit · resets {date}{hour}{minute}{meridiem} ({zone})");
                let _ = parse_reset(&text, now);
            }

            #[test]
            fn time_of_day_reset_is_within_a_day_after_now(
                hour in 1u32..=12,
                minute in 0u32..60,
                pm in any::<bool>(),
                seconds in 0i64..4_102_444_800,
                zone in prop::sample::select(vec!["UTC", "America/Chicago", "Europe/Paris", "Australia/Lord_Howe"]),
            ) {
                let now = Timestamp::from_second(seconds).map_err(|e| TestCaseError::fail(e.to_string()))?.to_zoned(TimeZone::UTC);
                let meridiem = if pm { "pm" } else { "am" };
                let text = format!("resets {hour}:{minute:02}{meridiem} ({zone})");
                let reset = parse_reset(&text, now.clone());
                let reset = reset.ok_or_else(|| TestCaseError::fail(format!("{text} not parsed")))?;
                prop_assert!(reset > now.timestamp());
                prop_assert!(reset.as_second() - now.timestamp().as_second() <= 26 * 3600, "{text} at {now} gave {reset}");
            }
        }
    }
}
