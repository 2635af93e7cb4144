"""What the person chose: the settings file and its accounts, the routes they resolve to, the
keychain and the redaction of every secret it hands out, MCP server entries and their import."""
