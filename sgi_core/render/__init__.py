"""Results as text and Markdown: the one place that words and lays out what sgi_core computes.

The functions here only read frozen results, as scikit-learn's displays read a metric's output; the
submodules are not imported here, so that a caller pays only for what it renders.
"""
