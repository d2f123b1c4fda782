"""A real JupyterHub on 127.0.0.1 for the tests: start it, talk to it as a browser would, stop everything.

``running_hub(folder, course_root)`` starts JupyterHub (pip) with
configurable-http-proxy (npm), the DummyAuthenticator and the
SimpleLocalProcessSpawner: every learner's server runs as this Unix user,
each with a home of its own (``<folder>/homes/<name>``). Two services hold
the tokens: ``teacher`` (creates users, starts their servers, makes each
learner a token of their own), ``collector`` (the scopes ``course quiz
collect`` needs, and no more) and ``lister`` (those without
``access:servers``). ``Kernel`` runs code in a learner's server
through the proxy as JupyterLab does: a kernel started through the server's
REST API, code sent over its websocket.

Everything it starts (the hub, the proxy, each server and its kernels) is
stopped when the ``with`` block ends: SIGTERM to what is still running,
SIGKILL to what is left after a bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import requests
import websocket

START_S = 60  # the hub, or one learner's server, up within this (a busy 2-core machine: seconds)
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
    teacher_token: str
    collector_token: str  # the scopes `course quiz collect` needs
    lister_token: str  # the same without access:servers
    log: Path

    def api(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"token {token or self.teacher_token}"}
        return requests.request(
            method, f"{self.url}/hub/api{path}", headers=headers, timeout=CALL_S, **kwargs
        )

    def home(self, name: str) -> Path:
        return self.folder / "homes" / name

    def add_learners(self, *names: str) -> dict[str, str]:
        """Create each user, start their servers together, return a token of each one's own (their browser's)."""
        tokens = {}
        for name in names:
            r = self.api("POST", f"/users/{name}")
            if r.status_code not in (201, 409):
                raise HubError(f"creating user {name}: {r.status_code} {r.text[:300]}")
            r = self.api("POST", f"/users/{name}/tokens", json={"note": "the test's browser"})
            if r.status_code != 201:
                raise HubError(f"a token for {name}: {r.status_code} {r.text[:300]}")
            tokens[name] = token = str(r.json()["token"])
            r = self.api("POST", f"/users/{name}/server", token=token)
            if r.status_code not in (201, 202):
                raise HubError(f"starting {name}'s server: {r.status_code} {r.text[:300]}")
        deadline = time.monotonic() + START_S
        waiting = set(names)
        while waiting:
            for name in sorted(waiting):
                model = self.api("GET", f"/users/{name}").json()
                if model.get("server") and not model.get("pending"):
                    waiting.discard(name)
            if waiting and time.monotonic() > deadline:
                raise HubError(
                    f"servers not up within {START_S} s: {sorted(waiting)}; the hub's log: {self.log}"
                )
            time.sleep(0.3 if waiting else 0)
        return tokens


def put_file(hub: Hub, user: str, token: str, path: str, content: str, fmt: str = "text") -> None:
    """Write ``path`` in ``user``'s server through the contents API, as JupyterLab saves a file."""
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
            msg = json.loads(self.ws.recv())
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
import sys
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
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {homes!r} + "/{{username}}"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.args = {args!r}  # root (a CI container) must say so to Jupyter Server
c.Spawner.start_timeout = {start_s}
c.Spawner.http_timeout = {start_s}
c.Spawner.environment = {environment!r}
# The spawn API answers 202 at once and the test polls the user's model. (With the default
# 10 s wait, a spawn that failed during it answered a bare 500: InvalidStateError in
# spawn_single_user, JupyterHub 6.1.1, instead of the spawn's own error.)
c.JupyterHub.tornado_settings = {{"slow_spawn_timeout": 0}}
c.JupyterHub.services = [
    {{"name": "teacher", "api_token": {teacher!r}}},
    {{"name": "collector", "api_token": {collector!r}}},
    {{"name": "lister", "api_token": {lister!r}}},
]
c.JupyterHub.load_roles = [
    {{"name": "teacher", "scopes": ["admin:users", "admin:servers", "tokens"], "services": ["teacher"]}},
    # What `course quiz collect` needs (content/quizzes/README.md): the users and their
    # servers, and access to those servers' files.
    {{
        "name": "collector",
        "scopes": ["list:users", "read:users:name", "read:servers", "access:servers"],
        "services": ["collector"],
    }},
    # The same without access:servers: it sees the servers but may not open them.
    {{"name": "lister", "scopes": ["list:users", "read:users:name", "read:servers"], "services": ["lister"]}},
]
"""


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
def running_hub(folder: Path, environment: dict[str, str]) -> Iterator[Hub]:
    """A hub on 127.0.0.1 serving from ``folder``; ``environment`` goes to every learner's server."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "homes").mkdir(exist_ok=True)
    port, hub_port, proxy_api_port = _free_port(), _free_port(), _free_port()
    teacher, collector, lister = (secrets.token_hex(16) for _ in range(3))
    config = folder / "jupyterhub_config.py"
    config.write_text(
        _CONFIG.format(
            port=port,
            hub_port=hub_port,
            proxy_api_port=proxy_api_port,
            pid_file=str(folder / "proxy.pid"),
            folder=folder,
            cookie=str(folder / "cookie_secret"),
            homes=str(folder / "homes"),
            start_s=START_S,
            args=["--allow-root"] if os.geteuid() == 0 else [],
            environment=environment,
            teacher=teacher,
            collector=collector,
            lister=lister,
        )
    )
    log = folder / "jupyterhub.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTERHUB_")}
    with open(log, "wb") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=folder,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    hub = Hub(f"http://127.0.0.1:{port}", folder, teacher, collector, lister, log)
    try:
        deadline = time.monotonic() + START_S
        while True:
            if proc.poll() is not None:
                raise HubError(f"JupyterHub exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
            with contextlib.suppress(requests.RequestException):
                if hub.api("GET", "/").status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise HubError(f"JupyterHub did not answer within {START_S} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield hub
    finally:
        # Everything it started: the proxy, the servers and their kernels (each in a session of
        # its own, so a signal to the hub's group would miss them), then the hub itself.
        try:
            family = psutil.Process(proc.pid).children(recursive=True)
        except psutil.Error:
            family = []
        _stop([psutil.Process(proc.pid)] if proc.poll() is None else [])
        _stop([p for p in family if p.is_running()])
        proc.wait(timeout=10)
