"""Where files live: local and fsspec paths, safe publication of shard sets, mirrors, reclaiming."""
