//! The polite HTTP fetcher of feeds mode: one request at a time per host with a delay
//! (robots.txt Crawl-delay honoured up to 30 s), robots.txt obeyed and cached per host,
//! connect and whole-response timeouts, at most 5 redirects, a body cap, retries with
//! backoff on 5xx and timeouts and on 429 after Retry-After, http/https only.
//!
//! **SSRF guard**: URLs taken from feeds (untrusted) may not reach loopback, private,
//! link-local, multicast or unspecified addresses unless the user allows it. Host names are
//! checked after DNS resolution (a resolver that drops such addresses, so a name cannot
//! resolve to 127.0.0.1 behind our back) and IP literals before the request and on every
//! redirect. Only the URLs the user listed are trusted, not where they redirect: redirects are
//! followed here, hop by hop, and every hop after the listed URL goes through the guard, so a
//! feed host's 302 to 169.254.169.254 is refused like an article link to it.
//!
//! Bodies are read raw (no automatic decompression) so that the WARC archive holds what the
//! server sent; [`super::http::decode_content`] undoes the content-coding for extraction.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode, Url};

/// Fetcher settings.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    pub user_agent: String,
    pub delay: Duration,
    pub connect_timeout: Duration,
    pub timeout: Duration,
    pub max_body_bytes: u64,
    pub max_retries: u32,
    pub allow_private_addresses: bool,
    /// First retry waits this long, doubling each time.
    pub backoff: Duration,
    /// Longest Retry-After honoured.
    pub max_retry_after: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            user_agent: concat!(
                "article-pipeline/",
                env!("CARGO_PKG_VERSION"),
                " (+https://github.com/article-pipeline)"
            )
            .into(),
            delay: Duration::from_secs(1),
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body_bytes: 10 << 20,
            max_retries: 3,
            allow_private_addresses: false,
            backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

/// Longest robots.txt Crawl-delay honoured.
const MAX_CRAWL_DELAY: Duration = Duration::from_secs(30);
const MAX_REDIRECTS: usize = 5;
/// How much of a robots.txt is read and parsed: RFC 9309 §2.5 asks crawlers to parse at least
/// the first 500 KiB; what follows is ignored (not an error, which would make the host
/// unavailable).
pub const ROBOTS_MAX_BYTES: u64 = 500 << 10;

/// What to do with a body longer than the cap.
#[derive(Debug, Clone, Copy)]
enum Cap {
    /// Fail with [`FetchError::TooLarge`] (pages, feeds).
    Fail(u64),
    /// Keep the first bytes (robots.txt).
    Truncate(u64),
}

/// Is a URL from the user (trusted) or from a feed (guarded)?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    User,
    Feed,
}

/// A response, as received.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub url: String,
    pub final_url: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Body as sent (content-coding not undone, transfer-coding undone).
    pub body: Vec<u8>,
    pub ip: Option<String>,
    /// RFC 3339 UTC.
    pub fetched_at: String,
    /// The request head as sent.
    pub request: Vec<u8>,
}

impl Fetched {
    pub fn header(&self, name: &str) -> Option<&str> {
        super::http::header(&self.headers, name)
    }

    /// The response as HTTP/1.1 bytes for a WARC record (Transfer-Encoding dropped, as the
    /// body is stored de-chunked).
    pub fn raw_response(&self) -> Vec<u8> {
        let reason = StatusCode::from_u16(self.status).ok().and_then(|s| s.canonical_reason()).unwrap_or("");
        let mut out = format!("HTTP/1.1 {} {reason}\r\n", self.status).into_bytes();
        for (k, v) in &self.headers {
            if k.eq_ignore_ascii_case("transfer-encoding") {
                continue;
            }
            out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.body);
        out
    }
}

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("{url}: refused: {why} (pass --allow-private-addresses to allow)")]
    Blocked { url: String, why: String },
    #[error("{url}: disallowed by robots.txt")]
    Robots { url: String },
    #[error("{url}: robots.txt is unavailable (server error or unreachable); will retry")]
    RobotsUnavailable { url: String },
    #[error("{url}: body larger than {limit} bytes")]
    TooLarge { url: String, limit: u64 },
    #[error("{url}: timed out")]
    Timeout { url: String },
    #[error("{url}: HTTP status {status}")]
    Status { url: String, status: u16 },
    #[error("{url}: too many redirects")]
    Redirects { url: String },
    #[error("{url}: redirect to {target}, which is not an http or https URL")]
    RedirectScheme { url: String, target: String },
    #[error("{url}: not an http or https URL")]
    Scheme { url: String },
    #[error("{url}: {message}")]
    Network { url: String, message: String },
    /// A bug: the task doing the fetch panicked.
    #[error("internal error (please report it): {message}")]
    Internal { message: String },
}

impl FetchError {
    /// A failure that may not happen again (timeouts, network errors, an unavailable
    /// robots.txt): the article is tried again later rather than given up.
    pub fn is_transient(&self) -> bool {
        matches!(self, FetchError::Timeout { .. } | FetchError::Network { .. } | FetchError::RobotsUnavailable { .. })
    }

    pub fn reason(&self) -> &'static str {
        match self {
            FetchError::Blocked { .. } => "ssrf_blocked",
            FetchError::Robots { .. } => "robots_disallowed",
            FetchError::RobotsUnavailable { .. } => "robots_unavailable",
            FetchError::TooLarge { .. } => "too_large",
            FetchError::Timeout { .. } => "timeout",
            FetchError::Status { .. } => "http_status",
            FetchError::Redirects { .. } => "too_many_redirects",
            FetchError::RedirectScheme { .. } => "bad_redirect",
            FetchError::Scheme { .. } => "bad_url",
            FetchError::Network { .. } => "network",
            FetchError::Internal { .. } => "internal_error",
        }
    }
}

/// Addresses a feed URL may not reach without `--allow-private-addresses`: loopback, private,
/// link-local, carrier-grade NAT, multicast, reserved and unspecified ones, and IPv6 addresses
/// that carry an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) judged by it.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || (o[0] == 100 && (o[1] & 0xc0) == 64) // carrier-grade NAT 100.64/10
                || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking 198.18/15
                || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments 192.0.0/24
                || o[0] >= 240 // reserved 240/4
                || o[0] == 0
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let embedded = |hi: u16, lo: u16| std::net::Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
            // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated; :: and ::1 too).
            if let Some(v4) = v6.to_ipv4() {
                return is_forbidden(IpAddr::V4(v4));
            }
            // NAT64 64:ff9b::/96 and IPv4-translated ::ffff:0:a.b.c.d reach the IPv4
            // address in their last 32 bits.
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || s[..6] == [0, 0, 0, 0, 0xffff, 0] {
                return is_forbidden(IpAddr::V4(embedded(s[6], s[7])));
            }
            // 6to4 2002::/16: the relay's IPv4 address in bits 16–48.
            if s[0] == 0x2002 {
                return is_forbidden(IpAddr::V4(embedded(s[1], s[2])));
            }
            // Teredo 2001::/32: the client's IPv4 address, inverted, in the last 32 bits.
            if s[0] == 0x2001 && s[1] == 0 {
                return is_forbidden(IpAddr::V4(embedded(!s[6], !s[7])));
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64 64:ff9b:1::/48
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated)
        }
    }
}

/// Error of the guarded resolver and redirect policy.
#[derive(Debug)]
struct Forbidden(String);

impl std::fmt::Display for Forbidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Forbidden {}

/// Resolves names and drops forbidden addresses.
struct GuardedResolver;

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = addrs.iter().copied().filter(|a| !is_forbidden(a.ip())).collect();
            if allowed.is_empty() {
                let shown = addrs.first().map(|a| a.ip().to_string()).unwrap_or_default();
                return Err(Box::new(Forbidden(format!("{host} resolves to the private address {shown}"))) as _);
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The IP-literal check for URLs (names are checked by the resolver).
fn literal_forbidden(url: &Url) -> Option<String> {
    match url.host() {
        Some(url::Host::Ipv4(ip)) if is_forbidden(IpAddr::V4(ip)) => Some(format!("{ip} is a private address")),
        Some(url::Host::Ipv6(ip)) if is_forbidden(IpAddr::V6(ip)) => Some(format!("{ip} is a private address")),
        Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") || d.ends_with(".localhost") => {
            Some(format!("{d} is a loopback name"))
        }
        _ => None,
    }
}

enum Robots {
    AllowAll,
    Rules(Box<texting_robots::Robot>),
    /// robots.txt could not be had (5xx, network, timeout): RFC 9309 §2.3.1.4 says assume
    /// complete disallow, but only for now. The host's pages fail as transient
    /// ([`FetchError::RobotsUnavailable`], kept pending by the feeds run) and robots.txt is
    /// asked for again after `retry_at`.
    Unreachable {
        retry_at: Instant,
    },
}

/// How long an unreachable robots.txt stands before it is asked for again.
const ROBOTS_RETRY: Duration = Duration::from_secs(60);

struct HostState {
    next_allowed: Instant,
    robots: Option<Robots>,
    delay: Duration,
}

/// Fetches pages politely; shared by all tasks of a run.
pub struct Fetcher {
    trusted: Client,
    guarded: Client,
    options: FetchOptions,
    hosts: Mutex<HashMap<String, Arc<tokio::sync::Mutex<HostState>>>>,
}

pub use crate::transport::install_crypto_provider;

impl Fetcher {
    pub fn new(options: FetchOptions) -> Result<Self, FetchError> {
        install_crypto_provider();
        let build = |guard: bool| {
            // Redirects are followed by `exchange`, which checks every hop.
            let mut b = Client::builder()
                .user_agent(options.user_agent.clone())
                .connect_timeout(options.connect_timeout)
                .timeout(options.timeout)
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy();
            if guard {
                b = b.dns_resolver(Arc::new(GuardedResolver));
            }
            b.build().map_err(|e| FetchError::Network { url: String::new(), message: e.to_string() })
        };
        let guard = !options.allow_private_addresses;
        Ok(Fetcher { trusted: build(false)?, guarded: build(guard)?, options, hosts: Mutex::new(HashMap::new()) })
    }

    pub fn options(&self) -> &FetchOptions {
        &self.options
    }

    fn host_state(&self, key: &str) -> Arc<tokio::sync::Mutex<HostState>> {
        let mut hosts = self.hosts.lock().expect("host map lock");
        hosts
            .entry(key.to_string())
            .or_insert_with(|| {
                Arc::new(tokio::sync::Mutex::new(HostState {
                    next_allowed: Instant::now(),
                    robots: None,
                    delay: self.options.delay,
                }))
            })
            .clone()
    }

    /// The checks of [`Fetcher::fetch`] that need no network: the scheme, and for a URL from a
    /// feed an IP literal or loopback name the guard refuses. A crawl settles such links at
    /// once instead of queuing them for a host turn.
    pub fn precheck(&self, url: &Url, trust: Trust) -> Result<(), FetchError> {
        let shown = || url.to_string();
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(FetchError::Scheme { url: shown() });
        }
        if trust == Trust::Feed
            && !self.options.allow_private_addresses
            && let Some(why) = literal_forbidden(url)
        {
            return Err(FetchError::Blocked { url: shown(), why });
        }
        Ok(())
    }

    /// Fetches `url` (with optional conditional-GET validators), waiting its turn on its host.
    pub async fn fetch(
        &self,
        url: &Url,
        trust: Trust,
        validators: Option<(&str, &str)>,
    ) -> Result<Fetched, FetchError> {
        self.fetch_until(url, trust, validators, &|_| false).await
    }

    /// [`Self::fetch`], except that a redirect to a URL `stop` accepts is not followed: that
    /// response (a 3xx with its `Location`) is returned. A feeds shard stops at a redirect to
    /// another shard's host, whose page that shard fetches ([`crate::pipeline::handoff`]).
    pub async fn fetch_until(
        &self,
        url: &Url,
        trust: Trust,
        validators: Option<(&str, &str)>,
        stop: &(dyn Fn(&Url) -> bool + Sync),
    ) -> Result<Fetched, FetchError> {
        let shown = url.to_string();
        self.precheck(url, trust)?;
        let key = super::frontier::host_key(url);
        let state = self.host_state(&key);
        // The host's lock is held to read robots.txt and to take a turn, not for the
        // exchange: how many requests run at once per host is the frontier's to decide
        // (one by default), and each turn starts at least the host's delay after the
        // previous one started and after the previous one ended.
        let mut host = state.lock().await;
        let stale = matches!(host.robots, Some(Robots::Unreachable { retry_at }) if Instant::now() >= retry_at);
        if host.robots.is_none() || stale {
            let robots = self.robots(trust, url, &host).await;
            if let Robots::Rules(r) = &robots
                && let Some(d) = r.delay
            {
                host.delay =
                    Duration::from_secs_f32(d.clamp(0.0, MAX_CRAWL_DELAY.as_secs_f32())).max(self.options.delay);
            }
            host.robots = Some(robots);
            // The robots.txt request counts: the page waits the host's delay after it.
            host.next_allowed = Instant::now() + host.delay;
        }
        let allowed = match host.robots.as_ref().expect("set above") {
            Robots::AllowAll => true,
            Robots::Unreachable { .. } => return Err(FetchError::RobotsUnavailable { url: shown }),
            Robots::Rules(r) => r.allowed(url.as_str()),
        };
        if !allowed {
            return Err(FetchError::Robots { url: shown });
        }
        let mut attempt = 0;
        loop {
            let start = host.next_allowed.max(Instant::now());
            host.next_allowed = start + host.delay;
            drop(host);
            tokio::time::sleep_until(start.into()).await;
            let result = self.exchange(trust, url, validators, Cap::Fail(self.options.max_body_bytes), stop).await;
            host = state.lock().await;
            host.next_allowed = host.next_allowed.max(Instant::now() + host.delay);
            let retry_in = match &result {
                Ok(f) if f.status == 429 => {
                    Some(retry_after(f.header("retry-after")).min(self.options.max_retry_after))
                }
                Ok(f) if f.status >= 500 => Some(self.options.backoff * 2u32.saturating_pow(attempt)),
                Err(FetchError::Timeout { .. }) => Some(self.options.backoff * 2u32.saturating_pow(attempt)),
                _ => None,
            };
            match retry_in {
                Some(wait) if attempt < self.options.max_retries => {
                    attempt += 1;
                    tracing::debug!("{shown}: retry {attempt} in {wait:?}");
                    host.next_allowed = host.next_allowed.max(Instant::now() + wait);
                }
                _ => return result,
            }
        }
    }

    /// When the host of `url` may be asked next (its politeness time), if known; None for a
    /// host not asked yet or whose turn is being taken right now.
    pub fn ready_at(&self, url: &Url) -> Option<Instant> {
        let key = super::frontier::host_key(url);
        let state = self.hosts.lock().expect("host map lock").get(&key).cloned()?;
        let host = state.try_lock().ok()?;
        Some(host.next_allowed)
    }

    /// The delay between two requests to the host of `url` (robots.txt's Crawl-delay when
    /// larger than `--delay-ms`).
    pub fn delay(&self, url: &Url) -> Duration {
        let key = super::frontier::host_key(url);
        let state = self.hosts.lock().expect("host map lock").get(&key).cloned();
        state.and_then(|s| s.try_lock().ok().map(|h| h.delay)).unwrap_or(self.options.delay)
    }

    async fn robots(&self, trust: Trust, url: &Url, host: &HostState) -> Robots {
        let Ok(robots_url) = url.join("/robots.txt") else { return Robots::AllowAll };
        tokio::time::sleep_until(host.next_allowed.into()).await;
        let r = self.exchange(trust, &robots_url, None, Cap::Truncate(ROBOTS_MAX_BYTES), &|_| false).await;
        match r {
            Ok(mut f) if (200..300).contains(&f.status) => {
                let raw = std::mem::take(&mut f.body);
                let body = robots_text(raw, f.header("content-encoding"));
                match texting_robots::Robot::new(&self.options.user_agent, &body) {
                    Ok(robot) => Robots::Rules(Box::new(robot)),
                    Err(_) => Robots::AllowAll,
                }
            }
            // RFC 9309 §2.3.1.3: "unavailable" (4xx) means no restrictions.
            Ok(f) if (400..500).contains(&f.status) => Robots::AllowAll,
            // Unreachable (5xx, network): complete disallow for now, asked again later.
            Ok(_) => Robots::Unreachable { retry_at: Instant::now() + ROBOTS_RETRY },
            Err(FetchError::Blocked { .. }) => Robots::AllowAll, // the page fetch reports it
            Err(_) => Robots::Unreachable { retry_at: Instant::now() + ROBOTS_RETRY },
        }
    }

    /// One request to `url` with its redirects followed, at most [`MAX_REDIRECTS`] of them.
    /// The first hop of a URL the user listed goes out unguarded; every later hop, and every
    /// hop of a URL from a feed, is checked: its scheme (http or https), an IP literal
    /// against the forbidden ranges, and a name through the guarded resolver. Errors name
    /// the URL asked for. A redirect to a URL `stop` accepts (once checked) is returned, not
    /// followed.
    async fn exchange(
        &self,
        trust: Trust,
        url: &Url,
        validators: Option<(&str, &str)>,
        cap: Cap,
        stop: &(dyn Fn(&Url) -> bool + Sync),
    ) -> Result<Fetched, FetchError> {
        let shown = url.to_string();
        let guard = !self.options.allow_private_addresses;
        let mut hop = url.clone();
        let mut client = if trust == Trust::User { &self.trusted } else { &self.guarded };
        for redirects in 0.. {
            let mut f = self.once(client, &hop, &shown, validators, cap).await?;
            let location = match f.status {
                301 | 302 | 303 | 307 | 308 => f.header("location").and_then(|l| hop.join(l.trim()).ok()),
                _ => None,
            };
            let Some(next) = location else {
                f.url = shown;
                return Ok(f);
            };
            if redirects >= MAX_REDIRECTS {
                return Err(FetchError::Redirects { url: shown });
            }
            if !matches!(next.scheme(), "http" | "https") || next.host().is_none() {
                return Err(FetchError::RedirectScheme { url: shown, target: next.to_string() });
            }
            if guard && let Some(why) = literal_forbidden(&next) {
                return Err(FetchError::Blocked { url: shown, why: format!("redirect to {next}: {why}") });
            }
            if stop(&next) {
                f.url = shown;
                return Ok(f);
            }
            tracing::debug!("{shown}: redirect {} to {next}", redirects + 1);
            hop = next;
            client = &self.guarded;
        }
        unreachable!("the loop returns")
    }

    /// One request, no redirect followed, body read with the cap; errors name `shown`.
    async fn once(
        &self,
        client: &Client,
        url: &Url,
        shown: &str,
        validators: Option<(&str, &str)>,
        cap: Cap,
    ) -> Result<Fetched, FetchError> {
        let shown = shown.to_string();
        let mut req = client.get(url.clone());
        if let Some((etag, modified)) = validators {
            if !etag.is_empty() {
                req = req.header("If-None-Match", etag);
            }
            if !modified.is_empty() {
                req = req.header("If-Modified-Since", modified);
            }
        }
        let fetched_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let mut resp = req.send().await.map_err(|e| classify(&shown, &e))?;
        let status = resp.status().as_u16();
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect();
        // The request that produced this response: after redirects, the one to the final URL
        // (its request line and Host), which is what a WARC request record must hold.
        let request_head = self.request_head(resp.url(), validators);
        let final_url = resp.url().to_string();
        let ip = resp.remote_addr().map(|a| a.ip().to_string());
        let mut body = Vec::new();
        match cap {
            Cap::Fail(limit) => {
                if resp.content_length().is_some_and(|n| n > limit) {
                    return Err(FetchError::TooLarge { url: shown, limit });
                }
                while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&shown, &e))? {
                    if body.len() as u64 + chunk.len() as u64 > limit {
                        return Err(FetchError::TooLarge { url: shown, limit });
                    }
                    body.extend_from_slice(&chunk);
                }
            }
            Cap::Truncate(limit) => {
                while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&shown, &e))? {
                    let room = (limit as usize).saturating_sub(body.len());
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if body.len() as u64 >= limit {
                        break; // the rest is not read; the connection is dropped
                    }
                }
            }
        }
        Ok(Fetched { url: shown, final_url, status, headers, body, ip, fetched_at, request: request_head.into_bytes() })
    }
}

impl Fetcher {
    /// The request head as sent to `url` (the same validators go with each hop).
    fn request_head(&self, url: &Url, validators: Option<(&str, &str)>) -> String {
        let mut head = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: {}\r\n",
            request_target(url),
            host_header(url),
            self.options.user_agent
        );
        if let Some((etag, modified)) = validators {
            if !etag.is_empty() {
                head.push_str(&format!("If-None-Match: {etag}\r\n"));
            }
            if !modified.is_empty() {
                head.push_str(&format!("If-Modified-Since: {modified}\r\n"));
            }
        }
        head.push_str("\r\n");
        head
    }
}

fn request_target(url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

fn host_header(url: &Url) -> String {
    match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
        None => url.host_str().unwrap_or("").to_string(),
    }
}

/// Seconds of a Retry-After header (delta-seconds or HTTP date); 1 s when absent or bad.
pub fn retry_after(value: Option<&str>) -> Duration {
    let Some(v) = value.map(str::trim) else { return Duration::from_secs(1) };
    if let Ok(secs) = v.parse::<u64>() {
        return Duration::from_secs(secs);
    }
    match httpdate::parse_http_date(v) {
        Ok(t) => t.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO),
        Err(_) => Duration::from_secs(1),
    }
}

/// The text of a robots.txt body: content-coding undone, at most [`ROBOTS_MAX_BYTES`] of it
/// (an undecodable body is no rules).
fn robots_text(raw: Vec<u8>, coding: Option<&str>) -> Vec<u8> {
    super::http::decode_content_prefix(raw, coding, ROBOTS_MAX_BYTES as usize).unwrap_or_default()
}

fn classify(url: &str, e: &reqwest::Error) -> FetchError {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(s) = source {
        if let Some(f) = s.downcast_ref::<Forbidden>() {
            return FetchError::Blocked { url: url.to_string(), why: f.0.clone() };
        }
        source = s.source();
    }
    if e.is_timeout() {
        return FetchError::Timeout { url: url.to_string() };
    }
    if e.is_redirect() {
        return FetchError::Redirects { url: url.to_string() };
    }
    let mut message = e.to_string();
    let mut s = std::error::Error::source(e);
    while let Some(inner) = s {
        message = format!("{message}: {inner}");
        s = inner.source();
    }
    FetchError::Network { url: url.to_string(), message }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any robots.txt body, under any coding, gives at most the cap of text, never a panic.
        #[test]
        fn robots_bodies_of_any_bytes_and_coding(
            raw in proptest::collection::vec(proptest::num::u8::ANY, 0..2000),
            coding in proptest::sample::select(vec![None, Some("gzip"), Some("deflate"), Some("br"), Some("identity"), Some("x-unknown")]),
        ) {
            let text = robots_text(raw, coding);
            proptest::prop_assert!(text.len() as u64 <= ROBOTS_MAX_BYTES);
        }
    }

    #[test]
    fn a_long_robots_txt_is_cut_at_the_cap_whatever_its_coding() {
        let mut body = b"User-agent: *\nDisallow: /private/\n".to_vec();
        body.resize(2 << 20, b'#');
        assert_eq!(robots_text(body.clone(), None).len() as u64, ROBOTS_MAX_BYTES);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &body).unwrap();
        let mut gz = gz.finish().unwrap();
        let text = robots_text(gz.clone(), Some("gzip"));
        assert_eq!(text.len() as u64, ROBOTS_MAX_BYTES);
        assert!(text.starts_with(b"User-agent: *\nDisallow: /private/"));
        // A compressed body cut short keeps what decodes.
        gz.truncate(gz.len() / 2);
        assert!(robots_text(gz, Some("gzip")).starts_with(b"User-agent: *\nDisallow: /private/"));
    }

    #[test]
    fn forbidden_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "224.0.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "100.64.0.1",
            // Found open by the audit of session 45: IPv6 spellings of private IPv4 addresses
            // and the deprecated site-local range.
            "::127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::7f00:1",
            "::ffff:0:7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2002:c0a8:101::",
            "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1
            "fec0::1",
            "198.18.0.1",
            "240.0.0.1",
            "192.0.0.8",
        ] {
            assert!(is_forbidden(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "172.32.0.1",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
            "2001:db8::1",
            "198.20.0.1",
        ] {
            assert!(!is_forbidden(ip.parse().unwrap()), "{ip}");
        }
        assert!(literal_forbidden(&Url::parse("http://127.0.0.1:8080/a").unwrap()).is_some());
        assert!(literal_forbidden(&Url::parse("http://[::1]/").unwrap()).is_some());
        assert!(literal_forbidden(&Url::parse("http://localhost/").unwrap()).is_some());
        assert!(literal_forbidden(&Url::parse("http://example.com/").unwrap()).is_none());
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after(Some("3")), Duration::from_secs(3));
        assert_eq!(retry_after(None), Duration::from_secs(1));
        assert_eq!(retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")), Duration::ZERO);
        assert_eq!(retry_after(Some("soon")), Duration::from_secs(1));
    }
}
