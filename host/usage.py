"""The usage ledger: what each request cost, one journal row per request."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from host.ids import new_id
from host.journal import Journal, utc_now

__all__ = ["RequestUsage", "UsageLedger", "UsageTotals"]


class RequestUsage(BaseModel):
    """One request's route and tokens. ``cost_usd`` is ``None`` when prices are unknown."""

    model_config = ConfigDict(frozen=True)

    id: str
    session_id: str
    row_id: str | None
    account_id: str
    provider: str
    model: str
    api: str
    base_url: str
    prompt_tokens: int
    cached_tokens: int
    uncached_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cost_usd: float | None
    body_sha256: str
    created_at: str


class UsageTotals(BaseModel):
    model_config = ConfigDict(frozen=True)

    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    uncached_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


_FIELDS = tuple(RequestUsage.model_fields)


class UsageLedger:
    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    def record(self, **values: object) -> RequestUsage:
        """Commit one request's usage; ``id`` and ``created_at`` are filled in."""
        usage = RequestUsage.model_validate({"id": new_id(), "created_at": utc_now(), **values})
        columns = ", ".join(_FIELDS)
        marks = ", ".join("?" for _ in _FIELDS)
        with self._journal.write("request usage") as conn:
            conn.execute(
                f"INSERT INTO request_usage ({columns}) VALUES ({marks})",
                tuple(getattr(usage, name) for name in _FIELDS),
            )
        return usage

    def requests(self, session_id: str) -> list[RequestUsage]:
        with self._journal.read() as conn:
            rows = conn.execute(
                f"SELECT {', '.join(_FIELDS)} FROM request_usage WHERE session_id = ? ORDER BY created_at, id",
                (session_id,),
            ).fetchall()
        return [RequestUsage.model_validate(dict(zip(_FIELDS, row, strict=True))) for row in rows]

    def totals(self, session_id: str) -> UsageTotals:
        with self._journal.read() as conn:
            row = conn.execute(
                "SELECT count(*), COALESCE(sum(prompt_tokens), 0), COALESCE(sum(cached_tokens), 0), "
                "COALESCE(sum(uncached_tokens), 0), COALESCE(sum(output_tokens), 0), sum(cost_usd) "
                "FROM request_usage WHERE session_id = ?",
                (session_id,),
            ).fetchone()
        return UsageTotals(
            requests=row[0],
            prompt_tokens=row[1],
            cached_tokens=row[2],
            uncached_tokens=row[3],
            output_tokens=row[4],
            cost_usd=row[5],
        )
