"""Talking to model providers: the OpenAI-compatible adapter, its errors, usage and events."""
