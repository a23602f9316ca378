"""Turning a workspace into chunks: scan files, parse with tree-sitter, cut definitions."""
