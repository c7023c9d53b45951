"""The demo dataset: an invented economy of companies, people, products and places.

Generated deterministically by code (no file, no download) into the fixed
tenant `DEMO_TENANT_ID`, so its ids are the same on every machine and run.
"""

from redstring.api.demo.dataset import DEMO_TENANT_ID, demo_dataset, load_demo

__all__ = ["DEMO_TENANT_ID", "demo_dataset", "load_demo"]
