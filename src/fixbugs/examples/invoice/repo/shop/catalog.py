"""Products and their unit prices."""

from decimal import Decimal

PRODUCTS = {
    "MUG-01": ("Coffee mug", Decimal("5.00")),
    "TSHIRT-M": ("T-shirt, size M", Decimal("12.00")),
    "STICKER": ("Sticker", Decimal("0.50")),
}


def unit_price(sku: str) -> Decimal:
    try:
        return PRODUCTS[sku][1]
    except KeyError:
        raise KeyError(f"unknown product {sku}") from None
