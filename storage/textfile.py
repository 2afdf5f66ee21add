"""The one way prefval reads a text file: UTF-8 with or without a byte-order mark, any line ending.

Every reader of user files (importers, field mappings, rubrics, pairs files, the statistics CSVs)
goes through :func:`open_text` or :func:`read_text`, so a file saved by Excel (UTF-8 BOM, CRLF) or
on an old Mac (CR) reads exactly like a plain UTF-8 file with LF line ends.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import IO

__all__ = ["open_text", "read_text", "csv_rows"]


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
