"""mkdocs hook: the Sphinx roles of reljac's docstrings shown as code.

reljac's docstrings cross-reference with Sphinx roles (:class:`Controller`,
:func:`~reljac.relative.relative_jacobian`); Markdown renders those as the role's name followed by
code. This hook keeps the code only, with the last dotted component where the role asked for it
with ``~`` (as Sphinx does).
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(~?)([^<]*)</code>")


def _code(match: re.Match) -> str:
    short, name = match.group(1), match.group(2)
    return f"<code>{name.rsplit('.', 1)[-1] if short else name}</code>"


def on_page_content(html: str, **kwargs) -> str:
    return ROLE.sub(_code, html)
