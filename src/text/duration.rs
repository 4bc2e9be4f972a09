//! Durations as people write them on a command line: `90m`, `2h`, `1h30m`,
//! `45s`, `1d`, or a plain number of seconds.

use std::time::Duration;

/// Parse `text`, or say what was expected.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let invalid = || format!("expected a duration such as 90m, 2h, 1h30m or 45s, found `{text}`");
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return if seconds.is_finite() && seconds > 0.0 {
            Ok(Duration::from_secs_f64(seconds))
        } else {
            Err(invalid())
        };
    }
    let mut total = 0u64;
    let mut digits = String::new();
    for character in text.chars() {
        if character.is_ascii_digit() {
            digits.push(character);
            continue;
        }
        let unit = match character {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            _ => return Err(invalid()),
        };
        let value: u64 = digits.parse().map_err(|_| invalid())?;
        total = total.checked_add(value.checked_mul(unit).ok_or_else(invalid)?).ok_or_else(invalid)?;
        digits.clear();
    }
    if !digits.is_empty() || total == 0 {
        return Err(invalid());
    }
    Ok(Duration::from_secs(total))
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
    fn durations_people_write() {
        assert_eq!(parse_duration("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("45s"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86400)));
    }

    #[test]
    fn invalid_durations_say_what_is_expected() {
        for text in ["", "m", "10x", "1h30", "-5", "0", "0m", "99999999999999999999h"] {
            assert_eq!(
                parse_duration(text),
                Err(format!("expected a duration such as 90m, 2h, 1h30m or 45s, found `{}`", text.trim()))
            );
        }
    }

    #[test]
    fn formatting_round_trips() {
        assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
        assert_eq!(format_duration(Duration::from_secs(45)), "45s");
        assert_eq!(format_duration(Duration::from_millis(50)), "50ms");
    }
}
