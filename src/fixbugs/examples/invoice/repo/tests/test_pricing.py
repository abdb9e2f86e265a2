import unittest
from decimal import Decimal

from shop.pricing import line_total, order_subtotal


class TestLineTotal(unittest.TestCase):
    def test_no_discount_below_threshold(self):
        self.assertEqual(line_total(Decimal("5.00"), 9), Decimal("45.00"))

    def test_bulk_discount_at_threshold(self):
        # 10 or more units get 10% off
        self.assertEqual(line_total(Decimal("5.00"), 10), Decimal("45.00"))

    def test_bulk_discount_above_threshold(self):
        self.assertEqual(line_total(Decimal("5.00"), 12), Decimal("54.00"))

    def test_negative_quantity_is_rejected(self):
        with self.assertRaises(ValueError):
            line_total(Decimal("5.00"), -1)


class TestOrderSubtotal(unittest.TestCase):
    def test_sums_lines(self):
        lines = [(Decimal("0.50"), 4), (Decimal("12.00"), 1)]
        self.assertEqual(order_subtotal(lines), Decimal("14.00"))


if __name__ == "__main__":
    unittest.main()
