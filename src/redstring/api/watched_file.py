"""`file_signature`: what a file's `stat` says of it, to tell when it changed.

The credential files (API keys, a JWKS) are checked on each request and read
again only when their signature differs from the one last read, so a change
takes effect at once without a restart, and costs one `stat` otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

# A signature: inode, device, size, modification time (ns) and mode; None when the
# file cannot be stat'ed. A replaced file (`os.replace`) has a new inode.
Signature = tuple[int, int, int, int, int] | None


def file_signature(path: Path) -> Signature:
    """The signature of the file at `path`, or None when it is missing or unreadable."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_dev, stat.st_size, stat.st_mtime_ns, stat.st_mode)
