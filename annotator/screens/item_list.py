"""The item list (`l` on the annotation screen): every item of the annotator's queue with its status and the
annotator's own answer, filtered by unanswered / skipped / flagged / noted / answered; Enter opens the item.

Only the annotator's own answers are listed (as they saw them: "option B", "left is better"), never a key, a
source or another annotator's answer, so the list is as blind as the annotation screen.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from annotator.safe_text import plain, visible
from annotator.session import LIST_PAGE, Session
from annotator.widgets.key_line import KeyGroups

FILTERS = {  # key -> (name, the Session.item_rows filter)
    "a": ("all", "all"),
    "o": ("unanswered", "unanswered"),  # open or started (partial)
    "s": ("skipped", "skipped"),
    "f": ("flagged", "flagged"),
    "n": ("noted", "noted"),
    "d": ("answered", "answered"),
}
STATUS_TEXT = {"open": "unanswered", "partial": "started", "skipped": "skipped", "answered": "answered"}
COLUMNS = ("#", "status", "flag", "note", "your answer")  # the answer last: it alone is shortened to fit ("…")


class ItemListScreen(ModalScreen[int | None]):
    """Dismisses with the queue position to open (Enter) or None (escape / l).

    The list is read a page of LIST_PAGE rows at a time (Session.item_rows) and its filters are counted in SQL
    (Session.item_counts), so the list of a queue of 100,000 answered items opens at once; `]` and `[` show the
    next and previous page when the filter lets more than a page through. "all" opens on the page of the current
    item."""

    DEFAULT_CSS = """
    ItemListScreen { align: center middle; }
    ItemListScreen > Vertical { width: 90%; height: 90%; border: thick $accent; background: $surface; }
    ItemListScreen #filters { background: $boost; }
    ItemListScreen #released { height: auto; padding: 0 1; color: $warning; text-style: bold; }
    ItemListScreen DataTable { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "close", "close"), Binding("l", "close", "close", show=False),
                Binding("q", "close", "close", show=False),
                Binding("right_square_bracket", "page(1)", "next page", show=False),
                Binding("left_square_bracket", "page(-1)", "previous page", show=False)] + [
        Binding(k, f"filter('{k}')", name, show=False) for k, (name, _) in FILTERS.items()]

    def __init__(self, session: Session, start: str = "a") -> None:
        super().__init__()
        self.session = session
        self.filter_key = start
        self.counts = session.item_counts()
        self.page_start = self._start_offset(start)
        self.rows = session.item_rows(FILTERS[start][1], self.page_start, LIST_PAGE, self.counts[FILTERS[start][1]])

    def _start_offset(self, key: str) -> int:
        """The first row of the page a filter opens on: the current item's page for "all", else the first."""
        if FILTERS[key][1] == "all" and self.session.index < len(self.session.queue):
            return self.session.index // LIST_PAGE * LIST_PAGE
        return 0

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Your items (enter opens one, escape closes)"
            # what study commands run elsewhere took out of the queue (Session.release_notice); no row when nothing
            notice = Static("", id="released")
            notice.display = False
            yield notice
            yield KeyGroups(id="filters")  # wrapped between filters at any width, never cut
            yield DataTable(id="items", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self._say(self.session.release_notice())
        self.action_filter(self.filter_key)
        self.query_one(DataTable).focus()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Lay the rows out again when the table's width changed (the answer column takes what is left)."""
        if self.query_one(DataTable).size.width != getattr(self, "_fitted_to", None):
            self._draw()

    def answer_width(self, rows: list[dict]) -> int | None:
        """Cells left for the answer column once #, status, flag and note have theirs (and the scrollbar its 2),
        at least 12; None before the table is laid out (then the column takes its answers' width)."""
        table = self.query_one(DataTable)
        if not table.size.width:
            return None
        pad = 2 * table.cell_padding
        widths = [max([len(COLUMNS[0])] + [len(f"{r['position'] + 1} ▶") for r in rows]),
                  max([len(COLUMNS[1])] + [len(STATUS_TEXT[r["status"]]) for r in rows]),
                  len(COLUMNS[2]), len(COLUMNS[3])]
        return max(12, table.size.width - 2 - sum(w + pad for w in widths) - pad)

    def shown(self) -> list[dict]:
        """The rows of the page shown (those the current filter lets through), in queue order."""
        return self.rows

    def action_page(self, step: int) -> None:
        """Show the next (step 1) or previous (step -1) page of the current filter, when there is one."""
        offset = self.page_start + step * LIST_PAGE
        if 0 <= offset < self.counts[FILTERS[self.filter_key][1]]:
            self.page_start = offset
            self.rows = self.session.item_rows(FILTERS[self.filter_key][1], offset, LIST_PAGE,
                                              self.counts[FILTERS[self.filter_key][1]])
            self._draw()
            self.query_one(DataTable).move_cursor(row=0)

    def action_filter(self, key: str) -> None:
        if key != self.filter_key:
            self.filter_key = key
            self.page_start = self._start_offset(key)
            self.rows = self.session.item_rows(FILTERS[key][1], self.page_start, LIST_PAGE,
                                              self.counts[FILTERS[key][1]])
        self._draw()

    def _draw(self) -> None:
        key = self.filter_key
        counts = self.counts
        groups = [(k, f"{name} ({counts[which]})", "reverse" if k == key else "")
                  for k, (name, which) in FILTERS.items()]
        n = counts[FILTERS[key][1]]
        if n > LIST_PAGE:
            last = min(self.page_start + LIST_PAGE, n)
            groups.append(("[ ]", f"pages: {self.page_start + 1}-{last} of {n}", ""))
        self.query_one("#filters", KeyGroups).set_groups(groups)
        table = self.query_one(DataTable)
        table.clear(columns=True)
        shown = self.shown()
        self._fitted_to = table.size.width
        for name in COLUMNS[:-1]:
            table.add_column(name)
        table.add_column(COLUMNS[-1], width=self.answer_width(shown))
        current = self.session.index
        for r in shown:
            i = r["position"]
            table.add_row(Text(f"{i + 1}" + (" ▶" if i == current else "")), Text(STATUS_TEXT[r["status"]]),
                          Text("⚑" if r["flagged"] else ""), Text("✎" if r["noted"] else ""),
                          Text(visible(r["answer"], layout=False), overflow="ellipsis", no_wrap=True),
                          key=f"{i}:{r['unit_id']}")
        positions = [r["position"] for r in shown]
        if current in positions:
            table.move_cursor(row=positions.index(current))

    def _say(self, text: str) -> None:
        """Show `text` (plain text) on the line above the filters; "" hides the line."""
        line = self.query_one("#released", Static)
        line.update(plain(text, layout=False))
        line.display = bool(text)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Open the item of the row, found again in the queue as it is in the file now: a study command run
        elsewhere since the list was read may have taken it out (then the list says so, is read again and stays
        open: a released item never opens as if it could be answered) or moved it to another number."""
        listed, unit_id = event.row_key.value.split(":", 1)
        s = self.session
        s.sync_queue()  # one number read; the queue is read again when its length changed
        position = s.position_of(unit_id) if s.is_live(unit_id) else None
        if position is not None:
            self.dismiss(position)
            return
        self.counts = s.item_counts()
        self.page_start = self._start_offset(self.filter_key)
        self.rows = s.item_rows(FILTERS[self.filter_key][1], self.page_start, LIST_PAGE,
                                self.counts[FILTERS[self.filter_key][1]])
        self._draw()
        self._say(f"Item #{int(listed) + 1} as listed was released: taken out of your queue by a study command, it "
                  "can no longer be answered here. " + s.release_notice())

    def action_close(self) -> None:
        self.dismiss(None)
