"""Currency conversion from a rate table refreshed by a background job."""

from decimal import Decimal

_RATES = {("EUR", "USD"): Decimal("1.08"), ("EUR", "GBP"): Decimal("0.86")}


def convert(amount: Decimal, src: str, dst: str) -> Decimal:
    if src == dst:
        return amount
    rate = _RATES.get((src, dst))
    if rate is None:
        raise LookupError(f"no rate for {src}->{dst}")
    return (amount * rate).quantize(Decimal("0.01"))
