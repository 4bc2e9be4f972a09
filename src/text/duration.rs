//! Durations as people write them: `90m`, `2h`, `1h30m`, `45s`, `1d`, or a plain
//! number of seconds. Every duration Baton takes from a flag, the config file or
//! a state file goes through here, so an absurd value (`1e300`, `-5`, `inf`) is
//! refused with a message instead of overflowing a clock later.

use std::time::Duration;

/// The longest duration Baton accepts anywhere (timeouts, grace, time limits).
pub(crate) const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// Why a duration such as `--time-limit 90m` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DurationError {
    #[error("expected a duration such as 90m, 2h, 1h30m or 45s, found `{found}`")]
    Malformed { found: String },
    #[error("expected at most 1 year (365d), found `{found}`")]
    TooLong { found: String },
}

/// Why a number of seconds (`--timeout`, `--grace`, `timeout =`) was refused; the
/// caller names the value and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub(crate) enum SecondsError {
    #[error("expected a number of seconds")]
    NotFinite,
    #[error("expected a number of seconds that is not negative")]
    Negative,
    #[error("expected at most 31536000 seconds (1 year)")]
    TooLong,
}

/// Whether `text` is a duration of zero (`0`, `0s`, `00m`, `0h0m`): refused where a
/// duration bounds something (a timeout of nothing), meaningful where it is an age
/// (`gc --older-than 0s`: every finished run).
pub(crate) fn is_zero_duration(text: &str) -> bool {
    let found = text.trim();
    if found.parse::<f64>().is_ok_and(|value| value == 0.0) {
        return true;
    }
    let mut after_digit = false;
    for character in found.chars() {
        match character {
            '0' => after_digit = true,
            's' | 'm' | 'h' | 'd' if after_digit => after_digit = false,
            _ => return false,
        }
    }
    !found.is_empty() && !after_digit
}

/// Parse `text`, or say what was expected.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let found = text.trim();
    let malformed = || DurationError::Malformed { found: found.to_string() };
    let too_long = || DurationError::TooLong { found: found.to_string() };
    if let Ok(value) = found.parse::<f64>() {
        return match seconds(value) {
            Ok(duration) if !duration.is_zero() => Ok(duration),
            Err(SecondsError::TooLong) => Err(too_long()),
            _ => Err(malformed()),
        };
    }
    let mut total = 0u64;
    let mut digits = String::new();
    for character in found.chars() {
        if character.is_ascii_digit() {
            digits.push(character);
            continue;
        }
        let unit = match character {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            _ => return Err(malformed()),
        };
        if digits.is_empty() {
            return Err(malformed());
        }
        // Only digits are collected, so a failed parse is an overflow.
        let value: u64 = digits.parse().map_err(|_| too_long())?;
        total = value.checked_mul(unit).and_then(|part| total.checked_add(part)).ok_or_else(too_long)?;
        digits.clear();
    }
    if !digits.is_empty() || total == 0 {
        return Err(malformed());
    }
    let duration = Duration::from_secs(total);
    if duration > MAX_DURATION { Err(too_long()) } else { Ok(duration) }
}

/// `value` seconds as a duration: finite, not negative, at most [`MAX_DURATION`].
pub(crate) fn seconds(value: f64) -> Result<Duration, SecondsError> {
    if !value.is_finite() {
        Err(SecondsError::NotFinite)
    } else if value < 0.0 {
        Err(SecondsError::Negative)
    } else if value > MAX_DURATION.as_secs_f64() {
        Err(SecondsError::TooLong)
    } else {
        Ok(Duration::from_secs_f64(value))
    }
}

/// A number as a message shows it: `60`, `0.5`, and `1e300` rather than 301 digits.
pub(crate) fn number_text(value: f64) -> String {
    if value.abs() < 1e16 { value.to_string() } else { format!("{value:e}") }
}

/// `1 second`, `2.5 seconds`: a number of seconds in a sentence.
pub(crate) fn seconds_phrase(value: f64) -> String {
    if value == 1.0 { "1 second".to_string() } else { format!("{value} seconds") }
}

/// The inverse, for messages: `1h30m`, `45s`.
pub(crate) fn format_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        return format!("{}ms", duration.as_millis());
    }
    let mut seconds = duration.as_secs();
    let mut text = String::new();
    for (unit, name) in [(86400, "d"), (3600, "h"), (60, "m")] {
        if seconds >= unit {
            text.push_str(&format!("{}{name}", seconds / unit));
            seconds %= unit;
        }
    }
    if seconds > 0 || text.is_empty() {
        text.push_str(&format!("{seconds}s"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_durations_are_told_apart_from_the_rest() {
        for zero in ["0", "0s", " 00m ", "0h0m", "0.0"] {
            assert!(is_zero_duration(zero), "{zero}");
        }
        for other in ["", "s", "1s", "0x", "10s", "0ss", "-1", "nan"] {
            assert!(!is_zero_duration(other), "{other}");
        }
    }

    #[test]
    fn durations_people_write() {
        assert_eq!(parse_duration("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("45s"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86400)));
        assert_eq!(parse_duration("365d"), Ok(MAX_DURATION));
    }

    #[test]
    fn invalid_durations_say_what_is_expected() {
        for text in ["", "m", "10x", "1h30", "-5", "0", "0m", "inf", "NaN"] {
            assert_eq!(
                parse_duration(text).unwrap_err().to_string(),
                format!("expected a duration such as 90m, 2h, 1h30m or 45s, found `{}`", text.trim())
            );
        }
    }

    #[test]
    fn durations_beyond_a_year_are_too_long() {
        for text in ["366d", "99999999999999999999h", "1e300", "2e19"] {
            assert_eq!(
                parse_duration(text).unwrap_err().to_string(),
                format!("expected at most 1 year (365d), found `{text}`")
            );
        }
    }

    #[test]
    fn seconds_are_checked_for_range() {
        assert_eq!(seconds(0.0), Ok(Duration::ZERO));
        assert_eq!(seconds(2.5), Ok(Duration::from_millis(2500)));
        assert_eq!(seconds(-5.0), Err(SecondsError::Negative));
        assert_eq!(seconds(f64::INFINITY), Err(SecondsError::NotFinite));
        assert_eq!(seconds(f64::NAN), Err(SecondsError::NotFinite));
        assert_eq!(seconds(1e300), Err(SecondsError::TooLong));
        assert_eq!(seconds(31_536_001.0), Err(SecondsError::TooLong));
    }

    #[test]
    fn numbers_stay_short() {
        assert_eq!(number_text(60.0), "60");
        assert_eq!(number_text(-5.0), "-5");
        assert_eq!(number_text(1e300), "1e300");
        assert_eq!(number_text(f64::INFINITY), "inf");
    }

    #[test]
    fn formatting_round_trips() {
        assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
        assert_eq!(format_duration(Duration::from_secs(45)), "45s");
        assert_eq!(format_duration(Duration::from_millis(50)), "50ms");
    }
}
