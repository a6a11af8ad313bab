"""Spark's automatic registration of the ``binlog`` data source.

pyspark 4 registers, in every new SparkSession, the ``DefaultSource`` of each top-level
module named ``pyspark_*`` it finds on the Python path: installing binlog-spec is enough for
``spark.read.format("binlog")`` to work without `binlog_spec.spark.register`.
"""
from binlog_spec.spark import DefaultSource  # noqa: F401
