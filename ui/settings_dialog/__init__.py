"""The Settings dialog: its tabs (accounts, instructions, assistants, skills, permissions,
context, MCP servers, appearance), the forms inside them and the questions they ask before a
change."""
