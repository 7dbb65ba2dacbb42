"""The collector: step logs from files or Cloud Logging into a Parquet dataset."""
