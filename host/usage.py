"""The usage ledger: what each request cost, one journal row per request.

A provider does not always report usage. Such a request is recorded with ``None`` token
counts (and so an unknown cost), never with zeros: totals count it as ``unreported`` and
sum only what was reported, and their cost is unknown as soon as one request's cost is.
Each request has a ``kind`` (``chat``, ``compaction``, ``title``) so that the requests
Cairn makes for itself can be told from the chat's own; a kind a newer Cairn recorded is
read back as it is.

A request stopped or failed mid-reply is ``interrupted``. It still counts: with what the
provider reported, or (usually: usage comes at a stream's end) unreported, with Cairn's own
estimate of its tokens in ``estimated_tokens``. Estimates are never summed with reported
counts and never calibrate the next estimate.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from host.ids import new_id
from host.journal import Journal, utc_now

__all__ = ["USAGE_KINDS", "RequestUsage", "UsageKind", "UsageLedger", "UsageTotals"]

UsageKind = Literal["chat", "compaction", "title"]
USAGE_KINDS: tuple[UsageKind, ...] = ("chat", "compaction", "title")


class RequestUsage(BaseModel):
    """One request's route and tokens.

    The token counts are ``None`` when the provider did not report usage (``reported`` is
    then false); ``cost_usd`` is ``None`` when the prices or the tokens are unknown.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    session_id: str
    row_id: str | None
    account_id: str
    provider: str
    model: str
    api: str
    base_url: str
    prompt_tokens: int | None
    cached_tokens: int | None
    uncached_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    cost_usd: float | None
    body_sha256: str
    created_at: str
    kind: str = "chat"
    body_bytes: int | None = None  # the request body's size; with prompt_tokens it calibrates estimates
    interrupted: bool = False  # stopped or failed before the reply was complete
    estimated_tokens: int | None = None  # Cairn's estimate (prompt and output) when usage was not reported

    @property
    def reported(self) -> bool:
        """Whether the provider reported this request's prompt, cache and output tokens."""
        return None not in (self.prompt_tokens, self.cached_tokens, self.uncached_tokens, self.output_tokens)

    @property
    def cached_share(self) -> float | None:
        """The share of the prompt read from the provider's cache; ``None`` if unreported."""
        if self.prompt_tokens is None or self.cached_tokens is None:
            return None
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


class UsageTotals(BaseModel):
    """A session's usage. Token sums cover reported requests only; ``unreported`` counts
    the others. ``cost_usd`` is ``None`` whenever any request's cost is unknown."""

    model_config = ConfigDict(frozen=True)

    requests: int = 0
    unreported: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    uncached_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    interrupted: int = 0  # requests stopped or failed mid-reply
    estimated_tokens: int = 0  # Cairn's estimate for the unreported ones that have one

    @property
    def reported(self) -> int:
        return self.requests - self.unreported

    @property
    def cached_share(self) -> float:
        """The share of reported prompt tokens read from the provider's cache."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


_FIELDS = tuple(RequestUsage.model_fields)
# A request counts as reported when the four counts the totals sum are all known (as
# ``RequestUsage.reported`` says); reasoning tokens are part of the output.
_REPORTED = (
    "(prompt_tokens IS NOT NULL AND cached_tokens IS NOT NULL AND uncached_tokens IS NOT NULL "
    "AND output_tokens IS NOT NULL)"
)
_TOTALS = (
    "SELECT count(*), "
    f"count(*) - coalesce(sum({_REPORTED}), 0), "
    f"coalesce(sum(CASE WHEN {_REPORTED} THEN prompt_tokens END), 0), "
    f"coalesce(sum(CASE WHEN {_REPORTED} THEN cached_tokens END), 0), "
    f"coalesce(sum(CASE WHEN {_REPORTED} THEN uncached_tokens END), 0), "
    f"coalesce(sum(CASE WHEN {_REPORTED} THEN output_tokens END), 0), "
    "CASE WHEN count(cost_usd) = count(*) THEN coalesce(sum(cost_usd), 0.0) END, "
    "coalesce(sum(interrupted), 0), "
    f"coalesce(sum(CASE WHEN NOT {_REPORTED} THEN estimated_tokens END), 0)"
)


# The provider's own ceiling (desktop/provider/usage.py): a trillion tokens a request keeps
# the sums over millions of requests inside SQLite's signed 64 bits.
MAX_TOKENS = 10**12


class UsageLedger:
    """Records and sums request usage in the journal."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    def record(
        self,
        *,
        session_id: str,
        row_id: str | None,
        account_id: str,
        provider: str,
        model: str,
        api: str,
        base_url: str,
        prompt_tokens: int | None,
        cached_tokens: int | None,
        uncached_tokens: int | None,
        output_tokens: int | None,
        reasoning_tokens: int | None,
        cost_usd: float | None,
        body_sha256: str,
        kind: UsageKind = "chat",
        body_bytes: int | None = None,
        interrupted: bool = False,
        estimated_tokens: int | None = None,
    ) -> RequestUsage:
        """Commit one request's usage; ``id`` and ``created_at`` are filled in.

        Pass ``None`` for every token count (and for ``cost_usd``) when the provider did
        not report usage. Inside an outer ``journal.write`` it commits with that write.
        """
        tokens = (prompt_tokens, cached_tokens, uncached_tokens, output_tokens, reasoning_tokens)
        if any(t is not None and not 0 <= t <= MAX_TOKENS for t in tokens):
            # A count no provider could mean is not reported: it never costs the reply.
            prompt_tokens = cached_tokens = uncached_tokens = output_tokens = reasoning_tokens = None
            tokens, cost_usd = (None,) * 5, None
        if any(t is None for t in tokens) and any(t is not None for t in tokens):
            raise ValueError("token counts are either all reported or all None (usage not reported)")
        if prompt_tokens is None and cost_usd is not None:
            raise ValueError("a request whose usage was not reported cannot have a known cost")
        if estimated_tokens is not None and prompt_tokens is not None:
            raise ValueError("an estimate is kept only for a request whose usage was not reported")
        if kind not in USAGE_KINDS:
            raise ValueError(f"usage kind {kind!r} is not one of {', '.join(USAGE_KINDS)}")
        usage = RequestUsage(
            id=new_id(),
            session_id=session_id,
            row_id=row_id,
            account_id=account_id,
            provider=provider,
            model=model,
            api=api,
            base_url=base_url,
            prompt_tokens=prompt_tokens,
            cached_tokens=cached_tokens,
            uncached_tokens=uncached_tokens,
            output_tokens=output_tokens,
            reasoning_tokens=reasoning_tokens,
            cost_usd=cost_usd,
            body_sha256=body_sha256,
            body_bytes=body_bytes,
            created_at=utc_now(),
            kind=kind,
            interrupted=interrupted,
            estimated_tokens=estimated_tokens,
        )
        columns = ", ".join(_FIELDS)
        marks = ", ".join("?" for _ in _FIELDS)
        with self._journal.write(f"the usage of a {kind} request") as conn:
            conn.execute(
                f"INSERT INTO request_usage ({columns}) VALUES ({marks})",
                tuple(getattr(usage, name) for name in _FIELDS),
            )
        return usage

    def requests(self, session_id: str) -> list[RequestUsage]:
        """Every request of the session, oldest first."""
        with self._journal.read() as conn:
            rows = conn.execute(
                f"SELECT {', '.join(_FIELDS)} FROM request_usage WHERE session_id = ? ORDER BY created_at, id",
                (session_id,),
            ).fetchall()
        return [RequestUsage.model_validate(dict(zip(_FIELDS, row, strict=True))) for row in rows]

    def last_measured(self, session_id: str) -> tuple[int, int] | None:
        """The prompt tokens and body bytes of the session's latest chat request the provider
        counted, for calibrating the next estimate; ``None`` when there is none."""
        with self._journal.read() as conn:
            row = conn.execute(
                "SELECT prompt_tokens, body_bytes FROM request_usage WHERE session_id = ? AND kind = 'chat' "
                "AND prompt_tokens IS NOT NULL AND body_bytes IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT 1",
                (session_id,),
            ).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    def totals(self, session_id: str, *, kind: str | None = None) -> UsageTotals:
        """The session's totals over every request, or over the requests of one ``kind``."""
        where, params = "session_id = ?", [session_id]
        if kind is not None:
            where, params = where + " AND kind = ?", [*params, kind]
        with self._journal.read() as conn:
            row = conn.execute(f"{_TOTALS} FROM request_usage WHERE {where}", params).fetchone()
        return _totals(row)

    def totals_by_kind(self, session_id: str) -> dict[str, UsageTotals]:
        """The session's totals for each kind of request it has, by kind."""
        with self._journal.read() as conn:
            rows = conn.execute(
                f"{_TOTALS}, kind FROM request_usage WHERE session_id = ? GROUP BY kind ORDER BY kind", (session_id,)
            ).fetchall()
        return {row[-1]: _totals(row[:-1]) for row in rows}


def _totals(row: tuple[int, int, int, int, int, int, float | None, int, int]) -> UsageTotals:
    return UsageTotals(
        requests=row[0],
        unreported=row[1],
        prompt_tokens=row[2],
        cached_tokens=row[3],
        uncached_tokens=row[4],
        output_tokens=row[5],
        cost_usd=row[6],
        interrupted=row[7],
        estimated_tokens=row[8],
    )
