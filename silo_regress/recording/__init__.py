"""Writing baselines: record, accept part of a run, format, review, and set a project up.

- :mod:`.acceptance`: chosen JSON Pointers taken from a run into its baseline;
- :mod:`.recorder`: chosen runs made baselines, everything validated before one write;
- :mod:`.formatter`: ``fmt``, baselines back in canonical form without a value changed;
- :mod:`.reviewing`: the review queue and what accepting an item means;
- :mod:`.scaffold`: the files ``init`` and ``install-hook`` write and the snippets they print.
"""
