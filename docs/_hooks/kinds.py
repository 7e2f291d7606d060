"""mkdocs hook: the API reference's list of task and limit kinds, read from the registry.

A page holding ``<!-- kinds -->`` gets, there, a table of every registered kind
(:mod:`reljac.ik.kinds`: its ``type`` in hierarchy files, its class, task or limit) and the
reference of each kind's class that the page does not show yet; ``<!-- core kinds -->`` the
compiled core's kinds and their fields (``reljac.ik._core.kinds()``: names, types, docs), when the
core is built. A new kind appears on the page without an edit of it.
"""

from __future__ import annotations

import re


def _kinds_table(markdown: str) -> str:
    from reljac.ik import Limit
    from reljac.ik.kinds import kinds

    rows = ["| type | class | what |", "| --- | --- | --- |"]
    entries = []
    for key, cls in kinds().items():
        path = f"{cls.__module__}.{cls.__qualname__}"
        role = "limit" if issubclass(cls, Limit) else "task"
        rows.append(f"| `{key}` | [`{cls.__name__}`](#{path}) | {role} |")
        if not re.search(rf"^::: {re.escape(path)}\s*$", markdown, re.M) and \
                not re.search(rf"^::: {re.escape(cls.__module__)}\s*$", markdown, re.M):
            entries.append(f"::: {path}\n")
    return "\n".join(rows) + "\n\n" + "\n".join(entries)


def _core_table() -> str:
    try:
        from reljac.ik import _core
    except ImportError:
        return "*(the compiled core is not built: its kinds are listed where it is)*"
    out = []
    for kind in _core.kinds():
        out.append(f"**`{kind['name']}`** ({kind['role']}): {kind['doc']}\n")
        out.append("| field | type | required | doc |\n| --- | --- | --- | --- |")
        out += [f"| `{name}` | {type_} | {'yes' if required else 'no'} | {doc} |"
                for name, type_, doc, required in kind["fields"]]
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, **kwargs) -> str:
    if "<!-- kinds -->" in markdown:
        markdown = markdown.replace("<!-- kinds -->", _kinds_table(markdown))
    if "<!-- core kinds -->" in markdown:
        markdown = markdown.replace("<!-- core kinds -->", _core_table())
    return markdown
