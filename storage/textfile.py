"""The one way prefval reads a text file: UTF-8 with or without a byte-order mark, any line ending.

Every reader of user files (importers, field mappings, rubrics, pairs files, the statistics CSVs)
goes through :func:`open_text` or :func:`read_text`, so a file saved by Excel (UTF-8 BOM, CRLF) or
on an old Mac (CR) reads exactly like a plain UTF-8 file with LF line ends.
"""
from __future__ import annotations

import csv
import io
import stat
from pathlib import Path
from typing import IO

from storage.errors import PrefvalError

__all__ = ["open_text", "read_text", "csv_rows", "regular_file"]

#: what a path that is not a regular file is, by the file type bits of its mode (stat.S_IFMT)
_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


def regular_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as a Path when it names a regular file (a symbolic link is followed); never opens it (opening a FIFO
    would block). Raises PrefvalError, one line naming the path: "PATH: no such WHAT" when nothing is there (what:
    "file", "rubric file" ...), "PATH: not a regular file (a directory)" for a directory, a character device such as
    /dev/null, a block device, a FIFO or a socket, and "PATH: cannot read (REASON)" when it cannot be looked at."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise PrefvalError(f"{p}: no such {what}") from None
    except OSError as exc:
        raise PrefvalError(f"{p}: cannot read ({exc.strerror or type(exc).__name__})") from None
    if not stat.S_ISREG(mode):
        raise PrefvalError(f"{p}: not a regular file ({_KINDS.get(stat.S_IFMT(mode), 'not a file')})")
    return p


def open_text(path: str | Path) -> IO[str]:
    """Open ``path`` for reading as text: UTF-8, a leading BOM dropped, CRLF/CR read as LF.

    Raises OSError (e.g. FileNotFoundError) like ``open``; bytes that are not UTF-8 raise
    UnicodeDecodeError while reading (callers turn it into a one-line error naming the file).
    """
    return open(path, encoding="utf-8-sig", newline=None)


def read_text(path: str | Path) -> str:
    """The whole content of ``path`` as text (see :func:`open_text`)."""
    with open_text(path) as fh:
        return fh.read()


def csv_rows(path: str | Path) -> list[list[str]]:
    """Every row of a CSV file as lists of cells (see :func:`open_text`; quoted cells may span lines).

    Raises OSError, UnicodeDecodeError or csv.Error.
    """
    return list(csv.reader(io.StringIO(read_text(path))))
