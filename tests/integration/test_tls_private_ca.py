"""A self-hosted arena with its own certificate authority, end to end: ``saloon serve``'s
gRPC port and web side both serve TLS with one certificate signed by a private CA; the
client, the CLI (``--tls-ca`` and ``$SALOON_TLS_CA``) and a browser-like HTTPS client
trust that CA and nothing else."""

from __future__ import annotations

import http.client
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.arena.cli import main
from saloon.sdk.client import ArenaClient, ArenaClientError
from tests.integration.arena_fixtures import Arena, start_arena


def make_ca(folder: Path) -> tuple[Path, Path, Path]:
    """(CA certificate, server certificate, server key): a private CA and a certificate it
    signed for 127.0.0.1 and localhost (openssl, as an operator would)."""

    def run(*argv: str) -> None:
        subprocess.run(["openssl", *argv], cwd=folder, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
        "/CN=Saloon test CA", "-keyout", "ca.key", "-out", "ca.pem")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", "server.key", "-out", "server.csr")  # fmt: skip
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.pem")  # fmt: skip
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


@pytest.fixture
def tls_arena(tmp_path: Path) -> Iterator[tuple[Arena, Path]]:
    ca, cert, key = make_ca(tmp_path)
    running = start_arena(str(tmp_path / "arena.db"), tls_cert=str(cert), tls_key=str(key))
    try:
        yield running, ca
    finally:
        running.server.stop(0)


def test_the_client_trusts_the_private_ca_it_is_given_and_no_other(
    tls_arena: tuple[Arena, Path],
) -> None:
    arena, ca = tls_arena
    with ArenaClient(arena.address, arena.tokens["alice"], tls_ca=str(ca), timeout_s=20) as c:
        assert c.bots() == []
    with ArenaClient(arena.address, arena.tokens["alice"], tls=True, timeout_s=5) as c:
        with pytest.raises(ArenaClientError) as err:  # the system CAs do not know it
            c.bots()
        assert err.value.code == "UNAVAILABLE"
    with pytest.raises(ArenaClientError) as err:
        ArenaClient(arena.address, "t", tls_ca=str(ca.parent / "missing.pem"))
    assert err.value.code == "INVALID_CONFIG"


def test_the_cli_takes_tls_ca_as_an_option_and_from_the_environment(
    tls_arena: tuple[Arena, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    arena, ca = tls_arena
    target = ["--server", arena.address, "--token", arena.tokens["alice"]]
    assert main(["bots", *target, "--tls-ca", str(ca)]) == 0
    monkeypatch.setenv("SALOON_TLS_CA", str(ca))
    assert main(["bots", *target]) == 0
    monkeypatch.delenv("SALOON_TLS_CA")
    monkeypatch.setenv("SALOON_TLS", "1")
    assert main(["bots", *target]) != 0  # TLS with the system's CAs: refused
    assert "UNAVAILABLE" in capsys.readouterr().err


def test_the_web_side_serves_https_with_the_same_certificate(
    tls_arena: tuple[Arena, Path],
) -> None:
    arena, ca = tls_arena
    assert arena.server.boards is not None
    port = arena.server.boards.port
    context = ssl.create_default_context(cafile=str(ca))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    conn.request("GET", "/")
    reply = conn.getresponse()
    assert reply.status == 200 and b"Saloon ladders" in reply.read()
    assert reply.getheader("strict-transport-security", "").startswith("max-age=")
    conn.request("POST", "/signin", body=f"token={arena.tokens['alice']}",
                 headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    reply = conn.getresponse()
    reply.read()
    assert reply.status == 303 and "secure" in reply.getheader("set-cookie", "").lower()
    conn.close()
    with pytest.raises(ssl.SSLCertVerificationError):
        plain = http.client.HTTPSConnection(
            "127.0.0.1", port, context=ssl.create_default_context(), timeout=10
        )
        plain.request("GET", "/")


def test_the_healthcheck_probe_answers_for_https_and_plain_http(
    tls_arena: tuple[Arena, Path], tmp_path: Path
) -> None:
    from saloon.arena.web.probe import main as probe

    arena, _ca = tls_arena
    assert arena.server.boards is not None
    assert probe([f"127.0.0.1:{arena.server.boards.port}/healthz"]) == 0
    plain = start_arena(str(tmp_path / "plain.db"))
    try:
        assert plain.server.boards is not None
        port = plain.server.boards.port
        assert probe([f"127.0.0.1:{port}/healthz"]) == 0
        assert probe([f"127.0.0.1:{port}/nope"]) == 1
    finally:
        plain.server.stop(0)
    assert probe([]) == 2
