"""``comment``: one sticky comment per project on the pull request, updated in place.

The flow: list the pull request's comments through GitHub's REST API at
``GITHUB_API_URL`` (so GitHub Enterprise works), page by page; find the one whose body
opens with the project's hidden marker; PATCH it, or POST a new one when there is none.
Standard library only (urllib): no third-party action, no new dependency. A token that
may not write (a pull request from a fork gets a read-only one) is an outcome, never an
error: the caller puts the comment in the job summary instead and says so.
"""

from __future__ import annotations

import enum
import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PER_PAGE = 100
MAX_PAGES = 50  # 5,000 comments: beyond that a pull request is not one a person reads
RESPONSE_CAP = 16 * 1024 * 1024  # bytes read of one answer: the server is not ours
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_NEXT = re.compile(r'<([^<>]+)>\s*;\s*rel="next"')


class Posted(enum.StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    NO_PERMISSION = "no-permission"  # 401/403/404 on write: a fork's read-only token
    NOT_A_PULL_REQUEST = "not-a-pull-request"  # or no token, no repository: nothing to do
    FAILED = "failed"  # the API could not be reached or answered nonsense


@dataclass(frozen=True)
class PullRequest:
    """Where the comment goes, and the token that may write it."""

    api_url: str  # GITHUB_API_URL, e.g. https://api.github.com or https://ghe.example/api/v3
    repository: str  # owner/name
    number: int
    token: str


@dataclass(frozen=True)
class CommentResult:
    posted: Posted
    detail: str  # why, in words, for the log and the job summary
    url: str | None = None  # the comment's page, when posted

    @property
    def on_pull_request(self) -> bool:
        return self.posted in (Posted.CREATED, Posted.UPDATED)


def pull_request_of(env: Mapping[str, str]) -> PullRequest | CommentResult:
    """The pull request this job runs for, from GitHub's variables and event file; or why
    there is none (not a pull request event, no token, no repository)."""
    token = env.get("GITHUB_TOKEN", "")
    repository = env.get("GITHUB_REPOSITORY", "")
    api_url = (env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    number = _event_number(env.get("GITHUB_EVENT_PATH", ""))
    if number is None:
        return CommentResult(Posted.NOT_A_PULL_REQUEST, "this job does not run for a pull request")
    if not _REPOSITORY.fullmatch(repository):
        return CommentResult(Posted.FAILED, f"GITHUB_REPOSITORY {repository!r} is not owner/name")
    if not api_url.startswith(("https://", "http://")):
        return CommentResult(Posted.FAILED, f"GITHUB_API_URL {api_url!r} is not an http(s) URL")
    if not token:
        return CommentResult(
            Posted.NO_PERMISSION, "no token to write with (a pull request from a fork has none)"
        )
    return PullRequest(api_url=api_url, repository=repository, number=number, token=token)


def _event_number(path: str) -> int | None:
    if not path:
        return None
    try:
        with open(path, "rb") as handle:
            event = json.loads(handle.read(RESPONSE_CAP))
    except (OSError, ValueError):
        return None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    number = pull.get("number") if isinstance(pull, dict) else None
    return number if isinstance(number, int) and number > 0 else None


def post_comment(
    pull: PullRequest, *, body: str, marker: str, timeout: float = 30.0
) -> CommentResult:
    """Update the project's comment in place, or create it; never raises for the API."""
    base = f"{pull.api_url}/repos/{pull.repository}"
    try:
        found = _find(
            pull,
            f"{base}/issues/{pull.number}/comments?per_page={PER_PAGE}",
            marker=marker,
            timeout=timeout,
        )
        payload = {"body": body}
        if found is not None:
            try:
                answer = _call(pull, "PATCH", f"{base}/issues/comments/{found}", payload, timeout)
                return CommentResult(Posted.UPDATED, "updated in place", _html_url(answer))
            except urllib.error.HTTPError as exc:
                if exc.code not in (403, 404):
                    raise
                # Someone else's comment carrying our marker: leave it, write our own.
        answer = _call(pull, "POST", f"{base}/issues/{pull.number}/comments", payload, timeout)
        return CommentResult(Posted.CREATED, "created", _html_url(answer))
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403, 404):
            return CommentResult(
                Posted.NO_PERMISSION,
                f"the token may not comment on this pull request (HTTP {exc.code}; a pull "
                "request from a fork gets a read-only token)",
            )
        return CommentResult(Posted.FAILED, f"GitHub's API answered HTTP {exc.code}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return CommentResult(Posted.FAILED, f"GitHub's API could not be reached: {exc}")


def _find(pull: PullRequest, url: str, *, marker: str, timeout: float) -> int | None:
    """The id of the first comment whose body opens with ``marker``, over every page."""
    for _ in range(MAX_PAGES):
        request = _request(pull, "GET", url, None)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            comments = json.loads(response.read(RESPONSE_CAP))
            link = response.headers.get("Link", "")
        if not isinstance(comments, list):
            raise ValueError("the comment list is not a JSON array")
        for comment in comments:
            if not isinstance(comment, dict):
                continue
            text, number = comment.get("body"), comment.get("id")
            if isinstance(text, str) and text.startswith(marker) and isinstance(number, int):
                return number
        following = _NEXT.search(link)
        if following is None:
            return None
        url = following.group(1)
        if not url.startswith(pull.api_url + "/"):  # the token goes to GitHub's API only
            raise ValueError(f"a next page outside {pull.api_url}: {url}")
    return None


def _request(pull: PullRequest, method: str, url: str, payload: Any) -> urllib.request.Request:
    data = None if payload is None else json.dumps(payload).encode("utf-8")
    headers = {
        "Accept": "application/vnd.github+json",
        "Authorization": f"Bearer {pull.token}",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "silo-regress",
    }
    if data is not None:
        headers["Content-Type"] = "application/json"
    return urllib.request.Request(url, data=data, headers=headers, method=method)


def _call(pull: PullRequest, method: str, url: str, payload: Any, timeout: float) -> Any:
    with urllib.request.urlopen(_request(pull, method, url, payload), timeout=timeout) as response:
        return json.loads(response.read(RESPONSE_CAP) or b"null")


def _html_url(answer: Any) -> str | None:
    url = answer.get("html_url") if isinstance(answer, dict) else None
    return url if isinstance(url, str) else None
