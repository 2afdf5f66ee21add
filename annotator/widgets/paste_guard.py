"""A bracketed paste reaches a text field whole, control characters included.

A terminal in bracketed-paste mode sends a paste as ``ESC [ 200 ~`` text ``ESC [ 201 ~``. Some terminals pass an
ESC inside the pasted text through as it is (tmux's ``paste-buffer -p`` does); Textual's input parser then takes
that ESC for the start of a key sequence: the text after it was sent as key presses (the ESC itself as ``^``)
before the Paste event with the text before it, so pasting ``abc<ESC>xdef`` into a note stored ``^xdefabc``
(newcomer check, session 8). It also drops NUL from a paste.

PasteEscapes sits between the terminal and Textual's parser: inside a paste it replaces ESC, NUL and its own
marker character by two-character escapes the parser passes on as text, holding back an ESC at the end of a read
that may begin the closing ``ESC [ 201 ~``; outside a paste it changes nothing and holds nothing back (a lone
Escape key press reaches the parser at once). TextField turns the escapes back (unescape), so a note is stored
exactly as pasted. install() puts it in front of the parser of Textual's Linux driver (the driver makes its
parser itself, from the name XTermParser in its module); other drivers are left as they are.
"""
from __future__ import annotations

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
MARK = "\ue01b"  # a private-use character: MARK + a letter stands for one character of the paste
_ESCAPES = {"\x1b": MARK + "e", "\x00": MARK + "0", MARK: MARK + "m"}
_UNESCAPES = {v[1]: k for k, v in _ESCAPES.items()}


class PasteEscapes:
    """Stateful filter of the text a terminal sends (str in, str out; feed the reads in order)."""

    def __init__(self) -> None:
        self.in_paste = False
        self._held = ""  # inside a paste: the end of the last read that may begin PASTE_END
        self._tail = ""  # outside a paste: the last len(PASTE_START) - 1 characters passed on

    def feed(self, data: str) -> str:
        """The text to give the parser for the read `data` ("" at end of input gives back what is held)."""
        if not data:
            held, self._held = self._held, ""
            return held
        text, self._held = self._held + data, ""
        out: list[str] = []
        pos = 0
        while pos < len(text):
            if not self.in_paste:
                probe = self._tail + text[pos:]
                k = probe.find(PASTE_START)
                if k < 0:
                    out.append(text[pos:])
                    self._tail = probe[-(len(PASTE_START) - 1):]
                    break
                end = pos + k + len(PASTE_START) - len(self._tail)  # just after the marker, in text
                out.append(text[pos:end])
                pos, self._tail, self.in_paste = end, "", True
                continue
            nxt = min((i for i in (text.find(c, pos) for c in _ESCAPES) if i >= 0), default=-1)
            if nxt < 0:
                out.append(text[pos:])
                break
            out.append(text[pos:nxt])
            rest = text[nxt:]
            if rest.startswith(PASTE_END):
                out.append(PASTE_END)
                pos, self.in_paste = nxt + len(PASTE_END), False
            elif PASTE_END.startswith(rest):  # perhaps the closing marker, cut by the end of this read
                self._held = rest
                break
            else:
                out.append(_ESCAPES[text[nxt]])
                pos = nxt + 1
        return "".join(out)


def unescape(text: str) -> str:
    """The pasted text a Paste event's text stands for (PasteEscapes' escapes turned back)."""
    if MARK not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == MARK and i + 1 < len(text) and text[i + 1] in _UNESCAPES:
            out.append(_UNESCAPES[text[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def install() -> None:
    """Make Textual's Linux driver read through PasteEscapes (once per process; the apps call it on start)."""
    try:
        from textual.drivers import linux_driver
    except ImportError:  # no Linux driver here (Windows): its own parser is left as it is
        return
    base = linux_driver.XTermParser
    if getattr(base, "paste_escapes", False):
        return

    class PasteSafeParser(base):  # type: ignore[misc, valid-type]
        paste_escapes = True

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self._paste_escapes = PasteEscapes()

        def feed(self, data: str):
            return super().feed(self._paste_escapes.feed(data))

    linux_driver.XTermParser = PasteSafeParser
