"""Channel credentials and call metadata from a Client's address, TLS and token options."""

from __future__ import annotations

from pathlib import Path

import grpc

from holdshelf.loopback_address import is_loopback_address


def channel_credentials(address: str, tls: bool | None, ca_file: str | None, cert_file: str | None,
                        key_file: str | None) -> grpc.ChannelCredentials | None:
    """TLS credentials, or None for plaintext.

    tls None (the default) means TLS unless the address is loopback
    (is_loopback_address) and no file is given: a token, and the messages,
    never cross a network in plaintext unless the caller says so with
    tls=False, which refuses the files as contradicting it. tls True means
    TLS even on loopback. Without ca_file, TLS trusts the system's roots.
    """
    files = ca_file is not None or cert_file is not None or key_file is not None
    if tls is False:
        if files:
            raise ValueError("tls=False is plaintext: it takes no ca_file, cert_file or key_file")
        return None
    if tls is None and not files and is_loopback_address(address):
        return None
    if (cert_file is None) != (key_file is None):
        raise ValueError("cert_file and key_file go together: a client certificate needs its key")
    return grpc.ssl_channel_credentials(
        root_certificates=_read(ca_file),  # None: the system's roots
        private_key=_read(key_file),
        certificate_chain=_read(cert_file),
    )


def refuse_plaintext_token(address: str, credentials: grpc.ChannelCredentials | None, token: str | None,
                           allow_plaintext_token: bool) -> None:
    """Raises ValueError where a token would cross a network in plaintext: tls=False to an address
    beyond loopback, unless allow_plaintext_token says something else protects the path (a sidecar
    that encrypts it, say). The TypeScript and Go clients refuse the same."""
    if credentials is None and token is not None and not allow_plaintext_token and not is_loopback_address(address):
        raise ValueError(
            f"refusing to send a bearer token in plaintext to {address}, which is not a loopback address: "
            "leave tls=False out to use TLS, or pass allow_plaintext_token=True")


def bearer_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    """The authorization metadata every call carries; empty without a token.

    Sent as call metadata, not as call credentials, because grpcio refuses
    call credentials on a plaintext channel (a loopback broker without TLS).
    """
    if token is None:
        return ()
    # Printable ASCII without spaces: what a header value carries unchanged. Never quoted back: it is a secret.
    if not token or any(not 0x21 <= ord(c) <= 0x7E for c in token):
        raise ValueError("the token must be printable ASCII without spaces")
    return (("authorization", f"Bearer {token}"),)


def _read(path: str | None) -> bytes | None:
    return None if path is None else Path(path).read_bytes()
