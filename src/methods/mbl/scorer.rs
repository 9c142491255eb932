//! The memory-based scorers `knn` (IB1) and `igtree` (the thesis' TiMBL learner, §3.2.2, §6):
//! the page's tokens are buffered and cut into [`BlockMode::TextTail`] units as they stream in;
//! at the end of the page every element holding a unit is classified from its 41 features
//! ([`crate::methods::mbl::units`]) by the [`MblModel`], and each unit takes the text or tail half
//! of its element's class. Body units score +1 and everything else −1, with
//! [`Selection::PositiveTokens`], so the extractor keeps every body unit (multi-span, like
//! `crf`). The predicted title and headings, and the thesis' post-processing check (§6.8:
//! no title, more than one title, two headings together), come out as a [`Structure`].

use std::collections::HashMap;
use std::sync::Mutex;

use crate::html::{Token, TokenKind, TokenSink, entities};
use crate::methods::mbl::knn::{Algorithm, MblModel, Neighbours};
use crate::methods::mbl::units::{Class, Features, N_FEATURES, PageElements, unpair};
use crate::scoring::{PageScorer, Scorer, Selection, Structure};
use crate::segment::emit::{emit_by_block, label_score};
use crate::segment::{Block, BlockMode, Segmenter};

/// Pages with no body unit keep the units with at least this share of the longest unit's words
/// (the classifier gives no probabilities to fall back on, unlike the CRF).
pub const FALLBACK_SHARE: f64 = 0.5;

/// Feature vectors remembered across pages by [`SharedCache`] (default 2^18, about 15 MB).
pub const CACHE_ENTRIES: usize = 1 << 18;

/// IB1 answers for vectors seen on earlier pages, shared by all threads: a site's template
/// repeats on each of its pages, and IB1's exact search is nearly the whole extraction cost
/// (models/README.md). Answers are the model's own, so the output never depends on the cache;
/// once [`CACHE_ENTRIES`] are stored nothing more is added. Not used for IGTree, whose lookup
/// is cheaper than the lock.
#[derive(Debug, Default)]
pub struct SharedCache {
    map: Mutex<HashMap<Features, u8>>,
}

impl SharedCache {
    fn get(&self, f: &Features) -> Option<u8> {
        self.map.lock().ok()?.get(f).copied()
    }

    fn put(&self, f: Features, class: u8) {
        if let Ok(mut m) = self.map.lock()
            && m.len() < CACHE_ENTRIES
        {
            m.insert(f, class);
        }
    }
}

/// A scorer backed by a memory-based model.
pub struct MblScorer {
    model: MblModel,
    name: &'static str,
    model_name: String,
    cache: SharedCache,
}

impl MblScorer {
    /// `knn` uses the model as trained (an IGTree model answers through its tree); `igtree`
    /// compresses an IB1 instance base into a tree at load.
    pub fn new(model: MblModel, igtree: bool, model_name: impl Into<String>) -> Self {
        let (model, name) = if igtree { (model.into_igtree(), "igtree") } else { (model, "knn") };
        MblScorer { model, name, model_name: model_name.into(), cache: SharedCache::default() }
    }

    pub fn model(&self) -> &MblModel {
        &self.model
    }
}

impl Scorer for MblScorer {
    fn name(&self) -> &'static str {
        self.name
    }

    fn model_id(&self) -> String {
        let o = &self.model.header.options;
        let algo = if self.model.tree.is_some() { "igtree" } else { "ib1" };
        let k = if o.algorithm == Algorithm::Ib1 && self.model.tree.is_none() {
            format!(", k={}", o.k)
        } else {
            String::new()
        };
        format!(
            "{}({}, {algo}{k}, weighting={}, stored={})",
            self.name,
            self.model_name,
            o.weighting.name(),
            self.model.tree.as_ref().map_or(self.model.base.len(), |t| t.nodes.len())
        )
    }

    fn page_scorer(&self) -> Box<dyn PageScorer + '_> {
        Box::new(MblPageScorer {
            model: &self.model,
            cache: (self.model.tree.is_none()).then_some(&self.cache),
            segmenter: Segmenter::with_mode(BlockMode::TextTail),
            buffered: Vec::new(),
            work: Workspace::default(),
            structure: None,
        })
    }

    fn selection(&self) -> Selection {
        Selection::PositiveTokens
    }
}

struct MblPageScorer<'a> {
    model: &'a MblModel,
    cache: Option<&'a SharedCache>,
    segmenter: Segmenter,
    buffered: Vec<Token>,
    work: Workspace,
    structure: Option<Structure>,
}

/// Per-page buffers of [`classify_units`], reused between pages.
#[derive(Debug, Default)]
pub struct Workspace {
    elements: PageElements,
    /// Identical feature vectors recur on a page (list items, link bars): classify each once.
    memo: HashMap<Features, u8>,
    scratch: Neighbours,
    /// Pair class of every element.
    pairs: Vec<u8>,
}

/// Unit classes of a segmented page under `model`.
pub fn classify_units(
    model: &MblModel,
    cache: Option<&SharedCache>,
    page: &str,
    tokens: &[Token],
    blocks: &[Block],
    w: &mut Workspace,
) -> Vec<Class> {
    let Workspace { elements, memo, scratch, pairs } = w;
    elements.build(page, tokens, blocks);
    pairs.clear();
    pairs.resize(elements.elements.len(), 15);
    memo.clear();
    let mut f = [0u8; N_FEATURES];
    for e in elements.instances() {
        elements.features(e, &mut f);
        pairs[e] = *memo.entry(f).or_insert_with(|| match cache.and_then(|c| c.get(&f)) {
            Some(c) => c,
            None => {
                let c = model.classify(&f, scratch);
                if let Some(cache) = cache {
                    cache.put(f, c);
                }
                c
            }
        });
    }
    let mut classes: Vec<Class> = elements
        .units
        .iter()
        .map(|u| {
            let (text, tail) = unpair(pairs[u.element as usize]);
            if u.tail { tail } else { text }
        })
        .collect();
    if !classes.contains(&Class::Body) {
        let max = blocks.iter().zip(&classes).filter(|(_, c)| **c != Class::Title).map(|(b, _)| b.words).max();
        if let Some(max) = max.filter(|&m| m > 0) {
            for (b, c) in blocks.iter().zip(classes.iter_mut()) {
                if *c != Class::Title && f64::from(b.words) >= FALLBACK_SHARE * f64::from(max) {
                    *c = Class::Body;
                }
            }
        }
    }
    classes
}

/// Text of one unit: its tokens' decoded text, single-spaced.
fn unit_text(page: &str, tokens: &[Token], b: &Block, out: &mut String, buf: &mut String) {
    for t in &tokens[b.first as usize..=b.last as usize] {
        if t.kind.is_tag() {
            continue;
        }
        if !out.is_empty() && !out.ends_with(' ') && t.kind == TokenKind::Word {
            out.push(' ');
        }
        out.push_str(entities::decoded(t.raw(page), t.has_entity, buf));
    }
}

/// The predicted title (the first run of title units), the headings (each run of heading
/// units) and the thesis' post-processing warnings (§6.8, figure 6.9): `no_title`,
/// `multiple_titles` (more than one run of title units), `consecutive_headings` (two heading
/// runs with no body unit between them).
pub fn structure(page: &str, tokens: &[Token], blocks: &[Block], classes: &[Class]) -> Structure {
    let mut s = Structure { unit_classes: classes.iter().map(|&c| c as u8).collect(), ..Structure::default() };
    let mut buf = String::new();
    let mut titles = 0;
    let mut heading_since_body = false;
    let mut consecutive = false;
    let mut u = 0;
    while u < classes.len() {
        let c = classes[u];
        let start = u;
        while u < classes.len() && classes[u] == c {
            u += 1;
        }
        match c {
            Class::Title => {
                titles += 1;
                if s.title.is_none() {
                    let mut t = String::new();
                    blocks[start..u].iter().for_each(|b| unit_text(page, tokens, b, &mut t, &mut buf));
                    s.title = Some(t);
                }
            }
            Class::Heading => {
                consecutive |= heading_since_body;
                heading_since_body = true;
                let mut t = String::new();
                blocks[start..u].iter().for_each(|b| unit_text(page, tokens, b, &mut t, &mut buf));
                s.headings.push(t);
            }
            Class::Body => heading_since_body = false,
            Class::Garbage => {}
        }
    }
    if titles == 0 {
        s.warnings.push("no_title".to_string());
    }
    if titles > 1 {
        s.warnings.push("multiple_titles".to_string());
    }
    if consecutive {
        s.warnings.push("consecutive_headings".to_string());
    }
    s
}

impl PageScorer for MblPageScorer<'_> {
    fn push(&mut self, page: &str, token: &Token, _out: &mut dyn FnMut(f64)) {
        self.segmenter.token(page, token);
        self.buffered.push(*token);
    }

    fn finish(&mut self, page: &str, out: &mut dyn FnMut(f64)) {
        self.segmenter.finish();
        let blocks = self.segmenter.blocks();
        let classes = classify_units(self.model, self.cache, page, &self.buffered, blocks, &mut self.work);
        let body = |i: usize| label_score(classes[i] == Class::Body);
        emit_by_block(blocks, self.buffered.len(), -1.0, body, out);
        self.structure = Some(structure(page, &self.buffered, blocks, &classes));
        self.segmenter.reset();
        self.buffered.clear();
    }

    fn structure(&mut self) -> Option<Structure> {
        self.structure.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{ExtractOptions, Extractor};
    use crate::methods::mbl::knn::{MblOptions, MblTrainingSummary};
    use crate::methods::mbl::units::{N_PAIRS, pair};

    /// A model whose only instance is g+g: every unit is garbage, so the fallback decides.
    fn garbage_model() -> MblModel {
        let mut c = [0u32; N_PAIRS];
        c[pair(Class::Garbage, Class::Garbage) as usize] = 1;
        MblModel::from_instances(&[([0u8; N_FEATURES], c)], MblOptions::default(), MblTrainingSummary::default())
    }

    const PAGE: &[u8] = b"<html><head><title>Park news</title></head><body><nav><a href=/>Home</a></nav>\
        <p>The council voted to expand the park on Tuesday evening after a long debate.</p>\
        <div class=ad>Buy</div><p>Work starts in May.</p></body></html>";

    #[test]
    fn fallback_keeps_the_longest_units_and_structure_flags_no_title() {
        for igtree in [false, true] {
            let scorer = MblScorer::new(garbage_model(), igtree, "test");
            let x = Extractor::new(&scorer, ExtractOptions::default()).extract(PAGE, None).unwrap();
            assert_eq!(x.text, "The council voted to expand the park on Tuesday evening after a long debate.");
            let s = x.structure.unwrap();
            assert_eq!((s.title, s.headings.len()), (None, 0));
            assert_eq!(s.warnings, ["no_title"]);
        }
    }

    #[test]
    fn structure_runs_and_warnings() {
        let html = "<body><h1>A</h1><h2>B</h2><p>c d</p><h2>E</h2><p>f</p><h1>G</h1></body>";
        let s = crate::html::tokenize(html.as_bytes(), Default::default()).unwrap();
        let seg = crate::segment::segment_with(&s.page, &s.sink, BlockMode::TextTail);
        use Class::*;
        let st = structure(&s.page, &s.sink, seg.blocks(), &[Title, Heading, Body, Heading, Garbage, Title]);
        assert_eq!(st.title.as_deref(), Some("A"));
        assert_eq!(st.headings, ["B", "E"]);
        assert_eq!(st.warnings, ["multiple_titles"]);
        let st = structure(&s.page, &s.sink, seg.blocks(), &[Title, Heading, Garbage, Heading, Body, Garbage]);
        assert_eq!(st.warnings, ["consecutive_headings"]);
    }
}
