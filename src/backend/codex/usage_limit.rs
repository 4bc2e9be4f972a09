//! Recognising a Codex usage limit, and when it lifts.
//!
//! Codex 0.169 turns an HTTP 429 whose body says `usage_limit_reached` into a
//! `turn.failed` (and an `error` event) reading, with the reset in the local
//! time zone of the Codex process (`TZ`):
//!
//! - "You’ve hit your usage limit. Upgrade to Pro (…) or try again at 9:46 AM." —
//!   a reset later today;
//! - "You’ve hit your usage limit. Try again at Nov 28th, 2026 9:06 PM." — another day;
//! - "You’ve hit your usage limit. Try again later." — no reset given.
//!
//! An `insufficient_quota` 429 reads "Quota exceeded. Check your plan and billing
//! details.", and a `usage_not_included` one "To use Codex with your ChatGPT plan,
//! upgrade to Plus: …": no retry helps until someone acts on the account, so they
//! pause the agent too (without a reset: Baton polls, or `--no-wait` stops). A
//! plain rate limit ("exceeded retry limit, last status: 429 Too Many Requests")
//! is not a usage limit: the turn is retried.

use std::sync::LazyLock;

use jiff::civil::{Date, Time};
use jiff::{Timestamp, Zoned};
use regex::Regex;

static LIMIT_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)hit\s+your\s+usage\s+limit|usage_limit_reached|\bquota\s+exceeded|to\s+use\s+codex\s+with\s+your\s+chatgpt\s+plan",
    )
        .expect("the usage-limit pattern is valid")
});

/// "try again at [Mon D(st|nd|rd|th), YYYY ]H:MM AM|PM".
static RESET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)
        try \s+ again \s+ at \s+
        (?: (?P<month>[a-z]{3}) \s+ (?P<day>\d{1,2}) (?:st|nd|rd|th)? , \s* (?P<year>\d{4}) \s+ )?
        (?P<hour>\d{1,2}) : (?P<minute>\d{2}) \s* (?P<meridiem>am|pm)",
    )
    .expect("the reset pattern is valid")
});

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// Whether `text` is one of Codex's usage-limit messages.
pub(crate) fn is_usage_limit_text(text: &str) -> bool {
    LIMIT_TEXT.is_match(text)
}

/// When the limit `text` describes lifts, read in `now`'s time zone (Codex's own);
/// a time of day alone is its next occurrence after `now`.
pub(crate) fn parse_reset(text: &str, now: &Zoned) -> Option<Timestamp> {
    let captures = RESET.captures(text)?;
    let number = |name: &str| captures.name(name).and_then(|found| found.as_str().parse::<i16>().ok());
    let hour = number("hour")?;
    if !(1..=12).contains(&hour) {
        return None;
    }
    let pm = captures.name("meridiem")?.as_str().eq_ignore_ascii_case("pm");
    let hour = i8::try_from(hour % 12 + if pm { 12 } else { 0 }).ok()?;
    let time = Time::new(hour, i8::try_from(number("minute")?).ok()?, 0, 0).ok()?;
    let zone = now.time_zone().clone();
    let at = |date: Date| date.to_datetime(time).to_zoned(zone.clone()).ok().map(|zoned| zoned.timestamp());
    match captures.name("month") {
        Some(month) => {
            let month = MONTHS.iter().position(|known| known.eq_ignore_ascii_case(month.as_str()))?;
            let date =
                Date::new(number("year")?, i8::try_from(month + 1).ok()?, i8::try_from(number("day")?).ok()?).ok()?;
            at(date)
        }
        None => {
            let today = now.date();
            at(today).filter(|reset| *reset > now.timestamp()).or_else(|| at(today.tomorrow().ok()?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Zoned {
        "2026-11-25T07:30:00[UTC]".parse().expect("a zoned time")
    }

    #[test]
    fn codexs_limit_messages_are_recognised_and_a_rate_limit_is_not() {
        assert!(is_usage_limit_text("You’ve hit your usage limit. Try again later."));
        assert!(is_usage_limit_text("You've hit your usage limit for GPT-5."));
        assert!(is_usage_limit_text("Quota exceeded. Check your plan and billing details."));
        assert!(is_usage_limit_text(
            "To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus."
        ));
        assert!(!is_usage_limit_text("exceeded retry limit, last status: 429 Too Many Requests"));
    }

    #[test]
    fn a_time_of_day_is_today_or_tomorrow() {
        let text = "You’ve hit your usage limit. Upgrade to Pro, … or try again at 9:46 AM.";
        assert_eq!(parse_reset(text, &now()), Some("2026-11-25T09:46:00Z".parse().unwrap()));
        let text = "You’ve hit your usage limit. Try again at 7:05 AM.";
        assert_eq!(parse_reset(text, &now()), Some("2026-11-26T07:05:00Z".parse().unwrap()));
        assert_eq!(parse_reset("try again at 12:30 PM", &now()), Some("2026-11-25T12:30:00Z".parse().unwrap()));
    }

    #[test]
    fn a_date_is_taken_as_written_in_codexs_zone() {
        let text = "You’ve hit your usage limit. Try again at Nov 28th, 2026 9:06 PM.";
        assert_eq!(parse_reset(text, &now()), Some("2026-11-28T21:06:00Z".parse().unwrap()));
        let new_york: Zoned = "2026-11-25T02:30:00[America/New_York]".parse().unwrap();
        assert_eq!(parse_reset("try again at 4:46 AM.", &new_york), Some("2026-11-25T09:46:00Z".parse().unwrap()));
    }

    #[test]
    fn no_reset_or_a_nonsense_one_is_none() {
        assert_eq!(parse_reset("You’ve hit your usage limit. Try again later.", &now()), None);
        assert_eq!(parse_reset("try again at 13:99 PM", &now()), None);
        assert_eq!(parse_reset("try again at Foo 40th, 2026 9:06 PM", &now()), None);
    }
}
