"""Mutation kill ratio of storage/, reports/stats/ and annotator/tasks/ on a seeded random sample of mutants.

A full mutmut run (about 18,000 mutants) does not fit on a small machine, so this script estimates the kill ratio of
each module group from a simple random sample of its mutants, drawn with a fixed seed, and gives a 95% Wilson score
interval (Wilson 1927, "Probable inference, the law of succession, and statistical inference", JASA 22:209-212).
Whole files can be run instead of sampled (`--files`), which gives their exact ratio.

Steps: (1) mutmut generates every mutant into `mutants/` (only files changed since the last run are regenerated);
(1b) the mutants that are equivalent by construction are left out of the population: mutmut's lower/upper-case
mutants of SQL text whose every changed token is a keyword or a name SQLite reads without regard to case at that
place (see `sql_case_equivalent`; `--list-equivalent` names them, `--keep-equivalent` keeps them as before);
(2) the sample is drawn per group from the sorted mutant names with `random.Random(seed)`; (3) `mutmut run NAMES...`
runs exactly those mutants that have no verdict yet or did not die (`--rerun` runs all of them again), under
`nice -n 10`; (4) the verdicts stored by mutmut in `mutants/**/*.meta` are counted.

Counting: killed and timeout count as detected; survived, "no tests" (no selected test reaches the mutated
function) and suspicious/segfault as not detected; "not checked" mutants are left out and reported. Mutants
marked `# pragma: no mutate` are never generated and so are not in the denominator (CONTRIBUTING.md says how many
there are and why); nor are the mutants left out in step (1b), which no test can tell from the original.

Not part of the prefval package; needs the `[mutation]` extra (mutmut 3.8). Run from the repository root:

    python tools/mutation_sample.py --per-group 120 --seed 13        # sample, run, report
    python tools/mutation_sample.py --per-group 120 --seed 13 --report   # report only, run nothing
    python tools/mutation_sample.py --files reports/stats/fleiss.py    # every mutant of one file
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import hashlib
import json
import re
import random
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's prefval, not an installed one

GROUPS = {"storage": "storage.", "reports/stats": "reports.stats.", "annotator/tasks": "annotator.tasks."}
DETECTED = {"killed", "timeout", "caught by type check"}
UNDETECTED = {"survived", "no tests", "suspicious", "segfault"}


def wilson(k: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval (low, high) of k/n (Wilson 1927); (0.0, 1.0) when n is 0."""
    from annotator.tasks.persona_filter.figures import wilson_interval

    lo, hi = wilson_interval(k, n)
    return (0.0, 1.0) if lo is None else (lo, hi)


def generate() -> None:
    """Let mutmut write every mutant into mutants/ (unchanged files are kept with their verdicts)."""
    import os

    from mutmut.__main__ import create_mutants, set_mutant_under_test, store_lines_covered_by_tests
    from mutmut.utils.file_utils import copy_src_dir, setup_source_paths

    set_mutant_under_test("mutant_generation")
    os.makedirs("mutants", exist_ok=True)
    copy_src_dir()  # (not the also_copy folders: `mutmut run` copies them, and names need only the sources)
    setup_source_paths()
    store_lines_covered_by_tests()
    create_mutants(2)


def load() -> dict[str, tuple[str, int | None, float | None]]:
    """Every generated mutant: name -> (source file, mutmut exit code or None, seconds it took or None)."""
    out: dict[str, tuple[str, int | None, float | None]] = {}
    for meta in sorted(Path("mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text())
        source = str(meta.relative_to("mutants"))[: -len(".meta")]
        if not Path(source).is_file():  # left from a file since moved or deleted
            continue
        durations = data.get("durations_by_key", {})
        for name, code in data["exit_code_by_key"].items():
            out[name] = (source, code, durations.get(name))
    return out


# ---- mutants that are equivalent by construction: a case change SQLite cannot see ---------------------------------
# mutmut turns every string literal to lower and to upper case. Inside SQL text SQLite reads keywords and the names of
# tables, columns, aliases and functions without regard to case (https://sqlite.org/lang_keywords.html), so such a
# mutant of `"SELECT id FROM items WHERE dataset_id = ?"` runs the same statement: no test can tell it apart. These
# mutants are left out of the population before the draw (mutmut still writes them into mutants/; the tool never
# draws, runs or counts them, and prints how many it left out). A case-only mutant is left out ONLY when the literal is
# SQL text in the project's style (keywords upper case, names lower case, parameters `?`) and EVERY token whose case
# changed is a keyword or a name at a place where its case changes nothing. Kept (so still drawn) when any changed
# token is: inside a quoted literal ('human') or a quoted name, a named parameter (`:name`, looked up in a Python
# dict), in a result-column list (SELECT ... FROM, RETURNING: the expression text names the keys of the returned
# rows), or anywhere in a statement that stores names or text (CREATE, ALTER, DROP, PRAGMA and the like); and when
# the literal is not recognisably SQL (a bare name such as "items" is a sqlite-utils table or a dict key, where case
# counts; a message; a fragment whose start could still be inside a result list).
SQL_KEYWORDS = frozenset("""
ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH AUTOINCREMENT BEFORE BEGIN BETWEEN BY CASCADE CASE
CAST CHECK COLLATE COLUMN COMMIT CONFLICT CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP
DATABASE DEFAULT DEFERRABLE DEFERRED DELETE DESC DETACH DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE EXCLUSIVE
EXISTS EXPLAIN FAIL FILTER FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP GROUPS HAVING IF IGNORE IMMEDIATE
IN INDEX INDEXED INITIALLY INNER INSERT INSTEAD INTERSECT INTO IS ISNULL JOIN KEY LAST LEFT LIKE LIMIT MATCH
MATERIALIZED NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF OFFSET ON OR ORDER OTHERS OUTER OVER PARTITION PLAN PRAGMA
PRECEDING PRIMARY QUERY RAISE RANGE RECURSIVE REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING RIGHT
ROLLBACK ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION TRIGGER UNBOUNDED UNION UNIQUE
UPDATE USING VACUUM VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH WITHOUT""".split())  # SQLite's 147 keywords
_STATEMENT = {"SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"}
_STORES_NAMES = {"CREATE", "ALTER", "DROP", "PRAGMA", "ATTACH", "DETACH", "VACUUM", "REINDEX", "ANALYZE", "EXPLAIN",
                 "TRIGGER", "VIEW", "TABLE", "INDEX", "SAVEPOINT", "RELEASE"}
# a result-column list ends at one of these (same parenthesis level); none of them can occur inside one
_ENDS_RESULT = {"FROM", "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "OFFSET", "WINDOW", "UNION", "EXCEPT",
                "INTERSECT", "JOIN", "ON", "SET", "VALUES", "INTO", "USING"}
_HOLE = "\x00"  # stands for a {formatted value} of an f-string
_SQL_TOKEN = re.compile(r"""
    (?P<lit>[xX]?'(?:[^']|'')*'?)                       # string or blob literal
  | (?P<qid>"(?:[^"]|"")*"?|`[^`]*`?|\[[^\]]*\]?)        # quoted name (or a double-quoted string)
  | (?P<param>[:@$][A-Za-z_][A-Za-z0-9_]*|\?[0-9]*)      # parameter
  | (?P<comment>--[^\n]*|/\*.*?\*/)
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<num>[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)
  | (?P<space>\s+)
  | (?P<other>.)""", re.X | re.S)
_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def _sql_tokens(text: str) -> list[tuple[str, str]]:
    return [(m.lastgroup, m.group()) for m in _SQL_TOKEN.finditer(text)]


def sql_case_equivalent(before: str, after: str, clause_arg: bool = False) -> bool:
    """True when `after` differs from the SQL text `before` only in the case of keywords and names that SQLite reads
    without regard to case at that place (see the comment above); False whenever in doubt.

    clause_arg: the literal is passed as a WHERE or ORDER BY expression (sqlite-utils ``rows_where(where, ...,
    order_by=...)``), so it cannot be inside a result-column list.
    """
    if before == after or before.lower() != after.lower() or before.count("'") % 2:
        return False
    tb, ta = _sql_tokens(before), _sql_tokens(after)
    if [k for k, _ in tb] != [k for k, _ in ta]:
        return False
    words = [(i, t) for i, (k, t) in enumerate(tb) if k == "word"]
    if len(words) < (1 if clause_arg else 2) or any(t.upper() in _STORES_NAMES for _, t in words):
        return False  # (a lone keyword such as "UPDATE" may be spliced into anything, a trigger included)
    for i, w in words:  # the project's SQL style: KEYWORD, name, FUNCTION( ; anything else is not taken for SQL
        nxt = next((t for k, t in tb[i + 1:] if k != "space"), "")
        if not (w in SQL_KEYWORDS or _NAME.fullmatch(w) or (w.isupper() and nxt == "(")):
            return False
    first = words[0][1]
    if any(k == "other" and t in ";:{}\"" for k, t in tb):
        return False
    has_param = any(k == "param" and t.startswith("?") for k, t in tb)
    if not (first in _STATEMENT or clause_arg or any(w in SQL_KEYWORDS for _, w in words) or has_param):
        return False
    # walk the tokens; one state per parenthesis level: "clause" (case free), "result" (a result-column list),
    # "unknown" (a fragment's start, which might be a result list), "select" (just after SELECT [DISTINCT|ALL])
    lead = next((t for k, t in tb if k not in ("space", "comment") and t != ")"), "")
    start = "clause" if (first in _STATEMENT and lead == first) or clause_arg or lead in ("AND", "OR", "WHERE") \
        else "unknown"
    stack = [start]
    prev = ""
    for (kind, b), (_, a) in zip(tb, ta):
        up = b.upper() if kind == "word" else b
        if kind == "word" and up in _ENDS_RESULT and stack[-1] != "free":
            stack[-1] = "clause"  # (before the check: the keyword that ends a result list is not in it)
        if b != a:
            if kind in ("lit", "qid", "param"):
                return False
            if kind == "word" and not (stack[-1] == "select" and up in ("DISTINCT", "ALL")) and any(
                    s in ("result", "unknown") or (s == "select" and up != "SELECT") for s in stack):
                return False
        if kind in ("space", "comment"):
            continue
        if b == "(":
            # a sub-select compared against (IN, EXISTS, =) names nothing ("free"); any other one might name columns
            stack.append("free" if prev in ("IN", "EXISTS", "=", "<", ">", "!=", "<=", ">=") else "inner")
        elif b == ")":
            stack = stack[:-1] if len(stack) > 1 else ["unknown"]
        elif stack[-1] == "free" or (kind == "word" and up in _ENDS_RESULT):
            pass
        elif kind == "word" and up == "SELECT":
            stack[-1] = "select" if stack[-1] == "clause" else "result"
        elif kind == "word" and up == "RETURNING":
            stack[-1] = "result"
        elif stack[-1] == "select" and not (kind == "word" and up in ("DISTINCT", "ALL")):
            stack[-1] = "result"
        elif stack[-1] == "inner":
            stack[-1] = "clause"
        prev = up
    return True


def _string_text(node: ast.AST) -> str | None:
    """The text of a str constant, or of an f-string with every {value} as a hole."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else _HOLE for v in node.values)
    return None


def _is_clause_arg(node: ast.AST, parent: dict) -> bool:
    call = parent.get(node)
    if isinstance(call, ast.keyword):
        return call.arg in ("where", "order_by") and isinstance(parent.get(call), ast.Call) \
            and isinstance(parent[call].func, ast.Attribute) and parent[call].func.attr in ("rows_where", "count_where",
                                                                                           "delete_where")
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.args[:1] == [node] \
        and call.func.attr in ("rows_where", "count_where", "delete_where")


def _one_string_changed(orig: ast.AST, mutant: ast.AST) -> tuple[ast.Constant, ast.AST, dict, list, list] | None:
    """(the original's str constant, its twin in the mutant, parent map of the original, nodes of both) when the two
    functions differ in that one constant only, else None."""
    a, b = list(ast.walk(orig)), list(ast.walk(mutant))
    if len(a) != len(b):
        return None
    diff = [i for i, (x, y) in enumerate(zip(a, b))
            if type(x) is not type(y) or (isinstance(x, ast.Constant) and x.value != y.value)]
    if len(diff) != 1 or not isinstance(a[diff[0]], ast.Constant) or not isinstance(a[diff[0]].value, str):
        return None
    return a[diff[0]], b[diff[0]], {c: p for p in a for c in ast.iter_child_nodes(p)}, a, b


def _case_only_sql(orig: ast.AST, mutant: ast.AST) -> bool:
    """Whether a mutant function differs from its original only by a case change SQLite cannot see."""
    found = _one_string_changed(orig, mutant)
    if found is None:
        return False
    node, twin, parent, a, b = found
    if isinstance(parent.get(node), ast.JoinedStr):
        node, twin = parent[node], b[a.index(parent[node])]
    before, after = _string_text(node), _string_text(twin)
    return before is not None and after is not None and sql_case_equivalent(before, after, _is_clause_arg(node, parent))


# ---- mutants that are equivalent by construction: a column name in another case that sqlite-utils resolves ----------
# Table.create(columns, pk=..., not_null=..., column_order=..., foreign_keys=...) matches the column names given in
# pk, not_null, column_order and a foreign key's own and other column against the table's columns without regard to
# case and writes the column's own spelling (sqlite-utils 4.2 `resolve_casing` in create_table_sql): with
# not_null={"SUBMITTED_AT"} the CREATE TABLE text SQLite stores is byte for byte the one of not_null={"submitted_at"}.
# A case-only mutant of such a name is left out only when the name (before the change) is a key of the columns dict
# written in the call, or a foreign key's other column (the original call runs, so the other table has that column,
# and SQLite allows no second column of the same name in another case), and the call has no transform=
# (which compares with an existing table). Kept: the other table's name (sqlite-utils raises), a dict key of an
# insert or upsert (the table may be created from it), create_index columns (the index's text stores them), and
# anything in a call whose columns are not a dict written there. tests/test_mutation_tool.py checks the installed
# sqlite-utils still resolves each of these names.
_CREATE_NAME_ARGS = ("pk", "not_null", "column_order")


def _create_column_arg(node: ast.AST, parent: dict) -> bool:
    """Whether the str constant `node` names a column in a sqlite-utils Table.create call whose columns dict is
    written there, at a place create_table_sql resolves without regard to case (see above)."""
    up, chain = node, []
    while up in parent and not isinstance(up, (ast.keyword, ast.Call)):
        chain.append(up)
        up = parent[up]
    if not isinstance(up, ast.keyword) or len(chain) > 3:
        return False
    call = parent.get(up)
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "create"
            and call.args and isinstance(call.args[0], ast.Dict)
            and not any(k.arg == "transform" for k in call.keywords)):
        return False
    columns = [k.value for k in call.args[0].keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    containers = chain[1:]  # from the constant's container up to the keyword's value
    if up.arg in _CREATE_NAME_ARGS:
        ok = (not containers or (len(containers) == 1 and isinstance(containers[0], (ast.Set, ast.List, ast.Tuple))))
        return ok and node.value in columns
    if up.arg == "foreign_keys" and len(containers) == 2 and isinstance(containers[0], ast.Tuple) \
            and isinstance(containers[1], (ast.List, ast.Tuple)) and len(containers[0].elts) in (2, 3):
        index = next(i for i, e in enumerate(containers[0].elts) if e is node)
        return index == 2 or (index == 0 and node.value in columns)
    return False


def _case_only_create_arg(orig: ast.AST, mutant: ast.AST) -> bool:
    """Whether a mutant function differs from its original only by the case of a column name that sqlite-utils'
    Table.create resolves (see above)."""
    found = _one_string_changed(orig, mutant)
    if found is None:
        return False
    node, twin, parent, _, _ = found
    after = getattr(twin, "value", None)
    if not isinstance(after, str) or node.value == after or node.value.lower() != after.lower():
        return False
    return _create_column_arg(node, parent)


#: bumped when the rules above change, so that verdicts cached under older rules are worked out again
EQUIVALENCE_RULES = 2


def equivalent_by_construction(mutants: dict) -> set[str]:
    """Names of the generated mutants that only change the case of SQL that SQLite reads without regard to case, or
    of a column name that sqlite-utils' Table.create resolves.

    Read from the mutated sources in mutants/ (original and mutant function side by side); cached per file hash in
    mutants/sql-case-equivalent.json.
    """
    cache_file = Path("mutants") / "sql-case-equivalent.json"
    cache = json.loads(cache_file.read_text()) if cache_file.is_file() else {}
    out: set[str] = set()
    for source in sorted({src for src, _, _ in mutants.values()}):
        path = Path("mutants") / source
        text = path.read_text()
        digest = hashlib.sha256(text.encode()).hexdigest()
        if cache.get(source, {}).get("sha256") != digest or cache[source].get("rules") != EQUIVALENCE_RULES:
            funcs = {n.name: n for n in ast.walk(ast.parse(text))
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and "__mutmut_" in n.name}
            module = source[: -len(".py")].replace("/", ".").removesuffix(".__init__")
            found = sorted(f"{module}.{name}" for name, fn in funcs.items() if not name.endswith("__mutmut_orig")
                           and _equivalent(funcs[name.rsplit("__mutmut_", 1)[0] + "__mutmut_orig"], fn))
            cache[source] = {"sha256": digest, "rules": EQUIVALENCE_RULES, "names": found}
        out.update(cache[source]["names"])
    cache_file.write_text(json.dumps(cache, indent=1))
    return out & set(mutants)


def _equivalent(orig: ast.AST, mutant: ast.AST) -> bool:
    return _case_only_sql(orig, mutant) or _case_only_create_arg(orig, mutant)


def group_of(name: str) -> str | None:
    return next((g for g, prefix in GROUPS.items() if name.startswith(prefix)), None)


def draw(mutants: dict, per_group: int, seed: int, groups: list[str]) -> list[str]:
    """A simple random sample of per_group mutant names from each group (all of them if the group is smaller)."""
    rng = random.Random(seed)
    chosen: list[str] = []
    for g in groups:
        names = sorted(n for n in mutants if group_of(n) == g)
        chosen += names if len(names) <= per_group else sorted(rng.sample(names, per_group))
    return chosen


def run(names: list[str], max_children: int) -> float:
    """mutmut run on exactly these names, niced; returns wall seconds."""
    mutmut = shutil.which("mutmut") or str(Path(sys.executable).with_name("mutmut"))
    start = time.monotonic()
    for i in range(0, len(names), 400):  # keep the command line short
        subprocess.run(["nice", "-n", "10", mutmut, "run", "--max-children", str(max_children), *names[i : i + 400]])
    return time.monotonic() - start


def status(code: int | None) -> str:
    from mutmut.stats import status_by_exit_code

    return status_by_exit_code[code]


def line(label: str, counts: dict[str, int], total: int | None = None) -> str:
    k = sum(counts[s] for s in DETECTED)
    n = k + sum(counts[s] for s in UNDETECTED)
    lo, hi = wilson(k, n)
    ratio = f"{k / n:6.1%}" if n else "   n/a"
    of = f"{n}/{total}" if total is not None else f"{n}"
    return (
        f"{label:44} {of:>10} {counts['killed']:6} {counts['timeout']:4} {counts['survived']:6} {counts['no tests']:5}"
        f" {counts['suspicious'] + counts['segfault']:4} {counts['not checked']:5}  {ratio}  [{lo:.1%}, {hi:.1%}]"
    )


def report(mutants: dict, names: list[str], survivors: bool, left_out: set[str] = frozenset()) -> None:
    by_group: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_file: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    times = []
    for name in names:
        source, code, seconds = mutants[name]
        s = status(code)
        by_group[group_of(name) or "other"][s] += 1
        by_file[source][s] += 1
        if seconds is not None and s != "not checked":
            times.append(seconds)
    totals = defaultdict(int)
    for name in set(mutants) - left_out:
        totals[group_of(name) or "other"] += 1
    head = f"{'':44} {'n/total':>10} {'killed':>6} {'t/o':>4} {'surv.':>6} {'none':>5} {'susp':>4} {'unrun':>5}  ratio   95% Wilson"
    print(head)
    for g in by_group:
        print(line(g, by_group[g], totals[g]))
    print()
    print(head.replace("n/total", "      n"))
    for f in sorted(by_file):
        print(line(f, by_file[f]))
    if times:
        times.sort()
        print(f"\nseconds per mutant (mutmut's own timing, {len(times)} mutants): median {times[len(times) // 2]:.2f},"
              f" mean {sum(times) / len(times):.2f}, max {times[-1]:.1f}")
    if survivors:
        print("\nnot detected:")
        for name in names:
            s = status(mutants[name][1])
            if s in UNDETECTED:
                print(f"  {s:10} {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-group", type=int, default=120, help="mutants sampled per group (default 120)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--groups", nargs="+", default=list(GROUPS), choices=list(GROUPS))
    parser.add_argument("--files", nargs="+", help="run every mutant of these source files instead of a sample")
    parser.add_argument("--report", action="store_true", help="run nothing; report the verdicts mutmut stored")
    parser.add_argument("--rerun", action="store_true", help="run killed mutants again too")
    parser.add_argument("--survivors", action="store_true", help="list the mutants that were not detected")
    parser.add_argument("--exclude", nargs="+", default=[], metavar="GLOB",
                        help="leave out the drawn mutants of source files matching these patterns (counted)")
    parser.add_argument("--keep-equivalent", action="store_true",
                        help="keep the mutants that are equivalent by construction (as before 1 Dec 2026)")
    parser.add_argument("--list-equivalent", action="store_true",
                        help="name the mutants left out as equivalent by construction")
    parser.add_argument("--max-children", type=int, default=2)
    args = parser.parse_args(argv)
    if not Path("pyproject.toml").is_file() or not Path("storage").is_dir():
        parser.error("run from the repository root")

    generate()
    mutants = load()
    wanted = {str(Path(f)) for f in args.files or []}
    scope = {n: v for n, v in mutants.items() if (v[0] in wanted if args.files else group_of(n) in args.groups)}
    left_out = set() if args.keep_equivalent else equivalent_by_construction(scope)
    if left_out:
        print(f"left out {len(left_out)} of {len(scope)} mutants as equivalent by construction (a case change inside"
              f" SQL text that SQLite reads without regard to case, or of a column name sqlite-utils' create resolves;"
              f" --list-equivalent names them)")
        if args.list_equivalent:
            print("\n".join(f"  {n}" for n in sorted(left_out)))
    population = {n: v for n, v in scope.items() if n not in left_out}
    if args.files:
        names = sorted(population)
        if not names:
            parser.error(f"no mutants in {', '.join(args.files)}")
    else:
        names = draw(population, args.per_group, args.seed, args.groups)
    if args.exclude:
        kept = [n for n in names if not any(fnmatch.fnmatch(mutants[n][0], g) for g in args.exclude)]
        print(f"left out {len(names) - len(kept)} drawn mutants of files matching {' '.join(args.exclude)}")
        names = kept
    if not args.report:
        todo = [n for n in names if args.rerun or status(mutants[n][1]) not in DETECTED]
        if todo:
            seconds = run(todo, args.max_children)
            print(f"\nran {len(todo)} mutants in {seconds:.0f} s wall ({seconds / len(todo):.1f} s each)")
        mutants = load()
    report({n: v for n, v in mutants.items() if n in scope}, names, args.survivors, left_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
