"""Readers and writers: CSV, Parquet, Excel, tau-ARGUS formats, JJ files."""
