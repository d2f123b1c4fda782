"""Where a recording came from: the one provenance record of every evidence file.

Run evidence (``evidence/<model>/<lesson>.json``) and benchmark evidence
(``evidence/<model>/bench/<lesson>.json``; the layout is ``course.kernel.evidence``'s) both say when, by which command, on
which device, driver and library versions. This record is written and read
in one place; the files keep their flat layout (the fields sit at the top
level of each JSON object).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .. import _data
from ..errors import CourseError
from .gate import Machine


def now() -> str:
    """The current time in UTC, ISO 8601 to the second: every recording's timestamp."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class Provenance:
    recorded_at: str  # ISO 8601, UTC
    command: str
    device: str
    compute_capability: str
    sm_count: int
    versions: dict[str, str | None]

    @classmethod
    def of(cls, machine: Machine, command: str) -> Provenance:
        """This machine's provenance, now; only a machine with a GPU records anything."""
        if machine.gpu is None:
            raise CourseError("evidence is written only from a run on a real GPU, and this machine has none")
        return cls(
            now(), command, machine.gpu.name, machine.gpu.cc_str, machine.gpu.sm_count, dict(machine.versions)
        )

    @property
    def driver(self) -> str | None:
        """The kernel driver's version, else the CUDA version the driver supports."""
        v = self.versions
        return v.get("driver") or (f"CUDA {v['driver (CUDA)']}" if v.get("driver (CUDA)") else None)

    def fields(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, path: Path | None, where: str) -> Provenance:
        return cls(
            recorded_at=_data.get(data, "recorded_at", str, path, where),
            command=_data.get(data, "command", str, path, where),
            device=_data.get(data, "device", str, path, where),
            compute_capability=_data.get(data, "compute_capability", str, path, where),
            sm_count=_data.get(data, "sm_count", int, path, where),
            versions=_data.text_map(data, "versions", path, where),
        )

    def summary(self) -> str:
        v = self.versions
        return (
            f"{self.device} (compute capability {self.compute_capability}, {self.sm_count} SMs), driver "
            f"{self.driver or 'unknown'}, CuPy {v.get('cupy')}, NVRTC {v.get('nvrtc')}, recorded "
            f"{self.recorded_at[:10]}"
        )


class Provenanced:
    """A recording that carries a ``provenance``: its fields read as the recording's own."""

    provenance: Provenance

    @property
    def recorded_at(self) -> str:
        return self.provenance.recorded_at

    @property
    def command(self) -> str:
        return self.provenance.command

    @property
    def device(self) -> str:
        return self.provenance.device

    @property
    def compute_capability(self) -> str:
        return self.provenance.compute_capability

    @property
    def sm_count(self) -> int:
        return self.provenance.sm_count

    @property
    def versions(self) -> dict[str, str | None]:
        return self.provenance.versions

    @property
    def driver(self) -> str | None:
        return self.provenance.driver
