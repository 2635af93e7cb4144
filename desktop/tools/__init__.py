"""The model's tools: every tool source in one registry (built-ins, skills, MCP servers), the
declaration policy, declaration epochs and their identity, activation and ToolSearch."""
