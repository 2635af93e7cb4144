"""The chat panel: the chat on screen. The composer and its attachments, the route bar and the
status line, the welcome of an empty chat, the chat's own settings, and the controllers that
open a chat, send a message, show a reply as it streams, stop it, edit and switch versions,
and answer the tool calls waiting on a person. ``panel`` lays it out and builds them; each is
given the widgets it drives, the chat shown (``shown_chat``) and the core client."""
