"""datatrove integration: :class:`ArticleExtractor`, a drop-in for datatrove's ``Trafilatura``.

A FineWeb-style pipeline swaps the extractor in one line::

    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter
    from article_pipeline.datatrove import ArticleExtractor

    pipeline = [WarcReader("crawl/"), ArticleExtractor(), JsonlWriter("out/")]

Unlike ``BaseExtractor.run``, which sends every page to a sandbox subprocess to survive
extractors that hang or crash, the article-pipeline extractor has bounded time and memory
per page and never crashes the interpreter, so pages are extracted in the task's own process
(``sandbox=False``, the default); pass ``sandbox=True`` to get datatrove's subprocess and
timeout anyway.
"""

from __future__ import annotations

from typing import Any, Optional

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.extractors.base import BaseExtractor
from datatrove.utils.typeshelper import StatHints

from . import ArticlePipelineError, Extractor, extraction_metadata


class ArticleExtractor(BaseExtractor):
    """Extracts the article text of ``doc.text`` (HTML) with article-pipeline.

    Args:
        scorer: one of ``article_pipeline.SCORERS`` (default ``"nb"``, the built-in model).
        model: a model file for the scorer (``pipeline train`` / ``pipeline bootstrap``).
        timeout: per-document timeout in seconds, used only with ``sandbox=True``.
        sandbox: run extraction in datatrove's subprocess sandbox.
        add_metadata: put ``title``, the article metadata (``published``, ``lang``,
            ``authors``, ``description``, ``site_name`` … where found; existing keys are kept)
            and ``extraction`` (scorer, model, span, score) in ``doc.metadata``.
        **options: the extraction options of :class:`article_pipeline.Extractor`
            (``bias``, ``tag_bias``, ``hr``, ``clean``, ``keep_boilerplate``, ...).
    """

    name = "⛏ article-pipeline"
    _requires_dependencies = []

    def __init__(
        self,
        scorer: str = "nb",
        model: Optional[str] = None,
        timeout: float = 1,
        sandbox: bool = False,
        add_metadata: bool = True,
        **options: Any,
    ):
        super().__init__(timeout)
        self.scorer = scorer
        self.model = model
        self.sandbox = sandbox
        self.add_metadata = add_metadata
        self.options = options
        # Fail at construction, in the driver, on a bad scorer or model, not in every task.
        self._extractor: Optional[Extractor] = Extractor(scorer, model, **options)

    # The native Extractor cannot be pickled; executors pickle pipeline steps to send them to
    # tasks, so it is dropped here and loaded again, once per task, on first use.
    def __getstate__(self):
        state = self.__dict__.copy()
        state["_extractor"] = None
        return state

    @property
    def extractor(self) -> Extractor:
        if self._extractor is None:
            self._extractor = Extractor(self.scorer, self.model, **self.options)
        return self._extractor

    def extract(self, text: str) -> str:
        """The article text of one HTML page ("" when there is none)."""
        return self.extractor.extract(text).text

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if self.sandbox:
            yield from super().run(data, rank, world_size)
            return
        extractor = self.extractor
        for doc in data:
            self.stat_update(StatHints.total)
            with self.track_time():
                try:
                    x = extractor.extract(doc.text, doc.metadata.get("url"))
                except ArticlePipelineError as e:
                    self.stat_update("clean_error")
                    if not self._warned_error:
                        from datatrove.utils.logging import logger

                        logger.warning(f'❌ Error "{e}" while extracting a page. Skipping it. Shown once.')
                        self._warned_error = True
                    continue
                self.stat_update("extracted")
            doc.text = x.text
            if self.add_metadata:
                if x.title is not None:
                    doc.metadata.setdefault("title", x.title)
                for k, v in extraction_metadata(x).items():
                    if v not in (None, [], ""):
                        doc.metadata.setdefault(k, v)
                doc.metadata["extraction"] = {
                    "scorer": x.scorer,
                    "model": x.model or None,
                    "span": list(x.span) if x.span is not None else None,
                    "score": x.score,
                    "tokens": x.tokens,
                }
            if doc.text:
                self.stat_update(StatHints.forwarded)
                self.update_doc_stats(doc)
                yield doc
            else:
                self.stat_update(StatHints.dropped)
