"""The gate: every tool call passes the checks of invariant 7 (docs/architecture.md §6), in this order.

1. the tool exists in the turn's catalog (the current catalog and epoch), and is core or
   activated;
2. before-tool hooks (a seam registered in the composition root; none ship);
3. its arguments validate against the tool's JSON Schema;
4. the chat's mode;
5. its scopes are allowed by the mode;
6. a recorded grant, or a question to a person;
7. its pin still matches: a call parked on a person runs only if the tool is still the tool
   it was made against (``tool_pin_mismatch`` otherwise);
8. the workspace jail, inside the tool itself;
9. run;
10. after-tool hooks.

Current mode, catalog and Host permissions are authoritative, whatever the transcript says.
The gate decides 1 to 7; the runtime runs 9 and 10 through ``after``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from host.content import ToolCallPart, ToolResultPart
from host.permissions.model import Decision, Permissions, identity_of, mode_allows, spec_pin
from host.tools import Tool, ToolCatalog

__all__ = ["PIN_MISMATCH", "AfterHook", "BeforeHook", "CatalogGate", "ToolGate", "ToolRequest"]

PIN_MISMATCH = "tool_pin_mismatch"


@dataclass(frozen=True)
class ToolRequest:
    """One call the model made, with the catalog of its turn and the chat's permissions.
    ``pin`` is set when a parked call resumes: the pin of the spec it was made against."""

    session_id: str
    call: ToolCallPart
    catalog: ToolCatalog
    permissions: Permissions = field(default_factory=Permissions)
    pin: str | None = None

    @property
    def tool(self) -> Tool | None:
        return self.catalog.get(self.call.name)


BeforeHook = Callable[[ToolRequest], Awaitable[Decision | None]]
AfterHook = Callable[[ToolRequest, ToolResultPart], Awaitable[ToolResultPart]]


class ToolGate:
    """Checks 1 to 7 for each call, and runs the after-tool hooks on each result."""

    def __init__(self, before: Sequence[BeforeHook] = (), after: Sequence[AfterHook] = ()) -> None:
        self._before = tuple(before)
        self._after = tuple(after)

    async def check(self, request: ToolRequest, *, approved: bool = False) -> Decision:
        """The decision for ``request``. ``approved``: a person has already said yes to this
        call; it is checked again (the catalog, the mode or the tool may have changed while it
        waited) except for the question itself."""
        tool = request.tool
        if tool is None:
            return Decision.deny(f"No tool named {request.call.name!r} is available in this chat.")
        if request.pin is not None and request.pin != spec_pin(tool.spec):
            # First: a changed tool starts a new epoch, which voids its activation too; the
            # person and the model should learn the real cause, not "not activated".
            return Decision.deny(
                f"{PIN_MISMATCH}: The definition of {tool.name} changed while this call waited for your answer, "
                "so it was not run; call it again if it is still needed."
            )
        activated = request.permissions.activated
        if tool.spec.deferred and activated is not None and tool.name not in activated:
            return Decision.deny(f"{tool.name} is not activated in this chat; find it with the tool search first.")
        for hook in self._before:
            said = await hook(request)
            if said is not None and said.verdict != "allow":
                return said
        for decide in (_arguments, _mode, _scopes):
            denied = decide(tool, request)
            if denied is not None:
                return denied
        decision = Decision.allow("a person approved it") if approved else _grant(tool, request.permissions)
        if decision.verdict == "deny":
            return decision
        return decision

    async def after(self, request: ToolRequest, result: ToolResultPart) -> ToolResultPart:
        for hook in self._after:
            result = await hook(request, result)
        return result


def _arguments(tool: Tool, request: ToolRequest) -> Decision | None:
    # Imported at the first call, not with Cairn: jsonschema takes a twentieth of a second to load.
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        validator = Draft202012Validator(tool.spec.parameters)
        error = next(iter(validator.iter_errors(request.call.arguments)), None)
    except (SchemaError, RecursionError):
        return Decision.deny(f"{tool.name} has an invalid argument schema, so it cannot be called.")
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "the arguments"
    return Decision.deny(f"The arguments for {tool.name} do not fit its schema at {where}: {error.message}.")


def _mode(tool: Tool, request: ToolRequest) -> Decision | None:
    if request.permissions.mode == "read_only" and not tool.spec.read_only:
        return Decision.deny(f"This chat is read-only, and {tool.name} can change things; it was not run.")
    return None


def _scopes(tool: Tool, request: ToolRequest) -> Decision | None:
    refused = sorted(s for s in tool.spec.required_scopes if not mode_allows(request.permissions.mode, s))
    if refused:
        return Decision.deny(f"{tool.name} needs {', '.join(refused)}, which this chat's mode does not allow.")
    return None


def _grant(tool: Tool, permissions: Permissions) -> Decision:
    target = identity_of(tool)
    if target in permissions.never:
        return Decision.deny(f"You chose never to allow {tool.name}.")
    if target in permissions.chat:
        return Decision.allow("allowed for this chat")
    if target in permissions.always:
        return Decision.allow("always allowed")
    if permissions.mode == "auto":
        return Decision.allow("this chat runs tools automatically")
    if tool.spec.read_only:
        return Decision.allow("it only reads")
    return Decision.ask("it can change things")  # said beside the tool's name wherever it is shown


class CatalogGate(ToolGate):
    """The gate with no hooks: the checks above, nothing more."""
