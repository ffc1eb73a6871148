"""Which addresses ``fetch`` may connect to: public ones only, unless the user opts in.

A page or a file the agent reads can ask it to fetch ``http://127.0.0.1:8080/admin`` or the
cloud metadata service; without this guard the web tool would be a way into the user's own
computer and network. The decision is taken on the addresses a host name resolves to, never on
the URL's text, because numbers hide in many spellings (``2130706433``, ``0x7f000001``,
``0177.0.0.1``, ``127.1``, ``[::ffff:127.0.0.1]``). And it is taken where the connection is
opened: the name is resolved once, every address must be public, and the connection goes to
one of exactly those addresses, so a DNS answer that changes between a check and the connect
(DNS rebinding) has nothing to slip through. Each redirect opens its own connection and is
checked the same way.

``BASSI_FETCH_ALLOW_PRIVATE=1`` lifts the guard for users who want local fetches.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network

import anyio
import httpcore
import httpx

from mcp_servers._toolkit import ToolFailure

ALLOW_PRIVATE_VARIABLE = "BASSI_FETCH_ALLOW_PRIVATE"

IPAddress = IPv4Address | IPv6Address

_METADATA = frozenset(
    ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
"""Cloud metadata services (AWS, GCP, Azure, ECS tasks, Alibaba): they hand out credentials."""
_NAT64 = ip_network("64:ff9b::/96")
_LOCAL_NAT64 = ip_network("64:ff9b:1::/48")


def refusal_reason(address: IPAddress) -> str | None:
    """Why ``address`` is not a public internet address ("a loopback address (this
    computer)"), or None when it is. IPv6 forms that carry an IPv4 address (mapped,
    compatible, NAT64, 6to4) are judged by that address too."""
    if address in _METADATA:
        return "a cloud metadata service address"
    if address.is_unspecified:
        return "the unspecified address (this computer)"
    if address.is_loopback:
        return "a loopback address (this computer)"
    if isinstance(address, IPv6Address) and (reason := _embedded_refusal(address)):
        return reason
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private network address"
    if address in _LOCAL_NAT64:
        return "a local-use NAT64 address"
    if not address.is_global:
        return "not a public internet address"
    return None


def _embedded_refusal(address: IPv6Address) -> str | None:
    inner = _embedded_ipv4(address)
    reason = refusal_reason(inner) if inner is not None else None
    return f"an IPv6 form of {inner}, {reason}" if reason else None


def _embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64 or int(address) >> 32 == 0:
        # NAT64 and the deprecated IPv4-compatible form both keep the IPv4 address last.
        return IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


class AddressRefused(ToolFailure):
    """A connection the guard refused; the message says which address and why."""


@dataclass(frozen=True)
class AddressGuard:
    """Resolves host names and judges the addresses. ``allow_private`` lets everything
    through (the user opted in). Tests subclass it to stand a local server in for a public
    one, or to answer a name with chosen addresses."""

    allow_private: bool = False

    def refusal(self, address: IPAddress, port: int) -> str | None:
        return None if self.allow_private else refusal_reason(address)

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Every address ``host`` resolves to, in the resolver's order, without repeats."""
        try:
            answers = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror}") from exc
        found: dict[IPAddress, None] = {}
        for *_, sockaddr in answers:
            found.setdefault(ip_address(str(sockaddr[0]).partition("%")[0]), None)
        return list(found)

    def check(self, host: str, port: int, addresses: Iterable[IPAddress]) -> None:
        """Raise ``AddressRefused`` unless every address may be connected to: one private
        answer among public ones is enough to refuse (fail closed)."""
        for address in addresses:
            if (reason := self.refusal(address, port)) is None:
                continue
            if _literal(host) == address:
                raise AddressRefused(f"{host} is {reason}")
            raise AddressRefused(f"{host} resolves to {address}, {reason}")


def _literal(host: str) -> IPAddress | None:
    try:
        return ip_address(host.strip("[]"))
    except ValueError:
        return None


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network layer with the guard in front: resolve, check, then connect to one
    of the checked addresses (never to the name, which could resolve differently now)."""

    def __init__(self, guard: AddressGuard) -> None:
        self._guard = guard
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self._guard.resolve(host, port)
        self._guard.check(host, port, addresses)
        failure: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                failure = exc
        raise failure or httpcore.ConnectError(f"{host} has no address")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("fetch does not connect to Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport whose connections go through ``_GuardedBackend``. httpx takes no
    network backend, so the connection pool it built is replaced by an equal one that has it;
    direct connections only, as the guard must see the address connected to (proxy variables
    are not used)."""

    def __init__(self, guard: AddressGuard) -> None:
        super().__init__()
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            network_backend=_GuardedBackend(guard),
        )
