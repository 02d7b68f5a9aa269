"""Where the loaders read data files from: ``PRIVLEARN_DATA``, else ``~/privlearn_data``.

Kept apart from :mod:`privlearn.data.loaders` so that :mod:`privlearn.data.download` (which the
loaders' integrity check consults for the pinned checksums) needs nothing from the loaders.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Union

PathLike = Union[str, "os.PathLike[str]"]

ENV_VAR = "PRIVLEARN_DATA"
DEFAULT_DATA_DIR = "~/privlearn_data"


def get_data_home(data_home: PathLike | None = None) -> Path:
    """Return the folder the loaders read data files from.

    Resolution order: the ``data_home`` argument if given; else the environment variable
    ``PRIVLEARN_DATA`` if set and non-empty; else ``~/privlearn_data``. ``~`` is expanded.
    The folder is neither created nor required to exist (a loader reports a missing file).

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        Explicit data folder.

    Returns
    -------
    pathlib.Path
        The resolved folder.

    Raises
    ------
    TypeError
        If ``data_home`` is neither ``None``, a ``str`` nor a path-like object.
    """
    if data_home is None:
        env = os.environ.get(ENV_VAR, "")
        data_home = env if env else DEFAULT_DATA_DIR
    elif not isinstance(data_home, (str, os.PathLike)):
        raise TypeError(
            f"data_home must be None, a str or an os.PathLike, got {type(data_home).__name__}"
        )
    return Path(os.fspath(data_home)).expanduser()
