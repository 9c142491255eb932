//! `article_pipeline._native`: the Python face of the crate (PyO3). Everything here converts
//! arguments and results; extraction, WARC reading and record building are the library's own
//! functions (`Extractor`, `sources::response_event`, `pipeline::page_record`), so Python gets
//! byte for byte what the `pipeline` binary writes. The pure-Python package around it
//! (`article_pipeline/__init__.py`) adds the iterator conveniences and the datatrove adapter.
//!
//! Threads: an `Extractor` holds its scorer (model loaded once) and is shared freely between
//! Python threads; extraction runs with the interpreter detached (the GIL released), so a
//! thread pool scales with cores.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyString};

use article_pipeline::dedup::{DedupOptions, Fingerprinter, NearDuplicateIndex};
use article_pipeline::extract::{self, ExtractOptions};
use article_pipeline::methods;
use article_pipeline::pipeline::{PageOutcome, page_record};
use article_pipeline::scoring::Scorer;
use article_pipeline::sink::record::Source;
use article_pipeline::site_memory::{SiteMemory, SiteMemoryOptions};
use article_pipeline::sources::{self, SourceEvent};

create_exception!(_native, ArticlePipelineError, PyException, "Base class of every error raised by article_pipeline.");
create_exception!(_native, ModelError, ArticlePipelineError, "A scorer or model that cannot be used.");
create_exception!(_native, ExtractionError, ArticlePipelineError, "A page that cannot be extracted.");
create_exception!(_native, WarcError, ArticlePipelineError, "A WARC file or record that cannot be read.");

/// Extracts article text with one scorer and one set of options. Load once, call from any
/// number of threads: extraction releases the GIL.
#[pyclass(frozen, module = "article_pipeline")]
struct Extractor {
    scorer: Box<dyn Scorer>,
    options: ExtractOptions,
    fingerprinter: Fingerprinter,
    model_id: String,
}

impl Extractor {
    fn core(&self) -> extract::Extractor<'_> {
        extract::Extractor::new(self.scorer.as_ref(), self.options.clone())
    }
}

/// Keyword options as the CLI's extraction flags (`keep_boilerplate=True` is
/// `--keep-boilerplate`, `extra_span_ratio=0.4` is `--extra-span-ratio 0.4`), parsed by the
/// flags' one definition in `ExtractOptions`, so no option is named here. The one exception,
/// kept from the earlier keyword list: `noscript_fallback=False` for `--no-noscript-fallback`.
fn extract_options(options: Option<&Bound<'_, PyDict>>) -> PyResult<ExtractOptions> {
    cli_options(options, "extraction")
}

/// Keyword options read by the CLI's own definition of the flags of `T` (see
/// [`extract_options`]); `what` names them in errors.
fn cli_options<T: clap::Args + clap::FromArgMatches>(options: Option<&Bound<'_, PyDict>>, what: &str) -> PyResult<T> {
    let mut argv = vec!["Extractor".to_string()];
    for (k, v) in options.into_iter().flat_map(|d| d.iter()) {
        let key: String = k.extract()?;
        if v.is_none() {
            continue;
        }
        if let Ok(b) = v.cast::<PyBool>() {
            match (key.as_str(), b.is_true()) {
                ("noscript_fallback", true) => {}
                ("noscript_fallback", false) => argv.push("--no-noscript-fallback".into()),
                (_, true) => argv.push(format!("--{}", key.replace('_', "-"))),
                (_, false) => {}
            }
            continue;
        }
        argv.push(format!("--{}={}", key.replace('_', "-"), v.str()?.to_str()?));
    }
    let command = T::augment_args(clap::Command::new("Extractor").disable_help_flag(true));
    let matches = command.try_get_matches_from(&argv).map_err(|e| {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        let arg = match e.get(ContextKind::InvalidArg) {
            Some(ContextValue::String(a)) => {
                a.split(['=', ' ']).next().unwrap_or("").trim_start_matches('-').replace('-', "_")
            }
            _ => String::new(),
        };
        match e.kind() {
            ErrorKind::UnknownArgument => PyValueError::new_err(format!("unknown {what} option `{arg}`")),
            _ => {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or("").trim_start_matches("error: ").to_string();
                PyValueError::new_err(format!("{what} option `{arg}`: {first}"))
            }
        }
    })?;
    T::from_arg_matches(&matches).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymethods]
impl Extractor {
    /// Extractor(scorer="nb", model=None, *, bias=None, tag_bias=None, **options)
    ///
    /// `scorer` is one of `article_pipeline.SCORERS`; `model` a model file from
    /// `pipeline train` / `pipeline bootstrap` (default: the built-in model for "nb"; the
    /// learned scorers need one). `options` are the CLI's extraction flags as keywords, read by
    /// the CLI's own definition of them (`ExtractOptions`): `hr=True`, `clean=True`,
    /// `keep_boilerplate=True`, `keep_link_blocks=True`, `keep_hidden_microdata=True`,
    /// `keep_modals=True`, `keep_more_furniture=True`, `no_metadata=True`, `section_end_words=30`,
    /// `link_run_blocks=2`, `extra_span_ratio=0` (off), `extra_span_min=15.0`,
    /// `multi_item_ratio=0.2`, `title_anchor_ratio=0.3`, `furniture_escape_ratio=0.1`,
    /// `list_min_items=6`,
    /// `chooser_margin=…` (unset: the margin stored with the model's span chooser: 0.02 for the
    /// built-in model, a model's own from `pipeline train --chooser`; 0 turns it off),
    /// `max_page_bytes=…`; a switch set to False
    /// or a value set to None keeps the default.
    /// `noscript_fallback=False` is `--no-noscript-fallback`. Unknown keywords and values out
    /// of range raise ValueError.
    #[new]
    #[pyo3(signature = (scorer="nb", model=None, *, bias=None, tag_bias=None, **options))]
    fn new(
        scorer: &str,
        model: Option<PathBuf>,
        bias: Option<f64>,
        tag_bias: Option<f64>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        for (what, v) in [("bias", bias), ("tag_bias", tag_bias)] {
            if let Some(v) = v.filter(|v| !v.is_finite()) {
                return Err(PyValueError::new_err(format!("{what} must be a finite number, not {v}")));
            }
        }
        let options = extract_options(options)?;
        let built =
            methods::build(scorer, model.as_deref(), bias, tag_bias).map_err(|e| ModelError::new_err(e.to_string()))?;
        let problems = options.problems();
        if !problems.is_empty() {
            return Err(PyValueError::new_err(problems.join("; ")));
        }
        let model_id = built.model_id();
        Ok(Extractor { scorer: built, options, fingerprinter: Fingerprinter::new(DedupOptions::default()), model_id })
    }

    /// The scorer's name.
    #[getter]
    fn scorer(&self) -> &'static str {
        self.scorer.name()
    }

    /// The model's identity as written in records ("" for scorers without a model).
    #[getter]
    fn model(&self) -> &str {
        &self.model_id
    }

    /// extract(html, url=None, *, charset=None, fingerprints=False) -> Extraction
    ///
    /// `html` is the page as bytes (any charset: BOM, `charset`, `<meta>` or detection decide)
    /// or as str (already decoded). Raises ExtractionError for pages that are not HTML or too
    /// large.
    #[pyo3(signature = (html, url=None, *, charset=None, fingerprints=false))]
    fn extract(
        &self,
        py: Python<'_>,
        html: &Bound<'_, PyAny>,
        url: Option<String>,
        charset: Option<String>,
        fingerprints: bool,
    ) -> PyResult<Extraction> {
        let (bytes, charset): (&[u8], Option<String>) = if let Ok(b) = html.cast::<PyBytes>() {
            (b.as_bytes(), charset)
        } else if let Ok(s) = html.cast::<PyString>() {
            // A str that is not valid Unicode (a lone surrogate) is a bad page, not a crash.
            let text = s.to_str().map_err(|e| {
                let at = url.as_deref().map(|u| format!("{u}: ")).unwrap_or_default();
                ExtractionError::new_err(format!("{at}the page is not valid Unicode: {e}"))
            })?;
            (text.as_bytes(), Some("utf-8".to_string()))
        } else {
            return Err(PyValueError::new_err("html must be bytes or str"));
        };
        let (x, fp) = py
            .detach(|| {
                let x = self.core().extract(bytes, charset.as_deref())?;
                let fp = fingerprints.then(|| self.fingerprinter.fingerprint(&x.text));
                Ok::<_, extract::ExtractError>((x, fp))
            })
            .map_err(|e| {
                let at = url.as_deref().map(|u| format!("{u}: ")).unwrap_or_default();
                ExtractionError::new_err(format!("{at}{e}"))
            })?;
        let cx = article_pipeline::metadata::Context { url: url.as_deref().unwrap_or(""), ..Default::default() };
        let (meta, best_title) = x.article_meta(cx).unwrap_or_default();
        Ok(Extraction {
            title: best_title.or_else(|| x.title.clone()),
            html_title: x.title,
            metadata_json: serde_json::to_string(&meta).expect("metadata serialises"),
            text: x.text,
            span: x.span,
            byte_span: x.byte_span,
            score: x.score,
            tokens: x.tokens,
            encoding: x.encoding.map(str::to_string),
            scorer: x.scorer.to_string(),
            model: self.model_id.clone(),
            url,
            fingerprints_json: fp.map(|f| serde_json::to_string(&f).expect("fingerprints serialise")),
        })
    }

    fn __repr__(&self) -> String {
        format!("Extractor(scorer={:?}, model={:?})", self.scorer.name(), self.model_id)
    }
}

/// The result of one page.
#[pyclass(frozen, get_all, module = "article_pipeline")]
struct Extraction {
    /// The article text; paragraphs separated by a blank line.
    text: String,
    /// The article's title (JSON-LD headline, og:title, <h1> or <title>, site name stripped).
    title: Option<String>,
    /// Text of <title>, as it is.
    html_title: Option<String>,
    /// Dates, language, authors, description … as JSON (the package gives a dict:
    /// `extraction_metadata`).
    metadata_json: String,
    /// First and last token of the chosen span (inclusive), if any.
    span: Option<(usize, usize)>,
    /// Byte range of the span in the decoded page, if any.
    byte_span: Option<(usize, usize)>,
    /// Value of the maximum subsequence.
    score: f64,
    /// Tokens in the page.
    tokens: usize,
    /// Encoding the page was decoded with.
    encoding: Option<String>,
    /// Scorer name.
    scorer: String,
    /// Model identity ("" for none).
    model: String,
    /// The URL given to extract(), if any.
    url: Option<String>,
    /// Fingerprints as JSON when asked for (the package turns them into a dict).
    fingerprints_json: Option<String>,
}

#[pymethods]
impl Extraction {
    fn __repr__(&self) -> String {
        let head: String = self.text.chars().take(60).collect();
        format!(
            "Extraction(title={}, tokens={}, text={:?}…)",
            self.title.as_deref().map(|t| format!("{t:?}")).unwrap_or_else(|| "None".into()),
            self.tokens,
            head
        )
    }
}

/// fingerprints(text) -> str: the record's fingerprints of `text` as JSON (exact hash, SimHash,
/// MinHash, LSH band keys), with the default dedup settings.
#[pyfunction]
fn fingerprints_json(py: Python<'_>, text: &str) -> String {
    py.detach(|| {
        let fp = Fingerprinter::new(DedupOptions::default()).fingerprint(text);
        serde_json::to_string(&fp).expect("fingerprints serialise")
    })
}

/// One HTML response of a WARC file.
#[pyclass(frozen, get_all, module = "article_pipeline")]
struct Page {
    /// WARC-Record-ID without angle brackets.
    id: String,
    /// WARC-Target-URI.
    url: String,
    /// WARC file (as given) and the byte offset of the record (of its gzip member).
    file: String,
    offset: u64,
    /// WARC-Date.
    fetched_at: Option<String>,
    status: Option<u16>,
    content_type: Option<String>,
    /// Charset named by the HTTP Content-Type, if any.
    charset: Option<String>,
    /// The HTTP body, transfer- and content-coding undone.
    body: Py<PyBytes>,
}

#[pymethods]
impl Page {
    fn __repr__(&self) -> String {
        format!("Page(url={:?}, offset={})", self.url, self.offset)
    }
}

type Events = Box<dyn Iterator<Item = SourceEvent> + Send>;

/// Opens a WARC (a path, an `http(s)://` URL, or the file's bytes) as the pipeline's source
/// events: the crate's own `warc_events` / `warc_events_from`. The opening (for a URL, the
/// first request) runs with the interpreter detached, so a server in the same process can
/// answer.
fn open_events(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Events> {
    if let Ok(b) = source.cast::<PyBytes>() {
        let reader: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(b.as_bytes().to_vec()));
        let events = sources::warc_events_from(Path::new("<bytes>"), reader)
            .map_err(|e| WarcError::new_err(format!("<bytes>: {e}")))?;
        return Ok(Box::new(events));
    }
    let path: PathBuf = source.extract()?;
    let events = py.detach(|| sources::warc_events(&path)).map_err(|e| WarcError::new_err(e.to_string()))?;
    Ok(Box::new(events))
}

/// The HTML pages of a WARC file, in file order. Damaged records are reported through
/// `on_error`: an exception (`"raise"`; iteration can go on after it), a Python warning
/// (`"warn"`, the default) or nothing (`"ignore"`).
#[pyclass(module = "article_pipeline")]
struct WarcPages {
    events: Mutex<Events>,
    on_error: OnError,
}

#[derive(Clone, Copy)]
enum OnError {
    Raise,
    Warn,
    Ignore,
}

fn on_error(s: &str) -> PyResult<OnError> {
    match s {
        "raise" => Ok(OnError::Raise),
        "warn" => Ok(OnError::Warn),
        "ignore" => Ok(OnError::Ignore),
        other => {
            Err(PyValueError::new_err(format!("on_error must be \"raise\", \"warn\" or \"ignore\", not {other:?}")))
        }
    }
}

/// Reports a failed input per `on_error`; Ok(()) means "go on".
fn report(py: Python<'_>, on_error: OnError, message: &str) -> PyResult<()> {
    match on_error {
        OnError::Raise => Err(WarcError::new_err(message.to_string())),
        OnError::Warn => {
            let warnings = py.import("warnings")?;
            warnings.call_method1("warn", (message, py.get_type::<pyo3::exceptions::PyRuntimeWarning>()))?;
            Ok(())
        }
        OnError::Ignore => Ok(()),
    }
}

#[pymethods]
impl WarcPages {
    #[new]
    #[pyo3(signature = (source, *, on_error="warn"))]
    fn new(source: &Bound<'_, PyAny>, on_error: &str) -> PyResult<Self> {
        let on_error = self::on_error(on_error)?;
        let events = open_events(source.py(), source)?;
        Ok(WarcPages { events: Mutex::new(events), on_error })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Page>> {
        loop {
            let event = py.detach(|| self.events.lock().expect("warc reader lock").next());
            match event {
                None => return Ok(None),
                Some(SourceEvent::Skipped { .. }) => continue,
                Some(SourceEvent::Failed { message, .. }) => report(py, self.on_error, &message)?,
                Some(SourceEvent::Page(p)) => {
                    let (file, offset) = match &p.source {
                        Source::Warc { file, offset } => (file.clone(), *offset),
                        Source::Feed { feed } => (feed.clone(), 0),
                    };
                    return Ok(Some(Page {
                        id: p.id,
                        url: p.url,
                        file,
                        offset,
                        fetched_at: p.fetched_at,
                        status: p.status,
                        content_type: p.content_type,
                        charset: p.http_charset,
                        body: PyBytes::new(py, &p.body).unbind(),
                    }));
                }
            }
        }
    }
}

/// The records of a WARC file as the crawl pipeline writes them (JSON text per record), with
/// near duplicates within the file marked (`near_duplicate_of`) or, with
/// `drop_near_duplicates`, left out.
#[pyclass(module = "article_pipeline")]
struct WarcRecords {
    events: Mutex<Events>,
    extractor: Py<Extractor>,
    index: Mutex<NearDuplicateIndex>,
    drop_near_duplicates: bool,
    on_error: OnError,
    /// Site memory learned as the file's pages go by, as `pipeline --warc` learns it (None:
    /// off).
    site: Option<RwLock<SiteMemory>>,
}

#[pymethods]
impl WarcRecords {
    #[new]
    #[pyo3(signature = (source, extractor, *, drop_near_duplicates=false, on_error="warn", site_memory=None))]
    fn new(
        source: &Bound<'_, PyAny>,
        extractor: Py<Extractor>,
        drop_near_duplicates: bool,
        on_error: &str,
        site_memory: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let on_error = self::on_error(on_error)?;
        // The CLI's site memory flags as keywords (`site_memory_pages=0` turns it off).
        let o: SiteMemoryOptions = cli_options(site_memory, "site memory")?;
        let mut problems = o.problems();
        if o.two_pass {
            // Records come one by one as the source is read: nothing is counted ahead.
            problems.push("site_memory_two_pass is for `pipeline --warc`; records read here learn as they go".into());
        }
        if !problems.is_empty() {
            return Err(PyValueError::new_err(problems.join("; ")));
        }
        let site = match &o.from {
            _ if !o.enabled() => None,
            Some(path) => {
                let bytes = std::fs::read(path).map_err(|e| WarcError::new_err(format!("{}: {e}", path.display())))?;
                let m = SiteMemory::from_bytes(&bytes, o.clone())
                    .map_err(|e| WarcError::new_err(format!("{}: {e}", path.display())))?;
                Some(RwLock::new(m))
            }
            None => Some(RwLock::new(SiteMemory::new(o.clone()))),
        };
        let events = open_events(source.py(), source)?;
        Ok(WarcRecords {
            events: Mutex::new(events),
            extractor,
            index: Mutex::new(NearDuplicateIndex::new()),
            drop_near_duplicates,
            on_error,
            site,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next record as JSON text.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let ex = self.extractor.get();
        loop {
            let outcome = py.detach(|| {
                let event = self.events.lock().expect("warc reader lock").next()?;
                Some(match event {
                    SourceEvent::Skipped { .. } => None,
                    SourceEvent::Failed { message, .. } => Some(Err(message)),
                    SourceEvent::Page(p) => {
                        match page_record(*p, &ex.core(), &ex.fingerprinter, ex.model_id.as_str(), self.site.as_ref()) {
                            PageOutcome::NoText => None,
                            PageOutcome::Failed { message, .. } => Some(Err(message)),
                            PageOutcome::Record(mut record) => {
                                let mut index = self.index.lock().expect("dedup index lock");
                                let dup = index
                                    .check_and_insert(&record.id, &record.metadata.fingerprints)
                                    .map(str::to_string);
                                if dup.is_some() && self.drop_near_duplicates {
                                    None
                                } else {
                                    record.metadata.near_duplicate_of = dup;
                                    Some(Ok(serde_json::to_string(&record).expect("records serialise")))
                                }
                            }
                        }
                    }
                })
            });
            match outcome {
                None => return Ok(None),
                Some(None) => continue,
                Some(Some(Ok(json))) => return Ok(Some(json)),
                Some(Some(Err(message))) => report(py, self.on_error, &message)?,
            }
        }
    }
}

/// The scorers `Extractor(scorer=...)` accepts.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Extractor>()?;
    m.add_class::<Extraction>()?;
    m.add_class::<Page>()?;
    m.add_class::<WarcPages>()?;
    m.add_class::<WarcRecords>()?;
    m.add_function(wrap_pyfunction!(fingerprints_json, m)?)?;
    m.add("SCORERS", methods::NAMES.to_vec())?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    let py = m.py();
    m.add("ArticlePipelineError", py.get_type::<ArticlePipelineError>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("ExtractionError", py.get_type::<ExtractionError>())?;
    m.add("WarcError", py.get_type::<WarcError>())?;
    Ok(())
}
