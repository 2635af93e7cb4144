"""Sign-in tokens kept in the keychain (a fake backend at the seam), split when too large."""

from __future__ import annotations

import asyncio

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from desktop.settings.redaction import Redactor
from desktop.settings.secrets import SERVICE, SecretStore
from desktop.settings.sign_in_tokens import PART_CHARS, SignInTokens
from tests.fake_keyring import MemoryKeyring


def _tokens(size: int) -> OAuthToken:
    return OAuthToken(access_token="a" * size, refresh_token="refresh-secret-1", expires_in=60)


def test_tokens_round_trip_through_the_keychain_and_are_redacted() -> None:
    backend, redactor = MemoryKeyring(), Redactor()
    store = SignInTokens(SecretStore(backend), "tracker", redact_add=redactor.add)
    asyncio.run(store.set_tokens(_tokens(40)))
    assert asyncio.run(store.get_tokens()) == _tokens(40)
    assert (SERVICE, "mcp:tracker:oauth:tokens") in backend.entries
    assert redactor.redact("got refresh-secret-1") == "got " + redactor.redact("refresh-secret-1")
    assert "refresh-secret-1" not in redactor.redact("got refresh-secret-1")
    assert store.signed_in()
    store.forget()
    assert not store.signed_in()
    assert asyncio.run(store.get_tokens()) is None


def test_a_token_too_large_for_one_keychain_entry_is_split_into_parts() -> None:
    backend = MemoryKeyring()
    store = SignInTokens(SecretStore(backend), "code", redact_add=Redactor().add)
    asyncio.run(store.set_tokens(_tokens(3 * PART_CHARS)))
    assert all(len(value) <= PART_CHARS for value in backend.entries.values())
    assert backend.entries[(SERVICE, "mcp:code:oauth:tokens")].startswith("parts:")
    assert asyncio.run(store.get_tokens()) == _tokens(3 * PART_CHARS)
    asyncio.run(store.set_tokens(_tokens(10)))  # smaller again: the old parts are gone
    assert list(backend.entries) == [(SERVICE, "mcp:code:oauth:tokens")]
    assert asyncio.run(store.get_tokens()) == _tokens(10)


def test_client_registration_is_kept_and_its_secret_redacted() -> None:
    redactor = Redactor()
    store = SignInTokens(SecretStore(MemoryKeyring()), "code", redact_add=redactor.add)
    info = OAuthClientInformationFull(client_id="cid", client_secret="client-secret-9", redirect_uris=None)
    asyncio.run(store.set_client_info(info))
    assert asyncio.run(store.get_client_info()) == info
    assert "client-secret-9" not in redactor.redact("client-secret-9")
