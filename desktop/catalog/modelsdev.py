"""The models.dev catalog: published limits, prices and modalities. It never grants a flag.

A snapshot of models.dev's ``api.json``, trimmed to the providers Cairn's presets name (their
``models_dev`` ids in the transport catalog), ships in ``assets/catalog/models.dev.json``;
``tools/models_dev_snapshot.py`` makes it from a registry package that carries models.dev's data.
``refresh`` downloads a fresh copy into the user cache folder; a download that is offline,
malformed or partial never replaces a good copy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import httpx
from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError

from assets import ASSETS_DIR
from desktop.catalog.transport import CatalogError, load_transport_catalog
from host.files import atomic_write_text

__all__ = [
    "MODELS_DEV_URL",
    "ModelInfo",
    "ModelsDevCatalog",
    "RefreshOutcome",
    "load_models_dev",
    "offered_providers",
    "refresh_models_dev",
]

MODELS_DEV_URL = "https://models.dev/api.json"
BUNDLED_PATH = ASSETS_DIR / "catalog" / "models.dev.json"
CACHE_NAME = "models.dev.json"


class Cost(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None


class Limit(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    context: int | None = None
    output: int | None = None


class Modalities(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    input: list[str] = Field(default_factory=lambda: ["text"])
    output: list[str] = Field(default_factory=lambda: ["text"])


class ModelInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    name: str = ""
    reasoning: bool = False
    tool_call: bool = False
    cost: Cost | None = None
    limit: Limit = Limit()
    modalities: Modalities = Modalities()

    @property
    def accepts_images(self) -> bool:
        return "image" in self.modalities.input

    @property
    def accepts_audio(self) -> bool:
        return "audio" in self.modalities.input


class ProviderInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    name: str = ""
    api: str | None = None
    env: list[str] = Field(default_factory=list)
    models: dict[str, ModelInfo]


class ModelsDevCatalog(RootModel[dict[str, ProviderInfo]]):
    def model(self, provider: str, model: str) -> ModelInfo | None:
        info = self.root.get(provider)
        return None if info is None else info.models.get(model)


def offered_providers() -> tuple[str, ...]:
    """The models.dev providers Cairn's presets name; a catalog must cover each."""
    return load_transport_catalog().models_dev_providers


def _parse(text: str, source: str, offered_ids: tuple[str, ...]) -> ModelsDevCatalog:
    """Parse and check a models.dev document; raise ``CatalogError`` saying what is wrong."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise CatalogError(f"{source} is not valid JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise CatalogError(f"{source} is not a models.dev provider map")
    offered = {k: v for k, v in raw.items() if k in offered_ids}
    missing = [p for p in offered_ids if p not in offered]
    if missing:
        raise CatalogError(f"{source} is partial: it lacks the providers {', '.join(missing)}")
    try:
        catalog = ModelsDevCatalog.model_validate(offered)
    except ValidationError as exc:
        raise CatalogError(f"{source} does not have models.dev's shape: {exc.errors()[0]['msg']}") from exc
    empty = [p for p, info in catalog.root.items() if not info.models]
    if empty:
        raise CatalogError(f"{source} is partial: no models for {', '.join(empty)}")
    return catalog


def load_models_dev(cache_dir: Path, offered: tuple[str, ...] | None = None) -> ModelsDevCatalog:
    """The refreshed copy in ``cache_dir`` if it is good, else the bundled snapshot. ``offered``:
    the providers it must cover (by default, those Cairn's presets name)."""
    offered = offered if offered is not None else offered_providers()
    cached = cache_dir / CACHE_NAME
    if cached.exists():
        try:
            return _parse(cached.read_text(encoding="utf-8"), str(cached), offered)
        except (OSError, CatalogError):
            pass  # a damaged or older cache falls back to the bundled copy; refresh will replace it
    return _parse(BUNDLED_PATH.read_text(encoding="utf-8"), str(BUNDLED_PATH), offered)


@dataclass(frozen=True)
class RefreshOutcome:
    ok: bool
    message: str


async def refresh_models_dev(
    client: httpx.AsyncClient, cache_dir: Path, url: str = MODELS_DEV_URL, offered: tuple[str, ...] | None = None
) -> RefreshOutcome:
    """Download models.dev into ``cache_dir``, trimmed to the ``offered`` providers (by default,
    those Cairn's presets name); on any failure keep the previous copy."""
    offered = offered if offered is not None else offered_providers()
    try:
        response = await client.get(url, timeout=30.0, follow_redirects=True)
        response.raise_for_status()
        catalog = _parse(response.text, f"the download from {url}", offered)
    except httpx.HTTPStatusError as exc:
        return RefreshOutcome(False, f"models.dev answered {exc.response.status_code}; kept the previous catalog.")
    except httpx.HTTPError as exc:
        return RefreshOutcome(False, f"Could not reach {url} ({exc!s}); kept the previous catalog.")
    except CatalogError as exc:
        return RefreshOutcome(False, f"{exc}; kept the previous catalog.")

    payload = json.dumps(catalog.model_dump(mode="json"), indent=1, sort_keys=True)
    try:
        atomic_write_text(cache_dir / CACHE_NAME, payload)
    except OSError as exc:
        return RefreshOutcome(
            False, f"Could not save the catalog in {cache_dir} ({exc.strerror}); kept the previous one."
        )
    models = sum(len(p.models) for p in catalog.root.values())
    return RefreshOutcome(True, f"models.dev catalog refreshed: {models} models from {len(catalog.root)} providers.")
