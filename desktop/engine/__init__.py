"""The built-in engine: llama.cpp's server built for this computer (``build_spec``), the model
library and its GGUF reader, the machine's plan for a model, the server as a child process
Cairn owns, the slot keeper and saved states that keep a chat's read prompt across restarts,
and the transport and route that make it an account like any other (architecture §9)."""
