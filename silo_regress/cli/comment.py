"""``comment``: the check report as one sticky pull-request comment (the action's step)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import handled, out
from silo_regress.cli.output import append_to_step_summary


@app.command()
@handled
def comment(
    report: Annotated[
        Path,
        typer.Option(
            "--report",
            help="The JSON report of `check --format json --output FILE`.",
            show_default=False,
        ),
    ],
    name: Annotated[
        str,
        typer.Option(
            "--name",
            help="The project's name in the comment's hidden marker: one comment per name "
            "(the action passes its project input).",
        ),
    ] = ".",
) -> int:
    """Post the check report as one pull-request comment, updated in place on every push.

    The comment is found again by a hidden marker naming the project, and edited;
    regressions and the suite decision come first, the rest is folded. It goes
    through GitHub's REST API at GITHUB_API_URL with GITHUB_TOKEN, for the pull
    request in GITHUB_EVENT_PATH. When the token may not write (a pull request
    from a fork) the comment goes to the job summary instead, saying so. Exit 0
    whether or not it could comment; 3 when the report is unreadable.
    """
    from silo_regress.commands.pullcomment import (
        CommentResult,
        Posted,
        post_comment,
        pull_request_of,
    )
    from silo_regress.render.prcomment import marker, render_pr_comment
    from silo_regress.reports.schema import read_report

    checked = read_report(report)
    sha = os.environ.get("GITHUB_SHA", "")[:12]
    footer = f"Updated for commit {sha}." if sha else ""
    body = render_pr_comment(checked, project=name, footer=footer)
    pull = pull_request_of(os.environ)
    result = (
        pull
        if isinstance(pull, CommentResult)
        else post_comment(pull, body=body, marker=marker(name))
    )
    if result.on_pull_request:
        out(f"pull-request comment {result.posted.value}: {result.url or ''}".rstrip(": "))
        return 0
    if result.posted is Posted.NOT_A_PULL_REQUEST:  # a push: nothing to comment on
        out(f"no pull-request comment: {result.detail}")
        return 0
    note = f"silo-regress did not comment on the pull request: {result.detail}."
    out(note)
    if append_to_step_summary(f"> {note} The comment is here instead.\n\n{body}"):
        out("the comment is in the job summary instead")
    return 0
