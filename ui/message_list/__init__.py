"""The message list: how the chat's messages are shown. What each row shows
(``display_message``), the view and its model, the delegate that paints and measures rows,
and how a message's text becomes a document: Markdown, math, tool cards, a reply growing as
it streams, a search's marks."""
