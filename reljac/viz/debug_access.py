"""Who may talk to the debug page's server: its address checked, and the Host / Origin rule.

Whoever drives the page's ``/control`` channel moves the robot and writes files (Export). A page
on another site can reach a server on loopback through DNS rebinding: its name is made to point
at 127.0.0.1, so the browser sends ``Host: attacker.example`` (and the same Origin). The server
therefore answers only requests whose Host names it: a loopback name (``localhost``,
``127.0.0.1``, ``::1``) or the host it was configured with; on a wildcard address (``0.0.0.0``,
``::``: every interface) also this machine's name and any IP address literal (DNS rebinding
needs a name, so an address literal is never an attacker's). A websocket's Origin, when the
browser sends one, must be the page's own (``http://`` + the same Host).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from ..exceptions import ConfigurationError
from ..validation import short_repr

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::"})
MAX_PORT = 65535


def check_address(host: object, port: object) -> tuple[str, int]:
    """(host, port) of the page's server, checked: a non-empty host name or address (no
    spaces, no scheme, no port) and a port in 0..65535 (0: a free one).

    Raises:
        ConfigurationError: naming the value and what is valid.
    """
    if not isinstance(host, str) or not host.strip() or any(c.isspace() or c in "/@?#" for c in host):
        raise ConfigurationError(
            f"host must be a host name or IP address such as '127.0.0.1' (this machine only) or '0.0.0.0' "
            f"(every interface), got {short_repr(host)}")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= MAX_PORT:
        raise ConfigurationError(f"port must be an integer in 0..{MAX_PORT} (0: a free one), got {short_repr(port)}")
    return host, int(port)


def _name(host: str) -> str:
    """A host name or address as compared: lower case, no brackets, no trailing dot."""
    return host.strip().lower().strip("[]").rstrip(".")


def host_name(netloc: str) -> str | None:
    """The host part of a Host header or URL authority (``name:port``, ``[v6]:port``), or None
    when it does not parse."""
    try:
        name = urlsplit("//" + netloc).hostname
    except ValueError:
        return None
    return None if not name else _name(name)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostPolicy:
    """The Host names a server on `host` answers (see the module docstring)."""

    def __init__(self, host: str) -> None:
        host = _name(host)
        self.wildcard = host in WILDCARDS
        names = set(LOOPBACK_NAMES) | {host}
        if self.wildcard:
            names |= {_name(socket.gethostname()), _name(socket.getfqdn())}
        self.names = frozenset(n for n in names if n)

    def allows_host(self, header: str | None) -> bool:
        """True when a request's Host header names this server."""
        name = host_name(header or "")
        return name is not None and (name in self.names or (self.wildcard and _is_address(name)))

    def allows_origin(self, origin: str | None, header: str | None) -> bool:
        """True when a websocket's Origin is the page's own: ``http://`` and the Host header's
        authority (a request without an Origin comes from no browser page: allowed)."""
        if origin is None:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        return (parts.scheme in ("http", "https") and self.allows_host(parts.netloc)
                and parts.netloc.lower() == (header or "").lower())
