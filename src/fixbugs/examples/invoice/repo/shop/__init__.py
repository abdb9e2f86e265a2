"""A tiny shop: catalog, cart, pricing, tax and currency."""
