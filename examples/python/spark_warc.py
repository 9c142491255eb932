"""Article text from WARC files on Spark, in the cc-pyspark style: a text file listing WARC
paths (one per line) is split over the executors; each partition reads its WARCs with the
article-pipeline reader and extractor (one Extractor per partition, the model loaded once)
and the records go to Parquet.

    spark-submit examples/python/spark_warc.py warc_paths.txt out.parquet
    python examples/python/spark_warc.py warc_paths.txt out.parquet --master "local[2]"

Each executor needs the package (`pip install ./python`). Paths are local files here; a
cluster reads them from a shared file system.
"""

import argparse

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
    builder = SparkSession.builder.appName("article-pipeline-warc")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    n = run(spark, args.paths_file, args.output, args.partitions)
    print(f"{n} records -> {args.output}")
    spark.stop()


if __name__ == "__main__":
    main()
