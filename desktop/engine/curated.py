"""The small chat models Cairn suggests downloading (``assets/engine/curated.json``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from assets import ASSETS_DIR
from desktop.engine.downloads import Download

__all__ = ["CuratedModel", "curated_models"]


class CuratedModel(BaseModel):
    """One suggested model: a GGUF file of a Hugging Face repository. Sizes are approximate: a
    repository may replace its file, and only ``sha256``, when known, pins the bytes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    repo: str
    file: str
    revision: str = "main"
    approx_size_bytes: int
    approx_memory_bytes: int = Field(description="About what it takes to run with a few thousand tokens of context.")
    good_at: str
    license: str
    tools_in_template: bool = Field(description="Its chat template renders tool calls.")
    sha256: str | None = None

    def request(self, token: str | None = None) -> Download:
        return Download.from_hub(self.repo, self.file, revision=self.revision, sha256=self.sha256, token=token)


class _Curated(BaseModel):
    version: int
    models: list[CuratedModel]


def curated_models() -> list[CuratedModel]:
    """The suggested models, smallest first."""
    text = (ASSETS_DIR / "engine" / "curated.json").read_text(encoding="utf-8")
    return _Curated.model_validate_json(text).models
