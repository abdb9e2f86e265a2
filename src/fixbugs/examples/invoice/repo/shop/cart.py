"""The shopping cart and its checkout total."""

from decimal import Decimal

from shop import catalog, pricing, tax


class Cart:
    def __init__(self, country: str = "DE") -> None:
        self.country = country
        self.items: dict[str, int] = {}

    def add(self, sku: str, quantity: int = 1) -> None:
        catalog.unit_price(sku)  # reject unknown products early
        self.items[sku] = self.items.get(sku, 0) + quantity

    def subtotal(self) -> Decimal:
        return pricing.order_subtotal(
            (catalog.unit_price(sku), qty) for sku, qty in sorted(self.items.items())
        )

    def total(self) -> Decimal:
        net = self.subtotal()
        return net + tax.vat(net, self.country)
