//! Site memory: what repeats across a site's pages is the site, not the article.
//!
//! A page is cut into text blocks (the words between two block-level tags); each block is
//! known by a 64-bit hash of its words (lower case, digits folded to `0`, so "3 comments" and
//! "12 comments" are one block). For each host the memory counts on how many of its pages each
//! block appears. Navigation, teaser rails, "most read" lists, newsletter and cookie boxes,
//! footers and author boxes come back page after page; an article's sentences do not. A block
//! seen on at least [`SiteMemoryOptions::share`] of a host's pages (and on at least
//! [`SiteMemoryOptions::min_pages`] pages in all) is furniture: the extractor
//! ([`crate::extract`]) lets its tokens count for nothing in the maximum subsequence (a score
//! of at most 0, [`crate::extract::FURNITURE_SCORE`]) and drops it from the chosen span.
//!
//! A host is counted per template ([`template`]): pages whose id/class vocabularies are alike
//! (Jaccard of their sketches at least [`SiteMemoryOptions::template_similarity`]) share
//! counts, so a redesign's furniture is measured against the pages of its own layout.
//!
//! Bounded: at most [`SiteMemoryOptions::max_hosts`] hosts (the least recently used host goes
//! first) and [`SiteMemoryOptions::max_blocks`] block counts per host (when a host's table is
//! full, the blocks seen on one page only are dropped first: lossy counting, Manku & Motwani
//! 2002, keeps what repeats). The memory is plain data ([`SiteMemory::to_bytes`]): it is saved
//! with the run's state, so a resumed run or the next feed poll starts warm.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::html::normalize::HashKeyed;
use crate::html::{Token, TokenKind, tags};

pub mod template;

/// The knobs of site memory, declared once: `[site_memory]` in the config file and the flags of
/// `pipeline --warc/--feeds`, `eval` and `bootstrap` take this struct (clap ids
/// `site_memory_<field>`, apart from the commands' own options).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, default)]
pub struct SiteMemoryOptions {
    /// Use site memory once a host has this many pages in memory; 0 turns it off (the memory
    /// is neither learned nor used). Default 3 with [`share`](Self::share) 0.3, chosen by
    /// leave-one-dataset-out over big9 and the dragnet sites (README, "Site memory").
    #[arg(long = "site-memory-pages", id = "site_memory_min_pages", default_value_t = SiteMemoryOptions::default().min_pages)]
    pub min_pages: u32,
    /// A block on at least this share of a host's pages is the site's furniture.
    #[arg(long = "site-memory-share", id = "site_memory_share", default_value_t = SiteMemoryOptions::default().share)]
    pub share: f64,
    /// Hosts kept in memory; the least recently used is forgotten first.
    #[arg(long = "site-memory-hosts", id = "site_memory_max_hosts", default_value_t = SiteMemoryOptions::default().max_hosts)]
    pub max_hosts: usize,
    /// Block counts kept per host.
    #[arg(long = "site-memory-blocks", id = "site_memory_max_blocks", default_value_t = SiteMemoryOptions::default().max_blocks)]
    pub max_blocks: usize,
    /// Pages of a host whose id/class words are at least this alike (Jaccard) share a
    /// template and its counts; 0 counts every page of a host together. At most
    /// [`MAX_TEMPLATES`] templates a host, each counted as a host against `max_hosts`.
    #[arg(long = "site-memory-template-similarity", id = "site_memory_template_similarity", default_value_t = SiteMemoryOptions::default().template_similarity)]
    pub template_similarity: f64,
    /// Start from this memory (written by `pipeline bootstrap --site-memory-out`, or a run's
    /// `site_memory.bin`) instead of an empty one; a resumed run starts from its own.
    #[arg(long = "site-memory-from", id = "site_memory_from", value_name = "FILE")]
    pub from: Option<std::path::PathBuf>,
    /// WARC runs: count the blocks of every input's pages first, then extract, so each page is
    /// judged by all the run's pages of its host (its own blocks taken out) and not only by
    /// those before it: the first pages of every host are judged too. The inputs are read
    /// twice. A resumed run keeps the counts of its first pass (`OUT/site_memory.bin`).
    /// `pipeline eval` always counts first; a feeds run cannot (its pages arrive poll by
    /// poll).
    #[arg(long = "site-memory-two-pass", id = "site_memory_two_pass")]
    pub two_pass: bool,
    /// With [`two_pass`](Self::two_pass): the first pass counts one input in this many (the
    /// first, the N+1st, …), so a large crawl is not read twice whole. Pages of the other
    /// inputs are judged by those counts and by the pages extracted before them, and counted
    /// as they are extracted, as online. 1 counts every input.
    #[arg(long = "site-memory-first-pass-every", id = "site_memory_first_pass_every", default_value_t = SiteMemoryOptions::default().first_pass_every)]
    pub first_pass_every: u32,
}

impl Default for SiteMemoryOptions {
    fn default() -> Self {
        SiteMemoryOptions {
            min_pages: 3,
            share: 0.3,
            max_hosts: 10_000,
            max_blocks: 1024,
            template_similarity: 0.5,
            from: None,
            two_pass: false,
            first_pass_every: 1,
        }
    }
}

impl SiteMemoryOptions {
    /// Every problem of these options, for validating a configuration whole.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !(self.share > 0.0 && self.share <= 1.0) {
            out.push(format!("site_memory.share must be in (0, 1], got {}", self.share));
        }
        if self.min_pages > 0 && self.max_hosts == 0 {
            out.push("site_memory.max_hosts must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.template_similarity) {
            out.push(format!("site_memory.template_similarity must be in [0, 1], got {}", self.template_similarity));
        }
        if self.min_pages > 0 && self.max_blocks < 16 {
            out.push(format!("site_memory.max_blocks must be at least 16, got {}", self.max_blocks));
        }
        if self.first_pass_every == 0 {
            out.push("site_memory.first_pass_every must be at least 1".into());
        }
        if let Some(f) = &self.from
            && !f.is_file()
        {
            out.push(format!("site_memory.from: `{}` is not a file", f.display()));
        }
        out
    }

    pub fn enabled(&self) -> bool {
        self.min_pages > 0
    }
}

/// One text block of a page: the hash of its words and its first and last text token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub hash: u64,
    pub start: usize,
    pub end: usize,
    /// The block is (in) a heading of more than [`HEADING_LABEL_WORDS`] words: never
    /// furniture, as a page's own headline and subheadings come back on its siblings' pages in
    /// "recent posts" lists. Shorter headings are section labels and count as other blocks
    /// (the recurring subheads of a kind of page, "Ingredients", "Directions", with them).
    pub heading: bool,
}

/// The page's text blocks, in order: runs of text tokens between block-level tags
/// ([`tags::is_block`]), each with at least one word; and the sketch of its layout, from the
/// id/class words of its start tags ([`template::TagWords`]).
pub fn blocks(page: &str, tokens: &[Token]) -> (Vec<Block>, Vec<u64>) {
    let mut out = Vec::new();
    let mut layout = template::TagWords::default();
    // Each block's text in lower case, with numbers folded (kept only while the block is
    // short enough to be known that way) and as written; hashed once when the block closes.
    // The same hashes as feeding XXH3's streaming state token by token (saved memories stay
    // valid), which cost four state updates a token: 3 % of a crawl of small pages.
    let (mut folded, mut exact) = (Vec::<u8>::new(), Vec::<u8>::new());
    let mut first: Option<usize> = None;
    let mut last = 0;
    let mut words = 0usize;
    let mut heading = false;
    let mut close =
        |folded: &mut Vec<u8>, exact: &mut Vec<u8>, first: &mut Option<usize>, last, words: &mut usize, heading| {
            if let Some(start) = first.take()
                && *words > 0
            {
                let hash = xxh3_64(if *words <= FOLD_MAX_WORDS { folded } else { exact });
                let heading = heading && *words > HEADING_LABEL_WORDS;
                out.push(Block { hash, start, end: last, heading });
            }
            folded.clear();
            exact.clear();
            *words = 0;
        };
    for (i, t) in tokens.iter().enumerate() {
        if t.kind.is_tag() {
            if t.kind == TokenKind::StartTag {
                layout.tag(t.raw_bytes(page));
            }
            if tags::is_block(t.tag) {
                close(&mut folded, &mut exact, &mut first, last, &mut words, heading);
            }
            if tags::is_heading(t.tag) {
                heading = t.kind == TokenKind::StartTag;
            }
            continue;
        }
        first.get_or_insert(i);
        last = i;
        if t.kind == TokenKind::Word {
            words += 1;
        }
        let from = exact.len();
        exact.extend(t.raw_bytes(page).iter().map(u8::to_ascii_lowercase));
        exact.push(b' ');
        if words <= FOLD_MAX_WORDS {
            if t.numeric {
                folded.extend_from_slice(b"0 ");
            } else {
                folded.extend_from_slice(&exact[from..]);
            }
        }
    }
    close(&mut folded, &mut exact, &mut first, last, &mut words, heading);
    (out, layout.sketch())
}

/// A heading of at most this many words is a section's label ("JUST WATCHED", "MUST WATCH",
/// "Latest news", "Recent stories"), not a headline: it is furniture when it repeats as other
/// blocks are. On big9 (pool = the scored pages) 0.9645 → 0.9650, the dragnet sites unchanged
/// (0.9145); 3, 4 and 6 words gave the same on big9 and lost a little on the dragnet sites
/// (README, "Site memory").
pub const HEADING_LABEL_WORDS: usize = 2;

/// Blocks of at most this many words are known with every number the same ("3 comments",
/// "Updated 5 hours ago", "© 2012"); longer blocks as written, so two sentences that differ
/// in a number (a score, a price, a date) stay two.
const FOLD_MAX_WORDS: usize = 8;

/// Pages a first pass (a two-pass WARC run's, `pipeline eval`'s) tokenizes at once and then
/// counts in order: enough to keep every thread busy, few enough to bound its memory.
pub const FIRST_PASS_BATCH_PAGES: usize = 64;

/// A page as site memory counts it: its layout sketch and its block hashes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageBlocks {
    pub sketch: Vec<u64>,
    pub hashes: Vec<u64>,
}

/// The [`PageBlocks`] of a page's bytes, tokenized as the extractor does (the charset its
/// HTTP header names, if any, and `lenient_raw_text` as its option): what a first pass over a
/// pool counts, without scoring the page. None when the page cannot be decoded.
pub fn page_blocks(html: &[u8], http_charset: Option<&str>, lenient_raw_text: bool) -> Option<PageBlocks> {
    let options = crate::html::TokenizerOptions {
        lenient_raw_text,
        http_charset: http_charset.map(str::to_string),
        ..Default::default()
    };
    let t = crate::html::tokenize(html, options).ok()?;
    let (blocks, sketch) = blocks(&t.page, &t.sink);
    Some(PageBlocks { sketch, hashes: blocks.iter().map(|b| b.hash).collect() })
}

/// Where the extractor finds what the memory knows of a page's host, once its pass has read
/// the page's layout ([`template::TagWords`]): a read of the memory (online runs; a lock is
/// taken only for the lookup) or a snapshot taken beforehand (two-pass runs).
pub trait SiteLookup {
    fn view(&self, sketch: &[u64]) -> HostView;
}

impl<F: Fn(&[u64]) -> HostView> SiteLookup for F {
    fn view(&self, sketch: &[u64]) -> HostView {
        self(sketch)
    }
}

/// A count within the page's template and within its whole host (every template).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub template: u32,
    pub host: u32,
}

/// The block counts of one host's template.
#[derive(Debug, Clone, Default)]
pub struct HostMemory {
    /// The layout sketch of the template's first page ([`template::TagWords::sketch`]); None for a memory
    /// saved before templates (it takes the next page's).
    leader: Option<Vec<u64>>,
    pages: u32,
    /// Keyed by the block hashes themselves (XXH3 values: uniform already, no SipHash).
    counts: HashKeyed<u32>,
    /// When the host was last touched (the memory's clock), for forgetting the least recent.
    last_used: u64,
}

impl HostMemory {
    pub fn pages(&self) -> u32 {
        self.pages
    }

    /// Counts one page's blocks (each distinct block once). When the new blocks do not fit,
    /// the blocks seen on a single earlier page are dropped first (after this page's repeats
    /// are counted, so a block on its second page is kept): lossy counting with the page as
    /// the bucket. Whatever still does not fit waits for a later page.
    fn observe(&mut self, hashes: &[u64], max_blocks: usize) {
        self.pages = self.pages.saturating_add(1);
        let mut seen: Vec<u64> = hashes.to_vec();
        seen.sort_unstable();
        seen.dedup();
        seen.retain(|h| match self.counts.get_mut(h) {
            Some(c) => {
                *c = c.saturating_add(1);
                false
            }
            None => true,
        });
        if self.counts.len() + seen.len() > max_blocks {
            self.counts.retain(|_, c| *c > 1);
        }
        for h in seen {
            if self.counts.len() >= max_blocks {
                break;
            }
            self.counts.insert(h, 1);
        }
    }
}

/// A host's templates as they were when a page was judged ([`SiteMemory::snapshot`]): each
/// template's counts sit behind an `Arc`, so no lock is held while the page is extracted.
#[derive(Debug, Clone, Default)]
pub struct HostSnapshot {
    templates: Vec<Arc<HostMemory>>,
    /// The page's template among them (None: a layout the host has not shown yet).
    own: Option<usize>,
}

/// A host's memory as seen from one of its pages.
#[derive(Debug, Clone, Default)]
pub struct HostView {
    snapshot: HostSnapshot,
    /// The page's own blocks are already counted (two-pass runs): take them out.
    includes_page: bool,
}

impl HostView {
    pub fn new(snapshot: HostSnapshot, includes_page: bool) -> Self {
        HostView { snapshot, includes_page }
    }

    /// Pages counted, not including the page being extracted: of the page's template, and of
    /// its whole host.
    pub fn pages(&self) -> Counts {
        let s = &self.snapshot;
        let less = u32::from(self.includes_page);
        let own = s.own.map_or(0, |k| s.templates[k].pages);
        let host = s.templates.iter().map(|t| t.pages).fold(0u32, u32::saturating_add);
        Counts { template: own.saturating_sub(less), host: host.saturating_sub(less) }
    }

    /// Of those, the pages holding this block.
    pub fn count(&self, hash: u64) -> Counts {
        let s = &self.snapshot;
        let less = u32::from(self.includes_page);
        let of = |t: &HostMemory| t.counts.get(&hash).copied().unwrap_or(0);
        let own = s.own.map_or(0, |k| of(&s.templates[k]));
        let host = s.templates.iter().map(|t| of(t)).fold(0u32, u32::saturating_add);
        Counts { template: own.saturating_sub(less), host: host.saturating_sub(less) }
    }
}

/// Pages a block must be seen on before it can be furniture, whatever the share: an article
/// crawled twice (an update, a revisit) must not lose its text to its own copy.
pub const MIN_REPEATS: u32 = 3;

/// Is a block of count `count` furniture among `pages` pages?
pub fn is_furniture(count: u32, pages: u32, o: &SiteMemoryOptions) -> bool {
    o.enabled() && pages >= o.min_pages && count >= MIN_REPEATS && f64::from(count) >= o.share * f64::from(pages)
}

/// Is a block furniture of the page's template, or of its whole host? The template finds a
/// redesign's furniture among its own pages; the host, what every layout of it carries (a
/// footer line kept through redesigns, and the furniture of a layout met once).
pub fn is_site_furniture(count: Counts, pages: Counts, o: &SiteMemoryOptions) -> bool {
    is_furniture(count.template, pages.template, o) || is_furniture(count.host, pages.host, o)
}

/// Block counts per host, bounded (see the module comment). A host's counts sit behind an
/// `Arc`: an extraction thread takes a snapshot ([`snapshot`](Self::snapshot)) without holding
/// a lock while it extracts, and counting a page copies the host's table only while such a
/// snapshot is alive.
#[derive(Debug, Clone, Default)]
pub struct SiteMemory {
    hosts: HashMap<String, Arc<HostMemory>>,
    clock: u64,
    options: SiteMemoryOptions,
    /// The inputs (as their pages name them) whose pages a two-pass run's first pass counted.
    counted_ahead: Option<HashSet<String>>,
}

impl SiteMemory {
    pub fn new(options: SiteMemoryOptions) -> Self {
        SiteMemory { hosts: HashMap::new(), clock: 0, options, counted_ahead: None }
    }

    /// Marks the memory as holding every page of these inputs ([`SiteMemoryOptions::two_pass`]):
    /// their pages are judged with their own blocks taken out ([`HostView::new`]`(_, true)`)
    /// and not counted again; other pages are counted as they are extracted.
    pub fn set_counted_ahead(&mut self, inputs: HashSet<String>) {
        self.counted_ahead = Some(inputs);
    }

    /// Were the pages of this input (a page's source file) counted ahead?
    pub fn counted_ahead(&self, input: Option<&str>) -> bool {
        matches!((&self.counted_ahead, input), (Some(set), Some(i)) if set.contains(i))
    }

    /// A memory read back from a run's state, under this run's options (capacity included).
    pub fn with_options(mut self, options: SiteMemoryOptions) -> Self {
        self.options = options;
        while self.hosts.len() > self.options.max_hosts.max(1) {
            self.forget_least_recent();
        }
        self
    }

    pub fn options(&self) -> &SiteMemoryOptions {
        &self.options
    }

    pub fn hosts(&self) -> usize {
        self.hosts.len()
    }

    /// The host's templates in memory, with their slots (at most [`MAX_TEMPLATES`] lookups,
    /// one key buffer).
    fn templates(&self, host: &str) -> Vec<(usize, &Arc<HostMemory>)> {
        let mut key = String::with_capacity(host.len() + 2);
        (0..MAX_TEMPLATES)
            .filter_map(|k| {
                key.clear();
                template_key_into(host, k, &mut key);
                self.hosts.get(key.as_str()).map(|t| (k, t))
            })
            .collect()
    }

    /// The template among `templates` (a host's, from [`templates`](Self::templates)) a page
    /// with this sketch belongs to: `Ok(slot)` of the most alike at or above the threshold (or
    /// the most alike of all when the host has [`MAX_TEMPLATES`] already), else `Err(free
    /// slot)`.
    fn choose(&self, templates: &[(usize, &Arc<HostMemory>)], sketch: &[u64]) -> Result<usize, usize> {
        let mut best: Option<(usize, f64)> = None;
        for &(k, t) in templates {
            // A memory saved before templates is one template that takes any page.
            let sim = t.leader.as_deref().map_or(1.0, |l| template::sketch_similarity(l, sketch));
            if best.is_none_or(|(_, b)| sim > b) {
                best = Some((k, sim));
            }
        }
        let free = (0..MAX_TEMPLATES).find(|k| !templates.iter().any(|(t, _)| t == k));
        match (best, free) {
            (Some((k, sim)), _) if sim >= self.options.template_similarity => Ok(k),
            (_, Some(free)) => Err(free),
            (Some((k, _)), None) => Ok(k),
            (None, None) => Err(0),
        }
    }

    /// Counts a page of `host` with this layout sketch ([`template::TagWords::sketch`]) and these block
    /// hashes, under the template it joins or starts; returns that template's slot.
    pub fn observe(&mut self, host: &str, sketch: &[u64], hashes: &[u64]) -> usize {
        self.clock += 1;
        let slot = self.choose(&self.templates(host), sketch).unwrap_or_else(|free| free);
        let mut key = String::new();
        template_key_into(host, slot, &mut key);
        if !self.hosts.contains_key(&key) && self.hosts.len() >= self.options.max_hosts.max(1) {
            self.forget_least_recent();
        }
        let clock = self.clock;
        let max_blocks = self.options.max_blocks;
        let h = Arc::make_mut(self.hosts.entry(key).or_default());
        h.leader.get_or_insert_with(|| sketch.to_vec());
        h.last_used = clock;
        h.observe(hashes, max_blocks);
        slot
    }

    /// The host's templates as they are now, for a page not yet counted with this sketch (online
    /// runs: learn after extracting), to judge it by while the memory goes on.
    pub fn snapshot(&self, host: &str, sketch: &[u64]) -> HostSnapshot {
        let templates = self.templates(host);
        let slot = self.choose(&templates, sketch).ok();
        Self::snapshot_of(&templates, slot)
    }

    /// The host's templates, for a page already counted in template `slot` (two-pass runs:
    /// judge it with [`HostView::new`]`(_, true)`, its own blocks taken out).
    pub fn snapshot_counted(&self, host: &str, slot: usize) -> HostSnapshot {
        Self::snapshot_of(&self.templates(host), Some(slot))
    }

    fn snapshot_of(templates: &[(usize, &Arc<HostMemory>)], slot: Option<usize>) -> HostSnapshot {
        HostSnapshot {
            own: templates.iter().position(|(k, _)| Some(*k) == slot),
            templates: templates.iter().map(|(_, t)| Arc::clone(t)).collect(),
        }
    }

    /// Pages counted for a host, over all its templates.
    pub fn pages(&self, host: &str) -> u32 {
        self.templates(host).iter().map(|(_, t)| t.pages).sum()
    }

    /// The memory as bytes (zstd-compressed), for a run's state: per host its name, page
    /// count, clock and block counts, in a fixed little-endian layout.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut raw = Vec::new();
        raw.extend_from_slice(MAGIC);
        raw.extend_from_slice(&self.clock.to_le_bytes());
        raw.extend_from_slice(&(self.hosts.len() as u64).to_le_bytes());
        let mut names: Vec<&String> = self.hosts.keys().collect();
        names.sort();
        for name in names {
            let h = &self.hosts[name];
            raw.extend_from_slice(&(name.len() as u32).to_le_bytes());
            raw.extend_from_slice(name.as_bytes());
            raw.extend_from_slice(&h.pages.to_le_bytes());
            raw.extend_from_slice(&h.last_used.to_le_bytes());
            match &h.leader {
                None => raw.push(0),
                Some(l) => {
                    raw.push(1);
                    raw.extend_from_slice(&(l.len() as u32).to_le_bytes());
                    for x in l {
                        raw.extend_from_slice(&x.to_le_bytes());
                    }
                }
            }
            raw.extend_from_slice(&(h.counts.len() as u32).to_le_bytes());
            let mut counts: Vec<(&u64, &u32)> = h.counts.iter().collect();
            counts.sort();
            for (k, c) in counts {
                raw.extend_from_slice(&k.to_le_bytes());
                raw.extend_from_slice(&c.to_le_bytes());
            }
        }
        zstd::encode_all(raw.as_slice(), 3).expect("compressing to memory does not fail")
    }

    /// Reads [`to_bytes`](Self::to_bytes) back under `options` (hosts and blocks beyond its
    /// bounds are dropped). Damaged bytes give an error naming what is wrong and where.
    pub fn from_bytes(bytes: &[u8], options: SiteMemoryOptions) -> Result<SiteMemory, String> {
        let raw = zstd::decode_all(bytes).map_err(|e| format!("not zstd: {e}"))?;
        let mut r = Reader { b: &raw, at: 0 };
        // Version 1 (before templates) has no leader sketches: each host is one template.
        let templates = match r.take(MAGIC.len())? {
            m if m == MAGIC => true,
            m if m == MAGIC_V1 => false,
            _ => return Err("not a site memory (bad magic)".into()),
        };
        let clock = r.u64()?;
        let n = r.u64()?;
        let mut m = SiteMemory { hosts: HashMap::new(), clock, options, counted_ahead: None };
        for _ in 0..n {
            let len = r.u32()? as usize;
            let at = r.at;
            let name = std::str::from_utf8(r.take(len)?).map_err(|_| format!("host name at byte {at} is not UTF-8"))?;
            let name = name.to_string();
            let pages = r.u32()?;
            let last_used = r.u64()?;
            let leader = if templates && r.take(1)?[0] != 0 {
                let n = r.u32()? as usize;
                if n > template::SKETCH_WORDS {
                    return Err(format!("a template sketch of {n} words at byte {}", r.at));
                }
                Some((0..n).map(|_| r.u64()).collect::<Result<Vec<u64>, String>>()?)
            } else {
                None
            };
            let k = r.u32()? as usize;
            let mut counts = HashKeyed::with_capacity_and_hasher(k.min(m.options.max_blocks), Default::default());
            for _ in 0..k {
                let (h, c) = (r.u64()?, r.u32()?);
                if counts.len() < m.options.max_blocks {
                    counts.insert(h, c);
                }
            }
            m.hosts.insert(name, Arc::new(HostMemory { leader, pages, counts, last_used }));
        }
        if r.at != raw.len() {
            return Err(format!("{} bytes after the last host", raw.len() - r.at));
        }
        let options = m.options.clone();
        Ok(m.with_options(options))
    }

    fn forget_least_recent(&mut self) {
        if let Some(k) = self.hosts.iter().min_by_key(|(_, h)| h.last_used).map(|(k, _)| k.clone()) {
            self.hosts.remove(&k);
        }
    }
}

const MAGIC: &[u8] = b"APSITEMEM2";
const MAGIC_V1: &[u8] = b"APSITEMEM1";

/// Templates kept per host (a crawl of a site over years meets a redesign every few years;
/// big9's sites fall into four to six each). Beyond it, a page joins the most alike.
pub const MAX_TEMPLATES: usize = 8;

/// Writes the memory's key of template `k` of `host` into `key`: the host itself for the
/// first (so a memory saved before templates reads as each host's first template), `host#k`
/// after.
fn template_key_into(host: &str, k: usize, key: &mut String) {
    const { assert!(MAX_TEMPLATES <= 10, "one digit a slot") };
    key.push_str(host);
    if k > 0 {
        key.push('#');
        key.push(char::from(b'0' + k as u8));
    }
}

/// Reads the fixed layout of [`SiteMemory::to_bytes`].
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| format!("cut short at byte {} (wanted {n} more)", self.at))?;
        let out = &self.b[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
}

/// The key a page's memory is kept under: its URL's host (lower case, without `www.`).
///
/// A page replayed from a web archive is keyed by the host it was captured from: in
/// `https://web.archive.org/web/20090301020158/http://arstechnica.com/…` the site is
/// arstechnica.com, not the archive, whose replays of every site would otherwise share one
/// memory (and one bootstrap source). Wayback rewrites every link of a replayed page, its
/// `<link rel=canonical>` too, so a crawl or a pool of archived pages meets these URLs
/// everywhere (big9 holds 276 such pages).
pub fn host_key(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let h = u.host_str()?.to_ascii_lowercase();
    let h = archived_host(&u, &h).unwrap_or(h);
    Some(h.strip_prefix("www.").map(str::to_string).unwrap_or(h))
}

/// The original host of a Wayback replay URL: a path segment that is a capture timestamp (4 to
/// 14 digits, with or without a replay flag such as `id_`), followed by the captured URL. The
/// captured URL must carry its scheme, unless the replaying host is the Internet Archive's or
/// Archive-It's, so that an ordinary path such as `/2009/example.com-review` stays the site's.
fn archived_host(u: &url::Url, host: &str) -> Option<String> {
    let path = u.path();
    let archive = ["archive.org", "archive-it.org"]
        .iter()
        .any(|a| host.strip_suffix(a).is_some_and(|sub| sub.is_empty() || sub.ends_with('.')));
    let mut rest = path;
    while let Some(seg_end) = rest.get(1..).and_then(|r| r.find('/')).map(|i| i + 1) {
        let seg = &rest[1..seg_end];
        let digits = seg.bytes().take_while(u8::is_ascii_digit).count();
        let flag = &seg[digits..];
        let stamp = (4..=14).contains(&digits) && (flag.is_empty() || (flag.len() == 3 && flag.ends_with('_')));
        let captured = &rest[seg_end + 1..];
        if stamp && !captured.is_empty() {
            let lower = captured.to_ascii_lowercase();
            let with_scheme = lower.starts_with("http:/") || lower.starts_with("https:/");
            if with_scheme || archive {
                // `http:/x` (a slash lost to path normalisation) reads as `http://x`.
                let after = lower.split_once(':').map_or(lower.as_str(), |(_, a)| a).trim_start_matches('/');
                let candidate = if with_scheme { format!("http://{after}") } else { format!("http://{lower}") };
                // Archive-It puts a collection number before the timestamp: read on.
                let parsed = url::Url::parse(&candidate).ok();
                if let Some(h) = parsed
                    .as_ref()
                    .and_then(|p| p.host_str())
                    .filter(|h| with_scheme || (h.contains('.') && !h.bytes().all(|b| b.is_ascii_digit() || b == b'.')))
                {
                    return Some(h.to_ascii_lowercase());
                }
            }
        }
        rest = &rest[seg_end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};

    fn blocks_of(html: &str) -> (String, Vec<Block>) {
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let b = blocks(&s.page, &s.sink).0;
        (s.page, b)
    }

    /// Saved memories (`site_memory.bin`, `.sitemem`) hold the hashes of the first version,
    /// which fed XXH3's streaming state each token's lower-case bytes and a space (`0` for a
    /// number in the folded hash). A block's hash must stay that.
    #[test]
    fn block_hashes_are_those_of_the_saved_format() {
        let html = "<div>Only 3 <b>comments</b> so far</div><p>A LONGER paragraph of text, with 12 words in it \
                    and 2026 numbers here.</p><p>x</p>";
        let (page, got) = blocks_of(html);
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        assert_eq!(got.len(), 3);
        for b in &got {
            let (mut folded, mut exact) = (xxhash_rust::xxh3::Xxh3::new(), xxhash_rust::xxh3::Xxh3::new());
            let mut words = 0;
            for t in s.sink[b.start..=b.end].iter().filter(|t| !t.kind.is_tag()) {
                let low = page[t.start as usize..t.end as usize].to_ascii_lowercase();
                words += usize::from(t.kind == TokenKind::Word);
                exact.update(low.as_bytes());
                folded.update(if t.numeric { b"0" } else { low.as_bytes() });
                exact.update(b" ");
                folded.update(b" ");
            }
            let want = if words <= FOLD_MAX_WORDS { folded.digest() } else { exact.digest() };
            assert_eq!(b.hash, want, "block {}..{}", b.start, b.end);
        }
    }

    /// The layout sketch the block pass takes from the start tags is the raw-byte sketch of
    /// the page, less what scripts and text say (`class=` in a script is no layout).
    #[test]
    fn the_block_pass_sketches_the_layout_from_start_tags() {
        let html = "<html><body class='home page-12'><div id=main_nav><p CLASS = \"story-body x\">One \
                    <a href='/?class=nope'>class=\"text\"</a></p><script>el.class = 'js';</script></div>";
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let (_, sketch) = blocks(&s.page, &s.sink);
        let want = template::sketch(b"<body class='home page-12'><div id=main_nav><p CLASS = \"story-body x\">");
        assert_eq!(sketch, want);
        assert_eq!(sketch.len(), 6, "home, page, main, nav, story, body");
        assert_eq!(super::page_blocks(html.as_bytes(), None, false).unwrap().sketch, want);
    }

    #[test]
    fn blocks_are_the_text_between_block_tags_with_numbers_folded() {
        let (_, a) = blocks_of("<div><p>Read <b>more</b> news</p><p>3 comments</p><br>x</div>");
        let (_, b) = blocks_of("<section><p>read more NEWS</p><li>12 comments</li></section>");
        assert_eq!(a.len(), 3);
        assert_eq!(a[0].hash, b[0].hash, "case and inline tags do not change a block");
        assert_eq!(a[1].hash, b[1].hash, "numbers are folded");
        assert_ne!(a[0].hash, a[1].hash);
        let (_, none) = blocks_of("<div> </div><p></p>");
        assert!(none.is_empty());
        let long = |n: u32| {
            blocks_of(&format!("<p>The council voted {n} to 2 on the harbour budget last night in town</p>")).1
        };
        assert_ne!(long(7)[0].hash, long(9)[0].hash, "a sentence keeps its numbers");
    }

    #[test]
    fn a_short_heading_is_a_label_and_a_longer_one_a_headline() {
        let (_, b) = blocks_of("<h3>JUST WATCHED</h3><h2>Russia expands its reach in Libya</h2><p>Text here</p>");
        let heading: Vec<bool> = b.iter().map(|b| b.heading).collect();
        assert_eq!(heading, [false, true, false], "a label of two words can be furniture, a headline cannot");
    }

    /// (template, host) counts.
    fn c(template: u32, host: u32) -> Counts {
        Counts { template, host }
    }

    #[test]
    fn a_block_on_most_pages_is_furniture_and_the_page_itself_is_not_counted_twice() {
        let o = SiteMemoryOptions { min_pages: 3, ..SiteMemoryOptions::default() };
        let mut m = SiteMemory::new(o.clone());
        for i in 0..4u64 {
            m.observe("news.test", &[], &[1, 100 + i, 1]);
        }
        let s = m.snapshot("news.test", &[]);
        let v = HostView::new(s.clone(), false);
        assert_eq!((v.pages(), v.count(1), v.count(100)), (c(4, 4), c(4, 4), c(1, 1)));
        assert!(is_site_furniture(v.count(1), v.pages(), &o));
        assert!(!is_site_furniture(v.count(100), v.pages(), &o));
        let s = m.snapshot_counted("news.test", 0);
        let v = HostView::new(s.clone(), true);
        assert_eq!((v.pages(), v.count(1)), (c(3, 3), c(3, 3)));
        assert_eq!(HostView::new(m.snapshot("other.test", &[]), false).pages(), c(0, 0));
        assert!(!is_furniture(4, 4, &SiteMemoryOptions { min_pages: 0, ..o }), "0 turns it off");
    }

    /// A redesign's furniture is counted against the pages of its own layout: on a host of
    /// 6 old pages and 3 new ones, a box on every new page is on a third of the host's pages,
    /// but on all of its template's. What every layout carries stays furniture of the host.
    #[test]
    fn templates_split_a_redesigned_host() {
        let o = SiteMemoryOptions { min_pages: 3, share: 0.5, ..SiteMemoryOptions::default() };
        let (old, new) =
            (template::sketch(b"<div class='nav story old'>"), template::sketch(b"<i class='rail body new'>"));
        let mut m = SiteMemory::new(o.clone());
        for p in 0..6 {
            assert_eq!(m.observe("news.test", &old, &[1, 9, 100 + p]), 0);
        }
        for p in 0..3 {
            assert_eq!(m.observe("news.test", &new, &[2, 9, 200 + p]), 1);
        }
        let s = m.snapshot("news.test", &new);
        let v = HostView::new(s.clone(), false);
        assert_eq!((v.pages(), v.count(2), v.count(1), v.count(9)), (c(3, 9), c(3, 3), c(0, 6), c(3, 9)));
        assert!(is_site_furniture(v.count(2), v.pages(), &o), "the new layout's box");
        assert!(is_site_furniture(v.count(1), v.pages(), &o), "the host's: on 6 of its 9 pages");
        assert!(!is_site_furniture(v.count(200), v.pages(), &o));
        assert!(!is_furniture(v.count(2).host, v.pages().host, &o), "the box, counted over the host");
        assert_eq!(m.pages("news.test"), 9);
        let third = HostView::new(m.snapshot("news.test", &template::sketch(b"<b class='x y z'>")), false).pages();
        assert_eq!(third, c(0, 9), "a third layout: only the host's counts");
        // Similarity 0: one template a host, as before templates.
        let mut one = SiteMemory::new(SiteMemoryOptions { template_similarity: 0.0, ..o.clone() });
        one.observe("news.test", &old, &[1]);
        assert_eq!(one.observe("news.test", &new, &[1]), 0);
        // A memory of the first format reads as each host's first template, which takes the
        // next page whatever its layout.
        let mut v1 = Vec::from(MAGIC_V1);
        v1.extend_from_slice(&1u64.to_le_bytes());
        v1.extend_from_slice(&1u64.to_le_bytes());
        v1.extend_from_slice(&9u32.to_le_bytes());
        v1.extend_from_slice(b"news.test");
        v1.extend_from_slice(&4u32.to_le_bytes());
        v1.extend_from_slice(&1u64.to_le_bytes());
        v1.extend_from_slice(&1u32.to_le_bytes());
        v1.extend_from_slice(&7u64.to_le_bytes());
        v1.extend_from_slice(&4u32.to_le_bytes());
        let mut back = SiteMemory::from_bytes(&zstd::encode_all(v1.as_slice(), 1).unwrap(), o).unwrap();
        let s = back.snapshot("news.test", &new);
        assert_eq!(HostView::new(s.clone(), false).count(7), c(4, 4));
        assert_eq!(back.observe("news.test", &new, &[7]), 0);
        assert_eq!(back.observe("news.test", &old, &[7]), 1, "it took the new page's layout");
    }

    #[test]
    fn memory_is_bounded_in_hosts_and_blocks() {
        let o = SiteMemoryOptions { min_pages: 1, max_hosts: 3, max_blocks: 16, ..SiteMemoryOptions::default() };
        let mut m = SiteMemory::new(o);
        for h in 0..10 {
            m.observe(&format!("h{h}.test"), &[], &[1, 2]);
        }
        m.observe("h8.test", &[], &[1]);
        m.observe("h10.test", &[], &[1]);
        assert_eq!(m.hosts(), 3);
        assert!(m.pages("h8.test") == 2 && m.pages("h10.test") == 1, "the recently used stay");
        for p in 0..100u64 {
            m.observe("big.test", &[], &(0..40).map(|i| p * 1000 + i).chain([7]).collect::<Vec<_>>());
        }
        let big = &m.hosts["big.test"];
        assert!(big.counts.len() <= 16);
        assert_eq!(big.counts.get(&7), Some(&100), "the repeated block survives the pruning");
    }

    #[test]
    fn memory_round_trips_through_bytes() {
        let o = SiteMemoryOptions { min_pages: 2, ..SiteMemoryOptions::default() };
        let mut m = SiteMemory::new(o.clone());
        m.observe("a.test", &[], &[5, 6]);
        m.observe("a.test", &[], &[5]);
        m.observe("b.test", &[], &[9]);
        let bytes = m.to_bytes();
        let back = SiteMemory::from_bytes(&bytes, o.clone()).unwrap();
        let s = back.snapshot("a.test", &[]);
        assert_eq!(
            (HostView::new(s.clone(), false).pages(), HostView::new(s.clone(), false).count(5)),
            (c(2, 2), c(2, 2))
        );
        assert_eq!(back.hosts(), 2);
        assert_eq!(back.to_bytes(), bytes, "the layout is canonical");
        let raw = zstd::decode_all(bytes.as_slice()).unwrap();
        let cut = zstd::encode_all(&raw[..raw.len() - 3], 3).unwrap();
        assert!(SiteMemory::from_bytes(&cut, o.clone()).unwrap_err().contains("cut short"));
        assert!(SiteMemory::from_bytes(b"junk", o).is_err());
    }

    #[test]
    fn host_keys() {
        assert_eq!(host_key("https://WWW.News.test/a/b").as_deref(), Some("news.test"));
        assert_eq!(host_key("not a url"), None);
    }

    /// A replayed page belongs to the site it was captured from, whichever archive replays it
    /// and however the capture's URL is written.
    #[test]
    fn archived_pages_are_keyed_by_the_captured_host() {
        for url in [
            "https://web.archive.org/web/20090301020158/http://arstechnica.com/tech-policy/news/x.ars",
            "https://web-beta.archive.org/web/20090301020158/http://www.arstechnica.com/",
            "http://web.archive.org/web/2009id_/https://ArsTechnica.com/a?b=1",
            "https://web.archive.org/web/20090301020158/arstechnica.com/a/b",
            "https://wayback.archive-it.org/1234/20090301020158/http://arstechnica.com/a",
            "https://replay.example.org/collection/20090301020158im_/http:/arstechnica.com/a",
        ] {
            assert_eq!(host_key(url).as_deref(), Some("arstechnica.com"), "{url}");
        }
        // The archive's own pages, and paths that merely hold a year, stay where they are.
        assert_eq!(host_key("https://web.archive.org/about/").as_deref(), Some("web.archive.org"));
        assert_eq!(host_key("https://web.archive.org/web/*/arstechnica.com").as_deref(), Some("web.archive.org"));
        assert_eq!(host_key("https://news.test/2009/example.com-review").as_deref(), Some("news.test"));
        assert_eq!(host_key("https://news.test/2009/12/story").as_deref(), Some("news.test"));
        assert_eq!(host_key("https://web.archive.org/web/2009/").as_deref(), Some("web.archive.org"));
    }

    proptest::proptest! {
        /// Damaged state bytes give an error, never a panic or a huge allocation.
        #[test]
        fn any_bytes_read_as_memory_or_fail_cleanly(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let o = SiteMemoryOptions { min_pages: 2, ..SiteMemoryOptions::default() };
            let _ = SiteMemory::from_bytes(&bytes, o.clone());
            let mut raw = MAGIC.to_vec();
            raw.extend_from_slice(&bytes);
            let _ = SiteMemory::from_bytes(&zstd::encode_all(raw.as_slice(), 1).unwrap(), o);
        }

        /// Any replay-shaped URL gives a key or none, never a panic; a key is lower case.
        #[test]
        fn any_archived_url_keys_cleanly(stamp in "[0-9]{0,16}(id_|im_|x)?", rest in "\\PC{0,40}", scheme in "(https?:/{0,3})?") {
            for base in ["https://web.archive.org/web/", "https://replay.test/c/"] {
                let url = format!("{base}{stamp}/{scheme}{rest}");
                if let Some(k) = host_key(&url) {
                    proptest::prop_assert_eq!(k.to_ascii_lowercase(), k);
                }
            }
        }

        #[test]
        fn blocks_of_any_page_stay_within_its_tokens(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2000)) {
            if let Ok(s) = tokenize(&bytes, TokenizerOptions::default()) {
                for b in blocks(&s.page, &s.sink).0 {
                    proptest::prop_assert!(b.start <= b.end && b.end < s.sink.len());
                }
            }
        }
    }
}
