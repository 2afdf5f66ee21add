"""``prefval stats``: agreement statistics and correlations straight from a CSV file.

    prefval stats agreement FILE.csv --metric fleiss_kappa [--categories a,b,c] [--format json]
    prefval stats correlate FILE.csv --method pearson [--columns human,judge]
    prefval stats majority-vote FILE.csv --key correct [--tie-rule first-annotator --discard x]
    prefval stats win-rate FILE.csv
    prefval stats ppi FILE.csv --human human --judge judge [--tuning power]

FILE.csv: a header naming the raters, one row per item, one column per rater, an empty cell for a
missing rating; an optional first column named ``item`` holds item ids. Only the standard library
is used here; reports.stats (numpy) is imported inside the handlers.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import sys

from storage.errors import InputError, PrefvalError
from storage.textfile import csv_rows, read_text

METRICS = (
    "percent_agreement", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
    "fleiss_kappa", "krippendorff_alpha", "gwet_ac1", "gwet_ac2_linear", "gwet_ac2_quadratic",
    "unanimity_rate",
)


def _output_options(p: argparse.ArgumentParser, zero_means_no_interval: bool) -> None:
    """--format, --bootstrap and --seed, shared by the calculators that give a bootstrap interval."""
    p.add_argument("--format", default="table", choices=("table", "json"), help="a table (default) or JSON")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help="bootstrap resamples for the 95%% interval (default 1000"
                        + (", 0 = no interval)" if zero_means_no_interval else ")"))
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap resamples (default 0)")


class _NoDatabase(argparse.Action):
    """``--db`` given after ``stats`` (every other command takes it there): a usage error (exit 2) saying that
    stats reads the CSV file it is given, not a database, instead of argparse's "unrecognized arguments"."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(NO_DATABASE)


#: why stats takes no --db, after the command (_NoDatabase) or before it (annotator.cli reads ``refuses_db``)
NO_DATABASE = ("--db: prefval stats reads the CSV file it is given, not a database; drop --db (a study's figures "
               "from the database: `prefval report STUDY --db PATH`)")


def _refuse_db(p: argparse.ArgumentParser) -> None:
    """A hidden --db on a stats parser that refuses it with its reason (_NoDatabase)."""
    p.add_argument("--db", action=_NoDatabase, help=argparse.SUPPRESS)


def register(subparsers) -> None:
    """Add ``stats agreement`` and ``stats correlate`` to the prefval parser."""
    p = subparsers.add_parser("stats", help="agreement statistics and correlations from a CSV file",
                              description="Agreement statistics and correlations from a CSV file.")
    _refuse_db(p)
    p.set_defaults(refuses_db=NO_DATABASE)
    sub = p.add_subparsers(dest="stats_command", metavar="STATS_COMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    a = sub.add_parser("agreement", help="inter-rater agreement (one column per rater)",
                       description="Inter-rater agreement of a CSV: one row per item, one column per "
                                   "rater, empty cell = missing, optional first column 'item'.")
    a.add_argument("file", metavar="FILE.csv", help="one row per item, one column per rater")
    a.add_argument("--metric", required=True, choices=METRICS, help="the agreement coefficient")
    a.add_argument("--level", default="nominal", choices=("nominal", "ordinal", "interval", "ratio"),
                   help="measurement level for krippendorff_alpha (default nominal)")
    a.add_argument("--categories", default=None,
                   help="the scale in order, comma-separated (numbers keep their values; text is matched as text)")
    a.add_argument("--weights", default=None, metavar="FILE.csv",
                   help="a square matrix of agreement (diagonal 1) or disagreement (diagonal 0) weights, "
                        "header and first column naming the categories; for cohen_kappa and gwet_ac1/ac2")
    a.add_argument("--keep-na", action="store_true",
                   help="count cells such as NA, N/A, None, null, nan as labels (default: missing)")
    _output_options(a, zero_means_no_interval=True)
    _refuse_db(a)
    a.set_defaults(func=run_agreement)

    c = sub.add_parser("correlate", help="correlation between two numeric columns",
                       description="Pearson/Spearman/Kendall correlation of two numeric columns.")
    c.add_argument("file", metavar="FILE.csv", help="a CSV with two numeric columns")
    c.add_argument("--method", required=True, choices=("pearson", "spearman", "kendall"),
                   help="the correlation coefficient")
    c.add_argument("--columns", default=None, metavar="A,B",
                   help="the two columns (default: the two non-item columns)")
    _output_options(c, zero_means_no_interval=True)
    _refuse_db(c)
    c.set_defaults(func=run_correlate)

    m = sub.add_parser("majority-vote", help="majority-vote accuracy against a key column (HorizonBench 5.3)",
                       description="Majority-vote accuracy: the share of items whose plurality answer (one column "
                                   "per annotator, in annotator order) is the key column's, over items with at "
                                   "least 2 answers; the same function as the report of mcq studies.")
    m.add_argument("file", metavar="FILE.csv", help="one row per item: a key column and one column per annotator")
    m.add_argument("--key", required=True, metavar="COLUMN", help="the column holding each item's correct answer")
    m.add_argument("--tie-rule", default="no-label", choices=("no-label", "first-annotator"),
                   help="a tie for first place: no label, counted as not correct (default); or the first "
                        "annotator's (column's) answer among the tied ones that is not --discard, as HorizonBench's "
                        "agreement script does")
    m.add_argument("--discard", default=None, metavar="LABEL",
                   help="the label of a discarded answer (can't tell), which first-annotator passes over")
    _output_options(m, zero_means_no_interval=False)
    _refuse_db(m)
    m.set_defaults(func=run_majority_vote)

    w = sub.add_parser("win-rate", help="win / loss / tie rates of pairwise judgments (RealPref G.1)",
                       description="Win, loss and tie shares of A against B with 95%% intervals, over all "
                                   "judgments and by majority per pair (one row per pair, one column per "
                                   "annotator; cells win/loss/tie or A/B/tie); the same function as the report "
                                   "of pairwise studies.")
    w.add_argument("file", metavar="FILE.csv", help="one row per pair, one column per annotator")
    _output_options(w, zero_means_no_interval=False)
    _refuse_db(w)
    w.set_defaults(func=run_win_rate)

    pp = sub.add_parser("ppi", help="prediction-powered mean of human labels with an LLM judge's (PPI, PPI++)",
                        description="Prediction-powered estimate of the mean human label: one row per item, a "
                                    "human column (empty where people did not label the item) and a judge column. "
                                    "--tuning none: PPI with lambda = 1 (Angelopoulos et al., Science 2023; what "
                                    "`prefval report` uses); power: PPI++, lambda chosen from the data "
                                    "(Angelopoulos, Duchi and Zrnic 2023; ppi_py's default).")
    pp.add_argument("file", metavar="FILE.csv", help="one row per item: a human and a judge column")
    pp.add_argument("--human", required=True, metavar="COLUMN",
                    help="the column of human labels (empty where people did not label)")
    pp.add_argument("--judge", required=True, metavar="COLUMN", help="the column of the judge's labels")
    pp.add_argument("--tuning", default="none", choices=("none", "power"),
                    help="none: PPI, lambda = 1 (default); power: PPI++")
    pp.add_argument("--alpha", type=float, default=0.05, help="1 - the interval's coverage (default 0.05)")
    pp.add_argument("--format", default="table", choices=("table", "json"), help="a table (default) or JSON")
    _refuse_db(pp)
    pp.set_defaults(func=run_ppi)


NA_CELLS = ("na", "n/a", "#n/a", "none", "null", "nan")


def _cells(path: str) -> tuple[list[str], list[str], int]:
    """(header cells, data cells row after row, rows) of FILE.csv, rows of blank cells left out.

    Read through the one text reader. Without quote characters the text is split directly (fast);
    otherwise the csv module parses it. Raises PrefvalError for an unreadable or empty file and
    InputError naming the row for a row of the wrong length (data rows numbered from 1).
    """
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise PrefvalError(f"{path}: file not found") from None
    except OSError as exc:  # bytes that are not UTF-8: storage.textfile.NotUtf8Error names the line
        raise PrefvalError(f"{path}: cannot read: {exc}") from None
    if '"' in text:
        try:
            rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
        except csv.Error as exc:
            raise PrefvalError(f"{path}: cannot read: {exc}") from None
        lengths = [len(r) for r in rows]
        data = [c for r in rows[1:] for c in r]
    else:
        lines = [line for line in text.split("\n") if line.strip(" \t,")]
        rows = lines
        lengths = [line.count(",") + 1 for line in lines]
        data = ",".join(lines[1:]).split(",") if len(lines) > 1 else []
    if not rows:
        raise PrefvalError(f"{path}: empty file, expected a header naming the raters")
    header = rows[0] if isinstance(rows[0], list) else rows[0].split(",")
    width = len(header)
    if any(n != width for n in lengths):
        k = next(k for k, n in enumerate(lengths) if n != width)
        raise InputError(path, f"row {k}", "(row)", f"expected {width} cells, got {lengths[k]}")
    return header, data, len(rows) - 1


class Table:
    """FILE.csv as codes into distinct labels (read once, every cell looked up through its label).

    ``names``: rater columns; ``codes``: items x raters int64 indexes into ``labels`` (stripped
    cell texts, None for an empty cell); ``items``: the ids of the ``item`` column, or None.
    """

    def __init__(self, path: str, names: list[str], codes, labels: list, items: list[str] | None):
        self.path, self.names, self.codes, self.labels, self.items = path, names, codes, labels, items

    def rows(self) -> list[list[str | None]]:
        """Items x raters of stripped cell texts, None for empty."""
        import numpy as np

        lut = np.empty(len(self.labels), dtype=object)
        lut[:] = self.labels
        return lut[self.codes].tolist()

    def first_cell(self, label_index: int) -> tuple[int, str]:
        """(row number from 1, column name) of the first cell holding ``labels[label_index]``."""
        import numpy as np

        i, j = np.argwhere(self.codes == label_index)[0]
        return int(i) + 1, self.names[int(j)]


def read_table(path: str) -> Table:
    """Read FILE.csv (header naming the raters, one row per item, optional first column ``item``).

    Read through the one text reader (UTF-8 BOM and CRLF accepted). Rows whose cells are all blank
    are ignored; data rows are numbered from 1 in errors. Raises PrefvalError for a missing or
    unreadable file, an empty file, no rater column, duplicate column names, an item listed twice
    (naming it and both rows) or a row of the wrong length (naming the row).
    """
    import numpy as np

    header, cells, n = _cells(path)
    header = [h.strip() for h in header]
    skip = 1 if header and header[0].lower() == "item" else 0
    names = header[skip:]
    if not names:
        raise PrefvalError(f"{path}: no rater columns in the header")
    dup = {h for h in names if names.count(h) > 1}
    if dup:
        raise PrefvalError(f"{path}: duplicate column name(s) {sorted(dup)}")
    grid = np.empty(len(cells), dtype=object)
    grid[:] = cells
    grid = grid.reshape(n, len(header))
    items = None
    if skip:
        items = [c.strip() for c in grid[:, 0].tolist()]
        if len(set(items)) < len(items):
            seen: dict[str, int] = {}
            for k, item in enumerate(items, start=1):
                if item in seen:
                    raise InputError(path, f"row {k}", header[0],
                                     f"item {item!r} is listed twice (rows {seen[item]} and {k}); "
                                     "give each item one row")
                seen[item] = k
    flat = grid[:, skip:].reshape(-1).tolist()
    raw = list(dict.fromkeys(flat))
    pos = {c: i for i, c in enumerate(raw)}
    codes = np.fromiter(map(pos.__getitem__, flat), dtype=np.int64, count=len(flat)).reshape(n, len(names))
    stripped = [c.strip() or None for c in raw]
    labels = list(dict.fromkeys(stripped))  # " 1" and "1" are one label
    where = {x: i for i, x in enumerate(labels)}
    relabel = np.array([where[x] for x in stripped], dtype=np.int64)
    return Table(path, names, relabel[codes] if raw else codes, labels, items)


def _number(s: str) -> float | int:
    v = float(s)
    return int(v) if v.is_integer() and "." not in s and "e" not in s.lower() else v


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return s.lower() not in ("nan", "inf", "-inf", "infinity", "-infinity", "+inf")


def ratings_of(table: Table, categories: list[str] | None, keep_na: bool):
    """(coded ratings, categories, {NA cell text: count}) for the statistics.

    The coded ratings are a ``reports.stats`` Prepared table: the distinct labels are coded once
    by ``prepare`` and every cell takes its label's code (one pass over the cells, none per cell).

    Labels such as NA, N/A, None, null, nan become missing unless ``keep_na``. Numbers stay numbers
    when every used label of a column (or every declared category) is a number: declared numeric
    categories keep their values and a cell matches one by value ("1.0" is category "1"). Raises
    InputError naming row and column for a cell outside declared categories.
    """
    import numpy as np

    labels = list(table.labels)
    used = np.bincount(table.codes.reshape(-1), minlength=len(labels)) > 0 if table.codes.size else \
        np.zeros(len(labels), dtype=bool)
    na_seen: dict[str, int] = {}
    if not keep_na:
        counts = np.bincount(table.codes.reshape(-1), minlength=len(labels)) if table.codes.size else None
        for j, lab in enumerate(labels):
            if lab is not None and lab.lower() in NA_CELLS and used[j]:
                na_seen[lab] = int(counts[j])
                labels[j] = None
    values: list = list(labels)
    if categories is not None:
        numeric = all(_is_number(c) for c in categories)
        cats = [_number(c) for c in categories] if numeric else list(categories)
        by_value = {float(c): c for c in cats} if numeric else {c: c for c in cats}
        for j, lab in enumerate(labels):
            if lab is None or not used[j]:
                continue
            key = float(lab) if numeric and _is_number(lab) else lab
            if key not in by_value:
                row, col = table.first_cell(j)
                raise InputError(table.path, f"row {row}", col,
                                 f"value {lab!r} is not one of the categories {categories}")
            values[j] = by_value[key]
    else:
        cats = None
        column_numeric = []
        for c in range(table.codes.shape[1]):
            in_col = np.unique(table.codes[:, c])
            column_numeric.append(all(labels[j] is None or _is_number(labels[j]) for j in in_col))
        if all(column_numeric):  # every column with ratings is numeric
            values = [None if lab is None else _number(lab) for lab in labels]
    from reports.stats._prep import Prepared, prepare

    small = prepare([[v] for v in values], cats)  # the distinct labels, in first-appearance order
    code_of_label = small.codes[:, 0] if small.n_items else np.zeros(0, dtype=np.int64)
    codes = code_of_label[table.codes] if table.codes.size else table.codes
    return (Prepared(codes=codes, categories=small.categories, values=small.values, declared=small.declared),
            cats, na_seen)


def read_weights(path: str, categories: list | None):
    """``--weights FILE``: (categories in the file's order, q x q agreement weights).

    FILE is a CSV whose header row names the categories (after one blank or label cell) and whose
    rows start with a category: a square matrix. A diagonal of 1s means agreement weights (Gwet
    2014, ch. 3); a diagonal of 0s means Cohen's (1968) disagreement weights v, converted to
    agreement weights 1 - v / max(v) (weighted kappa is unchanged by this rescaling). Raises
    PrefvalError for a file that is not square, labels that differ between header and rows or from
    ``--categories``, a cell that is not a number, or a mixed diagonal.
    """
    import numpy as np

    try:
        rows = [r for r in csv_rows(path) if any(c.strip() for c in r)]
    except FileNotFoundError:
        raise PrefvalError(f"{path}: file not found") from None
    except (OSError, csv.Error) as exc:
        raise PrefvalError(f"{path}: cannot read: {exc}") from None
    if len(rows) < 3:
        raise PrefvalError(f"{path}: expected a header row of categories and one row per category")
    labels = [c.strip() for c in rows[0][1:]]
    q = len(labels)
    m = np.zeros((q, q))
    if len(rows) - 1 != q:
        raise PrefvalError(f"{path}: {q} categories in the header but {len(rows) - 1} rows; the matrix must be square")
    for k, r in enumerate(rows[1:], start=1):
        if len(r) != q + 1:
            raise InputError(path, f"row {k}", "(row)", f"expected {q + 1} cells, got {len(r)}")
        if r[0].strip() != labels[k - 1]:
            raise InputError(path, f"row {k}", "(label)",
                             f"row label {r[0].strip()!r} differs from column {k} {labels[k - 1]!r}")
        for j, c in enumerate(r[1:]):
            if not _is_number(c.strip()):
                raise InputError(path, f"row {k}", labels[j], f"not a number: {c.strip()!r}")
            m[k - 1, j] = float(c)
    if categories is not None and [str(c) for c in categories] != labels:
        raise PrefvalError(f"{path}: the matrix's categories {labels} differ from --categories {categories}")
    diag = np.diag(m)
    if np.all(diag == 1):
        w = m
    elif np.all(diag == 0):
        top = m.max()
        if top <= 0:
            raise PrefvalError(f"{path}: disagreement weights (0 on the diagonal) are all 0")
        w = 1 - m / top
    else:
        raise PrefvalError(f"{path}: the diagonal must be all 1 (agreement weights) or all 0 "
                           "(disagreement weights, Cohen 1968)")
    return labels, w


def _print(res, fmt: str) -> None:
    d = res.to_json_dict()
    if fmt == "json":
        print(json.dumps(d))
        return

    def show(v):
        if v is None:
            return "-"
        return f"{v:.4f}" if isinstance(v, float) else str(v)

    rows = [("metric", d["metric"]), ("value", show(d["value"])),
            ("95% CI", "-" if d["ci_low"] is None else f"[{show(d['ci_low'])}, {show(d['ci_high'])}]"),
            ("items", show(d["n_items"])), ("raters", show(d["n_raters"]))]
    if "p_value" in d:
        from reports.figures import p_text

        rows.append(("p-value", p_text(d["p_value"])))  # the one p formatter of every output
    rows.append(("note", d["note"]))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


def run_agreement(args: argparse.Namespace) -> int:
    """Handler of ``prefval stats agreement``; prints the result, returns 0."""
    from dataclasses import replace

    from reports.stats import compute_agreement

    if args.bootstrap < 0:
        raise PrefvalError(f"--bootstrap must be 0 or more, got {args.bootstrap}")
    cats = None
    if args.categories is not None:
        cats = [c.strip() for c in args.categories.split(",") if c.strip()]
        if not cats:
            raise PrefvalError("--categories is empty")
    weights = None
    if args.weights:
        if not (args.metric.startswith("cohen_kappa") or args.metric.startswith("gwet_ac")):
            raise PrefvalError(f"--weights applies to cohen_kappa and gwet_ac1/ac2, not {args.metric}")
        cats, weights = read_weights(args.weights, cats)
    data, cats, na_seen = ratings_of(read_table(args.file), cats, args.keep_na)
    try:
        if weights is not None:
            from reports import stats
            kw = dict(categories=cats, ci=args.bootstrap > 0, n_boot=max(args.bootstrap, 1), seed=args.seed)
            fn = stats.cohen_kappa if args.metric.startswith("cohen_kappa") else stats.gwet_ac2
            res = fn(data, weights, **kw)
        else:
            res = compute_agreement(args.metric, data, categories=cats, level=args.level,
                                    ci=args.bootstrap > 0, n_boot=max(args.bootstrap, 1), seed=args.seed)
    except ValueError as exc:
        raise PrefvalError(f"{args.file}: {str(exc).replace('categories=[...]', '--categories')}") from None
    if na_seen:
        shown = ", ".join(f"{k!r} x{v}" for k, v in sorted(na_seen.items()))
        res = replace(res, note=f"{res.note}; cells read as missing: {shown} (--keep-na to count them as labels)")
    _print(res, args.format)
    return 0


def run_correlate(args: argparse.Namespace) -> int:
    """Handler of ``prefval stats correlate``; prints the result, returns 0."""
    from reports import stats

    table = read_table(args.file)
    names, data = table.names, table.rows()
    if args.columns:
        cols = [c.strip() for c in args.columns.split(",")]
        if len(cols) != 2:
            raise PrefvalError(f"--columns needs exactly two names, got {args.columns!r}")
        for c in cols:
            if c not in names:
                raise PrefvalError(f"{args.file}: no column named {c!r} (columns: {', '.join(names)})")
    else:
        if len(names) != 2:
            raise PrefvalError(f"{args.file}: {len(names)} value columns; name two with --columns A,B")
        cols = names
    idx = [names.index(c) for c in cols]
    xy: list[list] = [[], []]
    for k, row in enumerate(data, start=1):
        for j, (c, i) in enumerate(zip(cols, idx)):
            cell = row[i]
            if cell is not None and not _is_number(cell):
                raise InputError(args.file, f"row {k}", c, f"not a number: {cell!r}")
            xy[j].append(None if cell is None else float(cell))
    fn = getattr(stats, args.method)
    res = fn(xy[0], xy[1], ci=args.bootstrap > 0, n_boot=max(args.bootstrap, 1), seed=args.seed)
    _print(res, args.format)
    return 0


def _columns(table: Table, names: list[str]) -> list[int]:
    """The indexes of the named columns. Raises PrefvalError naming a column the file lacks."""
    out = []
    for c in names:
        if c not in table.names:
            raise PrefvalError(f"{table.path}: no column named {c!r} (columns: {', '.join(table.names)})")
        out.append(table.names.index(c))
    return out


def run_majority_vote(args: argparse.Namespace) -> int:
    """Handler of ``prefval stats majority-vote``: annotator.tasks.mcq.figures.majority_vote_stat, the function
    behind the majority-vote figure of mcq studies; the rater columns in file order are the annotator order of the
    first-annotator rule. Prints the result, returns 0."""
    from annotator.tasks.mcq.figures import majority_vote_stat

    if args.bootstrap < 1:
        raise PrefvalError(f"--bootstrap must be at least 1, got {args.bootstrap}")
    table = read_table(args.file)
    (key_col,) = _columns(table, [args.key])
    raters = [j for j in range(len(table.names)) if j != key_col]
    if not raters:
        raise PrefvalError(f"{args.file}: no annotator column besides the key {args.key!r}")
    rows = table.rows()
    labels = [[row[j] for j in raters] for row in rows]
    keys = [row[key_col] for row in rows]
    res = majority_vote_stat(labels, keys, args.seed, args.tie_rule, discard=args.discard, n_boot=args.bootstrap)
    # the raters are the file's annotator columns (the pooled share behind the figure counts items only)
    _print(dataclasses.replace(res, n_raters=len(raters)), args.format)
    return 0


_OUTCOME = {"win": "win", "a": "win", "loss": "loss", "b": "loss", "tie": "tie"}


def run_win_rate(args: argparse.Namespace) -> int:
    """Handler of ``prefval stats win-rate``: annotator.tasks.pairwise.figures.win_rates, the function behind the
    win / loss / tie figures of pairwise studies. Raises InputError naming row and column for another cell."""
    from annotator.tasks.pairwise.figures import win_rates

    if args.bootstrap < 1:
        raise PrefvalError(f"--bootstrap must be at least 1, got {args.bootstrap}")
    table = read_table(args.file)
    per_pair = []
    for k, row in enumerate(table.rows(), start=1):
        pair = []
        for c, cell in zip(table.names, row):
            if cell is None:
                pair.append(None)
                continue
            o = _OUTCOME.get(cell.strip().lower())
            if o is None:
                raise InputError(args.file, f"row {k}", c, f"expected win, loss or tie (or A, B, tie), got {cell!r}")
            pair.append(o)
        per_pair.append(pair)
    all_res, maj_res, no_majority = win_rates(per_pair, args.seed, n_boot=args.bootstrap)
    blocks = (("all judgments", all_res), ("majority per pair", maj_res))
    if args.format == "json":
        print(json.dumps({"all_judgments": {k: r.to_json_dict() for k, r in all_res.items()},
                          "majority_per_pair": {k: r.to_json_dict() for k, r in maj_res.items()},
                          "pairs_without_majority": no_majority}))
        return 0

    def cell(r):
        if r.value is None:
            return r.note
        ci = "" if r.ci_low is None else f" [{r.ci_low:.4f}, {r.ci_high:.4f}]"
        return f"{r.value:.4f}{ci}"

    for title, res in blocks:
        n = next(iter(res.values())).n_items
        print(f"{title} ({n} {'judgments' if title == 'all judgments' else 'pairs'}):")
        for k in ("win", "loss", "tie"):
            print(f"  {k:<4}  {cell(res[k])}")
    if no_majority:
        print(f"{no_majority} pairs without a majority left out of the majority per pair")
    return 0


def run_ppi(args: argparse.Namespace) -> int:
    """Handler of ``prefval stats ppi``: reports.stats.ppi.ppi_mean, the estimator of the report's
    judge-validation section, with --tuning none (lambda = 1, the report's) or power (PPI++). Raises InputError
    naming row and column for a cell that is not a number or a row without the judge's label."""
    from reports.stats.ppi import ppi_mean

    if not 0 < args.alpha < 1:
        raise PrefvalError(f"--alpha must be between 0 and 1, got {args.alpha:g}")
    table = read_table(args.file)
    h, j = _columns(table, [args.human, args.judge])
    y, yhat, yun = [], [], []
    for k, row in enumerate(table.rows(), start=1):
        for c, cell in ((args.human, row[h]), (args.judge, row[j])):
            if cell is not None and not _is_number(cell):
                raise InputError(args.file, f"row {k}", c, f"not a number: {cell!r}")
        if row[j] is None:
            raise InputError(args.file, f"row {k}", args.judge, "missing: every item needs the judge's label")
        if row[h] is None:
            yun.append(float(row[j]))
        else:
            y.append(float(row[h]))
            yhat.append(float(row[j]))
    _print(ppi_mean(y, yhat, yun, alpha=args.alpha, tuning=args.tuning), args.format)
    return 0


if __name__ == "__main__":  # pragma: no cover
    from annotator.cli import main
    sys.exit(main(["stats", *sys.argv[1:]]))
