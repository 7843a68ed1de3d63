"""The baselines directory: how files are named, listed, read and written, from disk or git.

- :mod:`.baselinenames`: ``[ENV/]TASK[~N].ARTIFACT`` names, parsed and refused (pure);
- :mod:`.transaction`: one writer at a time, a whole batch or nothing;
- :mod:`.baselines`: where baselines live, how they are listed, read and written;
- :mod:`.gitsource`: baselines as git holds them, staged (the hook) or in a commit.
"""
