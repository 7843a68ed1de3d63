"""What a record wrote (or, with --dry-run, would write), and the behaviour it accepted.

A record that says only ``changed baselines/TASK-002.result.json`` leaves the
reader to diff the file to learn what they just accepted; here every new or
changed file is followed by its behaviour summary.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from silo_regress.canon.canonical import canonicalize
from silo_regress.errors import InputError
from silo_regress.project.taskref import TaskRef
from silo_regress.recording.recorder import FileState, RecordedFile, Recording
from silo_regress.render.text import Palette

_STYLE = {FileState.NEW: ("green",), FileState.CHANGED: ("yellow",), FileState.UNCHANGED: ()}
_WOULD = {FileState.NEW: "would add", FileState.CHANGED: "would change", FileState.UNCHANGED: ""}


def render_record(
    recordings: Iterable[Recording],
    *,
    color: bool = False,
    dry_run: bool = False,
    stats_tasks: Collection[TaskRef] = (),
) -> str:
    """Each recording's files, each new or changed one with the behaviour it takes on.

    A task in ``stats_tasks`` (judged by its tally) gets its files listed without the
    behaviour of the one rollout recorded: "recorded: FAILS" of the newest of ten
    rollouts, six of which passed, says the opposite of its tally."""
    palette = Palette(color)
    out: list[str] = []
    written = 0
    for recording in recordings:
        out.append(
            f"{recording.ref}: from run {recording.run.name} "
            f"({recording.run.environment}, started {recording.run.started_at})"
        )
        if recording.passed_over:
            newer = ", ".join(recording.passed_over)
            out.append(
                palette.paint(
                    f"  note: passed over newer run(s) without a complete result.json: {newer}",
                    "yellow",
                )
            )
        for file in recording.files:
            state = file.state.value
            if dry_run and file.state is not FileState.UNCHANGED:
                state = _WOULD[file.state]
            width = 12 if dry_run else 9
            out.append(f"  {palette.paint(f'{state:<{width}}', *_STYLE[file.state])} {file.path}")
            if file.state is not FileState.UNCHANGED:
                written += 1
                if recording.ref not in stats_tasks:
                    out.extend(f"      {line}" for line in accepted_lines(file, palette))
        removed = "would remove" if dry_run else "removed"
        width = 12 if dry_run else 9
        out.extend(
            f"  {palette.paint(f'{removed:<{width}}', 'yellow')} {path}"
            for path in recording.removed
        )
        written += len(recording.removed)
    if dry_run:
        out.append(
            f"dry run: {written} file{'s' * (written != 1)} would be written; nothing was written"
        )
    return "\n".join(out) + "\n"


def accepted_lines(file: RecordedFile, palette: Palette) -> list[str]:
    """The behaviour a new or changed baseline file takes on, in agent terms."""
    from silo_regress import behaviour
    from silo_regress.render.wording import one_line, words

    after = canonicalize(file.data, source=file.path).value
    if file.previous is None:
        # One line per new file: record --all on a fresh project prints thousands.
        return [one_line(words(behaviour.describe(file.artifact, after)))]
    try:
        before = canonicalize(file.previous, source=file.path).value
    except InputError:
        return ["replaces a baseline that was not valid JSON"]
    notes = behaviour.compare(file.artifact, before, after)
    return [palette.note(note) for note in notes] or ["same values, new form"]
