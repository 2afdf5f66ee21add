"""The persona_filter panel: the person's profile (when there is one), the record with every field its decision
depends on (annotator/tasks/persona_filter/shown.py declares them per record type), a line naming the declared
fields the record lacks, and the numbered drop reasons."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from annotator.safe_text import markup, plain
from annotator.tasks.persona_filter.shown import PROFILE_PART, ShownRecord
from annotator.widgets.paged_text import PagedText
from annotator.widgets.seen import must_see
from annotator.widgets.scroll_pane import ScrollPane


class PersonaRecordView(ScrollPane):
    """shown: the record as shown.shown_record gives it (title, text, profile, fields, lacking); reasons: drop
    reasons in digit order (1 = reasons[0]); decision: "keep"/"drop"/None (the annotator's own current answer);
    chosen: the reasons of that answer (highlighted). The panel scrolls as one pane, so that the profile, the
    record, each of its fields and every drop reason can be brought on screen at any terminal size. Every value
    is data: shown through safe_text (plain text, control characters as visible escapes, never markup)."""

    DEFAULT_CSS = """
    PersonaRecordView { height: 1fr; }
    PersonaRecordView #profile { height: auto; border: round $secondary; padding: 0 1; }
    PersonaRecordView #record { height: auto; border: round $accent; padding: 0 1; }
    PersonaRecordView #record.kept { border: round $success; }
    PersonaRecordView #record.dropped { border: round $error; }
    PersonaRecordView .record-text { text-style: bold; }
    PersonaRecordView .lacking { color: $text-warning; }
    PersonaRecordView #reasons { height: auto; border: round $panel; padding: 0 1; }
    PersonaRecordView .reason.chosen { background: $error 30%; text-style: bold; }
    """

    def __init__(self, shown: ShownRecord, reasons: list[str], decision: str | None, chosen: list[str]) -> None:
        super().__init__()
        self.shown = shown
        self.pr_text = shown.text
        self.pr_record_type = shown.kind
        self.pr_profile = shown.profile
        self.pr_reasons = reasons
        self.pr_decision = decision
        self.pr_chosen = chosen

    def compose(self) -> ComposeResult:
        s = self.shown
        if s.profile:
            with Vertical(id="profile") as prof:
                prof.border_title = "The person's profile"
                yield must_see(PagedText(s.profile, classes="profile-text"), PROFILE_PART)
        cls = {"keep": "kept", "drop": "dropped"}.get(self.pr_decision or "", "")
        with Vertical(id="record", classes=cls) as rec:
            rec.border_title = plain(s.title, layout=False)
            yield must_see(PagedText(s.text, classes="record-text"), "the record")
            for i, part in enumerate(s.fields):
                # the label is the program's; the value is data, inserted as plain visible text
                yield must_see(PagedText(part.value, template="[b]$label:[/b] $text", values={"label": part.label},
                                         classes="record-field", id=f"field-{i}"), part.seen)
            if s.lacking:
                yield must_see(Static(markup("[i]Not in the record: $what[/i]", what=", ".join(s.lacking)),
                                      classes="lacking", id="lacking"), "what the record lacks")
        with Vertical(id="reasons") as box:
            box.border_title = "Drop reasons"  # the key line says how: digits mark or unmark, d drops
            for i, reason in enumerate(self.pr_reasons):
                on = reason in self.pr_chosen
                line = must_see(Static(markup("[b]$n[/b]  $mark $reason", n=i + 1, mark="[x]" if on else "[ ]",
                                              reason=reason), classes="reason chosen" if on else "reason",
                                       id=f"reason-{i}"), "the drop reasons")
                # the study's reasons are the same on every record: once read whole in this session they need no
                # scrolling again on the next record (annotator/widgets/seen.py, SeenInSession); a new session,
                # or other reasons, must be read again
                line.seen_key = ("drop reason", i, reason)
                yield line
