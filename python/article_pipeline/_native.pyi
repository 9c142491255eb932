"""Type stubs of the Rust extension module (PyO3)."""

import os
from typing import Any, Dict, Iterator, Optional, Tuple, Union

SCORERS: list[str]
VERSION: str

class ArticlePipelineError(Exception):
    """Base class of every error raised by article_pipeline."""

class ModelError(ArticlePipelineError):
    """A scorer or model that cannot be used."""

class ExtractionError(ArticlePipelineError):
    """A page that cannot be extracted."""

class WarcError(ArticlePipelineError):
    """A WARC file or record that cannot be read."""

class Extraction:
    """The result of one page."""

    text: str
    title: Optional[str]
    html_title: Optional[str]
    metadata_json: str
    span: Optional[Tuple[int, int]]
    byte_span: Optional[Tuple[int, int]]
    score: float
    tokens: int
    encoding: Optional[str]
    scorer: str
    model: str
    url: Optional[str]
    fingerprints_json: Optional[str]

class Extractor:
    """Extracts article text with one scorer; share it between threads (releases the GIL)."""

    def __init__(
        self,
        scorer: str = "nb",
        model: Optional[Union[str, os.PathLike[str]]] = None,
        *,
        bias: Optional[float] = None,
        tag_bias: Optional[float] = None,
        **options: Union[bool, int, float, None],
    ) -> None: ...
    @property
    def scorer(self) -> str: ...
    @property
    def model(self) -> str: ...
    def extract(
        self,
        html: Union[bytes, str],
        url: Optional[str] = None,
        *,
        charset: Optional[str] = None,
        fingerprints: bool = False,
    ) -> Extraction: ...

class Page:
    """One HTML response of a WARC file."""

    id: str
    url: str
    file: str
    offset: int
    fetched_at: Optional[str]
    status: Optional[int]
    content_type: Optional[str]
    charset: Optional[str]
    body: bytes

class WarcPages(Iterator[Page]):
    def __init__(self, source: Union[str, os.PathLike[str], bytes], *, on_error: str = "warn") -> None: ...
    def __iter__(self) -> "WarcPages": ...
    def __next__(self) -> Page: ...

class WarcRecords(Iterator[str]):
    def __init__(
        self,
        source: Union[str, os.PathLike[str], bytes],
        extractor: Extractor,
        *,
        drop_near_duplicates: bool = False,
        on_error: str = "warn",
        site_memory: Optional[Dict[str, Any]] = None,
    ) -> None: ...
    def __iter__(self) -> "WarcRecords": ...
    def __next__(self) -> str: ...

def fingerprints_json(text: str) -> str: ...
