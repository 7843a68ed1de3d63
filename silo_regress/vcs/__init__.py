"""Git, read-only: the repository of a project, its index, its commits, its history.

- :mod:`.worktreeblobs`: working-tree files that are byte for byte the objects git tracks;
- :mod:`.mergestages`: a conflicted path's stages, and whether git's file is unedited;
- :mod:`.gitio`: the only module that imports GitPython (lazily), and what is read through it;
- :mod:`.worktrees`: a first-parent line of commits, and bisect's temporary worktrees.
"""
