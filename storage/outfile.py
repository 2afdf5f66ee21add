"""Writing an output file (`--out` of export, report and any later command) without ever destroying data.

Every command that writes a file goes through this module:

    target = check_output(args.out, databases=[db], force=args.force)   # before any slow work: fail early
    write_output(args.out, text, databases=[db], force=args.force)      # temp file beside it, then rename

or, for a writer that needs a path of its own (e.g. a SQLite bundle), `with output_path(...) as tmp: write(tmp)`.

The rules:
- an output path that is a database the command works on, or that database's -wal, -shm or -journal file, is
  refused, and so is any existing SQLite file (its 16-byte header), even with force (a bundle holding answers not
  merged yet is a SQLite file too);
- a SQLite output (a bundle) is refused while a -wal, -shm or -journal file lies beside the path: SQLite would
  replay a stale one into the new file (e.g. what a killed session left), and it is not ours to remove;
- an existing file is replaced only with force; a folder is never replaced;
- a symbolic link given as the output is not followed into its target without force (with force the target is
  replaced, under the same rules);
- the output is written to a temporary file in the same folder and renamed into place, so an error (full disk,
  an exception while rendering, a kill) leaves the old file as it was and never half a file;
- a folder that is read-only or missing gives a one-line PrefvalError.
"""
from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from storage.db import is_sqlite_file
from storage.errors import PrefvalError

SIDE_FILES = ("", "-wal", "-shm", "-journal")


def _same_file(a: str, b: str) -> bool:
    """Whether a and b name one file: the same resolved path, or (both existing) the same inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def database_file_of(path: str | Path, databases: Iterable[str | Path | None]) -> str | None:
    """Which of the databases' files path is, in words ("the database (main.db)", "the database's wal file
    (main.db-wal)"), or None when it is none of them (the database itself or its -wal, -shm or -journal file;
    None and ":memory:" are ignored)."""
    for db in databases:
        if db is None or str(db) == ":memory:":
            continue
        for side in SIDE_FILES:
            if _same_file(str(path), f"{db}{side}"):
                return (f"the database ({db})" if not side else f"the database's {side[1:]} file ({db}{side})")
    return None


def check_output(path: str | Path, databases: Iterable[str | Path | None] = (), force: bool = False,
                 sqlite_output: bool = False) -> Path:
    """Check that path may be written; return the file that will be replaced or created (the link's target
    when path is a symbolic link and force is given).

    databases: database paths the command reads or writes (None and ":memory:" are ignored).
    sqlite_output: the output is itself a SQLite file (a bundle): also refused while its -wal, -shm or -journal
    file exists.
    Raises PrefvalError (one line) when path is one of those databases or their -wal/-shm/-journal files, an
    existing SQLite file (even with force), a folder, an existing file without force, a symbolic link without force, or in a
    folder that does not exist.
    """
    out = str(path)
    if not out:
        raise PrefvalError("--out: empty path")
    if os.path.islink(out):
        if not force:
            raise PrefvalError(f"{out}: is a symbolic link (to {os.readlink(out)}); not following it without --force")
        target = os.path.realpath(out)
    else:
        target = out
    for db in databases:
        if db is None or str(db) == ":memory:":
            continue
        for side in SIDE_FILES:
            if _same_file(target, f"{db}{side}"):
                what = "the database itself" if not side else f"the database's {side[1:]} file"
                raise PrefvalError(f"{out}: is {what} ({db}{side}); refusing to overwrite it, choose another --out")
    if os.path.isdir(target):
        raise PrefvalError(f"{out}: is a folder; give a file name")
    if is_sqlite_file(target):
        hint = ": merge it first (`prefval bundle merge`) or choose another --out" if sqlite_output else ""
        raise PrefvalError(f"{out}: is a SQLite database; refusing to overwrite it (even with --force){hint}")
    if sqlite_output:
        for side in SIDE_FILES[1:]:
            if os.path.lexists(f"{target}{side}"):
                raise PrefvalError(f"{out}: {target}{side} lies beside it (left by an earlier SQLite session); "
                                   "SQLite would replay it into the new file: merge or move that file first, "
                                   "or choose another --out")
    if os.path.lexists(target) and not force:
        raise PrefvalError(f"{out}: already exists; pass --force to replace it")
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise PrefvalError(f"{out}: the folder {folder} does not exist")
    return Path(target)


def _write_error(out: str, folder: str, exc: OSError) -> PrefvalError:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return PrefvalError(f"{out}: cannot write the output: the folder {folder} is read-only")
    if exc.errno == errno.ENOSPC:
        return PrefvalError(f"{out}: cannot write the output: the disk is full (nothing was replaced)")
    return PrefvalError(f"{out}: cannot write the output ({exc.strerror or exc})")


@contextlib.contextmanager
def output_path(path: str | Path, databases: Iterable[str | Path | None] = (), force: bool = False,
                sqlite_output: bool = False) -> Iterator[Path]:
    """Yield a temporary file path beside the output; when the block ends without an exception it is renamed
    onto the output (check_output's rules are applied before and again just before the rename; the temporary
    file exists, empty). On an
    exception the temporary file is removed and the output is left as it was. Raises PrefvalError as
    check_output, and for a read-only folder or a full disk."""
    databases = list(databases)
    out = str(path)
    target = check_output(out, databases, force, sqlite_output)
    folder = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise _write_error(out, folder, exc) from None
    os.close(fd)
    try:
        mode = os.stat(target).st_mode & 0o7777 if target.exists() else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        yield Path(tmp)
        check_output(out, databases, force, sqlite_output)  # nothing appeared at the path meanwhile that must not be replaced
        os.replace(tmp, target)
    except OSError as exc:
        raise _write_error(out, folder, exc) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def write_output(path: str | Path, data: str | bytes, databases: Iterable[str | Path | None] = (),
                 force: bool = False, encoding: str = "utf-8") -> Path:
    """Write data (text in `encoding`, newlines as given, or bytes) to path by the module's rules and return the
    file written. Raises PrefvalError as output_path."""
    with output_path(path, databases, force) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data.encode(encoding) if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(os.path.realpath(path)) if force else Path(path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
