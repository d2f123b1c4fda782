"""Edit notebook cells by id, keeping the file's JSON layout (indent 1, trailing newline).

    python tools/nbedit.py NOTEBOOK set CELL_ID FILE    # replace a cell's source with FILE's text
    python tools/nbedit.py NOTEBOOK delete CELL_ID
    python tools/nbedit.py NOTEBOOK insert AFTER_ID NEW_ID (code|markdown) FILE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _source(text: str) -> list[str]:
    lines = text.rstrip("\n").split("\n")
    return [line + "\n" for line in lines[:-1]] + [lines[-1]]


def main(argv: list[str]) -> int:
    path, action, *rest = argv
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = nb["cells"]
    index = {c["id"]: i for i, c in enumerate(cells)}
    if action == "set":
        cell_id, file = rest
        cells[index[cell_id]]["source"] = _source(Path(file).read_text(encoding="utf-8"))
    elif action == "delete":
        del cells[index[rest[0]]]
    elif action == "insert":
        after, new_id, kind, file = rest
        cell = {"cell_type": kind, "id": new_id, "metadata": {}, "source": _source(Path(file).read_text())}
        if kind == "code":
            cell.update({"execution_count": None, "outputs": []})
            cell = {k: cell[k] for k in ("cell_type", "execution_count", "id", "metadata", "outputs", "source")}
        cells.insert(index[after] + 1, cell)
    else:
        raise SystemExit(f"unknown action {action!r}")
    Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
