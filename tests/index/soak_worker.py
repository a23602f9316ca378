"""Subprocess body for the 50,000-file soak: index, then print peak RSS and counts as JSON."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer


def main() -> None:
    root, index_dir = Path(sys.argv[1]), sys.argv[2]
    started = time.monotonic()
    indexer = Indexer(root, Settings(embedder="hash", index_dir=index_dir))
    report = indexer.index()
    status = indexer.status()
    indexer.close()
    print(
        json.dumps(
            {
                "files": status.files,
                "chunks": status.chunks,
                "embedded": report.embedded,
                "seconds": round(time.monotonic() - started, 1),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
