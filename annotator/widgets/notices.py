"""How notifications (Textual's toasts, bottom right) are laid out on prefval's screens: app-wide CSS for the
annotation and adjudication apps.

Textual's ToastRack scrolls (overflow-y: scroll) when its toasts need more rows than the screen has (several at once
on a small terminal: 60x16 holds three), and its scrollbar then takes a gutter of two cells at the right edge, so the
toasts, half the rack's width and aligned right, stopped two cells short of the edge: the screen below showed there,
a stray ")" or "│" beside the toast (the last character of the hint line or a border). The rack gets no scrollbar
gutter: toasts reach the edge at every size, the newest at the bottom, as before.
"""

NOTICES_CSS = """
ToastRack { scrollbar-size-vertical: 0; }
"""
