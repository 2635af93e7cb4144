"""The front door: what the window and the command line call to use Cairn.

Use cases (turns, sessions, chats, accounts, preferences, MCP servers, models) run on the
core's loop and publish immutable snapshots and typed events. ``ui/`` and ``desktop/cli/``
import this room only (plus the event and content types); nothing else reaches the runtime,
the journal or the settings directly. ``docs/architecture.md`` draws the rooms.
"""
