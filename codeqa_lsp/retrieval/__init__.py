"""Hybrid retrieval: BM25 and dense arms, fused, with a confidence floor."""
