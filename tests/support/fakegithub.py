"""A stand-in for GitHub's REST API of issue comments, on 127.0.0.1, in a thread.

It serves what the sticky pull-request comment uses: list a pull request's comments (paged,
with a ``Link: <...>; rel="next"`` header), create one, edit one. ``read_only`` answers
every write with 403, as GitHub does for a fork's token. Every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeGitHub:
    prefix: str = ""  # "/api/v3" for GitHub Enterprise
    per_page: int = 2  # small pages, so a few comments already page
    read_only: bool = False
    comments: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # method, path, auth
    base: str = ""  # http://127.0.0.1:PORT + prefix, once serving

    def add(self, body: str, *, user: str = "someone") -> int:
        number = 1000 + len(self.comments)
        self.comments.append({"id": number, "body": body, "user": {"login": user}})
        return number


def _handler(api: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self, code: int, value: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(value).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, text in (headers or {}).items():
                self.send_header(name, text)
            self.end_headers()
            self.wfile.write(data)

        def _route(self, method: str) -> None:
            api.requests.append((method, self.path, self.headers.get("Authorization")))
            path, _, query = self.path.partition("?")
            if not path.startswith(api.prefix + "/repos/"):
                self._answer(404, {"message": "Not Found"})
                return
            path = path.removeprefix(api.prefix)
            listing = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", path)
            one = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)", path)
            length = int(self.headers.get("Content-Length") or 0)
            payload: dict[str, Any] = json.loads(self.rfile.read(length)) if length else {}
            if method == "GET" and listing:
                page = int(dict(re.findall(r"(\w+)=(\w+)", query)).get("page", 1))
                start = (page - 1) * api.per_page
                chunk = api.comments[start : start + api.per_page]
                headers = {}
                if start + api.per_page < len(api.comments):
                    url = f"{api.base}{path}?per_page={api.per_page}&page={page + 1}"
                    headers["Link"] = f'<{url}>; rel="next"'
                self._answer(200, chunk, headers)
            elif api.read_only and method in ("POST", "PATCH"):
                self._answer(403, {"message": "Resource not accessible by integration"})
            elif method == "POST" and listing:
                number = api.add(payload["body"], user="github-actions[bot]")
                self._answer(201, {"id": number, "html_url": f"https://example.test/c/{number}"})
            elif method == "PATCH" and one:
                found = [c for c in api.comments if c["id"] == int(one.group(2))]
                if not found:
                    self._answer(404, {"message": "Not Found"})
                    return
                found[0]["body"] = payload["body"]
                self._answer(200, {"id": found[0]["id"], "html_url": "https://example.test/c"})
            else:
                self._answer(404, {"message": "Not Found"})

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PATCH(self) -> None:
            self._route("PATCH")

    return Handler


@contextmanager
def serving(api: FakeGitHub) -> Iterator[FakeGitHub]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    api.base = f"http://127.0.0.1:{server.server_address[1]}{api.prefix}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
