//! A limit a run was given against runaway workflows, as a fact: which bound and
//! its value. The run stores and publishes this; the console and `baton status`
//! word it (`observers::console::bound_reached`).

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "bound", rename_all = "snake_case")]
pub(crate) enum Bound {
    /// `--max-steps`: this many steps completed.
    Steps { max: u64 },
    /// `--time-limit`: the run has been running this long, over all invocations.
    Time {
        #[serde(rename = "limit_ms", serialize_with = "as_millis", deserialize_with = "from_millis")]
        limit: Duration,
    },
}

fn as_millis<S: Serializer>(limit: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(limit.as_millis()).unwrap_or(u64::MAX))
}

fn from_millis<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    u64::deserialize(deserializer).map(Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_stored_as_facts() {
        let time = Bound::Time { limit: Duration::from_secs(90) };
        assert_eq!(serde_json::to_string(&time).unwrap(), r#"{"bound":"time","limit_ms":90000}"#);
        assert_eq!(serde_json::from_str::<Bound>(r#"{"bound":"steps","max":3}"#).unwrap(), Bound::Steps { max: 3 });
        assert_eq!(serde_json::from_str::<Bound>(r#"{"bound":"time","limit_ms":90000}"#).unwrap(), time);
    }
}
