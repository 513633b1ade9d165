"""An environment that would mislead an HTTP client trusting it, for the tests that a client does
not: proxies that go nowhere and a ``~/.netrc`` login for the loopback host."""

from pathlib import Path

import pytest


def proxies_and_a_netrc_login(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, login: str) -> None:
    """Every proxy variable pointing where nothing listens (a call through one fails), no host
    exempted, and a ``~/.netrc`` entry for 127.0.0.1 with ``login`` (``"name password word"``),
    which would replace the Authorization header a client set."""
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login {login}\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
