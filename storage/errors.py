"""Errors every layer raises for bad input; the CLI prints them as one line and exits non-zero."""


class PrefvalError(Exception):
    """A user-facing error: its message is one line naming what went wrong.

    For input files the message names the file, the record (line or row number) and the field,
    e.g. ``questions.csv: row 12: field 'all_options': expected 4 options, got 3``.
    """


class InputError(PrefvalError):
    """A record of an input file failed validation; nothing was written to the database."""

    def __init__(self, path: str, record: str, field: str, problem: str):
        self.path, self.record, self.field, self.problem = path, record, field, problem
        super().__init__(f"{path}: {record}: field '{field}': {problem}")


class DatabaseBusy(PrefvalError):
    """Another process held the database's write lock for longer than the busy timeout; nothing was written.

    Raised instead of a bare PrefvalError so that callers that can wait (the annotation screen keeps the answer
    and retries) tell "try again later" apart from errors that retrying cannot fix (a full disk, a read-only file).
    """


class AssignmentReleased(PrefvalError):
    """The annotation was written for an assignment that is no longer live: a study command (`study release`,
    `unassign`, `rename-annotator`) gave the item back to the pool meanwhile. Nothing was written; the item is
    no longer the annotator's (another annotator may hold it now)."""


class StudyClosed(PrefvalError):
    """The write was for a study that was archived (read-only until `prefval study unarchive`) or deleted since the
    screen writing it was opened, by a command run in another process. Nothing was written. reason: why, in a
    few words without the file ("study 'pm' was archived after this screen opened")."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def is_busy(exc: BaseException) -> bool:
    """Whether a sqlite3 error means "the database is locked by another connection" (SQLITE_BUSY/SQLITE_LOCKED)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(exc)
