"""What Cairn knows of particular model files beyond their headers (``assets/engine/models.json``):
the default model, and for each known file its title, the registry package that carries it, a
chat template for a file that has none, and its caps. Keyed by the file's SHA-256, never
inferred from a file at run time."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from assets import ASSETS_DIR

__all__ = ["ENGINE_ASSETS", "KnownModel", "known_models"]

ENGINE_ASSETS = ASSETS_DIR / "engine"


class KnownModel(BaseModel):
    """What Cairn knows of a particular file, beyond its header (``assets/engine/models.json``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str
    file: str
    title: str
    package: str | None = None  # a registry package that carries the file in parts
    chat_template: str | None = None  # a template Cairn ships, for files without one
    instructions_in_first_message: bool = False
    max_output_tokens: int | None = None
    chat: bool = True  # False: a base model, which answers no request of Cairn's own (a title, say)
    note: str = ""
    license: str = ""


class _KnownModels(BaseModel):
    version: int
    default: str
    known: list[KnownModel]


def known_models() -> _KnownModels:
    return _KnownModels.model_validate_json((ENGINE_ASSETS / "models.json").read_text(encoding="utf-8"))
