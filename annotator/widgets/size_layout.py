"""A panel whose layout follows its size, chosen where Textual lays it out.

An item panel that switches layout at a size (item_quality's compact layout, pairwise's stacked sides) used to set
its class in `on_resize`. A Resize event reaches the widget only after the layout that gave it its size has been
drawn, so an item's first frame was drawn in the other layout, and the "seen" rule (annotator/widgets/seen.py)
looked at that frame: a part could count as seen in a layout that was never meant for the size. Here the classes
are set in `arrange`, which Textual's compositor calls with the panel's size in every layout pass, the first
included, before it places the children: class changes update the styles at once (App.update_styles), so the
children are placed with the styles of the layout for that size, and the first frame is drawn in it. (The same
kind as the MCQ question pane's height: mcq/view.py, QuestionPane.get_content_height.)
"""
from __future__ import annotations

from textual.geometry import Size


class LayoutBySize:
    """Mixin for a container Widget: `size_classes(size)` says which CSS classes hold for a content area of `size`
    cells (width x height); they are set before every arrangement. `size_classes_changed(size)` is called after a
    change (border titles that name the layout)."""

    def size_classes(self, size: Size) -> dict[str, bool]:  # pragma: no cover - every user overrides it
        raise NotImplementedError

    def size_classes_changed(self, size: Size) -> None:
        """Called after size_classes(size) changed a class (nothing by default)."""

    def apply_size_classes(self, size: Size) -> bool:
        """Set the classes for `size`; True when one changed (the arrangement cached for the old ones is
        dropped)."""
        changed = False
        for name, on in self.size_classes(size).items():
            if self.has_class(name) != on:  # type: ignore[attr-defined]
                self.set_class(on, name)  # type: ignore[attr-defined]  # styles are updated at once
                changed = True
        if changed:
            self._clear_arrangement_cache()  # type: ignore[attr-defined]
            self.size_classes_changed(size)
        return changed

    def arrange(self, size: Size, optimal: bool = False):
        if not optimal and size.width > 0 and size.height > 0:  # optimal: a measurement, not the panel's size
            self.apply_size_classes(size)
        return super().arrange(size, optimal)  # type: ignore[misc]
