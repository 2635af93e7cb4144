"""The window: starting Cairn's Qt application and its windows (``shell``), the main window
that builds every other part and wires them, the sidebar with its chat list and what its
requests do (``chat_list_actions``), the first start's page, the context inspector, the
narrow layout, the Help menu's dialogs, and what the window remembers of itself between runs.
Only ``shell`` imports the main window."""
