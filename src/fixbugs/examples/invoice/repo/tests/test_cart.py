import unittest
from decimal import Decimal

from shop.cart import Cart


class TestCart(unittest.TestCase):
    def test_total_includes_vat(self):
        cart = Cart("DE")
        cart.add("TSHIRT-M", 1)
        self.assertEqual(cart.total(), Decimal("14.28"))

    def test_unknown_product_is_rejected(self):
        with self.assertRaises(KeyError):
            Cart().add("NOPE")


if __name__ == "__main__":
    unittest.main()
