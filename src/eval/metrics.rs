// TEMPORARY STUB, replaced by the real module.
use crate::dataset::Gold;
#[derive(Debug, Clone, serde::Serialize)]
pub struct PageMetrics {
    pub empty: bool,
}
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Aggregate {
    pub pages: usize,
    pub empty: usize,
    pub shingle_p: Option<f64>,
    pub shingle_r: Option<f64>,
    pub shingle_f1: Option<f64>,
    pub shingle_acc: Option<f64>,
    pub bow_p: Option<f64>,
    pub bow_r: Option<f64>,
    pub bow_f1: Option<f64>,
    pub cleaneval: Option<f64>,
    pub with: Option<f64>,
    pub with_pages: usize,
    pub without: Option<f64>,
    pub without_pages: usize,
}
pub fn score_page(_gold: &Gold, pred: &str) -> PageMetrics {
    PageMetrics { empty: pred.is_empty() }
}
pub fn aggregate<'a>(pages: impl IntoIterator<Item = &'a PageMetrics>) -> Aggregate {
    Aggregate { pages: pages.into_iter().count(), ..Default::default() }
}
pub fn gold_plain_text(text: &str) -> std::borrow::Cow<'_, str> {
    std::borrow::Cow::Borrowed(text)
}
