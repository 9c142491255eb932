"""A FineWeb-style datatrove pipeline with article-pipeline as the extractor:
WarcReader -> ArticleExtractor -> JsonlWriter, on a local executor with 2 tasks.

    python examples/python/datatrove_warc.py INPUT_FOLDER OUTPUT_FOLDER [--tasks 2]

INPUT_FOLDER holds *.warc.gz files (e.g. `pipeline pack-warc --out in/x.warc.gz pages/*.html`
or Common Crawl WARCs); OUTPUT_FOLDER receives ${rank}.jsonl.gz files of
{"text", "id", "metadata": {"url", "title", "extraction", ...}}.
"""

import argparse

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import WarcReader
from datatrove.pipeline.writers import JsonlWriter

from article_pipeline.datatrove import ArticleExtractor


def build(input_folder: str, output_folder: str, tasks: int = 2, logging_dir: str | None = None) -> LocalPipelineExecutor:
    return LocalPipelineExecutor(
        pipeline=[
            WarcReader(input_folder, glob_pattern="*.warc.gz"),
            ArticleExtractor(),  # was: Trafilatura(favour_precision=True)
            JsonlWriter(output_folder),
        ],
        tasks=tasks,
        workers=tasks,
        logging_dir=logging_dir,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input_folder")
    ap.add_argument("output_folder")
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--logging-dir", default=None)
    args = ap.parse_args()
    build(args.input_folder, args.output_folder, args.tasks, args.logging_dir).run()


if __name__ == "__main__":
    main()
