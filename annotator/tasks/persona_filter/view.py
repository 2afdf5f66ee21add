"""The persona_filter panel: the record, its profile (when it has one), and the numbered drop reasons."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from annotator.safe_text import markup, plain
from annotator.widgets.paged_text import PagedText
from annotator.widgets.seen import must_see
from annotator.widgets.scroll_pane import ScrollPane

TYPE_TITLES = {"persona": "Persona", "profile": "Profile", "event": "Life event", "preference": "Preference"}


class PersonaRecordView(ScrollPane):
    """text: the record; record_type: persona|profile|event|preference; profile: text shown above it or None;
    reasons: drop reasons in digit order (1 = reasons[0]); decision: "keep"/"drop"/None (the annotator's own
    current answer); chosen: the reasons of that answer (highlighted). The panel scrolls as one pane, so that the
    profile, the record and every drop reason can be brought on screen at any terminal size."""

    DEFAULT_CSS = """
    PersonaRecordView { height: 1fr; }
    PersonaRecordView #profile { height: auto; border: round $secondary; padding: 0 1; }
    PersonaRecordView #record { height: auto; border: round $accent; padding: 0 1; }
    PersonaRecordView #record.kept { border: round $success; }
    PersonaRecordView #record.dropped { border: round $error; }
    PersonaRecordView .record-text { text-style: bold; }
    PersonaRecordView #reasons { height: auto; border: round $panel; padding: 0 1; }
    PersonaRecordView .reason.chosen { background: $error 30%; text-style: bold; }
    """

    def __init__(self, text: str, record_type: str, profile: str | None, reasons: list[str],
                 decision: str | None, chosen: list[str]) -> None:
        super().__init__()
        self.pr_text = text
        self.pr_record_type = record_type
        self.pr_profile = profile
        self.pr_reasons = reasons
        self.pr_decision = decision
        self.pr_chosen = chosen

    def compose(self) -> ComposeResult:
        if self.pr_profile:
            with Vertical(id="profile") as prof:
                prof.border_title = "Profile it belongs to"
                yield must_see(PagedText(self.pr_profile, classes="profile-text"), "the profile")
        cls = {"keep": "kept", "drop": "dropped"}.get(self.pr_decision or "", "")
        with Vertical(id="record", classes=cls) as rec:
            rec.border_title = plain(TYPE_TITLES.get(self.pr_record_type, self.pr_record_type.title()),
                                     layout=False)
            yield must_see(PagedText(self.pr_text, classes="record-text"), "the record")
        with Vertical(id="reasons") as box:
            box.border_title = "Drop reasons"  # the key line says how: digits mark or unmark, d drops
            for i, reason in enumerate(self.pr_reasons):
                on = reason in self.pr_chosen
                yield must_see(Static(markup("[b]$n[/b]  $mark $reason", n=i + 1, mark="[x]" if on else "[ ]",
                                             reason=reason), classes="reason chosen" if on else "reason",
                                      id=f"reason-{i}"), "the drop reasons")
