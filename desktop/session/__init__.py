"""A chat's own state, worked out from its rows: its route, its own settings, and (in
``state``) everything else a turn needs, folded once and advanced row by row."""
