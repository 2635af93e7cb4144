"""The `cairn bench` harness: synthetic conversations run through the real runtime under each
declaration strategy, and the naive hosts it is compared with, on the loopback provider or a
real account."""
