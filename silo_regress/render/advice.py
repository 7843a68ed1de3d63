"""What to do about every failing verdict: the closing advice of every report, as data.

The advice depends on where the baselines were read (working tree, git index, a
commit), so it is chosen here from the report's source, and each format lays the
steps out its own way. One step per kind of failure, whatever the number of
artifacts; each repeats the options the user gave (-C DIR, --agent, --timeout) and
names paths from the directory the command ran in (the report's Invocation), so a
command runs as printed. Nothing here imports the behaviour profiles: a passing
hook pays for none of it.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from dataclasses import dataclass

from silo_regress.judging.outcome import (
    Hook,
    Invocation,
    Outcome,
    Report,
    SourceKind,
    Verdict,
)
from silo_regress.judging.remedies import ConfigLine, RefusedName, StaleInputs

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
    kind: Verdict | None = None  # the verdict it answers; None: how to skip the hook
    lines: tuple[str, ...] = ()  # config text to paste, rather than commands to run


def step_body(step: Step) -> tuple[str, ...]:
    """A step's lines as a user pastes them: its config lines, its chained commands as
    one ``&&`` line, or its independent commands one a line. Every format that lays out
    a step as a block (HTML, JUnit, Markdown) shows these lines."""
    if step.lines:
        return step.lines
    if step.chained:
        return (" && ".join(step.commands),) if step.commands else ()
    return step.commands


def advise(report: Report) -> tuple[Step, ...]:
    """Every failing verdict's next step, grouped once per kind, changed tasks last."""
    if report.ok:
        return ()
    invocation = report.invocation or Invocation()
    steps: list[Step] = []
    for kind, builder in (
        (Verdict.STALE_RUN, _stale),
        (Verdict.INCOMPLETE_RUN, _incomplete),
        (Verdict.MISSING_RUN, _missing_run),
        (Verdict.MISSING_BASELINE, _missing_baseline),
        (Verdict.NOT_CANONICAL, _not_canonical),
        (Verdict.FORMAT_VERSION, _not_canonical),
        (Verdict.VOLATILE, _volatile),
    ):
        failing = [o for o in report.outcomes if o.verdict is kind]
        if failing:
            steps.extend(builder(failing, report, invocation))
    changed = advise_changed(report)
    if report.source.kind is SourceKind.INDEX and steps and not changed:
        steps.append(_skip_once(report.hook))
    return tuple(steps) + changed


def _tool(invocation: Invocation) -> str:
    """``silo-regress``, with the -C DIR that reaches the project from the user's directory."""
    if invocation.project is None:
        return "silo-regress"
    return f"silo-regress -C {shlex.quote(invocation.project)}"


def _rollout_options(invocation: Invocation) -> str:
    """The options that decided how Silo ran, repeated so a re-run runs it the same way."""
    parts = []
    if invocation.agent is not None:
        parts.append(f" --agent {shlex.quote(invocation.agent)}")
    if invocation.timeout is not None:
        parts.append(f" --timeout {invocation.timeout:g}")
    return "".join(parts)


def _tasks(outcomes: list[Outcome]) -> str:
    return " ".join(shlex.quote(t) for t in dict.fromkeys(str(o.task) for o in outcomes))


def _stage(invocation: Invocation) -> str:
    return f"git add {shlex.quote(invocation.baselines)}"


def _stale(outcomes: list[Outcome], report: Report, invocation: Invocation) -> list[Step]:
    changed: list[str] = []
    for outcome in outcomes:
        if isinstance(outcome.remedy, StaleInputs):
            changed.extend(p for p in outcome.remedy.changed if p not in changed)
    count = len({(o.task, o.environment) for o in outcomes})
    made = "they were made" if count != 1 else "it was made"
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        reason = f"{', '.join(changed[:3])}{more} changed since {made}"
    else:
        reason = "made from other inputs, or by another agent"
    tool, options = _tool(invocation), _rollout_options(invocation)
    runs = f"{count} stale run{'s' * (count != 1)}"
    return [
        Step(
            f"{runs} ({reason}); make fresh ones",
            (f"{tool} run {_tasks(outcomes)}{options}",),
            kind=Verdict.STALE_RUN,
        ),
        Step(
            "or run and check in one go",
            (f"{tool} check --run {_tasks(outcomes)}{options}",),
            kind=Verdict.STALE_RUN,
        ),
    ]


def _incomplete(outcomes: list[Outcome], report: Report, invocation: Invocation) -> list[Step]:
    runs = list(dict.fromkeys(o.run_name for o in outcomes if o.run_name))
    count = len({(o.task, o.environment) for o in outcomes})
    named = f" ({', '.join(runs[:3])}{' and more' if len(runs) > 3 else ''})" if runs else ""
    tool, options = _tool(invocation), _rollout_options(invocation)
    return [
        Step(
            f"{count} task{'s' * (count != 1)} ended with an incomplete run{named}, for the "
            "reason above; re-run and check",
            (f"{tool} check --run {_tasks(outcomes)}{options}",),
            kind=Verdict.INCOMPLETE_RUN,
        )
    ]


def _missing_run(outcomes: list[Outcome], report: Report, invocation: Invocation) -> list[Step]:
    tool, options = _tool(invocation), _rollout_options(invocation)
    files = [_from_here(o.baseline_path, invocation) for o in outcomes if o.baseline_path]
    steps = [
        Step(
            "No run of these tasks here (a fresh clone, or runs deleted); run and check them",
            (f"{tool} check --run {_tasks(outcomes)}{options}",),
            kind=Verdict.MISSING_RUN,
        )
    ]
    if files:
        steps.append(
            Step(
                "or, if a task no longer exists, remove its baselines",
                ("git rm -q -- " + " ".join(shlex.quote(f) for f in dict.fromkeys(files)),),
                kind=Verdict.MISSING_RUN,
            )
        )
    return steps


def _missing_baseline(
    outcomes: list[Outcome], report: Report, invocation: Invocation
) -> list[Step]:
    record = f"{_tool(invocation)} record {_tasks(outcomes)}"
    commands = (record, _stage(invocation)) if report.source.is_index else (record,)
    if in_ci() and report.source.is_working_tree:
        # The runs are the runner's: make them on a machine that can commit the baselines.
        run = f"{_tool(invocation)} run{_rollout_options(invocation)} {_tasks(outcomes)}"
        return [
            Step(
                "These runs exist only on the CI runner; record the missing baselines "
                "locally",
                (run, record),
                kind=Verdict.MISSING_BASELINE,
            )
        ]
    return [Step("Record the missing baselines", commands, kind=Verdict.MISSING_BASELINE)]


def _not_canonical(outcomes: list[Outcome], report: Report, invocation: Invocation) -> list[Step]:
    """``fmt`` for baselines it can rewrite; a file whose name maps to no task (a typed
    RefusedName, judging/refusals.py) gets rename-or-remove instead, as fmt cannot tell
    which task it was meant for."""
    refused = [o.remedy for o in outcomes if isinstance(o.remedy, RefusedName)]
    rewritable = [o for o in outcomes if not isinstance(o.remedy, RefusedName)]
    steps = []
    if rewritable:
        fmt = f"{_tool(invocation)} fmt"
        commands = (fmt, _stage(invocation)) if report.source.is_index else (fmt,)
        steps.append(
            Step(
                "Rewrite the baselines in canonical form (format 1)",
                commands,
                kind=rewritable[0].verdict,
            )
        )
    if refused:
        steps.append(_rename_or_remove(list(dict.fromkeys(refused)), report, invocation))
    return steps


def _rename_or_remove(refused: list[RefusedName], report: Report, invocation: Invocation) -> Step:
    """One step for every file whose name maps to no task. A name with a control
    character is printed escaped, which a shell would not find: the command leaves it
    out and the step says to remove it by hand."""
    count = len(refused)
    them = "them" if count != 1 else "it"
    why = (
        f"{count} file{'s' * (count != 1)} named like a baseline map{'s' * (count == 1)} to "
        f"no task, and fmt cannot tell which was meant: rename {them} to TASK.ARTIFACT or "
        f"ENV/TASK.ARTIFACT for the task meant (git mv), or remove {them}"
    )
    exact = [r.path for r in refused if r.exact]
    if len(exact) < count:
        inexact = count - len(exact)
        why += (
            f" ({inexact} name{'s' * (inexact != 1)} with a control character, shown escaped "
            "above: by hand)"
        )
    files = " ".join(shlex.quote(_from_here(p, invocation)) for p in exact)
    commands = (_remove(files, report.source.kind),) if exact else ()
    return Step(why, commands, kind=Verdict.NOT_CANONICAL)


def _remove(files: str, source: SourceKind) -> str:
    """How to remove files where the check read them: the hook's index holds them staged
    (git rm -f takes them out of both), a commit's are gone from the working tree once
    removed there, and the working tree's are plain files, perhaps never added."""
    if source is SourceKind.INDEX:
        return f"git rm -q -f -- {files}"
    if source is SourceKind.COMMIT:
        return f"git rm -q --ignore-unmatch -- {files}"
    return f"rm -- {files}"


def _volatile(outcomes: list[Outcome], report: Report, invocation: Invocation) -> list[Step]:
    """The exact lines for each task's own table: ignore a value that varies by run, or
    exempt one that only looks volatile (a fixed date in the data)."""
    tables: dict[tuple[str, str | None], dict[str, ConfigLine]] = {}
    for outcome in outcomes:
        if not isinstance(outcome.remedy, tuple):
            continue
        for line in outcome.remedy:
            found = tables.setdefault((line.file, line.header), {})
            known = found.get(line.key)
            values = (
                (*known.values, *(v for v in line.values if v not in known.values))
                if known
                else line.values
            )
            found[line.key] = ConfigLine(line.file, line.header, line.key, tuple(values))
    steps = []
    for key, why in (
        ("ignore", "Volatile content: if it varies by run, stop comparing it"),
        ("volatile-exempt", "or, if it is fixed data that only looks volatile, exempt it"),
    ):
        lines: list[str] = []
        files = []
        for (file, header), keyed in tables.items():
            if key not in keyed:
                continue
            files.append(file)
            lines += ([header] if header else []) + [_toml_list(key, keyed[key].values)]
        if lines:
            where = ", ".join(dict.fromkeys(files))
            steps.append(Step(f"{why} (in {where})", (), kind=Verdict.VOLATILE, lines=tuple(lines)))
    return steps


def _toml_list(key: str, values: tuple[str, ...]) -> str:
    import json

    quoted = [json.dumps(v, ensure_ascii=False) for v in values]
    return f"{key} = [{', '.join(quoted)}]"


def _from_here(path: str, invocation: Invocation) -> str:
    """A project-relative path as the user's directory reaches it."""
    if not invocation.here:
        return path
    return posixpath.normpath(posixpath.join(invocation.here, path))


def advise_changed(report: Report) -> tuple[Step, ...]:
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
    invocation = report.invocation or Invocation()
    tool = _tool(invocation)
    record = f"{tool} record " + " ".join(sorted({str(o.task) for o in changed}))
    source = report.source
    if source.kind is SourceKind.INDEX:
        dirs = sorted(
            {
                _from_here(posixpath.dirname(o.baseline_path or "") or ".", invocation)
                for o in changed
            }
        )
        return (
            Step(
                "If the new behaviour is intended, record it and stage the baselines",
                (record, "git add " + " ".join(shlex.quote(d) for d in dirs)),
                kind=Verdict.CHANGED,
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
                (f"{tool} check",),
                kind=Verdict.CHANGED,
            ),
            Step(
                f"to see how the baselines changed since {ref}",
                (f"{tool} diff --from {shown}",),
                kind=Verdict.CHANGED,
            ),
        )
    if in_ci():
        # The runs judged here live on the CI runner only: `record TASK` on a laptop
        # would record whatever run sits there. Reproduce first, then accept.
        tasks = " ".join(sorted({shlex.quote(str(o.task)) for o in changed}))
        rerun = f"{tool} check --run{_rollout_options(invocation)} {tasks}"
        return (
            Step(
                "These runs exist only on the CI runner; to reproduce the change locally",
                (rerun,),
                kind=Verdict.CHANGED,
            ),
            Step(
                "then, if the new behaviour is intended, accept it there with",
                (f"{tool} record {tasks}",),
                kind=Verdict.CHANGED,
            )
            if report.repeat is None
            else Step(
                "then, if the new behaviour is intended, add each new result there as an "
                "accepted variant (record TASK --run-id RUN --add-variant)",
                (),
                kind=Verdict.CHANGED,
            ),
        )
    if report.repeat is not None:
        return (
            Step(
                "If the new behaviour is intended, add it as an accepted variant",
                variant_commands(report),
                chained=False,
                kind=Verdict.CHANGED,
            ),
        )
    return (
        Step("If the new behaviour is intended, accept it with", (record,), kind=Verdict.CHANGED),
        Step("or one result at a time, on a terminal", (f"{tool} review",), kind=Verdict.CHANGED),
    )


def in_ci() -> bool:
    """Whether this report is rendered on a CI runner (CI=true, or GitHub Actions), whose
    runs a reader cannot reach from their own machine."""
    return os.environ.get("GITHUB_ACTIONS") == "true" or os.environ.get("CI", "").lower() in (
        "true",
        "1",
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
    tool = _tool(report.invocation or Invocation())
    commands = {
        f"{tool} record {o.task} --run-id {o.run_name} --add-variant": None
        for o in report.outcomes
        if o.verdict is Verdict.CHANGED and o.run_name is not None
    }
    return tuple(commands)
