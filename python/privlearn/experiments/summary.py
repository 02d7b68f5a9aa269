"""The parts of a reproduction's ``summary.md`` that every paper shares.

Belongs here: the lines a summary writes the same way for every paper (a data set that was not
run and why). Not here: a paper's own settings text or claim criteria (its package).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["missing_data_reason"]


def missing_data_reason(exc: FileNotFoundError, data_home: Any = None) -> str:
    """One short line on a data file that is missing, for a summary's ``NOT RUN (...)``.

    ``"missing adult/adult.data under <data home>; run `privlearn datasets download adult`"``:
    the file relative to the data folder (from ``exc.filename``) and, for a file that
    :data:`privlearn.data.loaders.KNOWN_FILES` lists, the command that fetches its data set.
    Without a file name, the first line of the error.
    """
    from privlearn.data import get_data_home
    from privlearn.data.loaders import KNOWN_FILES

    home = get_data_home(data_home)
    filename = exc.filename if isinstance(exc.filename, (str, os.PathLike)) else None
    if filename is None:
        return (str(exc).splitlines() or [type(exc).__name__])[0]
    path = Path(filename)
    try:
        relative = path.relative_to(home).as_posix()
    except ValueError:
        return f"missing {path}"
    text = f"missing {relative} under {home}"
    dataset = dict((rel, name) for name, rel in KNOWN_FILES).get(relative)
    if dataset is not None:
        text += f"; run `privlearn datasets download {dataset}`"
    return text
