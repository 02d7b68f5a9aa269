"""Sphinx configuration of the privlearn documentation.

Why this stack: our docstrings are numpy-style, and numpydoc parses them as written;
autodoc + autosummary generate the API reference from them; sphinx-gallery runs the example
scripts at build time, so every figure in the gallery comes from the code beside it. It is the
stack of scikit-learn, whose documentation our users already know. The theme is Sphinx's
built-in alabaster: no extra dependency.

Formulas are written in Unicode rather than LaTeX, so that no page needs MathJax from a CDN:
the site reads the same offline.

The build is offline (no intersphinx) and is meant to pass with ``-W`` (warnings as errors):
``sphinx-build -W -b html docs docs/_build/html``. ``tests/test_docs.py`` runs it.
"""

from __future__ import annotations

import os
import sys
import warnings

from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer

import privlearn

# Examples run at build time on two shared cores: keep the threads polite and plots headless.
os.environ.setdefault("MPLBACKEND", "Agg")

project = "privlearn"
author = "the privlearn developers"
copyright = "the privlearn developers"
version = release = privlearn.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "README.md", "examples"]
root_doc = "index"
default_role = "py:obj"

# -- autodoc / autosummary ---------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"  # numpydoc's Parameters sections already give the types
autoclass_content = "class"

# -- numpydoc ---------------------------------------------------------------------------------
# The class template lists methods itself; numpydoc's own member tables would duplicate them.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True

# -- sphinx-gallery ---------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "reference_url": {"privlearn": None},  # local links only: no network
    "doc_module": ("privlearn",),
    "backreferences_dir": "generated/backreferences",
    "show_memory": False,
    # The timing pages load a table widget from a CDN: left out, the site stays offline.
    "write_computation_times": False,
    "capture_repr": (),
}

# No intersphinx: the build never touches the network.
intersphinx_mapping: dict[str, tuple[str, str | None]] = {}

# -- HTML -------------------------------------------------------------------------------------
html_theme = "alabaster"
html_static_path: list[str] = ["_static"]
# the content column holds its code blocks (a long line scrolls inside its block)
html_css_files = ["custom.css"]
html_title = f"privlearn {release}"
html_theme_options = {
    "description": "Privacy-preserving machine learning on a fast C++ core",
    "fixed_sidebar": True,
    "page_width": "1100px",
    "sidebar_width": "240px",
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}


def _skip_member(app, what, name, obj, skip, options):
    """Leave out what estimators inherit from scikit-learn itself.

    ``set_output``, ``get_metadata_routing``, the generated ``set_*_request`` setters and the
    mixins' ``score`` are scikit-learn's API, documented by scikit-learn; their docstrings link
    to scikit-learn's own pages, which this offline build cannot resolve.
    """
    if name.startswith("set_") and name.endswith("_request"):
        return True
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and module.split(".")[0] == "sklearn":
        return True
    return None


def _doc_comment(fullname, obj):
    """The ``#:`` comment of a constant re-exported by a package (``privlearn.accounting``
    exports ``DEFAULT_DELTA`` from ``privlearn.accounting.size``), where autodoc looks only in
    the package's ``__init__``: find the privlearn module that assigns it, read its comment."""
    attr = fullname.rpartition(".")[2]
    for modname, module in sorted(sys.modules.items()):
        if not modname.startswith("privlearn") or getattr(module, attr, _MISSING) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except PycodeError:
            continue
        if ("", attr) in docs:
            return list(docs[("", attr)])
    return []


_MISSING = object()


def _constant_docstring(app, what, name, obj, options, lines):
    """Module constants: their own ``#:`` comment, never their type's docstring.

    Without this a re-exported constant shows the docstring of ``float`` or ``tuple``
    ("Convert a string or number to a floating point number ...").
    """
    if what not in ("data", "attribute"):
        return
    text = " ".join(" ".join(lines).split())
    type_doc = type(obj).__doc__
    type_doc = " ".join(type_doc.split()) if isinstance(type_doc, str) else ""
    if lines and not (type_doc and (text == type_doc or text[:40] == type_doc[:40])):
        return
    lines[:] = _doc_comment(name, obj)


def _compile_numpydoc_template_once() -> None:
    """Compile numpydoc's docstring template once per build, not once per docstring.

    numpydoc (1.x) builds a jinja environment and compiles ``numpydoc_docstring.rst`` for each
    of the ~1,500 docstrings it renders (about a sixth of the build's CPU time); the template is
    the same file throughout a build (numpydoc's own: ``_templates`` does not override it).
    """
    from numpydoc import docscrape_sphinx

    base = getattr(docscrape_sphinx, "SandboxedEnvironment", None)
    if base is None or getattr(base, "_privlearn_once", False):
        return
    compiled: dict[str, object] = {}

    class _CompiledOnce(base):  # type: ignore[misc, valid-type]
        _privlearn_once = True

        def get_template(self, name, *args, **kwargs):  # type: ignore[no-untyped-def]
            if name not in compiled:
                compiled[name] = super().get_template(name, *args, **kwargs)
            return compiled[name]

    docscrape_sphinx.SandboxedEnvironment = _CompiledOnce


def setup(app):
    _compile_numpydoc_template_once()
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _constant_docstring)


# Matplotlib in the examples must not warn about a non-interactive backend.
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")
