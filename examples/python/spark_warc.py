"""Article text from WARC files on Spark, in the cc-pyspark style: a text file listing WARC
paths (one per line) is split over the executors; each partition reads its WARCs with the
article-pipeline reader and extractor (one Extractor per partition, the model loaded once)
and the records go to Parquet.

    spark-submit examples/python/spark_warc.py warc_paths.txt out.parquet
    python examples/python/spark_warc.py warc_paths.txt out.parquet --master "local[2]"

Each executor needs the package (`pip install ./python`). Paths are local files here; a
cluster reads them from a shared file system.

Python of the workers: Spark starts them with `PYSPARK_PYTHON`, else the `python3` on the
PATH, which need not be the interpreter that has the package (started as
`.venv/bin/python examples/python/spark_warc.py …` without activating the venv, the workers
would fail with `ModuleNotFoundError: article_pipeline`). In local mode this script sets
`PYSPARK_PYTHON` (and `PYSPARK_DRIVER_PYTHON`) to its own interpreter unless they are set.
On a cluster, install the package on every node and point `spark.pyspark.python` (or
`PYSPARK_PYTHON` in `spark-env.sh`) at that interpreter, or ship a packed environment with
`--archives` (conda-pack / venv-pack).
"""

import argparse
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

SCHEMA = StructType(
    [
        StructField("id", StringType(), False),
        StructField("url", StringType(), False),
        StructField("warc_file", StringType(), False),
        StructField("warc_offset", LongType(), False),
        StructField("title", StringType(), True),
        StructField("text", StringType(), False),
        StructField("simhash", StringType(), False),
        StructField("near_duplicate_of", StringType(), True),
    ]
)


def process_partition(paths):
    """Runs on an executor: every record of every WARC of this partition."""
    import warnings

    import article_pipeline as ap

    extractor = ap.Extractor()
    for path in paths:
        path = path.strip()
        if not path or path.startswith("#"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # damaged records are skipped; Spark logs are noisy
                for r in ap.process_warc(path, extractor=extractor):
                    m = r["metadata"]
                    yield (
                        r["id"],
                        m["url"],
                        m["source"]["file"],
                        m["source"]["offset"],
                        m["title"],
                        r["text"],
                        m["fingerprints"]["simhash"],
                        m["near_duplicate_of"],
                    )
        except ap.WarcError as e:  # an unreadable file: skip it, keep the job going
            print(f"skipping {path}: {e}")


def run(spark: SparkSession, paths_file: str, output: str, partitions: int = 0) -> int:
    paths = spark.sparkContext.textFile(paths_file, minPartitions=partitions or spark.sparkContext.defaultParallelism)
    df = spark.createDataFrame(paths.mapPartitions(process_partition), SCHEMA)
    df.write.mode("overwrite").parquet(output)
    return spark.read.parquet(output).count()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths_file", help="text file with one WARC path per line")
    ap.add_argument("output", help="Parquet output folder")
    ap.add_argument("--master", default=None, help='e.g. "local[2]" when run with python')
    ap.add_argument("--partitions", type=int, default=0)
    args = ap.parse_args()
    # Started by `python` (not spark-submit, which sets PYSPARK_GATEWAY_PORT) without --master,
    # Spark runs locally too.
    local = args.master.startswith("local") if args.master else "PYSPARK_GATEWAY_PORT" not in os.environ
    if local:
        # The workers run on this machine: give them this interpreter, the one with the package.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("article-pipeline-warc")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    n = run(spark, args.paths_file, args.output, args.partitions)
    print(f"{n} records -> {args.output}")
    spark.stop()


if __name__ == "__main__":
    main()
