"""Model catalogs: Cairn's transport catalog and the models.dev snapshot."""
