//! When to poll a feed again: from what the feed and its server say (RSS `<ttl>`,
//! `sy:updatePeriod`/`sy:updateFrequency`, `Cache-Control: max-age`, `Expires`) and from the
//! rate at which it actually showed new items, bounded by `--min-interval` and
//! `--max-interval`; failing feeds back off exponentially and a feed that is gone (404/410
//! three polls in a row) is parked.
//!
//! The observed rate is an exponentially weighted mean of new items per second over the
//! polls, so one quiet or busy poll moves it only part of the way; the interval aims at one
//! new item per poll (1 / rate). `<ttl>` and `max-age` say the feed will not change sooner:
//! they are floors. `sy:updatePeriod` is the publisher's own estimate: used until the feed
//! has been observed. Pure functions over [`FeedHealth`], which the feeds run keeps in
//! `state.sqlite`.

use std::time::Duration;

/// Bounds and defaults of the schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PollPolicy {
    /// Interval of a feed that says nothing and has not been observed yet (`--interval`).
    pub default: Duration,
    pub min: Duration,
    pub max: Duration,
}

/// Polls of 404/410 in a row after which a feed is parked.
pub const GONE_AFTER: u32 = 3;

/// Weight of the newest poll in the rate mean.
const RATE_WEIGHT: f64 = 0.4;

/// What is known of a feed between polls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedHealth {
    /// New items per second (exponentially weighted), once observed.
    pub rate: Option<f64>,
    /// Failed polls in a row.
    pub failures: u32,
    /// 404/410 answers in a row.
    pub gone: u32,
}

/// Hints of one successful poll.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PollHints {
    pub ttl: Option<Duration>,
    pub update_period: Option<Duration>,
    /// `Cache-Control: max-age`, or `Expires` minus now.
    pub max_age: Option<Duration>,
}

/// What became of a poll.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PollResult {
    /// Answered (200 or 304): `new_items` not seen before, `elapsed` since the previous poll
    /// (None for the first).
    Ok { new_items: u64, elapsed: Option<Duration>, hints: PollHints },
    /// 404 or 410.
    Gone,
    /// Any other failure (5xx, network, not a feed).
    Failed,
}

/// The next interval, or None when the feed is to be parked. Updates `health`.
pub fn next_poll(policy: &PollPolicy, health: &mut FeedHealth, result: PollResult) -> Option<Duration> {
    let clamp = |d: Duration| d.clamp(policy.min, policy.max.max(policy.min));
    match result {
        PollResult::Ok { new_items, elapsed, hints } => {
            health.failures = 0;
            health.gone = 0;
            if let Some(e) = elapsed.filter(|e| !e.is_zero()) {
                let observed = new_items as f64 / e.as_secs_f64();
                health.rate = Some(match health.rate {
                    Some(r) => (1.0 - RATE_WEIGHT) * r + RATE_WEIGHT * observed,
                    None => observed,
                });
            }
            let wanted = match health.rate {
                Some(r) if r > 0.0 => Duration::from_secs_f64((1.0 / r).min(policy.max.as_secs_f64())),
                Some(_) => policy.max,
                None => hints.update_period.unwrap_or(policy.default),
            };
            let floor = hints.ttl.into_iter().chain(hints.max_age).max().unwrap_or_default();
            Some(clamp(wanted.max(floor)))
        }
        PollResult::Gone => {
            health.gone += 1;
            health.failures += 1;
            (health.gone < GONE_AFTER).then(|| clamp(backoff(policy, health.failures)))
        }
        PollResult::Failed => {
            health.gone = 0;
            health.failures += 1;
            Some(clamp(backoff(policy, health.failures)))
        }
    }
}

/// The interval after `failures` failed polls in a row: the default interval doubled per
/// failure after the first.
fn backoff(policy: &PollPolicy, failures: u32) -> Duration {
    policy.default.saturating_mul(1u32 << failures.saturating_sub(1).min(16))
}

/// `max-age` of a Cache-Control header, or the time until an Expires date.
pub fn max_age(cache_control: Option<&str>, expires: Option<&str>) -> Option<Duration> {
    let from_cc = cache_control.and_then(|cc| {
        cc.split(',').find_map(|d| {
            let (k, v) = d.trim().split_once('=')?;
            k.trim().eq_ignore_ascii_case("max-age").then(|| v.trim().trim_matches('"').parse::<u64>().ok())?
        })
    });
    from_cc.map(Duration::from_secs).or_else(|| {
        let t = httpdate::parse_http_date(expires?.trim()).ok()?;
        t.duration_since(std::time::SystemTime::now()).ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_secs(60);

    fn policy() -> PollPolicy {
        PollPolicy { default: Duration::from_secs(900), min: MIN, max: Duration::from_secs(86_400) }
    }

    fn ok(new_items: u64, elapsed_secs: u64) -> PollResult {
        PollResult::Ok { new_items, elapsed: Some(Duration::from_secs(elapsed_secs)), hints: PollHints::default() }
    }

    #[test]
    fn a_busy_feed_is_polled_more_often_than_a_quiet_one() {
        let (mut busy, mut quiet) = (FeedHealth::default(), FeedHealth::default());
        let (mut b, mut q) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..10 {
            b = next_poll(&policy(), &mut busy, ok(6, 900)).unwrap(); // one item every 150 s
            q = next_poll(&policy(), &mut quiet, ok(0, 900)).unwrap();
        }
        assert_eq!(b, Duration::from_secs(150));
        assert_eq!(q, Duration::from_secs(86_400), "nothing new: the longest interval");
        // A quiet feed that wakes up comes back within a few polls.
        let mut after = Duration::MAX;
        for _ in 0..4 {
            after = next_poll(&policy(), &mut quiet, ok(10, 600)).unwrap();
        }
        assert!(after < Duration::from_secs(120), "{after:?}");
    }

    #[test]
    fn hints_floor_the_interval_and_the_publisher_period_is_the_first_guess() {
        let mut h = FeedHealth::default();
        let hints = PollHints { update_period: Some(Duration::from_secs(3600)), ..Default::default() };
        let first = next_poll(&policy(), &mut h, PollResult::Ok { new_items: 20, elapsed: None, hints });
        assert_eq!(first, Some(Duration::from_secs(3600)));
        let hints = PollHints { ttl: Some(Duration::from_secs(1800)), ..Default::default() };
        let busy = next_poll(&policy(), &mut h, PollResult::Ok { new_items: 100, elapsed: Some(MIN), hints });
        assert_eq!(busy, Some(Duration::from_secs(1800)), "<ttl> is a floor");
        let tiny = next_poll(&policy(), &mut FeedHealth::default(), ok(1000, 60));
        assert_eq!(tiny, Some(MIN), "--min-interval is a floor");
    }

    #[test]
    fn failures_back_off_and_a_gone_feed_is_parked() {
        let mut h = FeedHealth::default();
        let waits: Vec<u64> =
            (0..4).map(|_| next_poll(&policy(), &mut h, PollResult::Failed).unwrap().as_secs()).collect();
        assert_eq!(waits, [900, 1800, 3600, 7200]);
        assert!(next_poll(&policy(), &mut h, ok(1, 900)).is_some());
        assert_eq!(h.failures, 0);
        let mut g = FeedHealth::default();
        assert!(next_poll(&policy(), &mut g, PollResult::Gone).is_some());
        assert!(next_poll(&policy(), &mut g, PollResult::Gone).is_some());
        assert_eq!(next_poll(&policy(), &mut g, PollResult::Gone), None, "parked after {GONE_AFTER}");
        for _ in 0..40 {
            let _ = next_poll(&policy(), &mut h, PollResult::Failed);
        }
        assert_eq!(next_poll(&policy(), &mut h, PollResult::Failed), Some(Duration::from_secs(86_400)));
    }

    proptest::proptest! {
        /// Headers from any server: an answer or none, never a panic.
        #[test]
        fn arbitrary_cache_headers_never_panic(cc in ".{0,80}", exp in ".{0,80}") {
            let _ = max_age(Some(&cc), Some(&exp));
            let _ = max_age(None, Some(&exp));
        }
    }

    #[test]
    fn cache_control_and_expires() {
        assert_eq!(max_age(Some("public, max-age=600"), None), Some(Duration::from_secs(600)));
        assert_eq!(max_age(Some("no-cache"), None), None);
        let later = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(3600));
        let got = max_age(None, Some(&later)).unwrap();
        assert!(got > Duration::from_secs(3500) && got <= Duration::from_secs(3600), "{got:?}");
        assert_eq!(max_age(None, Some("Thu, 01 Jan 1970 00:00:00 GMT")), None);
    }
}
