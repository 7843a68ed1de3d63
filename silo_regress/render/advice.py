"""What to do about the changed tasks: the closing advice of every report, as data.

The advice depends on where the baselines were read (working tree, git index, a
commit), so it is chosen here from the report's source, and each format lays the
steps out its own way. Nothing here imports the behaviour profiles: a passing hook
pays for none of it.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from silo_regress.judging.outcome import Hook, Report, SourceKind, Verdict

HOOK_ID = "silo-regress-check"  # the pre-commit hook's id, for SKIP=
# A ref a shell passes through as written (HEAD~1, origin/main, v1.2^): no quotes needed.
_PLAIN_REF = re.compile(r"[\w./^@-][\w./~^@-]*")


@dataclass(frozen=True)
class Step:
    """One thing to do about the changed tasks: why, then the commands.

    ``chained`` commands are one action run in order (``record && git add``); the
    others are independent, one per changed rollout, each its own line.
    """

    why: str
    commands: tuple[str, ...]
    chained: bool = True


def advise(report: Report) -> tuple[Step, ...]:
    """The closing advice for the changed tasks, fitting where the baselines were read.

    Working-tree baselines are accepted with ``record`` (or ``review``); the hook's
    staged ones also need a ``git add``. A commit's are recorded already, and
    ``record`` would not change them: what helps is the comparison with the working
    tree's (whose own advice says what to record) and how the baselines changed
    since. Nothing for a report with no changed task.
    """
    changed = [o for o in report.outcomes if o.verdict is Verdict.CHANGED]
    if not changed:
        return ()
    record = "silo-regress record " + " ".join(sorted({str(o.task) for o in changed}))
    source = report.source
    if source.kind is SourceKind.INDEX:
        dirs = sorted({posixpath.dirname(o.baseline_path or "") or "." for o in changed})
        return (
            Step(
                "If the new behaviour is intended, record it and stage the baselines",
                (record, "git add " + " ".join(shlex.quote(d) for d in dirs)),
            ),
            _skip_once(report.hook),
        )
    if source.kind is SourceKind.COMMIT:
        ref = source.label
        shown = ref if _PLAIN_REF.fullmatch(ref) else shlex.quote(ref)
        return (
            Step(
                f"The baselines above are the ones recorded at {ref}, not the working tree's; "
                "to compare the run with the working tree's (and learn what to record)",
                ("silo-regress check",),
            ),
            Step(
                f"to see how the baselines changed since {ref}",
                (f"silo-regress diff --from {shown}",),
            ),
        )
    if report.repeat is not None:
        return (
            Step(
                "If the new behaviour is intended, add it as an accepted variant",
                variant_commands(report),
                chained=False,
            ),
        )
    return (
        Step("If the new behaviour is intended, accept it with", (record,)),
        Step("or one result at a time, on a terminal", ("silo-regress review",)),
    )


def _skip_once(hook: Hook | None) -> Step:
    """How to skip the hook once: SKIP= reaches only the framework's hooks, and
    --no-verify skips every hook (so it is offered only for git's own)."""
    if hook is Hook.FRAMEWORK:
        return Step("or skip this hook once", (f"SKIP={HOOK_ID} git commit",))
    if hook is Hook.GIT:
        return Step("or skip the hook once", ("git commit --no-verify",))
    return Step(
        "or skip this hook once (a hook from install-hook: git commit --no-verify)",
        (f"SKIP={HOOK_ID} git commit",),
    )


def variant_commands(report: Report) -> tuple[str, ...]:
    """The commands that accept each changed rollout's result as another variant.

    Under --repeat a plain ``record TASK`` would keep one rollout's behaviour and
    drop the task's other variants, failing the rollouts that matched them.
    """
    commands = {
        f"silo-regress record {o.task} --run-id {o.run_name} --add-variant": None
        for o in report.outcomes
        if o.verdict is Verdict.CHANGED and o.run_name is not None
    }
    return tuple(commands)
