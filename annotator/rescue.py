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
from typing import Any, Iterable

from storage.models import AnnotationIn, Event
from storage.textfile import read_text

RESCUE_INFIX = ".unsaved-"  # prefval.db -> prefval.db.unsaved-20261201T141502Z-4242.jsonl
#: the meta line's "format" from which every row carries its sha256 (files before it have no "format")
CHECKSUMMED = 2


def rescue_path(db_path: str, folder: Path | None = None, n: int = 0) -> Path:
    """Where a rescue file for the database at db_path goes: its folder (or `folder`), named after the database,
    the UTC time and the process id, so that two screens never write the same file; n > 0: the n-th other name
    of that second (`-2` ... before `.jsonl`), for a process that keeps a second file within the same second."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = Path(db_path)
    more = f"-{n + 1}" if n else ""
    return (folder or base.resolve().parent) / f"{base.name}{RESCUE_INFIX}{stamp}-{os.getpid()}{more}.jsonl"


def row_checksum(row: dict) -> str:
    """The sha256 (hex) of a rescue file's row as canonical JSON (keys sorted, no spaces, UTF-8): written beside
    each row, so that `prefval recover` can tell a row changed by hand after the screen kept it (not a guard
    against someone who recomputes it)."""
    import hashlib

    text = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_rescue(db_path: str, rows: list[tuple], events: list[Event],
                 adjudications: Iterable[dict] = ()) -> Path:
    """Write the annotation rows, adjudication rows and events that were NOT saved in the database at db_path to a
    new rescue file, one JSON object a line: {"table": "annotations", "row": AnnotationIn fields, its "id" and
    "decided_at"}, {"table": "adjudications", "row": the adjudication's fields (id, study_id, unit_id,
    adjudicator_id, kind, answer, reason, decided_at)} or {"table": "events", "row": Event fields}, each with
    "sha256": row_checksum(row), preceded by
    {"table": "meta", "database": absolute path, "written_at": ISO time, "pid": the process keeping it, "format":
    CHECKSUMMED}. rows: (row, id) or (row, id, decided_at),
    decided_at the ISO time the key was pressed (what `prefval recover` gives the row; without it, the file's
    written_at). The file is created exclusively, written, flushed and fsynced (and its folder fsynced) before
    this returns. Tries the database's folder, then the home folder, then the temporary folder; a second file of
    the same process within the same second (a quit replacing the copy it kept while waiting) gets the next name in
    the same folder (it went to the home folder: the quit test found no file beside the database when both fell in
    one second). Returns the path; raises OSError when none of them can be written."""
    import tempfile

    lines = [json.dumps({"table": "meta", "database": os.path.abspath(db_path),
                         "written_at": _dt.datetime.now(_dt.timezone.utc).isoformat(), "pid": os.getpid(),
                         "format": CHECKSUMMED},
                        ensure_ascii=False)]
    records = [("annotations", {"id": rid, **r.model_dump(), **({"decided_at": at[0]} if at and at[0] else {})})
               for r, rid, *at in rows]
    records += [("adjudications", dict(a)) for a in adjudications]
    records += [("events", e.model_dump()) for e in events]
    lines += [json.dumps({"table": t, "row": row, "sha256": row_checksum(row)}, ensure_ascii=False)
              for t, row in records]
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
    """The annotation rows (each with its id) and events of a rescue file (read_rescue_file), as models."""
    kept = read_rescue_file(path)
    return kept.rows, kept.events


def read_rescued_adjudications(path: str | Path) -> list[dict]:
    """The adjudication rows of a rescue file (read_rescue_file), as written: dicts with id, study_id, unit_id,
    adjudicator_id, kind, answer (a dict or None), reason and decided_at."""
    return read_rescue_file(path).adjudications


#: the fields of an adjudication row in a rescue file (PendingAdjudication.unwritten), and the optional one
_ADJUDICATION_FIELDS = frozenset({"id", "study_id", "unit_id", "adjudicator_id", "kind", "answer", "reason"})
_OPTIONAL = frozenset({"decided_at"})
#: the statuses of the rows a screen writes (Session.prepare): decisions, notes and flags
_SCREEN_STATUSES = ("answered", "skipped", "partial", "note", "flag", "unflag")


@dataclass
class KeptRow:
    """One row of a rescue file: its line (from 1), table ("annotations", "adjudications" or "events"), id, the
    row (AnnotationIn, the adjudication's dict, or Event) and the time it was decided (ISO; None when the file
    does not say: files written before prefval kept it, and events, which carry their own `at`)."""

    line: int
    table: str
    id: str
    row: Any
    decided_at: str | None = None


@dataclass
class RescueFile:
    """A rescue file as read (read_rescue_file): its path, the database it was kept for (absolute path), when it
    was written (ISO), its rows in file order and the process that keeps it (pid: from the meta line, else from
    the file's name; None when neither says)."""

    path: str
    database: str
    written_at: str | None
    kept: list[KeptRow]
    pid: int | None = None

    def live_screen(self) -> int | None:
        """The process id of the screen that keeps this file when it is still running (it is still trying to save
        these rows, and removes the file once it has), else None. A process counts as that screen when it exists,
        is not this one, and its command line (Linux /proc; elsewhere any live process counts) names prefval."""
        pid = self.pid
        if not pid or pid == os.getpid():
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:  # another user's live process
            pass
        except OSError:
            return None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            return None if Path("/proc/self").exists() else pid  # gone meanwhile; or no /proc on this system
        except OSError:
            return pid
        return pid if b"prefval" in cmdline else None

    @property
    def rows(self) -> list[tuple[AnnotationIn, str]]:
        """The annotation rows with their ids."""
        return [(k.row, k.id) for k in self.kept if k.table == "annotations"]

    @property
    def adjudications(self) -> list[dict]:
        """The adjudication rows, as dicts (decided_at included when the file has it)."""
        return [{**k.row, **({"decided_at": k.decided_at} if k.decided_at else {})} for k in self.kept
                if k.table == "adjudications"]

    @property
    def events(self) -> list[Event]:
        """The events."""
        return [k.row for k in self.kept if k.table == "events"]


def _time(value: Any, field_name: str) -> str | None:
    """An ISO time of a rescue file as prefval stores times (UTC, microseconds: storage.db.now_iso's form, which
    sorts as text), None when absent; raises ValueError naming the field for one that is not an ISO time with its
    time zone (2026-12-04T08:06:50+05:00 is 03:06:50 UTC: compared as text it sorted after 03:08)."""
    if value is None:
        return None
    import datetime as _dt

    if not isinstance(value, str):
        raise ValueError(f"field {field_name!r}: not an ISO time")
    try:
        when = _dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"field {field_name!r}: not an ISO time ({value!r})") from None
    if when.tzinfo is None:
        raise ValueError(f"field {field_name!r}: {value!r} has no time zone")
    return when.astimezone(_dt.timezone.utc).isoformat(timespec="microseconds")


#: the events a screen keeps in a rescue file (Session.closing_events), with the payload fields that are numbers
_EVENT_KINDS = {"visit": ("seconds",), "session_end": ()}


def _number(value: Any, field_name: str) -> None:
    """Refuse a payload number that is not a finite number >= 0 (ValueError naming the field)."""
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"field {field_name!r}: {value!r} is not a number of seconds")


def _kept_row(n: int, rec: dict) -> KeptRow:
    """The row of one record (not the meta line) of a rescue file; raises ValueError("field 'X': ...")."""
    from pydantic import ValidationError

    table = rec.get("table")
    if table not in ("annotations", "adjudications", "events"):
        raise ValueError(f"field 'table': unknown table {table!r}")
    if "row" not in rec or not isinstance(rec["row"], dict):
        raise ValueError("field 'row': missing or not a JSON object")
    row = dict(rec["row"])
    try:
        if table == "annotations":
            rid, at = row.pop("id", None), _time(row.pop("decided_at", None), "decided_at")
            unknown = sorted(set(row) - set(AnnotationIn.model_fields))
            if unknown:
                raise ValueError(f"field {unknown[0]!r}: not a field of an annotation row")
            if not isinstance(rid, str) or not rid:
                raise ValueError("field 'id': missing or not a string")
            ann = AnnotationIn(**row)
            if ann.source != "human":
                raise ValueError(f"field 'source': a screen keeps people's rows only, not {ann.source!r}")
            if ann.status not in _SCREEN_STATUSES:
                raise ValueError(f"field 'status': {ann.status!r} is not written by a screen")
            if ann.supersedes is not None:
                raise ValueError("field 'supersedes': the database sets it as the row is written, not a screen")
            if ann.status != "note" and ann.note is not None:  # a screen keeps notes in rows of their own
                raise ValueError(f"field 'note': a row of status {ann.status!r} holds no note")
            started = _time(ann.started_at, "started_at")
            if started and at and at < started:
                raise ValueError(f"field 'decided_at': {at} is before the visit started ({started})")
            return KeptRow(n, table, rid, ann.model_copy(update={"started_at": started}), at)
        if table == "adjudications":
            unknown = sorted(set(row) - _ADJUDICATION_FIELDS - _OPTIONAL)
            if unknown:
                raise ValueError(f"field {unknown[0]!r}: not a field of an adjudication row")
            for key in ("id", "study_id", "unit_id", "adjudicator_id", "kind"):
                if not isinstance(row.get(key), str) or not row[key]:
                    raise ValueError(f"field {key!r}: missing or not a string")
            if row["kind"] not in ("final", "exclude"):
                raise ValueError(f"field 'kind': {row['kind']!r} is neither 'final' nor 'exclude'")
            if row["kind"] == "final" and not isinstance(row.get("answer"), dict):
                raise ValueError("field 'answer': a final answer needs the answer, a JSON object")
            if row["kind"] == "exclude" and (not isinstance(row.get("reason"), str) or not row["reason"].strip()):
                raise ValueError("field 'reason': an exclusion needs a reason")
            if row["kind"] == "exclude" and row.get("answer") is not None:
                raise ValueError("field 'answer': an exclusion holds no answer")
            if row["kind"] == "final" and row.get("reason") is not None:
                raise ValueError("field 'reason': a final answer holds no reason")
            at = _time(row.pop("decided_at", None), "decided_at")
            return KeptRow(n, table, row["id"], {k: row.get(k) for k in sorted(_ADJUDICATION_FIELDS)}, at)
        event = Event(**row)  # table "events"
        if event.kind not in _EVENT_KINDS:
            raise ValueError(f"field 'kind': a screen keeps {' and '.join(_EVENT_KINDS)} events only, not "
                             f"{event.kind!r}")
        for name in _EVENT_KINDS[event.kind]:
            _number(event.payload.get(name), f"payload.{name}")
        return KeptRow(n, table, event.id, event.model_copy(update={"at": _time(event.at, "at")}))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err.get("loc", ())) or "row"
        raise ValueError(f"field {where!r}: {err.get('msg')}") from None


def read_rescue_file(path: str | Path) -> RescueFile:
    """Read a rescue file whole (write_rescue's format). Raises PrefvalError, one line naming the file, the line
    and the field: no such file, not a regular file or unreadable; not JSON, or a line that is no JSON object; a
    row that is not an annotation, adjudication or event as a screen writes them (an unknown field, a row not of a
    person, an adjudication without its answer or reason ...); no meta line naming the database. Nothing here
    reads the database: annotator.recovery checks the rows against it."""
    from storage.errors import PrefvalError
    from storage.textfile import regular_file

    regular_file(path, "rescue file")
    try:
        text = read_text(path)
    except OSError as exc:
        raise PrefvalError(f"{path}: cannot read ({exc.strerror or type(exc).__name__})") from None
    database = written_at = pid = None
    checksummed = False
    kept: list[KeptRow] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PrefvalError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        try:
            if not isinstance(rec, dict):
                raise ValueError("field 'table': the line is not a JSON object")
            if rec.get("table") == "meta":
                if database is not None or kept:
                    raise ValueError("field 'table': the meta line must be the file's first line, and only one")
                if not isinstance(rec.get("database"), str) or not rec["database"]:
                    raise ValueError("field 'database': missing or not a path")
                checksummed = isinstance(rec.get("format"), int) and rec["format"] >= CHECKSUMMED
                database, written_at = rec["database"], _time(rec.get("written_at"), "written_at")
                pid = rec.get("pid") if isinstance(rec.get("pid"), int) else None
                continue
            if database is None:
                raise ValueError("field 'table': the first line must be the meta line naming the database")
            if checksummed and "sha256" not in rec:
                raise ValueError("field 'sha256': missing (every row of this file's format carries one); nothing "
                                 "restored")
            if "sha256" in rec and isinstance(rec.get("row"), dict) and rec["sha256"] != row_checksum(rec["row"]):
                raise ValueError("field 'sha256': the row was changed after the screen kept it (its checksum no "
                                 "longer matches); nothing restored")
            row = _kept_row(n, rec)
            if row.decided_at and written_at and row.decided_at > written_at:
                raise ValueError(f"field 'decided_at': {row.decided_at} is after the file was written ({written_at})")
            kept.append(row)
        except ValueError as exc:
            raise PrefvalError(f"{path}: line {n}: {exc}") from None
    if database is None:
        raise PrefvalError(f"{path}: line 1: field 'database': no meta line naming the database it was kept for "
                           "(not a prefval rescue file?)")
    if pid is None:  # a file kept before the meta line named it: DB.unsaved-TIME-PID(-N).jsonl
        import re

        m = re.search(r"-(\d+)(?:-\d+)?\.jsonl$", Path(path).name)
        pid = int(m.group(1)) if m else None
    return RescueFile(str(path), database, written_at, kept, pid)


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether paths a and b name one existing file."""
    return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)


def database_beside(path: str | Path) -> str | None:
    """The database a rescue file's name says it is kept beside (DB.unsaved-TIME-PID.jsonl: DB in the same
    folder), or None for a name not of that form."""
    p = Path(path)
    if RESCUE_INFIX not in p.name:
        return None
    return str(p.parent / p.name[:p.name.rindex(RESCUE_INFIX)])


def rescue_files_of(db_path: str) -> list[Path]:
    """The rescue files kept beside the database at db_path (write_rescue's first choice of folder), oldest first
    by name; [] for an in-memory database."""
    if db_path == ":memory:":
        return []
    base = Path(db_path).resolve()
    return sorted(base.parent.glob(base.name + RESCUE_INFIX + "*.jsonl"))
