//! An adapted model guarded by the layouts it adapted to. Self-training (§6.2.4) learns the
//! templates of its pool; on a template it never saw, the adapted model can lose the whole
//! article (big9, adapting on three years and scoring the fourth: nymag 2005 0.953 → 0.294,
//! bbc 2009 0.970 → 0.000). The pool's layouts are recorded in the adapted model
//! ([`BootstrapInfo::templates`](super::model::BootstrapInfo::templates)); a page whose layout
//! is none of them is scored by the base (supervised) model instead.
//!
//! Both models score every token as the page streams (the layout is known only from its
//! first [`LAYOUT_TAGS`](crate::site_memory::template::LAYOUT_TAGS) start tags); the scores of
//! the chosen one are emitted at the end of the page. Twice the scoring work, for adapted
//! models only.

use crate::html::{Token, TokenKind};
use crate::scoring::chooser::Chooser;
use crate::scoring::{PageScorer, Scorer};
use crate::site_memory::template::{TagWords, sketch_similarity};

use super::model::{NbModel, NbScorer};

/// A page shares a template with the pool when its layout sketch is at least this alike
/// (estimated Jaccard): the threshold of site memory's templates and the bootstrap's
/// `--group-by host-template`.
pub const SAME_TEMPLATE: f64 = 0.5;

/// The adapted model on pages of its pool's layouts, the base model elsewhere.
pub struct GuardedScorer {
    adapted: NbScorer,
    base: NbScorer,
    templates: Vec<Vec<u64>>,
}

/// The scorer of `model` named `name`: guarded by its recorded layouts when it has any, with
/// the base model that `base` reads (asked only then) scoring the pages of other layouts;
/// otherwise the model alone. `nb::load` and the bootstrap's per-iteration eval both read a
/// model through it, so they score alike.
pub fn scorer_of<E>(
    model: NbModel,
    name: impl Into<String>,
    base: impl FnOnce(&str) -> Result<(NbModel, String), E>,
) -> Result<Box<dyn Scorer>, E> {
    let Some(info) = model.header.bootstrap.as_ref().filter(|b| !b.templates.is_empty()) else {
        return Ok(Box::new(NbScorer::new(model, name)));
    };
    let templates = info.templates.clone();
    let (base, base_name) = base(&info.base_model)?;
    Ok(Box::new(GuardedScorer::new(NbScorer::new(model, name), NbScorer::new(base, base_name), templates)))
}

impl GuardedScorer {
    pub fn new(adapted: NbScorer, base: NbScorer, templates: Vec<Vec<u64>>) -> Self {
        GuardedScorer { adapted, base, templates }
    }

    /// Is a page of this layout sketch one the adapted model learned from?
    pub fn knows(&self, sketch: &[u64]) -> bool {
        self.templates.iter().any(|t| sketch_similarity(t, sketch) >= SAME_TEMPLATE)
    }
}

impl Scorer for GuardedScorer {
    fn name(&self) -> &'static str {
        "nb"
    }

    fn model_id(&self) -> String {
        format!("{} on {} template(s), else {}", self.adapted.model_id(), self.templates.len(), self.base.model_id())
    }

    /// The adapted model's bias (the base model keeps its own, tuned with its tag bias).
    fn set_bias(&mut self, bias: f64) {
        self.adapted.set_bias(bias);
    }

    fn set_tag_bias(&mut self, tag_bias: f64) {
        self.adapted.set_tag_bias(tag_bias);
    }

    /// The adapted model's chooser (`pipeline bootstrap` copies its base's), else the base's.
    fn chooser(&self) -> Option<&Chooser> {
        self.adapted.chooser().or_else(|| self.base.chooser())
    }

    fn page_scorer(&self) -> Box<dyn PageScorer + '_> {
        Box::new(GuardedPage {
            guard: self,
            adapted: self.adapted.page_scorer(),
            base: self.base.page_scorer(),
            adapted_scores: Vec::new(),
            base_scores: Vec::new(),
            words: TagWords::default(),
        })
    }
}

struct GuardedPage<'a> {
    guard: &'a GuardedScorer,
    adapted: Box<dyn PageScorer + 'a>,
    base: Box<dyn PageScorer + 'a>,
    adapted_scores: Vec<f64>,
    base_scores: Vec<f64>,
    words: TagWords,
}

impl PageScorer for GuardedPage<'_> {
    fn push(&mut self, page: &str, token: &Token, _out: &mut dyn FnMut(f64)) {
        if token.kind == TokenKind::StartTag {
            self.words.tag(token.raw(page).as_bytes());
        }
        let (a, b) = (&mut self.adapted_scores, &mut self.base_scores);
        self.adapted.push(page, token, &mut |s| a.push(s));
        self.base.push(page, token, &mut |s| b.push(s));
    }

    fn finish(&mut self, page: &str, out: &mut dyn FnMut(f64)) {
        let (a, b) = (&mut self.adapted_scores, &mut self.base_scores);
        self.adapted.finish(page, &mut |s| a.push(s));
        self.base.finish(page, &mut |s| b.push(s));
        let sketch = std::mem::take(&mut self.words).sketch();
        let scores = if self.guard.knows(&sketch) { &self.adapted_scores } else { &self.base_scores };
        for &s in scores {
            out(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};
    use crate::methods::nb::read;

    /// The layout sketch of a page, as the guard reads it.
    fn sketch(html: &str) -> Vec<u64> {
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        crate::site_memory::template::page_sketch(&s.page, &s.sink)
    }

    fn scores(scorer: &dyn Scorer, html: &str) -> Vec<f64> {
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let mut p = scorer.page_scorer();
        let mut out = Vec::new();
        for t in &s.sink {
            p.push(&s.page, t, &mut |x| out.push(x));
        }
        p.finish(&s.page, &mut |x| out.push(x));
        out
    }

    #[test]
    fn pages_of_a_known_layout_get_the_adapted_model_and_others_the_base() {
        let old = "<div class='masthead nav-bar'><a>Home</a></div><div class='story-body article-text'>\
                   <p>One two three four five.</p></div><div class='footer-links'>x</div>";
        let new = "<header id=top-banner><nav class=menu-primary>Home</nav></header><main class=content-wrap>\
                   <section class=post-entry><p>One two three four five.</p></section></main>";
        let (model, _) = read(None).unwrap();
        let mut adapted = NbScorer::new(model.clone(), "adapted");
        // Any change of the scores tells the two models apart.
        adapted.set_bias(3.0);
        let base = NbScorer::new(model, "default");
        let guard = GuardedScorer::new(adapted, base, vec![sketch(old)]);
        assert!(guard.knows(&sketch(old)) && !guard.knows(&sketch(new)));
        assert_eq!(scores(&guard, old), scores(&guard.adapted, old));
        assert_eq!(scores(&guard, new), scores(&guard.base, new));
    }
}
