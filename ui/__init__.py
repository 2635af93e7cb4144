"""Cairn's PySide6 window, the only package that imports Qt. It reaches the core through the
front door (``desktop.app``) alone, and is made of rooms:

- ``window``: start-up and shut-down, the main window that builds everything else, the
  sidebar and its chat list, the first start's page, the context inspector, the narrow
  layout, the Help menu's dialogs and what the window remembers between runs.
- ``chat_panel``: the chat on screen: the composer and its attachments, the route bar, the
  status line, and the controllers that send, stream, stop, edit, switch versions and answer
  approvals.
- ``message_list``: how the chat's messages are shown: the view, its model and delegate, and
  how a message becomes a document (Markdown, math, tool cards).
- ``settings_dialog``: the Settings dialog, its tabs and their forms.
- ``widgets``: what every room draws with: the theme, the icons, banners and small shared
  widgets.
- ``bridge``: the core's thread and the way work is handed to it and answered.
"""
