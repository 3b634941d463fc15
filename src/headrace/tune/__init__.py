"""Autotuning and plan rewrites: CPU/RAM budgets (:mod:`.budget`), the allocation model
(:mod:`.model`), the in-iterator tuner (:mod:`.tuner`) and static rewrites (:mod:`.rewrite`)."""

from . import budget, model, rewrite, tuner

__all__ = ["budget", "model", "rewrite", "tuner"]
