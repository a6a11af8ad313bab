#!/usr/bin/env python3
"""Count row changes per table per hour in a folder of binlogs, and write them as Parquet.

    python examples/changes_per_hour.py INPUT OUTPUT [--master local[2]]
    spark-submit --master spark://HOST:7077 examples/changes_per_hour.py INPUT OUTPUT

INPUT is a binlog file, a folder (read recursively; the files that start like a
binlog or are named like one, mysql-bin.000042, are taken) or a glob; OUTPUT a Parquet folder (overwritten), one row per
(schema, table, hour, op) with the number of row changes:

    schema | table | hour                | inserts | updates | deletes | changes

Needs `pip install binlog-spec pyspark pyarrow` and Java 17+.
"""
from __future__ import annotations

import argparse
import os
import sys


def changes_per_hour(spark, source: str, output: str):
    """Read `source`, write the counts to `output` (Parquet), return the counts DataFrame."""
    from pyspark.sql import functions as F

    from binlog_spec.spark import read_binlog

    # read_binlog: the DDL first (a distributed mode=ddl read, cached), so that every split has names
    changes = (read_binlog(spark, source, recursiveFileLookup="true",
                           onError="skip")         # a broken file: its good rows, and a _corrupt_record row
               .select("schema", "table", "timestamp", "op", "_corrupt_record")
               .persist())                         # decoded once, used twice: the faults, then the counts
    for bad in changes.filter("_corrupt_record IS NOT NULL").select("_corrupt_record").collect():
        print(f"skipped the rest of a file: {bad[0]}", file=sys.stderr)
    changes = changes.filter("_corrupt_record IS NULL")
    counts = (changes
              .groupBy("schema", "table", F.date_trunc("hour", "timestamp").alias("hour"))
              .agg(F.count(F.when(F.col("op") == "insert", 1)).alias("inserts"),
                   F.count(F.when(F.col("op") == "update", 1)).alias("updates"),
                   F.count(F.when(F.col("op") == "delete", 1)).alias("deletes"),
                   F.count(F.lit(1)).alias("changes"))
              .orderBy("schema", "table", "hour"))
    counts.write.mode("overwrite").parquet(output)
    changes.unpersist()
    return spark.read.parquet(output).orderBy("schema", "table", "hour")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--master", help="Spark master (default: spark-submit's --master, else local[*])")
    args = ap.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(args.master) if args.master else SparkSession.builder
    spark = (builder.appName("binlog changes per hour")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")     # hours of UTC, as binlog timestamps are
             .getOrCreate())
    try:
        changes_per_hour(spark, args.input, args.output).show(50, truncate=False)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
