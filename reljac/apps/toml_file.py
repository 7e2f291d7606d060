"""A TOML file a command reads (hierarchy files, placement task files): a regular UTF-8 file of
bounded size whose arrays and tables nest a bounded depth, parsed by ``tomllib``; every mistake
one :class:`~reljac.exceptions.ConfigurationError` line naming the file."""

from __future__ import annotations

from pathlib import Path

from ..exceptions import ConfigurationError, ReljacError
from ..files import regular_file, unreachable


def nesting(text: str) -> int:
    """The deepest nesting of [ ] and { } outside strings and comments (an upper bound is enough)."""
    depth = deepest = 0
    quote = ""
    comment = False
    for c in text:
        if comment:
            comment = c != "\n"
        elif quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "#":
            comment = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
    return deepest


def read_toml(path: Path, where: str, what: str, *, max_bytes: int, max_depth: int, depth_note: str = "") -> dict:
    """The TOML document of `path`, a `what` ("hierarchy file", "task file") named `where` in
    errors: at most `max_bytes` bytes, nested at most `max_depth` deep (`depth_note` added to
    that error)."""
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:
            raise ReljacError(f"reading a {what} needs Python >= 3.11 (tomllib) or `pip install tomli`") from None
    info = regular_file(path, what, ConfigurationError)  # a FIFO would block the read
    if info.st_size > max_bytes:
        raise ConfigurationError(f"{where} has {info.st_size} bytes; a {what} has at most {max_bytes}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigurationError(unreachable(path, where, exc)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"{where} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                                 f"TOML files are UTF-8: save it as UTF-8") from None
    if nesting(text) > max_depth:
        raise ConfigurationError(f"{where} nests arrays or tables more than {max_depth} deep{depth_note}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{where} is not valid TOML: {exc}") from None
    except RecursionError:  # nesting that nesting() did not see: still one line
        raise ConfigurationError(f"{where} nests values too deep for TOML's reader") from None


__all__ = ["nesting", "read_toml"]
