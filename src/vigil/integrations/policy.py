"""Where Vigil may send a connection's credentials: the outbound-URL policy.

https only; never loopback, private, link-local, CGNAT, unspecified, multicast or cloud-metadata addresses, judged on
every address a name resolves to, at the moment of connecting (the HTTP layer then connects to the address that was
checked, so a name cannot be re-pointed between check and use). ``VIGIL_OUTBOUND_ALLOWED_HOSTS`` exempts hosts, IP
addresses or CIDR ranges (which may then also use http), for self-hosted vendors and tests' loopback fakes.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from vigil.integrations.errors import Failure, IntegrationError
from vigil.settings import Settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]

#: Names that always mean "this machine" or a cloud's instance metadata, whatever DNS says.
METADATA_NAMES = frozenset(
    {"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"}
)
_FORBIDDEN_NETWORKS: tuple[tuple[IPNetwork, str], ...] = tuple(
    (ipaddress.ip_network(cidr), why)
    for cidr, why in (
        ("169.254.169.254/32", "a cloud metadata address"),
        ("fd00:ec2::254/128", "a cloud metadata address"),
        ("100.100.100.200/32", "a cloud metadata address"),
        ("100.64.0.0/10", "a carrier-grade NAT (CGNAT) address"),
        ("64:ff9b:1::/48", "a private NAT64 address"),
    )
)
DESTINATION_REFUSED = Failure(
    "destination_refused",
    "Destination not allowed",
    "Use the vendor's public https URL, or ask the operator to add this host to VIGIL_OUTBOUND_ALLOWED_HOSTS.",
)
RESOLVE_TIMEOUT_SECONDS = 5.0


def _forbidden_reason(address: IPAddress) -> str | None:
    """Why Vigil must not send credentials to this address, or None for a public address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return _forbidden_reason(address.ipv4_mapped)
    for network, why in _FORBIDDEN_NETWORKS:
        if address in network:
            return why
    checks = (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_private, "a private address"),
        (address.is_reserved, "a reserved address"),
        (not address.is_global, "not a public address"),
    )
    return next((why for hit, why in checks if hit), None)


def _literal_ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address the system resolver gives for ``host`` (A and AAAA), bounded in time."""
    loop = asyncio.get_running_loop()
    infos = await asyncio.wait_for(
        loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout=RESOLVE_TIMEOUT_SECONDS
    )
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


@dataclass(frozen=True)
class Destination:
    """A checked request target: connect to ``address`` (None: let the client resolve an allow-listed name)."""

    url: httpx.URL
    address: IPAddress | None


@dataclass(frozen=True)
class OutboundPolicy:
    """The rule every vendor call passes; ``allowed`` entries are host names, IP addresses or CIDR networks."""

    allowed: tuple[str, ...] = ()
    resolver: Resolver = field(default=system_resolver, compare=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> OutboundPolicy:
        return cls(allowed=tuple(settings.outbound_allowed_hosts))

    @classmethod
    def from_environment(cls) -> OutboundPolicy:
        """For callers not handed a policy (the CLI, a bare ``OutboundClient()``): ``VIGIL_OUTBOUND_ALLOWED_HOSTS``."""
        return cls.from_settings(Settings())

    @property
    def _allowed_names(self) -> frozenset[str]:
        return frozenset(a.lower().rstrip(".") for a in self.allowed if _literal_network(a) is None)

    @property
    def _allowed_networks(self) -> tuple[IPNetwork, ...]:
        return tuple(n for n in map(_literal_network, self.allowed) if n is not None)

    def host_allowed(self, host: str) -> bool:
        """Whether ``host`` (a name or an address) is on the allow-list, so it may use http and any address."""
        name = host.lower().strip("[]").rstrip(".")
        address = _literal_ip(name)
        if address is not None:
            return any(address in network for network in self._allowed_networks) or name in self._allowed_names
        return name in self._allowed_names

    def _address_allowed(self, address: IPAddress) -> bool:
        return any(address in network for network in self._allowed_networks)

    def problem(self, url: str) -> str | None:
        """Why ``url`` is refused before any lookup (scheme, address literal, well-known names), or None.

        Used when a URL is entered; names are also resolved and checked on every use (``destination``).
        """
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError):
            return "is not a valid URL"
        host = parsed.host.lower().rstrip(".")
        if parsed.scheme not in ("https", "http") or not host:
            return "must be an https:// URL with a host"
        if self.host_allowed(host):
            return None
        if parsed.scheme != "https":
            return "must use https:// (http is only allowed for hosts in VIGIL_OUTBOUND_ALLOWED_HOSTS)"
        if host == "localhost" or host.endswith(".localhost"):
            return f"points at {host}, this machine"
        if host in METADATA_NAMES:
            return f"points at {host}, a cloud metadata service"
        address = _literal_ip(host)
        reason = _forbidden_reason(address) if address is not None else None
        return f"points at {address}, {reason}" if reason else None

    async def destination(self, url: str) -> Destination:
        """Check ``url`` and pick the address to connect to; raises a permanent ``IntegrationError`` if refused.

        Every address the name resolves to must be allowed (one bad answer means the name is not trustworthy).
        """
        problem = self.problem(url)
        if problem is not None:
            raise _refused(f"The vendor URL {problem}.")
        parsed = httpx.URL(url)
        host = parsed.host.lower().rstrip(".")
        if self.host_allowed(host):
            return Destination(parsed, None)
        literal = _literal_ip(host)
        if literal is not None:
            return Destination(parsed, literal)
        try:
            addresses = await self.resolver(host, parsed.port or (443 if parsed.scheme == "https" else 80))
        except (OSError, TimeoutError, UnicodeError):
            raise IntegrationError(
                "vendor_unreachable",
                f"{host} could not be resolved.",
                cause="Service unreachable",
                remedy=f"Check the host name {host} and that Vigil's DNS can resolve it, then retry.",
                transient=True,
            ) from None
        if not addresses:
            raise _refused(f"{host} resolves to no address.")
        for address in addresses:
            reason = None if self._address_allowed(address) else _forbidden_reason(address)
            if reason is not None:
                raise _refused(f"{host} resolves to {address}, {reason}; Vigil does not send credentials there.")
        return Destination(parsed, addresses[0])


def _literal_network(entry: str) -> IPNetwork | None:
    try:
        return ipaddress.ip_network(entry.strip().strip("[]"), strict=False)
    except ValueError:
        return None


def _refused(message: str) -> IntegrationError:
    return DESTINATION_REFUSED.error(message)
