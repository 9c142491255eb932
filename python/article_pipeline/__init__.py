"""Fast article-text extraction for crawls, from Python.

The Rust extractor of article-pipeline (Pasternack & Roth, *Extracting Article Text from the
Web with Maximum Subsequence Segmentation*, WWW 2009: HTML tokens -> Naive Bayes token
scores -> maximum subsequence), its WARC reader and its crawl records, as a Python module.

Quick start::

    import article_pipeline as ap

    x = ap.extract(open("page.html", "rb").read(), url="https://example.com/a")
    print(x.title, x.text)

    ex = ap.Extractor()                  # load the model once; share it between threads
    for page in ap.read_warc("crawl.warc.gz"):
        print(page.url, ex.extract(page.body, page.url, charset=page.charset).text[:80])

    for record in ap.process_warc("crawl.warc.gz"):   # dicts shaped like the JSONL records
        print(record["metadata"]["url"], record["metadata"]["near_duplicate_of"])

``Extractor.extract`` releases the GIL, so a ``ThreadPoolExecutor`` scales with cores.
Errors are :class:`ArticlePipelineError` subclasses carrying the Rust message (path, URL,
byte offset). ``article_pipeline.datatrove.ArticleExtractor`` plugs the extractor into a
datatrove pipeline.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterator, Optional, Union

from ._native import (
    SCORERS,
    VERSION,
    ArticlePipelineError,
    Extraction,
    ExtractionError,
    Extractor,
    ModelError,
    Page,
    WarcError,
    WarcPages,
    WarcRecords,
    fingerprints_json,
)

__version__ = VERSION

__all__ = [
    "extraction_metadata",
    "SCORERS",
    "ArticlePipelineError",
    "Extraction",
    "ExtractionError",
    "Extractor",
    "ModelError",
    "Page",
    "WarcError",
    "extract",
    "extraction_fingerprints",
    "fingerprints",
    "read_warc",
    "process_warc",
]

PathOrBytes = Union[str, "os.PathLike[str]", bytes]

_default_extractors: Dict[tuple, Extractor] = {}


def _cached_extractor(scorer: str, model: Optional[str]) -> Extractor:
    # extract() is the one-call convenience: keep one loaded Extractor per (scorer, model)
    # so that calling it in a loop does not reload the model every time.
    key = (scorer, None if model is None else os.fspath(model))
    ex = _default_extractors.get(key)
    if ex is None:
        ex = Extractor(scorer, key[1])
        _default_extractors[key] = ex
    return ex


def extract(
    html: Union[bytes, str],
    url: Optional[str] = None,
    *,
    scorer: str = "nb",
    model: Optional[Union[str, "os.PathLike[str]"]] = None,
    charset: Optional[str] = None,
    fingerprints: bool = False,
) -> Extraction:
    """Extract the article of one page with a cached :class:`Extractor`.

    ``html`` is bytes in any charset (or an already decoded str); ``url`` is carried into
    the result and error messages. Raises :class:`ExtractionError` for pages that are not
    HTML or too large, :class:`ModelError` for an unknown scorer or unusable model.
    """
    return _cached_extractor(scorer, model).extract(html, url, charset=charset, fingerprints=fingerprints)


def extraction_fingerprints(x: Extraction) -> Optional[Dict[str, Any]]:
    """The fingerprints of an :class:`Extraction` made with ``fingerprints=True``, as a dict."""
    return None if x.fingerprints_json is None else json.loads(x.fingerprints_json)


def extraction_metadata(x: Extraction) -> Dict[str, Any]:
    """The article metadata of an :class:`Extraction` as a dict: ``published``, ``modified``,
    ``date_source``, ``lang``, ``lang_confidence``, ``authors``, ``description``,
    ``site_name``, ``canonical_url``, ``image``, ``categories``, ``keywords`` (the record's
    fields; dates from the URL need ``extract(html, url=...)``)."""
    return json.loads(x.metadata_json)


def fingerprints(text: str) -> Dict[str, Any]:
    """The duplicate-detection fingerprints the pipeline writes for ``text``: ``exact``
    (xxh3-64 of the normalised text, hex), ``simhash`` (64-bit, hex), ``minhash`` (112 values)
    and ``bands`` (14 LSH band keys, hex)."""
    return json.loads(fingerprints_json(text))


def read_warc(source: PathOrBytes, *, on_error: str = "warn") -> Iterator[Page]:
    """Iterate over the HTML responses (2xx) of a WARC or ARC file (``.warc``, ``.warc.gz``,
    ``.arc``, ``.arc.gz``: a path, an ``http(s)://`` URL or an ``s3://bucket/key`` object,
    streamed and resumed after a dropped connection as the CLI does, or the file's bytes), in
    file order, as :class:`Page` objects (``url``, ``offset``, ``body``, ``charset``, ...).
    S3 takes its credentials and endpoint from the usual AWS variables (``AWS_ENDPOINT_URL``,
    ``AWS_ALLOW_HTTP`` …). Damaged records: a ``RuntimeWarning`` naming the file and byte
    offset (``on_error="warn"``), a :class:`WarcError` (``"raise"``), or nothing
    (``"ignore"``); reading goes on after them. Raises :class:`WarcError` at once if the file
    cannot be opened."""
    return WarcPages(source, on_error=on_error)


def process_warc(
    source: PathOrBytes,
    *,
    scorer: str = "nb",
    model: Optional[Union[str, "os.PathLike[str]"]] = None,
    extractor: Optional[Extractor] = None,
    drop_near_duplicates: bool = False,
    on_error: str = "warn",
    **options: Any,
) -> Iterator[Dict[str, Any]]:
    """Run the crawl pipeline's per-record work over a WARC file (any location
    :func:`read_warc` takes): yields one dict per extracted page, shaped exactly like a line
    of ``pipeline --warc``'s JSONL output (``id``, ``text``, ``metadata`` with url, source
    offset, title, extraction, fingerprints, ``near_duplicate_of`` within this file). The
    extraction options are the CLI's flags as keywords, as for :class:`Extractor`
    (``process_warc(path, link_run_blocks=0)`` is ``pipeline --warc path
    --link-run-blocks 0``). Site memory is learned as the file's pages go by, as the CLI learns
    it, with its flags as keywords too (``site_memory_pages=0`` turns it off,
    ``site_memory_from="crawl.sitemem"`` starts from a saved memory). Pages without text are
    left out; failures are reported as in :func:`read_warc`."""
    # The site memory flags (`site_memory_pages`, `_share`, `_hosts`, `_blocks`, `_from`) go to
    # the record loop, the rest to the extractor.
    site = {k: v for k, v in options.items() if k.startswith("site_memory")}
    options = {k: v for k, v in options.items() if not k.startswith("site_memory")}
    if extractor is not None and (options or scorer != "nb" or model is not None):
        raise ValueError("process_warc: give either an extractor or scorer, model and options, not both")
    if extractor is not None:
        ex = extractor
    elif options:
        ex = Extractor(scorer, None if model is None else os.fspath(model), **options)
    else:
        ex = _cached_extractor(scorer, model)
    records = WarcRecords(
        source, ex, drop_near_duplicates=drop_near_duplicates, on_error=on_error, site_memory=site
    )
    for line in records:
        yield json.loads(line)
