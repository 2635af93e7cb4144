"""The built-in engine: llama.cpp's server built for this computer (``build_spec``), the model
library, its GGUF reader and what Cairn knows of particular files (``known``), downloads and
the suggested models (``downloads``, ``curated``), the machine's plan for a model, the server
as a child process Cairn owns, the slot keeper and saved states that keep a chat's read prompt
across restarts, and the transport and route that make it an account like any other
(architecture §9)."""
