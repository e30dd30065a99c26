"""Not built yet: shows the honest coming-soon card."""
from viz.page import coming_soon

coming_soon("backpropagation")
