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

from storage.errors import InputError, PrefvalError

__all__ = ["open_text", "read_text", "csv_rows", "regular_file", "NotUtf8Error", "not_utf8"]

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


class NotUtf8Error(InputError):
    """A file prefval reads as text holds bytes that are not UTF-8; the message names the file, the line (counted
    from 1, one more at each LF, CR or CRLF among the bytes before the first bad byte), field '(encoding)', the byte and its
    offset in the file: ``b.csv: line 2: field '(encoding)': not UTF-8 text (byte 0xff at offset 27)``."""


def not_utf8(path: str | Path) -> NotUtf8Error | None:
    """The NotUtf8Error for the first byte of ``path`` that does not decode as UTF-8 (a leading BOM allowed), or None
    when the whole file decodes (or cannot be read any more). Reads the file in 1 MiB blocks through an incremental
    decoder, so the offset is counted in the whole file, not in one block."""
    import codecs

    dec = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    try:
        with open(path, "rb") as fh:
            while True:
                block = fh.read(1 << 20)
                final = not block
                try:
                    dec.decode(block, final)
                except UnicodeDecodeError as e:
                    # e.start counts from the bytes still buffered in the decoder (up to 3) + this block
                    pending = len(e.object) - len(block)
                    bad = offset - pending + e.start
                    head = _prefix(path, bad)
                    n_breaks = head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n")
                    byte = e.object[e.start] if e.start < len(e.object) else 0
                    return NotUtf8Error(str(path), f"line {n_breaks + 1}", "(encoding)",
                                        f"not UTF-8 text (byte 0x{byte:02x} at offset {bad})")
                if final:
                    return None
                offset += len(block)
    except OSError:
        return None


def _prefix(path: str | Path, n: int) -> bytes:
    """The first ``n`` bytes of ``path``."""
    with open(path, "rb") as fh:
        return fh.read(n)


class _Utf8Reader:
    """A text file open for reading whose UnicodeDecodeError becomes NotUtf8Error (file, line, byte); every other
    attribute is the underlying io.TextIOWrapper's."""

    def __init__(self, path: str | Path, fh: IO[str]) -> None:
        self._path, self._fh = path, fh

    def _located(self, exc: UnicodeDecodeError) -> PrefvalError:
        return not_utf8(self._path) or NotUtf8Error(str(self._path), "(file)", "(encoding)",
                                                    f"not UTF-8 text ({exc.reason})")

    def read(self, *a):
        try:
            return self._fh.read(*a)
        except UnicodeDecodeError as exc:
            raise self._located(exc) from None

    def readline(self, *a):
        try:
            return self._fh.readline(*a)
        except UnicodeDecodeError as exc:
            raise self._located(exc) from None

    def readlines(self, *a):
        try:
            return self._fh.readlines(*a)
        except UnicodeDecodeError as exc:
            raise self._located(exc) from None

    def __iter__(self):
        return self

    def __next__(self) -> str:
        try:
            return next(self._fh)
        except UnicodeDecodeError as exc:
            raise self._located(exc) from None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._fh.close()

    def __getattr__(self, name):
        return getattr(self._fh, name)


def open_text(path: str | Path) -> IO[str]:
    """Open ``path`` for reading as text: UTF-8, a leading BOM dropped, CRLF/CR read as LF.

    Raises OSError (e.g. FileNotFoundError) like ``open``; bytes that are not UTF-8 raise NotUtf8Error (a
    PrefvalError: one line naming the file, the line and the byte) while reading.
    """
    return _Utf8Reader(path, open(path, encoding="utf-8-sig", newline=None))  # type: ignore[return-value]


def read_text(path: str | Path) -> str:
    """The whole content of ``path`` as text (see :func:`open_text`; raises OSError or NotUtf8Error)."""
    with open_text(path) as fh:
        return fh.read()


def csv_rows(path: str | Path) -> list[list[str]]:
    """Every row of a CSV file as lists of cells (see :func:`open_text`; quoted cells may span lines).

    Raises OSError, NotUtf8Error or csv.Error.
    """
    return list(csv.reader(io.StringIO(read_text(path))))
