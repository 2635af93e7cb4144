"""A turn: the agent loop that sends a chat's request, streams the reply, answers tool calls
(with approvals), records what failed or stopped, and reports it all as events."""
