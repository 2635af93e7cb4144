"""Compaction: when a chat must be summarised, how much of it is kept, the summary request, and
the checkpoint that saves the effective state (architecture §6, invariant 5)."""
