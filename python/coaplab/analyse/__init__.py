"""Statistics of run records (pooled summaries, replication intervals), pure functions that the
runner summarises with and the presentation compares with."""
