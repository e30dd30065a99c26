"""Placeholder until the page is built (see its issue): an honest "coming soon" card."""
from viz.page import coming_soon

coming_soon("relu_regions")
