"""Cairn's tests, and the helpers they share.

A ``test_*.py`` module is run by pytest and imported by nothing: what two of them share lives in
a helper module here, whose first docstring says what it holds (``test_suite_imports.py`` fails
on any import of a test module). The helpers, by kind:

- parts a test builds and drives: ``chat_fixtures`` (a loopback account, its route, a runtime),
  ``ui_fixtures`` (the window offscreen and what a person does in it), ``cli_fixtures``,
  ``tool_fixtures``, ``attachment_fixtures``, ``jail_fixtures``, ``projection_fixtures``,
  ``fake_keyring``, ``lab_tools``, ``epoch_chat``, ``markdown_docs``, ``model_server`` (a misbehaving file
  server for downloads) and the MCP servers in ``mcp_servers/``;
- whole scenarios, also run as ``python -m tests.<name>`` in a process of their own:
  ``cache_scenario``, ``compaction_chat``, ``seed_chat``; and ``future_journal``;
- processes a test starts and kills or reads: ``identity_probe``, ``journal_holder``,
  ``kill_writer``, ``engine_stand_in`` (the engine's lifecycle without the engine);
- data and readers: ``chat_templates``, ``pydantic_words``, ``recorded_requests``, ``gguf_files``
  (GGUF headers written byte by byte) and the template fixtures in ``engine_templates/``.

``benchmarks/`` and ``tools/`` import the scenarios and ``ui_fixtures`` too.
"""
