"""Results as text and Markdown: the one place that words and lays out what sgi_core computes.

Results are frozen data (:class:`~sgi_core.results.JsonResult`); the functions here
only read them, as scikit-learn's displays read a metric's output:

- :mod:`sgi_core.render.numbers`: numbers and ``[lo, hi]`` intervals as text;
- :mod:`sgi_core.render.tables`: the paper's tables as DataFrames;
- :mod:`sgi_core.render.report`: what ``report`` prints;
- :mod:`sgi_core.render.lines`: the one-line summaries of ``score``, ``judge`` and
  ``gate``, and the caption of a 2-D projection.

The submodules are not imported here, so that a caller pays only for what it renders.
"""
