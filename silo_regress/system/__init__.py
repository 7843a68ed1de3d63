"""The machine under everything: files read and written safely, and the processors to use.

- :mod:`.fsio`: files other programs wrote and other people control, read and written safely;
- :mod:`.cpus`: how many processors this process may use, and work done in a forked child.
"""
