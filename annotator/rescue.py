"""The last resort for decisions that cannot reach the database before the annotation or adjudication screen closes.

The screen keeps a decision it could not write (another program holds the file's write lock) and retries it; a quit
(`q`, SIGHUP when the terminal closes, SIGTERM) waits for that write. Only when the screen ends without it (the wait
for the lock passed its limit, annotator.saving.QUIT_SAVE_LIMIT; ctrl+c; a crash) are the rows kept here:
a JSON-lines file written whole (exclusive create, fsync) beside the database, else in the home folder, else in the
temporary folder, and its path said on stderr. No Textual here.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from storage.models import AnnotationIn, Event
from storage.textfile import read_text

RESCUE_INFIX = ".unsaved-"  # prefval.db -> prefval.db.unsaved-20261201T141502Z-4242.jsonl


def rescue_path(db_path: str, folder: Path | None = None, n: int = 0) -> Path:
    """Where a rescue file for the database at db_path goes: its folder (or `folder`), named after the database,
    the UTC time and the process id, so that two screens never write the same file; n > 0: the n-th other name
    of that second (`-2` ... before `.jsonl`), for a process that keeps a second file within the same second."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = Path(db_path)
    more = f"-{n + 1}" if n else ""
    return (folder or base.resolve().parent) / f"{base.name}{RESCUE_INFIX}{stamp}-{os.getpid()}{more}.jsonl"


def write_rescue(db_path: str, rows: list[tuple[AnnotationIn, str]], events: list[Event],
                 adjudications: Iterable[dict] = ()) -> Path:
    """Write the annotation rows (each with the id it was to have), adjudication rows and events that were NOT saved
    in the database at db_path to a new rescue file, one JSON object a line: {"table": "annotations", "row":
    AnnotationIn fields and its "id"}, {"table": "adjudications", "row": the adjudication's fields (id, study_id,
    unit_id, adjudicator_id, kind, answer, reason)} or {"table": "events", "row": Event fields}, preceded by {"table": "meta", "database": absolute path, "written_at": ISO time}. The file is created
    exclusively, written, flushed and fsynced (and its folder fsynced) before this returns. Tries the database's
    folder, then the home folder, then the temporary folder; a second file of the same process within the same
    second (a quit replacing the copy it kept while waiting) gets the next name in the same folder (it went to the
    home folder: the quit test found no file beside the database when both fell in one second). Returns the path; raises OSError when none of them
    can be written."""
    import tempfile

    lines = [json.dumps({"table": "meta", "database": os.path.abspath(db_path),
                         "written_at": _dt.datetime.now(_dt.timezone.utc).isoformat()}, ensure_ascii=False)]
    lines += [json.dumps({"table": "annotations", "row": {"id": rid, **r.model_dump()}}, ensure_ascii=False)
              for r, rid in rows]
    lines += [json.dumps({"table": "adjudications", "row": dict(a)}, ensure_ascii=False) for a in adjudications]
    lines += [json.dumps({"table": "events", "row": e.model_dump()}, ensure_ascii=False) for e in events]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    error: OSError | None = None
    for folder in (None, Path.home(), Path(tempfile.gettempdir())):
        fd = -1
        for n in range(100):  # a name of this second already taken (the file it replaces): the next one, same folder
            path = rescue_path(db_path, folder, n)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                break
            except FileExistsError as exc:
                error = exc
            except OSError as exc:
                error = exc
                break
        if fd < 0:
            continue
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError:  # a folder that cannot be opened for fsync (some file systems): the file itself is synced
            pass
        return path
    assert error is not None
    raise error


def read_rescue(path: str | Path) -> tuple[list[tuple[AnnotationIn, str]], list[Event]]:
    """The rows (each with its id) and events of a rescue file (write_rescue), as models."""
    rows, events = [], []
    for line in read_text(path).splitlines():
        rec = json.loads(line)
        if rec["table"] == "annotations":
            row = dict(rec["row"])
            rid = row.pop("id")
            rows.append((AnnotationIn(**row), rid))
        elif rec["table"] == "events":
            events.append(Event(**rec["row"]))
    return rows, events


def read_rescued_adjudications(path: str | Path) -> list[dict]:
    """The adjudication rows of a rescue file (write_rescue), as written: dicts with id, study_id, unit_id,
    adjudicator_id, kind, answer (a dict or None) and reason."""
    return [dict(json.loads(line)["row"]) for line in read_text(path).splitlines()
            if json.loads(line)["table"] == "adjudications"]


@dataclass
class RescueFile:
    """A rescue file as read (read_rescue_file): the database it was kept for (absolute path), the annotation rows
    with their ids, the adjudication rows (dicts) and the events."""

    database: str
    rows: list[tuple[AnnotationIn, str]]
    adjudications: list[dict]
    events: list[Event]


def read_rescue_file(path: str | Path) -> RescueFile:
    """Read a rescue file whole. Raises PrefvalError naming the file, the line and what is wrong (not JSON, no
    "table", a row that is no annotation, adjudication or event, no meta line naming the database)."""
    from pydantic import ValidationError

    from storage.errors import PrefvalError

    database, rows, adjudications, events = None, [], [], []
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            table = rec["table"]
            if table == "meta":
                database = str(rec["database"])
            elif table == "annotations":
                row = dict(rec["row"])
                rid = str(row.pop("id"))
                rows.append((AnnotationIn(**row), rid))
            elif table == "adjudications":
                a = dict(rec["row"])
                for key in ("id", "study_id", "unit_id", "adjudicator_id", "kind"):
                    if not isinstance(a.get(key), str):
                        raise KeyError(key)
                adjudications.append(a)
            elif table == "events":
                events.append(Event(**rec["row"]))
            else:
                raise PrefvalError(f"{path}: line {n}: field 'table': unknown table {table!r}")
        except json.JSONDecodeError as exc:
            raise PrefvalError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        except (KeyError, TypeError) as exc:
            raise PrefvalError(f"{path}: line {n}: field {str(exc).strip(chr(39))!r}: missing or not of its "
                               "type") from None
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err.get("loc", ())) or "(row)"
            raise PrefvalError(f"{path}: line {n}: field {where!r}: {err.get('msg')}") from None
    if database is None:
        raise PrefvalError(f"{path}: line 1: field 'database': no meta line naming the database it was kept for "
                           "(not a prefval rescue file?)")
    return RescueFile(database, rows, adjudications, events)


def rescue_files_of(db_path: str) -> list[Path]:
    """The rescue files kept beside the database at db_path (write_rescue's first choice of folder), oldest first
    by name; [] for an in-memory database."""
    if db_path == ":memory:":
        return []
    base = Path(db_path).resolve()
    return sorted(base.parent.glob(base.name + RESCUE_INFIX + "*.jsonl"))
