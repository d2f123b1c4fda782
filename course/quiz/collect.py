"""Take every learner's submission of a quiz from a JupyterHub, named by the user the hub signed in.

    report = collect_quiz("https://hub.example.edu", token, quiz_id, Path("collected"))
    report.items  # one Collected per hub user: saved, flagged, not submitted, or why it was not read

On a hub, Submit writes into the learner's own workspace
(``course.quiz.hub``): ``~/hopper-course-work/submissions/<quiz>/<user>.json``.
This reads it from each learner's server the way the hub lets an
instructor's tool read it, and saves it as ``<out>/<quiz>/<user>.json``:

- the users come from the hub's REST API (``GET /hub/api/users``, page by
  page), with each one's default server (its URL, and whether it is ready);
- the file comes through that server's Jupyter Server contents API
  (``GET /user/<name>/api/contents/<path>``, through the proxy), as bytes
  (base64), so a file that is not UTF-8 comes across unchanged;
- the file is saved under the name of the user whose server held it,
  whatever it says inside: identity is the one the hub authenticated. A
  file whose ``learner`` (or ``quiz``) field disagrees with its place is
  saved and flagged here, and the grader skips it with the same reason
  (``submission.check_place``), so it is never scored as another learner;
- a server that is not running, a 403, a 404 (nothing submitted), a file
  that is not a submission: each is one line in the report, and nothing is
  deleted anywhere (a file that was not read is still in the learner's home).

The token needs the scopes ``list:users``, ``read:users:name``,
``read:servers`` and ``access:servers`` (``SCOPES``); an admin's token has
them. Named servers are not read: the course runs in the default one.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

import requests

from .._files import shown
from ..errors import CourseError
from ._io import write_atomic
from .submission import MAX_BYTES, SubmissionError, check_place, parse_submission, validate_learner_id

__all__ = [
    "DEFAULT_PATH",
    "OUTCOMES",
    "SCOPES",
    "CollectReport",
    "Collected",
    "collect_quiz",
    "report_lines",
]

# Where Submit writes on a hub, from the server's root (the learner's home): course.quiz.hub.
DEFAULT_PATH = "hopper-course-work/submissions/{quiz}/{user}.json"
SCOPES = ("list:users", "read:users:name", "read:servers", "access:servers")
TIMEOUT_S = 30  # one HTTP call
PAGE = 200  # users asked for at once

# Every outcome, in the order the report counts them; the first three were read from the server.
OUTCOMES = {
    "saved": "saved",
    "flagged": "saved and flagged (the grader skips it)",
    "not submitted": "not submitted",
    "no server": "server not running",
    "refused": "refused by the server",
    "failed": "failed",
    "bad name": "user name cannot name a file",
}


@dataclass(frozen=True)
class Collected:
    user: str
    outcome: str  # a key of OUTCOMES
    detail: str  # what happened, for the report's line
    path: Path | None = None  # where the file was saved

    @property
    def reached(self) -> bool:
        """Whether the user's server answered for the file (saved, flagged, or nothing there)."""
        return self.outcome in ("saved", "flagged", "not submitted")


@dataclass(frozen=True)
class CollectReport:
    quiz: str
    hub_url: str
    items: tuple[Collected, ...]

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.items if c.outcome == outcome)

    def summary(self) -> str:
        counts = [f"{n} {OUTCOMES[o]}" for o in OUTCOMES if (n := self.count(o))]
        return f"quiz {self.quiz!r} from {self.hub_url}: {len(self.items)} users" + (
            f", {', '.join(counts)}" if counts else ""
        )


class _Hub:
    """The hub's REST API and the user servers behind its proxy, with one token."""

    def __init__(self, url: str, token: str, session: requests.Session | None = None):
        self.url = url.rstrip("/") + "/"
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"token {token}"

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        # No redirects: a server that does not accept the token sends it to the hub's login page,
        # whose 200 would read as a file.
        return self.session.get(urljoin(self.url, path), timeout=TIMEOUT_S, allow_redirects=False, **kwargs)

    def users(self) -> Iterator[dict[str, Any]]:
        """Every user's model, page by page (JupyterHub 2.0 and later paginate on request)."""
        offset = 0
        while True:
            try:
                r = self.get(
                    "hub/api/users",
                    params={"offset": offset, "limit": PAGE},
                    headers={"Accept": "application/jupyterhub-pagination+json"},
                )
            except requests.RequestException as e:
                raise CourseError(f"cannot reach the hub at {self.url} ({e})") from None
            if r.status_code in (401, 403):
                raise CourseError(
                    f"the hub refused to list its users ({r.status_code}): the token needs the scopes "
                    f"{', '.join(SCOPES)} (an admin's token has them)"
                )
            if r.status_code != 200:
                raise CourseError(
                    f"the hub at {self.url} answered {r.status_code} to GET hub/api/users; is this "
                    "the hub's public URL (the one learners open)?"
                )
            try:
                data = r.json()
            except ValueError:
                raise CourseError(
                    f"{self.url}hub/api/users did not answer JSON: is this JupyterHub's URL?"
                ) from None
            page = data.get("items", []) if isinstance(data, dict) else data
            yield from (u for u in page if isinstance(u, dict) and isinstance(u.get("name"), str))
            following = data.get("_pagination", {}).get("next") if isinstance(data, dict) else None
            if not following:
                return
            offset = int(following["offset"])


def _take(hub: _Hub, user: dict[str, Any], quiz: str, out: Path, remote: str) -> Collected:
    name = user["name"]
    try:
        validate_learner_id(name)
    except SubmissionError:
        return Collected(
            name,
            "bad name",
            "this hub user name cannot name a submission file (letters, digits, '.', '_', '@', '-'); "
            "Submit refused it too, so nothing was written",
        )
    if "servers" not in user:
        return Collected(
            name,
            "refused",
            "the hub did not show this user's servers: the token needs the scope read:servers",
        )
    server = (user.get("servers") or {}).get("")
    if not isinstance(server, dict) or not server.get("ready") or not server.get("url"):
        state = (
            "starting or stopping" if isinstance(server, dict) and server.get("pending") else "not running"
        )
        return Collected(
            name,
            "no server",
            f"the server is {state}, so its files cannot be read through the hub (they are still in the "
            "learner's home); start it from the hub's admin page and collect again",
        )
    path = remote.format(quiz=quiz, user=name)
    # full_url: set when the hub gives each user a subdomain (JupyterHub.subdomain_host); else a path.
    base = str(server.get("full_url") or server["url"])
    url = base.rstrip("/") + "/api/contents/" + quote(path, safe="/")
    try:
        r = hub.get(url, params={"type": "file", "format": "base64", "content": "1"})
    except requests.RequestException as e:
        return Collected(name, "failed", f"reading {path} failed ({e})")
    if r.status_code == 404:
        return Collected(name, "not submitted", f"no file at {path} on the server")
    if r.status_code in (401, 403) or 300 <= r.status_code < 400:
        return Collected(
            name,
            "refused",
            f"the server refused the token ({r.status_code}) for {path}: it needs the scope access:servers",
        )
    if r.status_code != 200:
        return Collected(name, "failed", f"the server answered {r.status_code} for {path}")
    try:
        model = r.json()
        # Jupyter Server sends base64 in lines (base64.encodebytes); any other character is refused.
        data = base64.b64decode("".join(model["content"].split()), validate=True)
    except (ValueError, KeyError, TypeError, binascii.Error):
        return Collected(name, "failed", f"the server's answer for {path} was not a file's contents")
    if len(data) > MAX_BYTES:
        return Collected(
            name, "failed", f"{path} is {len(data)} bytes, more than a submission's {MAX_BYTES}; not saved"
        )
    dest = out / quiz / f"{name}.json"
    try:
        check_place(dest, parse_submission(data))
    except SubmissionError as e:
        # Saved all the same (nothing lost): the grader lists it as skipped, with this reason.
        return Collected(name, "flagged", e.message, write_atomic(dest, data))
    return Collected(name, "saved", f"{len(data)} bytes", write_atomic(dest, data))


def collect_quiz(
    hub_url: str,
    token: str,
    quiz: str,
    out: Path,
    *,
    remote: str = DEFAULT_PATH,
    session: requests.Session | None = None,
) -> CollectReport:
    """Every hub user's submission of ``quiz``, saved as ``out/<quiz>/<user>.json`` (see the module)."""
    try:
        validate_learner_id(quiz)  # the same rule: it names a folder
    except SubmissionError:
        raise CourseError(
            f"a quiz id names a folder: letters, digits, '.', '_', '@', '-' (got {quiz!r:.60})"
        ) from None
    try:
        remote.format(quiz=quiz, user="u")
    except (KeyError, IndexError, ValueError):
        raise CourseError(
            f"the path on each server may name only {{quiz}} and {{user}} (got {remote!r})"
        ) from None
    hub = _Hub(hub_url, token, session)
    items = tuple(_take(hub, user, quiz, Path(out), remote) for user in hub.users())
    return CollectReport(quiz, hub.url, items)


def report_lines(report: CollectReport) -> list[str]:
    """One line per user (``shown``: a user name cannot put control characters on the terminal)."""
    lines = []
    for c in report.items:
        where = f" -> {shown(c.path)}" if c.path is not None else ""
        lines.append(f"{OUTCOMES[c.outcome]}: {shown(c.user)}{where}: {shown(c.detail)}")
    return lines
