"""Whether a target only reaches this machine: the rule that decides a Client's default of TLS or plaintext."""

from __future__ import annotations

import ipaddress
import re

# "[v6]:port" or "[v6]"; "host:port" or "host" (no colon or bracket in host).
_BRACKETED = re.compile(r"^\[([^\]]+)\](?::\d+)?$")
_HOST_PORT = re.compile(r"^([^:\[\]]+)(?::\d+)?$")


def is_loopback_address(address: str) -> bool:
    """A loopback IP (127.0.0.0/8, ::1, ::ffff:127.x.y.z; with or without brackets and port),
    `localhost`, or a Unix socket (`unix:`, `unix-abstract:`).

    Anything else (a wildcard, a LAN IP, another host name, a target that
    cannot be read) is not. The TypeScript client's rule
    (src/net/loopback-address.ts), so that every client sends a token in
    plaintext to the same addresses only.
    """
    if address.startswith(("unix:", "unix-abstract:")):
        return True
    host = _host_of(address)
    if host is None:
        return False
    if host.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def _host_of(address: str) -> str | None:
    """The host of "host:port", "[v6]:port", "[v6]", a bare IPv6 address or a bare host; None if unreadable."""
    bracketed = _BRACKETED.match(address)
    if bracketed is not None:
        return bracketed.group(1)
    # An unbracketed address with two or more colons can only be a bare IPv6 address.
    if address.count(":") >= 2:
        try:
            return str(ipaddress.IPv6Address(address))
        except ValueError:
            return None
    host_port = _HOST_PORT.match(address)
    return None if host_port is None else host_port.group(1)
