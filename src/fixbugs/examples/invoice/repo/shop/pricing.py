"""Line and order pricing, with the bulk discount.

Bulk discount policy (see docs/pricing.md): 10 or more units of one product
get 10% off that line.
"""

from decimal import Decimal

BULK_THRESHOLD = 10
BULK_DISCOUNT = Decimal("0.10")
CENT = Decimal("0.01")


def line_total(unit_price: Decimal, quantity: int) -> Decimal:
    """Price of one cart line, bulk discount included."""
    if quantity < 0:
        raise ValueError("quantity must not be negative")
    total = unit_price * quantity
    if quantity > BULK_THRESHOLD:
        total -= total * BULK_DISCOUNT
    return total.quantize(CENT)


def order_subtotal(lines):
    """Sum of line totals for (unit_price, quantity) pairs."""
    return sum((line_total(price, qty) for price, qty in lines), Decimal("0.00"))
