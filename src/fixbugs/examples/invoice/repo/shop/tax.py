"""Value-added tax by country."""

from decimal import Decimal

RATES = {"DE": Decimal("0.19"), "FR": Decimal("0.20"), "NL": Decimal("0.21")}
CENT = Decimal("0.01")


def vat(amount: Decimal, country: str) -> Decimal:
    try:
        rate = RATES[country]
    except KeyError:
        raise ValueError(f"no VAT rate for {country}") from None
    return (amount * rate).quantize(CENT)
