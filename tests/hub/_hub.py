"""A real JupyterHub on 127.0.0.1 for the tests: start it, talk to it as a browser would, stop everything.

``running_hub(folder, environment, learners)`` starts JupyterHub (pip) with
configurable-http-proxy (npm), the DummyAuthenticator and the
LocalProcessSpawner: each name in ``learners`` is a real Unix user made for
the test (``useradd``; the test runs as root, as CI does), with a private
home (0700, their own) in a folder of its own, and their server runs as
that user, as on The Littlest JupyterHub. The hub runs the course's
submissions service (``course.quiz.hub_service``, a managed service on its
own folder) and gives every user's server token the scope to reach it
(``Spawner.server_token_scopes``), and every server ``COURSE_SUBMIT_URL``.
Services hold the instructor's tokens: ``teacher`` (creates users and
groups, starts and stops servers, makes tokens), ``collector`` (the scopes
``course quiz collect`` needs from the service), ``server-collector`` (the
scopes ``quiz collect --from-servers`` needs: no ``access:servers``) and
``lister`` (the users and servers, nothing else). ``Kernel`` runs code in a
learner's server through the proxy as JupyterLab does: a kernel started
through the server's REST API, code sent over its websocket (text frames
and the binary frames of messages with buffers, such as widgets').

Everything it starts (the hub, the proxy, the service, each server and its
kernels) is stopped when the ``with`` block ends: SIGTERM to what is still
running, SIGKILL to what is left after a bound; the Unix users and their
homes are removed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import requests
import websocket

ROOT = Path(__file__).resolve().parents[2]
START_S = 60  # the hub, or one learner's server, up within this (a busy 2-core machine: seconds)
SERVICE = "hopper-submit"  # course.quiz.hub_service.NAME
CALL_S = 30  # one HTTP call
RUN_S = 90  # one cell


class HubError(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Hub:
    url: str  # the proxy's public URL, what a browser opens
    folder: Path
    homes: Path  # each learner's home: homes/<name>, 0700, theirs
    tokens: dict[str, str]  # the instructor's services' tokens, by service name
    log: Path
    submissions: Path  # the service's own folder

    def api(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"token {token or self.tokens['teacher']}"}
        return requests.request(
            method, f"{self.url}/hub/api{path}", headers=headers, timeout=CALL_S, **kwargs
        )

    def home(self, name: str) -> Path:
        return self.homes / name

    @property
    def service_url(self) -> str:
        return f"{self.url}/services/{SERVICE}/"

    def token_for(self, name: str, scopes: Sequence[str] | None = None) -> str:
        """A new token of ``name``'s own (with ``scopes``, else all the user holds): their browser's."""
        body: dict[str, Any] = {"note": "the test's browser"}
        if scopes is not None:
            body["scopes"] = list(scopes)
        r = self.api("POST", f"/users/{name}/tokens", json=body)
        if r.status_code != 201:
            raise HubError(f"a token for {name}: {r.status_code} {r.text[:300]}")
        return str(r.json()["token"])

    def add_users(self, *names: str) -> None:
        """Hub users in one call (no Unix account: they never start a server)."""
        r = self.api("POST", "/users", json={"usernames": list(names)})
        if r.status_code not in (201, 409):
            raise HubError(f"creating {len(names)} users: {r.status_code} {r.text[:300]}")

    def add_learners(self, *names: str) -> dict[str, str]:
        """Create each user, start their servers together, return a token of each one's own (their browser's)."""
        tokens = {}
        for name in names:
            r = self.api("POST", f"/users/{name}")
            if r.status_code not in (201, 409):
                raise HubError(f"creating user {name}: {r.status_code} {r.text[:300]}")
            tokens[name] = self.token_for(name)
        self.start(*names, tokens=tokens)
        return tokens

    def start(self, *names: str, tokens: dict[str, str]) -> None:
        for name in names:
            r = self.api("POST", f"/users/{name}/server", token=tokens[name])
            if r.status_code not in (201, 202):
                raise HubError(f"starting {name}'s server: {r.status_code} {r.text[:300]}")
        self._wait(names, up=True)

    def stop(self, *names: str) -> None:
        """Stop each server, as the hub's culler does after the idle time; wait until stopped."""
        for name in names:
            r = self.api("DELETE", f"/users/{name}/server")
            if r.status_code not in (202, 204):
                raise HubError(f"stopping {name}'s server: {r.status_code} {r.text[:300]}")
        self._wait(names, up=False)

    def _wait(self, names: Sequence[str], *, up: bool) -> None:
        deadline = time.monotonic() + START_S
        waiting = set(names)
        while waiting:
            for name in sorted(waiting):
                model = self.api("GET", f"/users/{name}").json()
                if bool(model.get("server")) == up and not model.get("pending"):
                    waiting.discard(name)
            if waiting and time.monotonic() > deadline:
                state = "up" if up else "stopped"
                raise HubError(
                    f"servers not {state} within {START_S} s: {sorted(waiting)}; the hub's log: {self.log}"
                )
            time.sleep(0.3 if waiting else 0)


def put_file(hub: Hub, user: str, token: str, path: str, content: str, fmt: str = "text") -> None:
    """Write ``path`` in ``user``'s server through the contents API, as JupyterLab saves a file."""
    parts = path.split("/")[:-1]
    for depth in range(1, len(parts) + 1):  # its folders first: the contents API makes no parents
        folder = "/".join(parts[:depth])
        r = requests.put(
            f"{hub.url}/user/{user}/api/contents/{folder}",
            json={"type": "directory"},
            headers={"Authorization": f"token {token}"},
            timeout=CALL_S,
        )
        if r.status_code not in (200, 201):
            raise HubError(f"making {folder} in {user}'s server: {r.status_code} {r.text[:300]}")
    kind = "notebook" if fmt == "json" else "file"
    body = {"type": kind, "format": fmt, "content": json.loads(content) if fmt == "json" else content}
    r = requests.put(
        f"{hub.url}/user/{user}/api/contents/{path}",
        json=body,
        headers={"Authorization": f"token {token}"},
        timeout=CALL_S,
    )
    if r.status_code not in (200, 201):
        raise HubError(f"writing {path} in {user}'s server: {r.status_code} {r.text[:300]}")


def decode_frame(frame: str | bytes) -> dict[str, Any]:
    """A kernel message from a websocket frame: JSON text, or Jupyter Server's binary frame.

    A message with buffers (a widget's, such as an image or an array) comes
    as a binary frame (``jupyter_server``'s ``serialize_binary_message``): a
    32-bit big-endian count of parts, an offset for each, then the message's
    JSON as the first part and the buffers after it.
    """
    if isinstance(frame, str):
        return dict(json.loads(frame))
    if len(frame) < 8:
        raise HubError(f"a binary frame of {len(frame)} bytes is too short for a message")
    (parts,) = struct.unpack("!I", frame[:4])
    if not 1 <= parts <= (len(frame) - 4) // 4:
        raise HubError(f"a binary frame says it has {parts} parts in {len(frame)} bytes")
    offsets = struct.unpack(f"!{parts}I", frame[4 : 4 + 4 * parts])
    end = offsets[1] if parts > 1 else len(frame)
    message = dict(json.loads(frame[offsets[0] : end]))
    message["buffers"] = [
        frame[offsets[i] : offsets[i + 1] if i + 1 < parts else len(frame)] for i in range(1, parts)
    ]
    return message


class Kernel:
    """A notebook's kernel in a learner's server, driven through the proxy as JupyterLab drives it.

    JupyterLab opens a notebook by reading it through the contents API and
    starting a session for its path (``POST /api/sessions``), then talks to
    the session's kernel over ``/api/kernels/<id>/channels``; so does this.
    """

    def __init__(self, hub: Hub, user: str, token: str, path: str):
        self.base = f"{hub.url}/user/{user}"
        self.headers = {"Authorization": f"token {token}"}
        r = requests.get(f"{self.base}/api/contents/{path}", headers=self.headers, timeout=CALL_S)
        if r.status_code != 200:
            raise HubError(f"opening {path} in {user}'s server: {r.status_code} {r.text[:300]}")
        self.notebook: dict[str, Any] = r.json()["content"]
        session = {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}
        r = requests.post(f"{self.base}/api/sessions", headers=self.headers, json=session, timeout=CALL_S)
        if r.status_code != 201:
            raise HubError(f"starting a kernel for {user}: {r.status_code} {r.text[:300]}")
        self.session_id = r.json()["id"]
        self.id = r.json()["kernel"]["id"]
        ws_url = self.base.replace("http://", "ws://", 1) + f"/api/kernels/{self.id}/channels"
        self.ws = websocket.create_connection(ws_url, header=[f"Authorization: token {token}"], timeout=RUN_S)
        self.session = uuid.uuid4().hex
        self.binary_frames = 0  # messages that came with buffers (a widget's), as binary frames

    def code_cells(self) -> list[str]:
        return ["".join(c["source"]) for c in self.notebook["cells"] if c["cell_type"] == "code"]

    def run(self, code: str) -> str:
        """Run ``code``; return its stdout and results as text; raise HubError with the traceback on error."""
        msg_id = uuid.uuid4().hex
        self.ws.send(
            json.dumps(
                {
                    "header": {
                        "msg_id": msg_id,
                        "username": "test",
                        "session": self.session,
                        "msg_type": "execute_request",
                        "version": "5.3",
                    },
                    "parent_header": {},
                    "metadata": {},
                    "content": {"code": textwrap.dedent(code), "silent": False, "store_history": False},
                    "channel": "shell",
                    "buffers": [],
                }
            )
        )
        out: list[str] = []
        error = None
        idle = replied = False
        deadline = time.monotonic() + RUN_S
        while not (idle and replied):
            if time.monotonic() > deadline:
                raise HubError(f"a cell did not finish within {RUN_S} s:\n{code}")
            frame = self.ws.recv()
            self.binary_frames += isinstance(frame, bytes)
            msg = decode_frame(frame)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                out.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                error = "\n".join(content["traceback"])
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
            elif kind == "execute_reply":
                replied = True
        if error is not None:
            raise HubError(f"the cell raised:\n{error}")
        return "".join(out)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        with contextlib.suppress(requests.RequestException):
            requests.delete(
                f"{self.base}/api/sessions/{self.session_id}", headers=self.headers, timeout=CALL_S
            )


_CONFIG = """\
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = {pid_file!r}
c.JupyterHub.db_url = "sqlite:///{folder}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = {cookie!r}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
# Each learner a Unix user of their own, their server run as them (TLJH's way; the hub is root).
c.JupyterHub.spawner_class = "localprocess"
c.LocalProcessSpawner.home_dir_template = {homes!r} + "/{{username}}"
c.Spawner.cmd = [{python!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.start_timeout = {start_s}
c.Spawner.http_timeout = {start_s}
c.Spawner.environment = {environment!r}
# The server's own token (JUPYTERHUB_API_TOKEN in the learner's kernel): the default server role's
# scopes and the submissions service; nothing of another user's (README, On JupyterHub).
c.Spawner.server_token_scopes = [
    "users:activity!user",
    "access:servers!server",
    "access:services!service={service}",
]
# The spawn API answers 202 at once and the test polls the user's model. (With the default
# 10 s wait, a spawn that failed during it answered a bare 500: InvalidStateError in
# spawn_single_user, JupyterHub 6.1.1, instead of the spawn's own error.)
c.JupyterHub.tornado_settings = {{"slow_spawn_timeout": 0}}
c.JupyterHub.services = [
    {{"name": "teacher", "api_token": {teacher!r}}},
    {{"name": "collector", "api_token": {collector!r}}},
    {{"name": "server-collector", "api_token": {server_collector!r}}},
    {{"name": "lister", "api_token": {lister!r}}},
    {{
        "name": "{service}",
        "url": "http://127.0.0.1:{service_port}",
        "command": [{python!r}, "-m", "course.quiz.hub_service", "--root", {submissions!r}],
        "environment": {{"PYTHONPATH": {pythonpath!r}}},
        "oauth_no_confirm": True,
    }},
]
c.JupyterHub.custom_scopes = {{
    "custom:{service}:collect": {{"description": "Read every learner's submission in the submissions service"}},
}}
c.JupyterHub.load_roles = [
    {{"name": "teacher", "scopes": ["admin:users", "admin:servers", "admin:groups", "tokens"], "services": ["teacher"]}},
    # Every user may reach the submissions service (with their own name; it keeps them apart).
    {{"name": "user", "scopes": ["self", "access:services!service={service}"]}},
    # What `course quiz collect` needs (README, On JupyterHub): the learners, the service.
    {{
        "name": "collector",
        "scopes": [
            "list:users", "read:users:name", "read:groups",
            "access:services!service={service}", "custom:{service}:collect",
        ],
        "services": ["collector"],
    }},
    # `quiz collect --from-servers`: it makes each learner a token for their own server only.
    {{
        "name": "server-collector",
        "scopes": ["list:users", "read:users:name", "read:servers", "tokens"],
        "services": ["server-collector"],
    }},
    # The users and their servers, nothing else.
    {{"name": "lister", "scopes": ["list:users", "read:users:name", "read:servers"], "services": ["lister"]}},
]
"""


def _as_nobody(python: str, pythonpath: str) -> bool:
    """Whether a user who is not root can start ``python`` and import what a learner's server needs."""
    try:
        done = subprocess.run(
            [python, "-c", "import jupyterhub.singleuser, ipykernel, course"],
            env={"PYTHONPATH": pythonpath, "HOME": "/tmp"},
            user=pwd.getpwnam("nobody").pw_uid,
            cwd="/",
            capture_output=True,
            timeout=60,
        )
    except (OSError, KeyError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _closed(path: Path) -> Path | None:
    """The first folder on the way to ``path`` that users other than its owner may not pass, or None."""
    path = Path(path).resolve()
    for folder in reversed([path, *path.parents]):
        if folder.is_dir() and not folder.stat().st_mode & 0o001:
            return folder
    return None


@functools.lru_cache(maxsize=1)
def learner_python() -> tuple[str, str] | None:
    """The Python a learner's server runs (and its PYTHONPATH), reachable by a user who is not root.

    This interpreter if they may run it; else the system's Python of the same
    version with this environment's packages on the path (a Python kept in
    root's home, as pyenv keeps it, is out of other users' reach).
    """
    here = [str(ROOT)]
    if _as_nobody(sys.executable, str(ROOT)):
        return sys.executable, str(ROOT)
    packages = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    pythonpath = os.pathsep.join(here + packages)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if os.access(candidate, os.X_OK) and _as_nobody(candidate, pythonpath):
            return candidate, pythonpath
    return None


def missing() -> str | None:
    """Why a hub cannot run here, or None."""
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "jupyterhub is not installed (pip install jupyterhub; the test extra has it)"
    if shutil.which("configurable-http-proxy") is None:
        return (
            "configurable-http-proxy is not on PATH (apt-get install nodejs npm; "
            "npm install -g configurable-http-proxy)"
        )
    if os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("userdel") is None:
        return "the learners are real Unix users: the hub test runs as root with useradd (as CI does)"
    if learner_python() is None:
        closed = sorted(
            {str(c) for p in (sys.executable, ROOT, sysconfig.get_paths()["purelib"]) if (c := _closed(p))}
        )
        return (
            f"no Python that a user other than root may run has this environment's packages "
            f"({sys.executable} is out of their reach, and /usr/bin/python{sys.version_info.major}."
            f"{sys.version_info.minor} cannot import them); folders they may not pass: "
            f"{', '.join(closed) or 'none'} (the learners are real users: put the checkout and its "
            "virtualenv where others may read them)"
        )
    return None


def _stop(processes: list[psutil.Process]) -> None:
    for p in processes:
        with contextlib.suppress(psutil.Error):
            p.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(processes, timeout=15)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=5)


@contextlib.contextmanager
def unix_users(homes: Path, names: Sequence[str]) -> Iterator[None]:
    """Each name a Unix user with a home of their own in ``homes``: 0700, theirs; removed afterwards."""
    made = []
    try:
        for name in names:
            home = homes / name
            subprocess.run(
                ["useradd", "--home-dir", str(home), "--no-create-home", "--shell", "/bin/sh", name],
                check=True,
                capture_output=True,
            )
            made.append(name)
            home.mkdir(mode=0o700)
            entry = pwd.getpwnam(name)
            os.chown(home, entry.pw_uid, entry.pw_gid)
            os.chmod(home, 0o700)
        yield
    finally:
        for name in made:
            subprocess.run(["userdel", name], capture_output=True)


@contextlib.contextmanager
def running_hub(folder: Path, environment: dict[str, str], learners: Sequence[str]) -> Iterator[Hub]:
    """A hub on 127.0.0.1 serving from ``folder``; ``environment`` goes to every learner's server."""
    found = learner_python()
    if found is None:
        raise HubError(missing() or "no Python for the learners")
    python, pythonpath = found
    folder.mkdir(parents=True, exist_ok=True)
    # The homes' folder: others may pass through it (0755), each home in it is 0700.
    homes = Path(tempfile.mkdtemp(prefix="course-hub-homes-"))
    os.chmod(homes, 0o755)
    port, hub_port, proxy_api_port, service_port = (_free_port() for _ in range(4))
    tokens = {name: secrets.token_hex(16) for name in ("teacher", "collector", "server-collector", "lister")}
    submissions = folder / "submissions"
    config = folder / "jupyterhub_config.py"
    config.write_text(
        _CONFIG.format(
            port=port,
            hub_port=hub_port,
            proxy_api_port=proxy_api_port,
            service_port=service_port,
            pid_file=str(folder / "proxy.pid"),
            folder=folder,
            cookie=str(folder / "cookie_secret"),
            homes=str(homes),
            python=python,
            pythonpath=pythonpath,
            start_s=START_S,
            environment={
                **environment,
                "PYTHONPATH": pythonpath,
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "COURSE_SUBMIT_URL": f"http://127.0.0.1:{port}/services/{SERVICE}/",
            },
            service=SERVICE,
            submissions=str(submissions),
            teacher=tokens["teacher"],
            collector=tokens["collector"],
            server_collector=tokens["server-collector"],
            lister=tokens["lister"],
        )
    )
    log = folder / "jupyterhub.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTERHUB_")}
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, homes, ignore_errors=True)
        stack.enter_context(unix_users(homes, learners))
        with open(log, "wb") as log_file:
            proc = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(config)],
                cwd=folder,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        hub = Hub(f"http://127.0.0.1:{port}", folder, homes, tokens, log, submissions)
        try:
            deadline = time.monotonic() + START_S
            while True:
                if proc.poll() is not None:
                    raise HubError(f"JupyterHub exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
                with contextlib.suppress(requests.RequestException):
                    if hub.api("GET", "/").status_code == 200 and _service_up(hub):
                        break
                if time.monotonic() > deadline:
                    raise HubError(
                        f"JupyterHub did not answer within {START_S} s:\n{log.read_text()[-3000:]}"
                    )
                time.sleep(0.3)
            yield hub
        finally:
            # Everything it started: the proxy, the service, the servers and their kernels (each in a
            # session of its own, so a signal to the hub's group would miss them), then the hub itself.
            try:
                family = psutil.Process(proc.pid).children(recursive=True)
            except psutil.Error:
                family = []
            _stop([psutil.Process(proc.pid)] if proc.poll() is None else [])
            _stop([p for p in family if p.is_running()])
            proc.wait(timeout=10)


def _service_up(hub: Hub) -> bool:
    # Any answer from the service itself (a 403 without a user's token) means it listens.
    r = requests.get(f"{hub.service_url}api/submissions/x", timeout=CALL_S, allow_redirects=False)
    return r.status_code == 403
