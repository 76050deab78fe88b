"""Capture analysis: ``tcplab analyze`` (``cli``), the analysis of a capture (``capture``), its
figures (``plots``), and fairness metrics over a run's tables (``fairness``)."""
