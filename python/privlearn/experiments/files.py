"""Result files of the reproductions: written atomically, with the disk space they need.

Belongs here: how a result file reaches the output folder (:func:`atomic_output`: a temporary
file in the same folder, then :func:`os.replace`, so a failed write -- a full disk, a lost
permission -- leaves the previous file or none, never half a file) and the space
``privlearn reproduce`` requires before it starts (:data:`OUTPUT_BYTES_PER_REPRODUCTION`).
Not here: what is written (:mod:`~privlearn.experiments.tables`,
:mod:`~privlearn.experiments.figures`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "OUTPUT_BYTES_PER_REPRODUCTION",
    "OutputWriteError",
    "atomic_output",
    "is_disk_full",
]

#: Free disk space ``privlearn reproduce`` requires in the output folder per reproduction
#: before anything runs (64 MiB). Generous on purpose: the ``--quick`` runs write 0.1 to 1.4 MB
#: of CSV, markdown and PNG files each (song13 the most), so the check only refuses a disk that
#: is (nearly) full; it is a fixed public number, not a forecast of one run.
OUTPUT_BYTES_PER_REPRODUCTION = 64 * 1024 * 1024

#: ``errno`` values that mean "the disk (or the user's quota) is full".
_DISK_FULL = frozenset(code for code in (errno.ENOSPC, getattr(errno, "EDQUOT", None)) if code)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is an :class:`OSError` saying the disk or the quota is full."""
    return isinstance(exc, OSError) and exc.errno in _DISK_FULL


class OutputWriteError(OSError):
    """A result file could not be written (the disk is full, permission was lost, ...).

    Nothing is left half-written: the temporary file was removed and any earlier file of that
    name is unchanged. ``errno`` and ``strerror`` are those of the failed system call,
    ``filename`` is the result file.
    """

    def __init__(self, path: Any, cause: OSError) -> None:
        why = cause.strerror or str(cause) or type(cause).__name__
        super().__init__(cause.errno, why, str(path))

    def __str__(self) -> str:
        code = f" [errno {self.errno}]" if self.errno is not None else ""
        return f"cannot write '{self.filename}': {self.strerror}{code}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_write_error, (self.filename, self.errno, self.strerror))


def _rebuild_write_error(filename: str, code: int | None, strerror: str) -> OutputWriteError:
    return OutputWriteError(filename, OSError(code, strerror))


def _open_temp(path: Path) -> tuple[Path, int]:
    """A new hidden file ``.<name>.<random>.tmp`` beside ``path`` (umask permissions)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
    raise FileExistsError(errno.EEXIST, "cannot create a temporary file", str(path.parent))


@contextlib.contextmanager
def atomic_output(path: Path, mode: str = "w", **open_kwargs: Any) -> Iterator[IO[Any]]:
    """Open a result file for writing so that it appears whole or not at all.

    The data go to a hidden temporary file in the same folder (``.<name>.<random>.tmp``),
    which is flushed to disk and then renamed over ``path`` (:func:`os.replace`, atomic on
    POSIX and Windows) when the block ends without an exception. On any exception the
    temporary file is removed and ``path`` is left as it was.

    Parameters
    ----------
    path : pathlib.Path
        The result file.
    mode : {"w", "wb"}, default "w"
        Text or binary.
    **open_kwargs
        Passed to :func:`open` (``encoding``, ``newline``).

    Yields
    ------
    file object
        The open temporary file.

    Raises
    ------
    OutputWriteError
        Any :class:`OSError` while creating, writing, flushing or renaming the file (for
        example ``ENOSPC``, no space left on device), naming ``path``.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    try:
        tmp, fd = _open_temp(path)
    except OSError as exc:
        raise OutputWriteError(path, exc) from exc
    try:
        with os.fdopen(fd, mode, **open_kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and not isinstance(exc, OutputWriteError):
            raise OutputWriteError(path, exc) from exc
        raise
