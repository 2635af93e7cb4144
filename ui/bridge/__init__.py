"""The bridge between the window and the core: the core's asyncio loop in its own thread
(``core_thread``), and the client every part of the window is given to hand it work, hear
the typed answer on the GUI thread and read the snapshot the core published last
(``core_client``)."""
