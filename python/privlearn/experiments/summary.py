"""The parts of a reproduction's ``summary.md`` that every paper shares.

Every reproduction writes a ``summary.md``: a title, the settings, a quick-mode warning, the
data it read (and what it could not run, and why), then the paper's claims checked on the
numbers, then its own tables, then the files it wrote. Belongs here: the sections that read the
same for every paper (:func:`quick_mode_note`, :func:`data_section`, :func:`claims_section`,
:func:`files_section`; :func:`not_run_lines` for a summary that tables its data itself) and the
reason line for a missing data file (:func:`missing_data_reason`, and :func:`prepare_or_skip`,
which records it while a reproduction prepares its data). Not here: a paper's own settings
text, claim criteria or tables (that paper's package).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from privlearn.experiments.claims import Claim

__all__ = [
    "claims_section",
    "data_section",
    "files_section",
    "missing_data_reason",
    "not_run_lines",
    "prepare_or_skip",
    "quick_mode_note",
]

_T = TypeVar("_T")

#: The heading of the claims section, unless a reproduction names its source otherwise.
CLAIMS_HEADING = "Paper's qualitative claims, checked on the numbers"


def quick_mode_note(text: str) -> list[str]:
    """The bold quick-mode warning paragraph (``text`` says what was cut and which command gives
    the full run), followed by a blank line."""
    return [f"**Quick mode**: {text}", ""]


def data_section(
    notes: Iterable[str] | Mapping[str, str], skipped: Mapping[str, str] | None = None
) -> list[str]:
    """The ``## Data`` section: one bullet per data set that was run, then one ``NOT RUN (why)``
    bullet per data set that was not.

    Parameters
    ----------
    notes : mapping or iterable of str
        ``{name: note}`` (rendered ``- **name**: note.``) or ready bullet texts (rendered
        ``- text``).
    skipped : mapping, optional
        ``{name: why}`` for the data sets that were not run.
    """
    lines = ["## Data", ""]
    if isinstance(notes, Mapping):
        lines += [f"- **{name}**: {note}." for name, note in notes.items()]
    else:
        lines += [f"- {text}" for text in notes]
    lines += [f"- **{name}**: NOT RUN ({why})." for name, why in (skipped or {}).items()]
    lines.append("")
    return lines


def not_run_lines(skipped: Mapping[str, str]) -> list[str]:
    """One ``- **name**: NOT RUN (why).`` bullet per data set that was not run, without a
    heading: for a summary that lists its data in a table or section of its own (the bullets
    :func:`data_section` ends with)."""
    return [f"- **{name}**: NOT RUN ({why})." for name, why in skipped.items()]


def claims_section(
    claims: Sequence[Claim], *, heading: str = CLAIMS_HEADING, intro: str | None = None
) -> list[str]:
    """The claims section: ``## heading``, an optional paragraph, then one numbered item per
    claim (name, source, verdict in bold; the criterion; one sub-bullet per detail)."""
    lines = [f"## {heading}", ""]
    if intro:
        lines += [intro, ""]
    for i, c in enumerate(claims, 1):
        lines.append(f"{i}. **{c.name}** ({c.source}): **{c.verdict}**.  ")
        lines.append(f"   Criterion: {c.criterion}.")
        lines += [f"   - {d}" for d in c.details]
        lines.append("")
    return lines


def files_section(
    figures: Mapping[str, Path],
    files: Mapping[str, str] | Iterable[str],
    notes: Iterable[str] = (),
) -> list[str]:
    """The ``## Files`` section: one bullet per figure (``- `name.png` (label)``), then one per
    other file (``- `name`: what it holds``), then one per note (what was not drawn and why, how
    the figures show the numbers), and a blank line.

    Parameters
    ----------
    figures : mapping
        ``{label: path}`` of the figures that were drawn, in the order to list them.
    files : mapping or iterable of str
        ``{file name: what it holds}``, or ready bullet texts, for the other files.
    notes : iterable of str, optional
        Bullet texts after the files.
    """
    lines = ["## Files", ""]
    lines += [f"- `{path.name}` ({label})" for label, path in figures.items()]
    if isinstance(files, Mapping):
        lines += [f"- `{name}`: {what}" for name, what in files.items()]
    else:
        lines += [f"- {text}" for text in files]
    lines += [f"- {note}" for note in notes]
    lines.append("")
    return lines


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


def prepare_or_skip(
    tag: str,
    name: str,
    prepare: Callable[[], _T],
    skipped: dict[str, str],
    data_home: Any = None,
    *,
    progress: bool = True,
) -> _T | None:
    """Prepare the data set ``name`` of a reproduction, or record why it cannot run.

    Prints ``[tag] preparing name`` (with ``progress``) and returns ``prepare()``. When a data
    file is missing (:class:`FileNotFoundError`), records :func:`missing_data_reason` in
    ``skipped[name]`` (the summary's ``NOT RUN (...)`` bullet), prints
    ``[tag] name: NOT RUN (why)`` whatever ``progress`` says, and returns ``None``.
    """
    if progress:
        print(f"[{tag}] preparing {name}", flush=True)
    try:
        return prepare()
    except FileNotFoundError as exc:
        skipped[name] = missing_data_reason(exc, data_home)
        print(f"[{tag}] {name}: NOT RUN ({skipped[name]})", flush=True)
        return None
