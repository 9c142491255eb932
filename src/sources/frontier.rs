//! The crawl frontier of feeds mode: pending work (feed polls and article fetches) queued per
//! host, handed out only to hosts whose politeness delay has elapsed and that have a free
//! connection, under a global connection limit.
//!
//! A host is an origin (scheme, host name, port), the scope robots.txt and its Crawl-delay
//! apply to (RFC 9309 §2.3), and the key the fetcher spaces requests by. Per registered
//! domain would merge `a.example.com` and `b.example.com`, which often are different
//! servers; per IP would need a DNS lookup before queueing. Tests and benchmarks use distinct
//! loopback addresses (127.0.0.1, 127.0.0.2, …) as distinct hosts.
//!
//! Scheduling: ready hosts sit in a min-heap keyed by the time they may be asked next, so a
//! free connection always goes to the host that has waited longest, never to a host still in
//! its delay while another is ready. Each host hands out one item per turn and goes back to
//! the heap after its delay, so a host with 5,000 pending articles gets one turn per delay
//! like a host with 5: nobody starves. Everything is synchronous and takes `now` as an
//! argument, so the schedule is tested without a clock or a network.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::time::Instant;

/// Limits of a frontier.
#[derive(Debug, Clone, Copy)]
pub struct FrontierLimits {
    /// Requests in flight over all hosts.
    pub max_connections: usize,
    /// Requests in flight to one host.
    pub per_host: usize,
}

impl Default for FrontierLimits {
    /// 64 connections (a news crawl polls hundreds of hosts; each is slow to answer), one
    /// per host (the polite default).
    fn default() -> Self {
        FrontierLimits { max_connections: 64, per_host: 1 }
    }
}

struct HostQueue<T> {
    items: VecDeque<T>,
    in_flight: usize,
    /// When this host may be asked next.
    ready_at: Instant,
    /// Whether the host is in the heap (it is when it has items and a free connection).
    scheduled: bool,
}

/// Counts for the progress line and the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrontierCounts {
    /// Hosts with pending items whose delay has elapsed.
    pub hosts_ready: usize,
    /// Hosts with pending items still in their delay (or at their connection limit).
    pub hosts_waiting: usize,
    /// Hosts with a request in flight.
    pub hosts_in_flight: usize,
    /// Items queued, not yet handed out.
    pub pending: usize,
    /// Items handed out and not yet done.
    pub in_flight: usize,
}

/// Pending items per host; see the module documentation.
pub struct Frontier<T> {
    limits: FrontierLimits,
    hosts: HashMap<String, HostQueue<T>>,
    /// (ready_at, sequence, host): the sequence keeps equal times in queueing order.
    heap: BinaryHeap<Reverse<(Instant, u64, String)>>,
    seq: u64,
    pending: usize,
    in_flight: usize,
}

impl<T> Frontier<T> {
    pub fn new(limits: FrontierLimits) -> Self {
        let limits =
            FrontierLimits { max_connections: limits.max_connections.max(1), per_host: limits.per_host.max(1) };
        Frontier { limits, hosts: HashMap::new(), heap: BinaryHeap::new(), seq: 0, pending: 0, in_flight: 0 }
    }

    /// Queues `item` for `host`. A host seen for the first time is ready at once.
    pub fn push(&mut self, host: &str, item: T, now: Instant) {
        let q = self.hosts.entry(host.to_string()).or_insert_with(|| HostQueue {
            items: VecDeque::new(),
            in_flight: 0,
            ready_at: now,
            scheduled: false,
        });
        q.items.push_back(item);
        self.pending += 1;
        self.schedule(host);
    }

    fn schedule(&mut self, host: &str) {
        let Some(q) = self.hosts.get_mut(host) else { return };
        if !q.scheduled && !q.items.is_empty() && q.in_flight < self.limits.per_host {
            q.scheduled = true;
            self.seq += 1;
            self.heap.push(Reverse((q.ready_at, self.seq, host.to_string())));
        }
    }

    /// The next item to start at `now`: from the host that became ready first, if any host
    /// is ready and a connection is free.
    pub fn pop(&mut self, now: Instant) -> Option<(String, T)> {
        if self.in_flight >= self.limits.max_connections {
            return None;
        }
        let host = loop {
            let Reverse((at, _, host)) = self.heap.peek()?;
            let q = &self.hosts[host];
            if q.ready_at > *at {
                // The host's time moved on after it was queued (`done` with a later time):
                // queue it again at its real time.
                let Reverse((_, _, host)) = self.heap.pop().expect("peeked");
                self.seq += 1;
                let at = self.hosts[&host].ready_at;
                self.heap.push(Reverse((at, self.seq, host)));
                continue;
            }
            if *at > now {
                return None;
            }
            break self.heap.pop().expect("peeked").0.2;
        };
        let q = self.hosts.get_mut(&host).expect("a scheduled host has a queue");
        q.scheduled = false;
        let item = q.items.pop_front().expect("a scheduled host has items");
        q.in_flight += 1;
        self.pending -= 1;
        self.in_flight += 1;
        // With more than one connection per host the host keeps its place until its limit.
        self.schedule(&host);
        Some((host, item))
    }

    /// An item of `host` finished; the host may be asked again at `ready_at` (now plus its
    /// delay, or later after a Retry-After). Hosts are kept after their last item (a few
    /// bytes each) so that an article queued later still waits for the host's delay.
    pub fn done(&mut self, host: &str, ready_at: Instant) {
        let Some(q) = self.hosts.get_mut(host) else { return };
        q.in_flight = q.in_flight.saturating_sub(1);
        q.ready_at = q.ready_at.max(ready_at);
        self.in_flight = self.in_flight.saturating_sub(1);
        // A host already in the heap is re-keyed lazily by `pop`.
        self.schedule(host);
    }

    /// When the next item could start, if one is queued (None: nothing queued, or every
    /// host with items is at its connection limit).
    pub fn next_ready(&self) -> Option<Instant> {
        if self.in_flight >= self.limits.max_connections {
            return None;
        }
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Items queued or in flight.
    pub fn is_idle(&self) -> bool {
        self.pending == 0 && self.in_flight == 0
    }

    pub fn counts(&self, now: Instant) -> FrontierCounts {
        let mut c = FrontierCounts { pending: self.pending, in_flight: self.in_flight, ..Default::default() };
        for q in self.hosts.values() {
            if q.in_flight > 0 {
                c.hosts_in_flight += 1;
            }
            if !q.items.is_empty() {
                if q.ready_at <= now && q.in_flight < self.limits.per_host {
                    c.hosts_ready += 1;
                } else {
                    c.hosts_waiting += 1;
                }
            }
        }
        c
    }
}

/// The frontier key of a URL: its origin, `scheme://host:port`.
pub fn host_key(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::Duration;

    fn limits(max_connections: usize, per_host: usize) -> FrontierLimits {
        FrontierLimits { max_connections, per_host }
    }

    #[test]
    fn a_free_connection_goes_to_a_ready_host_not_to_one_in_its_delay() {
        let t0 = Instant::now();
        let d = Duration::from_millis(200);
        let mut f = Frontier::new(limits(16, 1));
        for i in 0..60 {
            f.push("a", format!("a{i}"), t0);
        }
        for i in 0..60 {
            f.push("b", format!("b{i}"), t0);
        }
        // Both hosts start at once, although host a has 60 items queued before b's first.
        let (h1, _) = f.pop(t0).unwrap();
        let (h2, _) = f.pop(t0).unwrap();
        assert_eq!((h1.as_str(), h2.as_str()), ("a", "b"));
        // One request at a time per host: nothing more until one is done.
        assert!(f.pop(t0).is_none());
        f.done("a", t0 + d);
        assert!(f.pop(t0 + d / 2).is_none(), "host a is still in its delay");
        assert_eq!(f.pop(t0 + d).unwrap().0, "a");
    }

    #[test]
    fn hosts_take_turns_so_a_big_host_does_not_starve_a_small_one() {
        // Simulated clock, one connection: every request takes 10 ms; each host's delay is
        // 100 ms.
        let t0 = Instant::now();
        let mut f = Frontier::new(limits(1, 1));
        for i in 0..5000 {
            f.push("big", i, t0);
        }
        for i in 0..5 {
            f.push("small", i, t0);
        }
        let mut now = t0;
        let mut order = Vec::new();
        while order.len() < 20 {
            match f.pop(now) {
                Some((host, _)) => {
                    now += Duration::from_millis(10);
                    f.done(&host, now + Duration::from_millis(100));
                    order.push(host);
                }
                None => now = f.next_ready().expect("work is queued"),
            }
        }
        // The hosts alternate: the five small items are served within the first ten turns.
        let small: Vec<usize> = order.iter().enumerate().filter(|(_, h)| *h == "small").map(|(i, _)| i).collect();
        assert_eq!(small, [1, 3, 5, 7, 9], "{order:?}");
    }

    #[test]
    fn the_global_limit_caps_requests_in_flight() {
        let t0 = Instant::now();
        let mut f = Frontier::new(limits(3, 1));
        for h in 0..10 {
            f.push(&format!("h{h}"), h, t0);
        }
        let started: Vec<_> = std::iter::from_fn(|| f.pop(t0)).collect();
        assert_eq!(started.len(), 3);
        assert_eq!(f.next_ready(), None);
        f.done(&started[0].0, t0);
        assert!(f.pop(t0).is_some());
        let c = f.counts(t0);
        assert_eq!((c.in_flight, c.pending, c.hosts_in_flight, c.hosts_ready), (3, 6, 3, 6));
    }

    #[test]
    fn per_host_connections_above_one_run_in_parallel() {
        let t0 = Instant::now();
        let mut f = Frontier::new(limits(10, 2));
        for i in 0..3 {
            f.push("a", i, t0);
        }
        assert!(f.pop(t0).is_some() && f.pop(t0).is_some());
        assert!(f.pop(t0).is_none(), "two per host");
        f.done("a", t0);
        assert_eq!(f.pop(t0).unwrap().1, 2);
        f.done("a", t0);
        f.done("a", t0);
        assert!(f.is_idle());
    }

    proptest! {
        /// Whatever the operations: never more in flight than the limits, per host and in
        /// all; every item pushed comes out exactly once, in its host's order.
        #[test]
        fn limits_hold_and_items_come_out_once_in_order(
            ops in proptest::collection::vec((0u8..4, 0usize..5, 0u64..50), 1..300),
            max_connections in 1usize..5, per_host in 1usize..3,
        ) {
            let t0 = Instant::now();
            let mut f = Frontier::new(limits(max_connections, per_host));
            let mut now = t0;
            let mut next = 0u32;
            let mut out: HashMap<String, Vec<u32>> = HashMap::new();
            let mut flying: Vec<String> = Vec::new();
            let mut pushed: HashMap<String, Vec<u32>> = HashMap::new();
            for (op, host, ms) in ops {
                let host = format!("h{host}");
                now += Duration::from_millis(ms);
                match op {
                    0 | 1 => {
                        f.push(&host, next, now);
                        pushed.entry(host).or_default().push(next);
                        next += 1;
                    }
                    2 => if let Some((h, item)) = f.pop(now) {
                        out.entry(h.clone()).or_default().push(item);
                        flying.push(h);
                    },
                    _ => if !flying.is_empty() {
                        let h = flying.remove(ms as usize % flying.len());
                        f.done(&h, now + Duration::from_millis(ms));
                    },
                }
                prop_assert!(flying.len() <= max_connections);
                for h in &flying {
                    prop_assert!(flying.iter().filter(|x| *x == h).count() <= per_host);
                }
            }
            // Drain.
            loop {
                while let Some(h) = flying.pop() { f.done(&h, now); }
                match f.pop(now) {
                    Some((h, item)) => { out.entry(h.clone()).or_default().push(item); flying.push(h); }
                    None => match f.next_ready() {
                        Some(t) => now = now.max(t),
                        None if flying.is_empty() => break,
                        None => {}
                    },
                }
            }
            prop_assert_eq!(out, pushed);
            prop_assert!(f.is_idle());
        }
    }
}
