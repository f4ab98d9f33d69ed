"""Text for a terminal: what is printed from received data, and streams that cannot show it all.

``clean(text)`` is what every command prints of text it did not write itself (a seat name or a
value from a record, a config or a results folder): control characters (escape sequences
included), bidirectional controls and lone surrogates come out as visible escapes such as
``\\x1b``, so received text can neither drive the terminal, nor print reversed, nor make
``print`` fail.

``graceful_streams()`` wraps a command (``sim.cli.main``): on a stream whose encoding cannot
write the symbols the commands use (``PYTHONIOENCODING=ascii``, a latin-1 terminal), ``♠ ♥ ♦ ♣``
come out as ``s h d c``, ``≥`` as ``>=``, ``…`` as ``...`` and so on, and whatever is still
not encodable (titles such as 本科生) as ``?``; on any stream, an unencodable character never
raises.
"""

from __future__ import annotations

import contextlib
import re
import sys
import unicodedata
from collections.abc import Iterator
from typing import IO, Any

# control characters (C0 but tab and newline, DEL, C1), lone surrogates and the bidirectional
# controls (U+061C, U+200E/F, U+202A-E, U+2066-9: a name with U+202E would print reversed)
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff" + _BIDI + "]")
_UNSAFE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff" + _BIDI + "]")

# what the commands print beyond ASCII, and its ASCII spelling
ASCII = {
    "♠": "s", "♥": "h", "♦": "d", "♣": "c", "…": "...", "–": "-", "—": "-", "−": "-",
    "─": "-", "×": "x", "±": "+/-", "≥": ">=", "≤": "<=", "·": "|", "→": "->", "◀": "<",
    "✗": "x", "α": "alpha", "β": "beta", "≈": "~", "√": "sqrt ", "²": "^2", "χ": "chi",
    "主": "trump", "付": "side ", "扣底": "kou di",
    "\ufe0f": "",
}
_ASCII_TABLE = str.maketrans({k: v for k, v in ASCII.items() if len(k) == 1})
_PROBE = "♠♥♦♣≥…–"


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def clean(text: Any, newlines: bool = True) -> str:
    """``text`` (made a string) with control characters and lone surrogates escaped
    (``'\\x1b[2J'`` prints as ``\\x1b[2J``); newlines and tabs kept unless ``newlines`` is
    False (a name, a value: always one line)."""
    return (_UNSAFE if newlines else _UNSAFE_LINE).sub(_escape, str(text))


def to_ascii(text: str) -> str:
    """The ASCII spelling of the symbols the commands print (``'10♥ ≥ 5'`` -> ``'10h >= 5'``);
    other characters unchanged."""
    return text.replace("扣底", ASCII["扣底"]).translate(_ASCII_TABLE)


def can_encode(stream: IO[str], text: str = _PROBE) -> bool:
    """Whether ``stream``'s encoding can write ``text``."""
    enc = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(enc)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def width(text: str) -> int:
    """Terminal columns of ``text`` without ANSI colour codes (wide CJK characters count 2)."""
    plain = _ANSI.sub("", text)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else
               0 if unicodedata.combining(ch) or ch == "\ufe0f" else 1 for ch in plain)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class AsciiStream:
    """A text stream that writes the ASCII spelling of the commands' symbols to ``raw`` (whose
    encoding lacks them); everything else is the wrapped stream's."""

    def __init__(self, raw: IO[str]) -> None:
        self._raw = raw

    def write(self, text: str) -> int:
        self._raw.write(to_ascii(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


@contextlib.contextmanager
def graceful_streams() -> Iterator[None]:
    """Standard output and error that never raise on a character they cannot encode: symbols
    in ASCII where the encoding lacks them, the rest replaced by ``?``. Restored on exit."""
    saved = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        errors = getattr(stream, "errors", None)
        changed = False
        # 'surrogateescape' (the C locale's) cannot write a lone high surrogate either
        if errors in ("strict", "surrogateescape") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="replace")
                changed = True
            except (ValueError, OSError):  # pragma: no cover - a closed or odd stream
                pass
        wrapped = not can_encode(stream)
        if wrapped:
            setattr(sys, name, AsciiStream(stream))
        saved.append((name, stream, changed, errors, wrapped))
    try:
        yield
    finally:
        for name, stream, changed, errors, wrapped in saved:
            if wrapped and isinstance(getattr(sys, name), AsciiStream):
                setattr(sys, name, stream)
            if changed:
                try:
                    stream.reconfigure(errors=errors)
                except (ValueError, OSError):  # pragma: no cover
                    pass
