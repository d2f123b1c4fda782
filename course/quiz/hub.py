"""Who submits, and where to: the learner's own machine, or a JupyterHub server.

Off a hub nothing is special: Submit writes as the page's learner id into
``submissions_dir`` (default ``submissions/`` in the course checkout).

On a hub (``JUPYTERHUB_USER`` set in the kernel's environment: a JupyterHub
single-user server sets it) the hub has signed the learner in, so:

- Submit writes as that user, never as an id a page passes
  (``show_quiz(..., learner_id="bob")`` in alice's kernel submits as alice
  and says that the argument was ignored);
- it writes into the learner's own workspace,
  ``<workspace>/submissions/<quiz>/<user>.json`` (``course.tryout.workspace``:
  ``~/hopper-course-work`` in their home), never into a folder shared with
  other learners (a ``submissions_dir`` argument is ignored, and said so; a
  ``COURSE_WORKSPACE`` outside the home is refused: Submit saves nothing and
  says why);
- where the hub runs the course's submissions service
  (``course.quiz.hub_service``; ``COURSE_SUBMIT_URL`` in the server's
  environment names it), Submit also sends the file there with the
  learner's own hub token (``JUPYTERHUB_API_TOKEN``, which reaches only the
  learner's own server and that service), and the service keeps it under
  the name the hub authenticated; ``course quiz collect`` reads it there,
  whether or not the learner's server runs (``send_to_service``);
- without the service, the instructor takes the files from each learner's
  server through the hub (``course quiz collect --from-servers``) and saves
  each under the name the hub authenticated.

The kernel's environment is the learner's to change, so none of this is a
proof of identity: what makes it hold is the collect step, which names a
file by the hub user whose server held it, and the grader, which skips a
file whose ``learner`` field names someone else (``submission.check_place``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import requests

from .. import _paths
from ..errors import CourseError
from ..tryout.workspace import workspace_root
from .submission import validate_learner_id

__all__ = [
    "HUB_USER_ENV",
    "SUBMISSIONS",
    "SUBMIT_URL_ENV",
    "SubmitPlace",
    "hub_user",
    "send_to_service",
    "submit_place",
]

HUB_USER_ENV = "JUPYTERHUB_USER"
SUBMIT_URL_ENV = (
    "COURSE_SUBMIT_URL"  # the submissions service's URL, set by the hub (course.quiz.hub_service)
)
TOKEN_ENV = "JUPYTERHUB_API_TOKEN"  # the learner's own server token, set by JupyterHub
SEND_TIMEOUT_S = 30
SUBMISSIONS = "submissions"  # the folder in the workspace that Submit writes into on a hub
HUB_ORIGIN = "your JupyterHub user name"


def hub_user() -> str | None:
    """The JupyterHub user this kernel's server runs for; None off a hub."""
    return os.environ.get(HUB_USER_ENV) or None


@dataclass(frozen=True)
class SubmitPlace:
    """Who a quiz submits as and into which folder, with what the learner is told about it."""

    learner: str | None  # None: Submit saves nothing (``note`` says why, if anything)
    folder: Path
    origin: str | None  # where the id came from, in words; None: the caller's own account of it
    note: str = ""  # plain text: an argument that was ignored, or why Submit cannot save
    hub: bool = False  # on JupyterHub: the instructor collects the file (no upload)
    service: str | None = None  # the submissions service's URL: Submit sends the file there too


def submit_place(learner_id: str | None, submissions_dir: str | os.PathLike[str] | None) -> SubmitPlace:
    """Where Submit writes: as given off a hub; on a hub, as the hub's user into their workspace."""
    user = hub_user()
    if user is None:
        folder = Path(submissions_dir) if submissions_dir is not None else _paths.repo_root() / SUBMISSIONS
        return SubmitPlace(learner_id, folder, None)
    folder = workspace_root() / SUBMISSIONS
    notes = []
    try:
        validate_learner_id(user)
    except CourseError:
        return SubmitPlace(
            None,
            folder,
            HUB_ORIGIN,
            f"your JupyterHub user name {user[:80]!r} cannot name a submission file (letters, digits, "
            "'.', '_', '@' and '-' only), so Submit cannot save your answers: tell your instructor",
            hub=True,
        )
    home = Path.home().resolve()
    if not folder.is_relative_to(home):
        # A folder outside the home may be shared with other learners, and the instructor's
        # collect step reads each learner's server, whose files are their home.
        return SubmitPlace(
            None,
            folder,
            HUB_ORIGIN,
            f"your answers would be saved in {folder}, outside your home folder {home} (COURSE_WORKSPACE "
            "says so), where your instructor does not collect them, so Submit cannot save them: "
            "tell your instructor",
            hub=True,
        )
    if learner_id is not None and learner_id != user:
        notes.append(
            f"learner_id={str(learner_id)[:80]!r} is ignored: on JupyterHub you submit as the user the hub "
            f"signed in, {user}"
        )
    if submissions_dir is not None and Path(submissions_dir).expanduser().resolve() != folder:
        notes.append(
            "submissions_dir is ignored: on JupyterHub your answers are saved in your own "
            f"workspace, {folder}"
        )
    service = os.environ.get(SUBMIT_URL_ENV) or None
    return SubmitPlace(user, folder, HUB_ORIGIN, " ".join(notes), hub=True, service=service)


def send_to_service(service: str, quiz: str, data: bytes) -> str | None:
    """Send a submission to the hub's submissions service as this server's user; None when kept, else why not.

    The token is the server's own (``JUPYTERHUB_API_TOKEN``): the service asks
    the hub whose it is and stores the file under that name, so nothing the
    kernel says about who submits counts there.
    """
    token = os.environ.get(TOKEN_ENV, "")
    if not token:
        return f"this server has no {TOKEN_ENV}, so the hub cannot say who you are"
    url = service.rstrip("/") + "/api/submissions/" + quote(quiz, safe="")
    try:
        r = requests.put(
            url,
            data=data,
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
            timeout=SEND_TIMEOUT_S,
            allow_redirects=False,
        )
    except requests.RequestException as e:
        return f"the submissions service at {service} did not answer ({type(e).__name__})"
    if r.status_code == 201:
        return None
    try:
        said = r.json().get("message", "")
    except (ValueError, AttributeError):
        said = ""
    return f"the submissions service answered {r.status_code}" + (f": {str(said)[:200]}" if said else "")
