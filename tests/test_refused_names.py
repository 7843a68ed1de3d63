"""Files named like a baseline whose name maps to no task are named, never skipped.

``baselines/crm~west/TASK-002.result.json``, a task id with ``..``, a name with an
escape character or one two directories down ends in an artifact's name, yet no
task is compared with it. check (working tree, the hook's index, ``--against``) fails
on each with ``not-canonical`` and the reason, in every format; status lists it;
fmt names it and renames nothing. Other files (a README, ``.gitattributes``, dotted
directories) are not silo-regress's and stay out of every report.
"""

from __future__ import annotations

from pathlib import Path

from silo_regress.baselines import BaselineStore, MappingSource, Refused, parse_relpath, refusal

ARTIFACTS = ("result.json", "state-diff.json")
TILDE = "crm~west/TASK-002.result.json"
REFUSED = {  # name under baselines/ -> the reason check gives
    TILDE: "its environment name 'crm~west' is refused: it contains '~', which names "
    "accepted variants (TASK~2)",
    "TA..SK.state-diff.json": "its task id 'TA..SK' is refused: it contains '..'",
    "a/b/TASK-009.result.json": "it lies 2 directories down (a baseline is TASK.ARTIFACT "
    "or ENV/TASK.ARTIFACT)",
    "esc\x1b[31m.result.json": "its task id 'esc\\x1b[31m' is refused: it contains a path "
    "separator or a control character",
}
SHOWN = {name: name.replace("\x1b", "\\x1b") for name in REFUSED}
# Under baselines/ and not silo-regress's: no report names them, none fails for them.
FOREIGN = (
    "README.md",
    ".gitattributes",
    "notes/guide.md",
    "crm~west/README.md",
    ".cache/TASK-001.result.json",  # dotted: the writers' .silo-regress-tmp/ is one
    "crm-west/.old/TASK-001.result.json",
    "result.json",  # the artifact's name alone names no task
)


# --- which names ----------------------------------------------------------------------


def test_the_rule_refuses_only_names_that_look_like_a_baseline() -> None:
    for name, reason in REFUSED.items():
        assert parse_relpath(name, ARTIFACTS) is None
        found = refusal(name, ARTIFACTS)
        assert found is not None and (found.reason, found.shown) == (reason, SHOWN[name])
    for name in (*FOREIGN, "TASK-001.result.json", "crm-west/TASK-001~2.result.json"):
        assert refusal(name, ARTIFACTS) is None, name
    undecodable = refusal("caf\udce9.result.json", ARTIFACTS)  # b"caf\xe9": not UTF-8
    assert undecodable is not None
    assert (undecodable.shown, str(undecodable.ref)) == ("caf\\xe9.result.json", "caf\\xe9")
    assert undecodable.reason == "its task id 'caf\\xe9' is refused: it is not valid UTF-8"
    # A configured artifact is a baseline's name too.
    assert refusal("TA..SK.tool-events.json", ("tool-events.json",)) is not None


def test_a_mapping_source_lists_refused_names_apart_from_its_baselines() -> None:
    files = {name: b"{}\n" for name in (*REFUSED, *FOREIGN, "TASK-001.result.json")}
    listing = MappingSource(files, ARTIFACTS, "HEAD").listing()
    assert [b.relpath for b in listing.baselines] == ["TASK-001.result.json"]
    assert [r.relpath for r in listing.refused] == sorted(REFUSED)
    assert all(isinstance(r, Refused) for r in listing.refused)


def test_the_working_tree_lists_refused_names_at_any_depth(tmp_path: Path) -> None:
    root = tmp_path / "baselines"
    names = (
        *REFUSED,
        *FOREIGN,
        "TASK-001.result.json",
        "crm-west/TASK-001.state-diff.json",
        "crm-west/deep/er/TASK-003.result.json",
        "crm-west/.hidden/deep/TASK-004.result.json",
    )
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"{}\n")
    (root / "crm-west/x/TASK-005.result.json").mkdir(parents=True)  # a directory, refused too
    listing = BaselineStore(root, ARTIFACTS).listing()
    assert [b.relpath for b in listing.baselines] == [
        "TASK-001.result.json",
        "crm-west/TASK-001.state-diff.json",
    ]
    assert [r.relpath for r in listing.refused] == sorted(
        [*REFUSED, "crm-west/deep/er/TASK-003.result.json", "crm-west/x/TASK-005.result.json"]
    )
    assert listing.refused[2].reason == (
        "it lies 3 directories down (a baseline is TASK.ARTIFACT or ENV/TASK.ARTIFACT)"
    )
