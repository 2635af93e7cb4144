"""The window: starting Cairn's Qt application and its windows (``shell``), the main window
that builds and wires every other part, the sidebar with its chat list, the first start's
page, the context inspector, the narrow layout, the Help menu's dialogs, and what the window
remembers of itself between runs."""
