"""The viewer's page listens on the loopback address only, unless a `host` opts in (issue 18)."""

from __future__ import annotations

import socket
import urllib.request

import pytest

from reljac import ConfigurationError
from reljac.viz import Viewer

pytestmark = pytest.mark.slow


def port_of(url: str) -> int:
    return int(url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])


def reachable(address: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(2.0)
        return s.connect_ex((address, port)) == 0


def other_local_addresses() -> list[str]:
    """Addresses of this machine other than 127.0.0.1: 127.0.0.2 (Linux routes all of 127/8 to
    the loopback interface: a socket bound to every interface answers there, one bound to
    127.0.0.1 does not), the machine's own address, and ::1 where IPv6 is on."""
    found = ["127.0.0.2"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
            found.append(s.getsockname()[0])
        except OSError:
            pass
    if socket.has_ipv6:
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
                s.bind(("::1", 0))
            found.append("::1")
        except OSError:
            pass
    return [a for a in dict.fromkeys(found) if a != "127.0.0.1"]


def test_the_page_is_reachable_on_the_loopback_address_only(planar):
    with Viewer(planar) as viewer:
        web, zmq = port_of(viewer.url), port_of(viewer.zmq_url)
        assert viewer.url == f"http://127.0.0.1:{web}/static/"
        assert reachable("127.0.0.1", web) and reachable("127.0.0.1", zmq)
        for address in other_local_addresses():
            assert not reachable(address, web), f"the page answers on {address}"
            assert not reachable(address, zmq), f"the ZMQ port answers on {address}"


def test_host_opts_in_to_every_interface(planar):
    with Viewer(planar, host="0.0.0.0") as viewer:
        web = port_of(viewer.url)
        with urllib.request.urlopen(f"http://127.0.0.2:{web}/static/", timeout=5) as page:
            assert b"MeshCat" in page.read()
        assert not reachable("127.0.0.2", port_of(viewer.zmq_url))  # commands stay local


def test_a_given_address_is_the_one_printed(planar):
    with Viewer(planar, host="127.0.0.2") as viewer:
        web = port_of(viewer.url)
        assert viewer.url == f"http://127.0.0.2:{web}/static/"
        assert reachable("127.0.0.2", web) and not reachable("127.0.0.1", web)


@pytest.mark.parametrize("host, match", [
    ("192.0.2.1", "cannot listen on host '192.0.2.1'"),  # TEST-NET-1: never this machine's
    ("no such host.invalid", "must be an address or host name"),
    (6000, "must be an address or host name"),
])
def test_a_host_the_viewer_cannot_listen_on_is_one_line(planar, host, match):
    with pytest.raises(ConfigurationError, match=match):
        Viewer(planar, host=host)


def test_a_host_is_for_a_server_the_viewer_starts(planar):
    with Viewer(planar) as owner, pytest.raises(ConfigurationError, match="host is the address of a server"):
        Viewer(planar, zmq_url=owner.zmq_url, host="0.0.0.0")
