"""JSON as silo-regress holds it: one canonical form, pointers into it, diffs, volatile values.

- :mod:`.pointer`: JSON Pointers (RFC 6901) and the path patterns that ignore or exempt;
- :mod:`.canonical`: canonical form v1, parsed strictly and serialized byte-exact (``JsonValue``);
- :mod:`.prefilter`: the cheap test that rules volatile content out before any scan;
- :mod:`.volatile`: the volatile scan: run ids, wall-clock times, timing values;
- :mod:`.jsondiff`: the structural diff of two values, and following a pointer into one;
- :mod:`.visible`: agent-controlled text made harmless on its way to a terminal or a log;
- :mod:`.markers`: git's conflict markers: each side of a conflicted file read back out;
- :mod:`.jsonmerge`: the three-way merge of JSON by key and by item identity, and its
  canonical bytes with conflict markers around each conflicting member.
"""
