"""An inventory of the data files privlearn's loaders know about.

``privlearn datasets`` (the CLI) prints this table, so a user can see at a glance which data
sets are present in the data folder (see :func:`privlearn.data.get_data_home`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..exceptions import DataIntegrityError
from .integrity import verify_data_file, verify_embedded_file
from .loaders import EMBEDDED_FILES, KNOWN_FILES, PathLike, data_source, get_data_home

__all__ = ["dataset_inventory"]

_CHUNK = 1 << 20


def _sha256(path: Any) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def dataset_inventory(
    data_home: PathLike | None = None, *, checksums: bool = True
) -> list[dict[str, Any]]:
    """List every known data file and whether it is present.

    The known files are the HELR sets (``helr/edin.txt``, ``lbw``, ``nhanes3``, ``pcs``,
    ``uis``), the four MNIST IDX files, ``kddcup99/kddcup.data_10_percent.gz``,
    ``phishing/phishing.txt.gz`` and ``adult/adult.data``, ``adult.test``, ``adult.names``,
    in that order. Called without ``data_home``, a file missing from the default data folder
    but embedded in the package (see :func:`privlearn.data.data_source`) is listed with the
    source ``"embedded"`` and the path of the embedded copy.

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        Data folder (see :func:`~privlearn.data.get_data_home`).
    checksums : bool, default True
        Compute the SHA-256 of every file found (reads every file once; about a second for
        the whole set).

    Returns
    -------
    list of dict
        One dict per file with the keys ``dataset`` (e.g. ``"mnist"``), ``file`` (the path
        relative to the data folder, ``/``-separated), ``path`` (absolute path as ``str``: the
        file the loaders read, else where it is expected), ``found`` (bool: the loaders can read
        it), ``source`` (``"data folder"``, ``"embedded"`` or ``"missing"``), ``size`` (bytes of
        that file, ``None`` when not found) and ``sha256`` (hex digest of that file, ``None``
        when not found or ``checksums`` is false; an embedded copy may be compressed) and
        ``verified`` (``True`` when the file matches its pinned SHA-256, ``False`` when it does
        not -- the loaders refuse it, see :mod:`privlearn.data.integrity` -- and ``None`` when
        not found or ``checksums`` is false).
    """
    if not isinstance(checksums, bool):
        raise TypeError(f"checksums must be a bool, got {type(checksums).__name__}")
    home = get_data_home(data_home)
    rows: list[dict[str, Any]] = []
    for dataset, relative in KNOWN_FILES:
        located, source = data_source(relative, data_home)
        found = located is not None
        path = located if located is not None else home / relative
        rows.append(
            {
                "dataset": dataset,
                "file": relative,
                "path": str(path),
                "found": found,
                "source": source,
                "size": path.stat().st_size if found else None,
                "sha256": _sha256(path) if (found and checksums) else None,
                "verified": _verified(path, relative, source) if (found and checksums) else None,
            }
        )
    return rows


def _verified(path: Any, relative: str, source: str) -> bool:
    try:
        if source == "embedded":
            verify_embedded_file(path, EMBEDDED_FILES[relative], relative)
        else:
            verify_data_file(path, relative)
    except DataIntegrityError:
        return False
    return True
