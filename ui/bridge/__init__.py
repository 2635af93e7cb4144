"""The bridge between the window and the core: the core's asyncio loop in its own thread, and
the way the window hands it work and hears the answer on the GUI thread."""
