"""Take every learner's submission of a quiz from a JupyterHub, named by the user the hub signed in.

    report = collect_quiz("https://hub.example.edu", token, quiz_id, Path("collected"))
    report.items  # one Collected per learner: saved, flagged, not submitted, or why it was not read

Two sources, one report:

- **the submissions service** (the default; ``course.quiz.hub_service``):
  Submit sent each file there with the learner's own hub token, and the
  service keeps it under the name the hub authenticated. Collect lists the
  quiz's files with their sizes, then reads each one, all from the service:
  no learner's server is asked, so it works after every server stopped.
  The token needs ``SERVICE_SCOPES``.
- **each learner's server** (``from_servers=True``, for a hub without the
  service): Submit wrote into the learner's workspace
  (``~/hopper-course-work/submissions/<quiz>/<user>.json``); collect reads
  it through that server's contents API. The instructor's token never goes
  to a learner's server: for each learner it makes a token *of that
  learner's own*, scoped ``access:servers!user=<name>`` and short-lived,
  uses it for that one server and deletes it. The instructor's token needs
  ``SERVER_SCOPES`` (``tokens`` to make those, no ``access:servers``).

Either way the users come from the hub's REST API (``GET /hub/api/users``,
page by page, or a group's members), less ``exclude``; each file's size is
asked first and a file larger than a submission is refused unread; a
download is streamed, bounded, and has a deadline per learner; the file is
saved as ``<out>/<quiz>/<user>.json`` (0600, folders 0700) under the name
the hub authenticated, whatever it says inside. A file whose ``learner``
(or ``quiz``) field disagrees with its place is saved and flagged here, and
the grader lists it in ``flagged.csv`` unscored (``submission.check_place``).
Anything the hub or a server answers that is not what JupyterHub sends (a
pagination that does not advance, JSON of the wrong shape) is one message
naming it, never a traceback; nothing is deleted anywhere.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

import requests

from .._files import shown
from ..errors import CourseError
from ._io import private_folder, write_private
from .model import brief
from .submission import MAX_BYTES, SubmissionError, check_place, parse_submission, validate_learner_id

__all__ = [
    "DEFAULT_PATH",
    "MISSING",
    "OUTCOMES",
    "SERVER_SCOPES",
    "SERVICE",
    "SERVICE_SCOPES",
    "CollectReport",
    "Collected",
    "collect_quiz",
    "report_line",
    "report_lines",
]

# Where Submit writes on a hub, from the server's root (the learner's home): course.quiz.hub.
DEFAULT_PATH = "hopper-course-work/submissions/{quiz}/{user}.json"
SERVICE = "hopper-submit"  # course.quiz.hub_service.NAME (a test holds them equal)
SERVICE_SCOPES = (
    "list:users",
    "read:users:name",
    f"access:services!service={SERVICE}",
    f"custom:{SERVICE}:collect",
)
SERVER_SCOPES = ("list:users", "read:users:name", "read:servers", "tokens")
GROUP_SCOPE = "read:groups"
TIMEOUT_S = 30  # one HTTP call to the hub
DEADLINE_S = 30.0  # one learner's file, from asking to saved
PAGE = 200  # users asked for at once
CHUNK = 64 * 1024
LEARNER_TOKEN_S = 300  # the life of a token made for one learner's server

# Every outcome, in the order the report counts them.
OUTCOMES = {
    "saved": "saved",
    "flagged": "saved and flagged (the grader does not score it)",
    "not submitted": "not submitted",
    "no server": "server not running",
    "refused": "refused",
    "failed": "failed",
    "bad name": "user name cannot name a file",
}
MISSING = ("not submitted",)  # the learner's work is not there; every other outcome but saved is an error


@dataclass(frozen=True)
class Collected:
    user: str
    outcome: str  # a key of OUTCOMES
    detail: str  # what happened, for the report's line
    path: Path | None = None  # where the file was saved

    @property
    def reached(self) -> bool:
        """Whether the source answered for the file (saved, flagged, or nothing there)."""
        return self.outcome in ("saved", "flagged", "not submitted")


@dataclass(frozen=True)
class CollectReport:
    quiz: str
    hub_url: str
    items: tuple[Collected, ...]
    source: str = "the submissions service"

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.items if c.outcome == outcome)

    def summary(self) -> str:
        counts = [f"{n} {OUTCOMES[o]}" for o in OUTCOMES if (n := self.count(o))]
        return f"quiz {self.quiz!r} from {self.hub_url} ({self.source}): {len(self.items)} users" + (
            f", {', '.join(counts)}" if counts else ""
        )


class _TooLarge(Exception):
    pass


class _Late(Exception):
    pass


def _read_bounded(r: requests.Response, limit: int, deadline: float) -> bytes:
    """The body of a streamed response: at most ``limit`` bytes, read before ``deadline`` (monotonic).

    ``read1`` returns whatever has arrived, so a server that drips its answer
    is caught at the deadline, not after the whole (endless) answer.
    """
    declared = r.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _TooLarge(int(declared))
    raw = r.raw
    read = getattr(raw, "read1", None) or raw.read
    parts: list[bytes] = []
    total = 0
    while True:
        if time.monotonic() > deadline:
            raise _Late(total)
        chunk = read(CHUNK)
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > limit:
            raise _TooLarge(total)
        parts.append(chunk)


class _Hub:
    """The hub's REST API, its services and the user servers behind its proxy."""

    def __init__(self, url: str, token: str, session: requests.Session | None = None):
        self.url = url.rstrip("/") + "/"
        self.token = token
        self.session = session or requests.Session()

    def call(
        self, method: str, path: str, *, token: str | None = None, stream: bool = False, **kwargs: Any
    ) -> requests.Response:
        # No redirects: a server that does not accept the token sends it to the hub's login page,
        # whose 200 would read as a file.
        headers = {"Authorization": f"token {token or self.token}", **kwargs.pop("headers", {})}
        return self.session.request(
            method,
            urljoin(self.url, path),
            headers=headers,
            timeout=kwargs.pop("timeout", TIMEOUT_S),
            allow_redirects=False,
            stream=stream,
            **kwargs,
        )

    def json(self, path: str, what: str, scopes: Sequence[str], missing: str = "", **kwargs: Any) -> Any:
        """GET ``path`` from the hub as JSON; any answer but a 200 with JSON is one message."""
        try:
            r = self.call("GET", path, **kwargs)
        except requests.RequestException as e:
            raise CourseError(f"cannot reach the hub at {self.url} ({e})") from None
        if r.status_code in (401, 403):
            raise CourseError(
                f"the hub refused {what} ({r.status_code}): the token needs the scopes {', '.join(scopes)}"
            )
        if r.status_code == 404:
            raise CourseError(f"{self.url}{path} is not there (404){missing or ''}")
        if r.status_code != 200:
            raise CourseError(
                f"the hub at {self.url} answered {r.status_code} to GET {path}; is this the hub's "
                "public URL (the one learners open)?"
            )
        try:
            return r.json()
        except ValueError:
            raise CourseError(f"{self.url}{path} did not answer JSON: is this JupyterHub's URL?") from None

    def users(self, scopes: Sequence[str]) -> Iterator[dict[str, Any]]:
        """Every user's model, page by page (JupyterHub 2.0 and later paginate on request)."""
        offset = 0
        while True:
            data = self.json(
                "hub/api/users",
                "to list its users",
                scopes,
                params={"offset": offset, "limit": PAGE},
                headers={"Accept": "application/jupyterhub-pagination+json"},
            )
            page = data.get("items") if isinstance(data, dict) else data
            where = f"the hub's list of users (GET hub/api/users, offset {offset})"
            if not isinstance(page, list):
                raise CourseError(f"{where} is not a list of users but {brief(page)}")
            for user in page:
                if not (isinstance(user, dict) and isinstance(user.get("name"), str)):
                    raise CourseError(f"{where} holds {brief(user)}, which is not a user's model")
                yield user
            paging = data.get("_pagination") if isinstance(data, dict) else None
            following = paging.get("next") if isinstance(paging, dict) else None
            if paging is not None and not isinstance(paging, dict):
                raise CourseError(f"{where}: _pagination is {brief(paging)}, not an object")
            if following is None:
                return
            at = following.get("offset") if isinstance(following, dict) else None
            if isinstance(at, bool) or not isinstance(at, int):
                raise CourseError(f"{where}: the next page's offset is {brief(at)}, not a whole number")
            if at <= offset or not page:
                raise CourseError(
                    f"{where}: the next page starts at offset {at} after a page of {len(page)} users "
                    f"from {offset}; it does not advance, so collect stopped instead of asking again"
                )
            offset = at

    def group(self, name: str) -> list[str]:
        data = self.json(
            f"hub/api/groups/{quote(name, safe='')}",
            f"to show group {name!r}",
            (GROUP_SCOPE,),
            missing=f": the hub has no group {name!r}",
        )
        members = data.get("users") if isinstance(data, dict) else None
        if not (isinstance(members, list) and all(isinstance(m, str) for m in members)):
            raise CourseError(f"the hub's group {name!r} has no list of user names (users: {brief(members)})")
        return members


def _bad_name(name: str) -> Collected | None:
    try:
        validate_learner_id(name)
    except SubmissionError:
        return Collected(
            name,
            "bad name",
            "this hub user name cannot name a submission file (letters, digits, '.', '_', '@', '-'); "
            "Submit refused it too, so nothing was written",
        )
    return None


def _keep(name: str, quiz: str, out: Path, data: bytes, source: str) -> Collected:
    """Save ``data`` as ``out/quiz/name.json``: saved, or saved and flagged when its content disagrees."""
    dest = out / quiz / f"{name}.json"
    try:
        check_place(dest, parse_submission(data))
    except SubmissionError as e:
        # Saved all the same (nothing lost): the grader lists it as flagged and does not score it.
        return Collected(name, "flagged", e.message, write_private(dest, data))
    return Collected(name, "saved", f"{len(data)} bytes, from {source}", write_private(dest, data))


def _fetch(
    hub: _Hub, name: str, url: str, what: str, deadline_s: float, token: str | None = None, **kw: Any
) -> bytes | Collected:
    """One learner's file body from ``url``: bounded, streamed, before the deadline; else the outcome."""
    deadline = time.monotonic() + deadline_s
    try:
        r = hub.call("GET", url, token=token, stream=True, timeout=(10, min(TIMEOUT_S, deadline_s)), **kw)
    except requests.RequestException as e:
        return Collected(name, "failed", f"reading {what} failed ({type(e).__name__})")
    try:
        if r.status_code == 404:
            return Collected(name, "not submitted", f"no {what}")
        if r.status_code in (401, 403) or 300 <= r.status_code < 400:
            return Collected(name, "refused", f"{what}: refused ({r.status_code})")
        if r.status_code != 200:
            return Collected(name, "failed", f"{what}: the answer was {r.status_code}")
        limit = MAX_BYTES * 4 // 3 + 4096 if kw.get("params") else MAX_BYTES  # base64 is 4/3 larger
        try:
            return _read_bounded(r, limit, deadline)
        except _TooLarge as e:
            return Collected(name, "failed", f"{what} is over {limit} bytes ({e.args[0]} seen); not saved")
        except _Late as e:
            return Collected(
                name, "failed", f"{what} did not arrive within {deadline_s:g} s ({e.args[0]} bytes came)"
            )
        except (requests.RequestException, OSError) as e:
            return Collected(name, "failed", f"reading {what} failed ({type(e).__name__})")
    finally:
        r.close()


def _from_service(
    hub: _Hub, names: list[str], quiz: str, out: Path, service: str, deadline_s: float
) -> Iterator[Collected]:
    base = service.rstrip("/") + "/api/submissions/" + quote(quiz, safe="")
    listing = hub.json(
        base,
        f"to list the submissions service's files of quiz {quiz!r}",
        SERVICE_SCOPES,
        missing=f": no submissions service {SERVICE!r} on this hub; collect from the learners' servers "
        "with --from-servers, or add the service (README, On JupyterHub)",
    )
    files = listing.get("files") if isinstance(listing, dict) else None
    if not isinstance(files, dict):
        raise CourseError(
            f"the submissions service's list for quiz {quiz!r} has no files object: {brief(listing)}"
        )
    for name in names:
        bad = _bad_name(name)
        if bad is not None:
            yield bad
            continue
        info = files.get(name)
        if info is None:
            yield Collected(name, "not submitted", "the submissions service has no file from this user")
            continue
        size = info.get("bytes") if isinstance(info, dict) else None
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            yield Collected(name, "failed", f"the service's list gives the size {brief(size)}, not a number")
            continue
        if size > MAX_BYTES:
            yield Collected(
                name, "failed", f"the file is {size} bytes, more than a submission's {MAX_BYTES}; not read"
            )
            continue
        got = _fetch(hub, name, f"{base}/{quote(name, safe='')}", "the service's file", deadline_s)
        yield got if isinstance(got, Collected) else _keep(name, quiz, out, got, "the submissions service")


def _learner_token(hub: _Hub, name: str) -> tuple[str, str] | Collected:
    """A short-lived token of ``name``'s own, good for their server only: (token, id)."""
    body = {
        "scopes": [f"access:servers!user={name}"],
        "expires_in": LEARNER_TOKEN_S,
        "note": "course quiz collect: this server only",
    }
    try:
        r = hub.call("POST", f"hub/api/users/{quote(name, safe='')}/tokens", json=body)
        made = r.json() if r.status_code == 201 else None
    except (requests.RequestException, ValueError) as e:
        return Collected(name, "failed", f"a token for this learner's server could not be made ({e})")
    if not (
        isinstance(made, dict) and isinstance(made.get("token"), str) and isinstance(made.get("id"), str)
    ):
        return Collected(
            name,
            "refused",
            f"the hub made no token for this learner's server ({r.status_code}): the instructor's token "
            f"needs the scopes {', '.join(SERVER_SCOPES)}",
        )
    return made["token"], made["id"]


def _from_server(
    hub: _Hub, user: dict[str, Any], quiz: str, out: Path, remote: str, deadline_s: float
) -> Collected:
    name = user["name"]
    bad = _bad_name(name)
    if bad is not None:
        return bad
    if "servers" not in user:
        return Collected(
            name,
            "refused",
            "the hub did not show this user's servers: the token needs the scope read:servers",
        )
    servers = user.get("servers")
    server = servers.get("") if isinstance(servers, dict) else None
    if not isinstance(server, dict) or not server.get("ready") or not isinstance(server.get("url"), str):
        state = (
            "starting or stopping" if isinstance(server, dict) and server.get("pending") else "not running"
        )
        return Collected(
            name,
            "no server",
            f"the server is {state}, so its files cannot be read through it (they are still in the "
            "learner's home); start it, or use the submissions service, which needs no server",
        )
    path = remote.format(quiz=quiz, user=name)
    # full_url: set when the hub gives each user a subdomain (JupyterHub.subdomain_host); else a path.
    base = str(server.get("full_url") or server["url"])
    url = base.rstrip("/") + "/api/contents/" + quote(path, safe="/")
    made = _learner_token(hub, name)
    if isinstance(made, Collected):
        return made
    token, token_id = made
    try:
        got = _fetch(hub, name, url, path, deadline_s, token=token, params={"type": "file", "content": "0"})
        if isinstance(got, Collected):
            return got
        try:
            size = json.loads(got).get("size")
        except (ValueError, AttributeError):
            return Collected(name, "failed", f"the server's answer for {path} was not a file's model")
        if isinstance(size, int) and not isinstance(size, bool) and size > MAX_BYTES:
            return Collected(
                name, "failed", f"{path} is {size} bytes, more than a submission's {MAX_BYTES}; not read"
            )
        params = {"type": "file", "format": "base64", "content": "1"}
        got = _fetch(hub, name, url, path, deadline_s, token=token, params=params)
    finally:
        try:
            hub.call("DELETE", f"hub/api/users/{quote(name, safe='')}/tokens/{quote(token_id, safe='')}")
        except requests.RequestException:
            pass  # it expires by itself within LEARNER_TOKEN_S
    if isinstance(got, Collected):
        return got
    try:
        model = json.loads(got)
        # Jupyter Server sends base64 in lines (base64.encodebytes); any other character is refused.
        data = base64.b64decode("".join(model["content"].split()), validate=True)
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        return Collected(name, "failed", f"the server's answer for {path} was not a file's contents")
    if len(data) > MAX_BYTES:
        return Collected(name, "failed", f"{path} is {len(data)} bytes, more than a submission's; not saved")
    return _keep(name, quiz, out, data, "the learner's server")


def collect_quiz(
    hub_url: str,
    token: str,
    quiz: str,
    out: Path,
    *,
    remote: str = DEFAULT_PATH,
    session: requests.Session | None = None,
    from_servers: bool = False,
    service: str | None = None,
    users: Sequence[str] | None = None,
    group: str | None = None,
    exclude: Sequence[str] = (),
    deadline_s: float = DEADLINE_S,
    told: Callable[[Collected], object] | None = None,
) -> CollectReport:
    """Every learner's submission of ``quiz``, saved as ``out/<quiz>/<user>.json`` (see the module).

    The learners are ``users`` if given, else ``group``'s members, else every
    hub user; less ``exclude``. ``told`` hears of each learner as it is done.
    """
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
    if not deadline_s > 0:
        raise CourseError(f"the deadline per learner must be a positive number of seconds (got {deadline_s})")
    hub = _Hub(hub_url, token, session)
    try:
        items = _collect(
            hub, quiz, Path(out), remote, from_servers, service, users, group, exclude, deadline_s, told
        )
    finally:
        if session is None:
            hub.session.close()
    source = "each learner's server" if from_servers else "the submissions service"
    return CollectReport(quiz, hub.url, tuple(items), source)


def _collect(
    hub: _Hub,
    quiz: str,
    out: Path,
    remote: str,
    from_servers: bool,
    service: str | None,
    users: Sequence[str] | None,
    group: str | None,
    exclude: Sequence[str],
    deadline_s: float,
    told: Callable[[Collected], object] | None,
) -> list[Collected]:
    scopes = SERVER_SCOPES if from_servers else SERVICE_SCOPES
    wanted = set(users) if users is not None else set(hub.group(group)) if group is not None else None
    models = {} if (wanted is not None and not from_servers) else {u["name"]: u for u in hub.users(scopes)}
    names = sorted((wanted if wanted is not None else set(models)) - set(exclude))
    private_folder(out)
    items: list[Collected] = []
    if from_servers:
        found: Iterator[Collected] = (
            _from_server(hub, models[n], quiz, out, remote, deadline_s)
            if n in models
            else Collected(n, "failed", "no such user on the hub")
            for n in names
        )
    else:
        found = _from_service(hub, names, quiz, out, service or f"services/{SERVICE}/", deadline_s)
    for item in found:
        items.append(item)
        if told is not None:
            told(item)
    return items


def report_lines(report: CollectReport) -> list[str]:
    """One line per user (``shown``: a user name cannot put control characters on the terminal)."""
    return [report_line(c) for c in report.items]


def report_line(c: Collected) -> str:
    """What happened to one learner's file, as a line of the report."""
    where = f" -> {shown(c.path)}" if c.path is not None else ""
    return f"{OUTCOMES[c.outcome]}: {shown(c.user)}{where}: {shown(c.detail)}"
