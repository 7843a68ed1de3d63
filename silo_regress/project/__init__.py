"""The project: where it is, what its config says, which tasks it names, what defines behaviour.

- :mod:`.taskref`: task references (``TASK-002``, ``crm-west/TASK-002``) and the names in them;
- :mod:`.configvalues`: one config value checked and typed, naming the file and key it refuses;
- :mod:`.config`: finding the project and reading its configuration;
- :mod:`.fingerprint`: the fingerprint of the inputs that define behaviour;
- :mod:`.survey`: where baselines lie below a directory, for a check that found no project.
"""
