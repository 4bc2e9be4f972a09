//! How often and how patiently retryable step failures are retried (R10.1, A13):
//! at most `max_attempts` attempts, waiting `base × 4^(n-1)` (1 s, 4 s, 16 s by
//! default) with ±20 % jitter before attempt `n + 1`, so that several agents hitting
//! the same overloaded API do not retry in lock step.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RetryPolicy {
    pub(crate) max_attempts: u32,
    pub(crate) base_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy { max_attempts: 3, base_delay: Duration::from_secs(1) }
    }
}

impl RetryPolicy {
    /// The pause before re-running a step that has failed `failures` times (0 → none).
    pub(crate) fn delay_before_retry(&self, failures: u32) -> Duration {
        if failures == 0 {
            return Duration::ZERO;
        }
        let exponent = (failures - 1).min(10);
        let nominal = self.base_delay.saturating_mul(4u32.saturating_pow(exponent));
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.subsec_nanos());
        let jitter = 0.8 + f64::from(nanos % 1000) / 1000.0 * 0.4;
        nominal.mul_f64(jitter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a13_delays_grow_fourfold_within_jitter() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay_before_retry(0), Duration::ZERO);
        for (failures, nominal) in [(1, 1.0), (2, 4.0), (3, 16.0)] {
            let delay = policy.delay_before_retry(failures).as_secs_f64();
            assert!(delay >= nominal * 0.8 && delay <= nominal * 1.2, "{failures}: {delay}");
        }
    }
}
