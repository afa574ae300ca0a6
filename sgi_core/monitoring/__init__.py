"""Monitoring a saved policy on new, unlabelled runs, against the references the policy keeps
(:mod:`sgi_core.policy.references`).

- :mod:`~sgi_core.monitoring.prevalence`: the run's hallucination rate corrected for the policy's error rates;
- :mod:`~sgi_core.monitoring.shift`: whether the run moved beyond its rate (goodness of fit per feature);
- :mod:`~sgi_core.monitoring.revalidation`: the policy judged again on a labelled random sample of the run;
- :mod:`~sgi_core.monitoring.summary`: all of it for one run, and its verdict;
- :mod:`~sgi_core.monitoring.store`: the history of runs in a SQLite database.
"""
