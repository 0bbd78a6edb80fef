"""The batch stage: a PySpark job run beside a streaming job over the sink output that the
streaming job's completed checkpoints have committed, each epoch exactly once.

plan (pure: which epochs are committed and which to process next), location (the sink's
output and the stage's output, a local directory or S3), records (committed parts as a
Spark DataFrame), parquet (the result as a Parquet object), progress (the record that
makes restarts continue where they stopped), stage (the trigger loop).
"""
