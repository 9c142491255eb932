"""Article text from WARC files on Ray Data: a list of WARC paths becomes a dataset, a
stateful map (`ArticleMapper`, one Extractor per actor, model loaded once) turns each WARC
into records, and the result is written as Parquet.

    python examples/python/ray_warc.py warc_paths.txt out_parquet/ [--actors 2]

Runs on a local Ray (started by ray.init()) or an existing cluster (RAY_ADDRESS).
"""

import argparse
import warnings

import ray


class ArticleMapper:
    """A Ray actor class: holds one Extractor for all the batches it maps."""

    def __init__(self):
        import article_pipeline as ap

        self.ap = ap
        self.extractor = ap.Extractor()

    def __call__(self, batch):
        cols = {k: [] for k in ("id", "url", "warc_file", "warc_offset", "title", "text", "simhash", "near_duplicate_of")}
        for path in batch["path"]:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    for r in self.ap.process_warc(path, extractor=self.extractor):
                        m = r["metadata"]
                        cols["id"].append(r["id"])
                        cols["url"].append(m["url"])
                        cols["warc_file"].append(m["source"]["file"])
                        cols["warc_offset"].append(m["source"]["offset"])
                        cols["title"].append(m["title"])
                        cols["text"].append(r["text"])
                        cols["simhash"].append(m["fingerprints"]["simhash"])
                        cols["near_duplicate_of"].append(m["near_duplicate_of"])
            except self.ap.WarcError as e:
                print(f"skipping {path}: {e}")
        return cols


def run(paths, output: str, actors: int = 2) -> int:
    ds = ray.data.from_items([{"path": p} for p in paths])
    records = ds.map_batches(ArticleMapper, batch_size=1, concurrency=actors)
    records.write_parquet(output)
    return ray.data.read_parquet(output).count()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths_file", help="text file with one WARC path per line")
    ap.add_argument("output", help="Parquet output folder")
    ap.add_argument("--actors", type=int, default=2)
    args = ap.parse_args()
    paths = [line.strip() for line in open(args.paths_file) if line.strip() and not line.startswith("#")]
    ray.init(ignore_reinit_error=True, include_dashboard=False)
    n = run(paths, args.output, args.actors)
    print(f"{n} records -> {args.output}")


if __name__ == "__main__":
    main()
