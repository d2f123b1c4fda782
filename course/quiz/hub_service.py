"""The submissions service: a JupyterHub service that takes each learner's Submit and keeps it for the instructor.

Run by the hub (a managed service), it is authenticated with the hub's
OAuth (``jupyterhub.services.auth.HubOAuthenticated``, as JupyterHub's own
``examples/service-whoami`` is): every request carries a hub token, and the
hub says whose it is. So:

- a learner's Submit sends the file with the learner's own token (the
  ``JUPYTERHUB_API_TOKEN`` of their server, which the hub gives the scope
  ``access:services!service=hopper-submit`` and nothing of anyone else's):
  ``PUT <prefix>api/submissions/<quiz>``; the service stores it as
  ``<root>/<quiz>/<hub user>.json``, the name the hub authenticated, whatever
  the file says inside; the file is 0600 and every folder 0700, on the
  service's own volume;
- the instructor's ``course quiz collect`` lists a quiz's files with their
  sizes (``GET <prefix>api/submissions/<quiz>``) and reads each
  (``GET <prefix>api/submissions/<quiz>/<user>``) with a token holding the
  custom scope ``custom:hopper-submit:collect``; no learner's server is
  asked, so stopped servers do not matter;
- a learner may read back only their own file; nothing is ever deleted.

Run it as the hub's service (``JupyterHub.services``; the README's "On
JupyterHub" and deploy/z2jh-values.yaml give the configuration)::

    python -m course.quiz.hub_service --root /srv/hopper-submissions

It imports only the standard library, tornado and jupyterhub (both in the
hub's own image), so the same file runs in a hub that has no course
installed: ``python hub_service.py --root ...``.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import json
import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from tornado import httpserver, ioloop, web

NAME = "hopper-submit"  # the service's name in JupyterHub.services
COLLECT_SCOPE = "custom:hopper-submit:collect"  # who may list and read every learner's file
ACCESS_SCOPE = f"access:services!service={NAME}"  # what a learner's server token carries to reach it
ROOT_ENV = "HOPPER_SUBMIT_ROOT"
MAX_BYTES = 1024 * 1024  # a submission is a few kilobytes (course.quiz.submission.MAX_BYTES)
# The same rule as course.quiz.submission's learner ids (a test holds them equal): a quiz id and a
# user name name a folder and a file, so nothing can name a parent folder or an absolute path.
SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}\Z")
FILE_MODE, FOLDER_MODE = 0o600, 0o700


def _store(root: Path, quiz: str, user: str, data: bytes) -> Path:
    """Write ``data`` as ``root/quiz/user.json`` atomically: 0600 in folders of 0700."""
    folder = root / quiz
    folder.mkdir(mode=FOLDER_MODE, exist_ok=True)
    os.chmod(folder, FOLDER_MODE)  # mkdir's mode passes through the umask
    target = folder / f"{user}.json"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{user}.", suffix=".tmp")  # mkstemp: 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


class _Api(HubOAuthenticated, web.RequestHandler):
    """Every answer is JSON; a request the hub does not vouch for is a 403, never a redirect."""

    def initialize(self, root: Path) -> None:
        self.root = root

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        reason = kwargs.get("exc_info", (None, None))[1]
        message = getattr(reason, "log_message", None) or self._reason
        self.finish({"status": status_code, "message": message})

    def who(self) -> dict[str, Any]:
        model = self.get_current_user()
        if not model:
            raise web.HTTPError(
                403,
                f"a hub token with the scope {ACCESS_SCOPE} is needed (your server's JUPYTERHUB_API_TOKEN)",
            )
        return model

    def may_collect(self, model: dict[str, Any]) -> bool:
        return COLLECT_SCOPE in set(model.get("scopes") or ())

    def names(self, quiz: str, user: str | None = None) -> None:
        for what, value in (("quiz id", quiz), ("user name", user)):
            if value is not None and not SAFE.match(value):
                raise web.HTTPError(
                    400,
                    f"this {what} cannot name a file (1-64 letters, digits, '.', '_', '@', '-'; "
                    f"got {value[:70]!r})",
                )


class SubmitHandler(_Api):
    """``PUT .../api/submissions/<quiz>``: the caller's own file; ``GET``: every file of the quiz (collectors)."""

    def put(self, quiz: str) -> None:
        model = self.who()
        self.names(quiz)
        if model.get("kind", "user") != "user":
            raise web.HTTPError(403, "only a hub user submits (a service has no submission)")
        user = model["name"]
        self.names(quiz, user)
        data = self.request.body
        if len(data) > MAX_BYTES:
            raise web.HTTPError(413, f"a submission is at most {MAX_BYTES} bytes (got {len(data)})")
        try:
            parsed = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise web.HTTPError(400, "a submission is a JSON object; this is not JSON") from None
        if not isinstance(parsed, dict):
            raise web.HTTPError(400, "a submission is a JSON object")
        _store(self.root, quiz, user, data)
        self.set_status(201)
        self.finish({"quiz": quiz, "user": user, "bytes": len(data)})

    def get(self, quiz: str) -> None:
        model = self.who()
        self.names(quiz)
        if not self.may_collect(model):
            raise web.HTTPError(403, f"listing every learner's file needs the scope {COLLECT_SCOPE}")
        files = {}
        folder = self.root / quiz
        if folder.is_dir():
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                name = entry.name
                if not (name.endswith(".json") and entry.is_file(follow_symlinks=False)):
                    continue
                info = entry.stat(follow_symlinks=False)
                stamp = datetime.datetime.fromtimestamp(info.st_mtime, datetime.timezone.utc)  # noqa: UP017
                files[name[: -len(".json")]] = {"bytes": info.st_size, "received": stamp.isoformat()}
        self.finish({"quiz": quiz, "files": files})


class FileHandler(_Api):
    """``GET .../api/submissions/<quiz>/<user>``: the file's bytes, for its learner or a collector."""

    def get(self, quiz: str, user: str) -> None:
        model = self.who()
        self.names(quiz, user)
        if not (self.may_collect(model) or (model.get("kind", "user") == "user" and model["name"] == user)):
            raise web.HTTPError(403, f"reading another learner's file needs the scope {COLLECT_SCOPE}")
        path = self.root / quiz / f"{user}.json"
        try:
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        except OSError:
            data = None
        if data is None:
            raise web.HTTPError(404, f"no submission of quiz {quiz!r} by {user!r}")
        self.set_header("Content-Type", "application/json")
        self.finish(data)


def make_app(root: Path, prefix: str) -> web.Application:
    api = url_path_join(prefix, "api/submissions")
    return web.Application(
        [
            (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
            (api + r"/([^/]+)", SubmitHandler, {"root": root}),
            (api + r"/([^/]+)/([^/]+)", FileHandler, {"root": root}),
        ],
        cookie_secret=secrets.token_bytes(32),  # only the OAuth cookie of a browser uses it
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The course's submissions service for JupyterHub.")
    parser.add_argument(
        "--root",
        default=os.environ.get(ROOT_ENV),
        help=f"the folder that keeps the files (default: ${ROOT_ENV}); made 0700",
    )
    args = parser.parse_args(argv)
    if not args.root:
        parser.error(f"give --root or set {ROOT_ENV}: the folder (its own volume) that keeps the submissions")
    root = Path(args.root).resolve()
    root.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    try:
        os.chmod(root, FOLDER_MODE)
    except OSError as e:  # a volume's root owned by another user: each quiz's folder is still 0700
        print(f"{NAME}: {root} stays mode {oct(root.stat().st_mode & 0o777)} ({e.strerror})", flush=True)
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", f"/services/{NAME}/")
    url = os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101")
    where = urlparse(url)
    # A literal address (the hub on one machine: 127.0.0.1) is listened on; a name (Kubernetes'
    # http://hub:10101 names the hub's Service, not an address of this pod) means every interface.
    try:
        host = str(ipaddress.ip_address(where.hostname or ""))
    except ValueError:
        host = ""
    # A body over twice a submission's size is cut off by tornado itself; up to it, a 413 says why.
    server = httpserver.HTTPServer(make_app(root, prefix), max_body_size=2 * MAX_BYTES)
    server.listen(where.port or 80, host)
    ioloop.IOLoop.current().start()


if __name__ == "__main__":
    main()
