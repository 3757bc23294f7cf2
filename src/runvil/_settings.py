"""How a Pack (or a face) declares a setting, so that every face reads it the same way.

An operator sets runvil up three ways: a ``runvil.toml`` key, an environment variable and a
command-line flag. If each Pack read those itself, each would resolve them in its own order,
word its errors its own way and be missing from ``runvil config``. So a Pack only *declares*
its settings, one :class:`Setting` each (name, parser, default, variables, flag), and the faces
do the rest from the declarations: the file's keys and the "did you mean" for a typo, the
variables, the flags of every command, the order flag > environment > file > default, and the
``runvil config`` listing. The Host then hands each Pack the values set for it
(:attr:`runvil.PackContext.settings`).

The parsers here are the common ones (true/false, one of some words, a whole number, a
positive number, a non-empty string, a list of names). A parser takes ``(value, where)``, where
``value`` is what the file holds (a TOML value) or the text of a variable or flag, and
``where`` names its source (``/home/me/.config/runvil/runvil.toml: fetch.robots``,
``RUNVIL_FETCH_ROBOTS``, ``--robots``), and returns the typed value or raises ``ValueError``
whose message names ``where``. This module imports nothing, so declaring settings costs a
command line nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Needed",
    "Parser",
    "Setting",
    "as_bool",
    "as_names",
    "as_str",
    "choice",
    "positive_number",
    "whole_number",
]

#: A setting's parser: ``(value, where) -> typed value``, ``ValueError`` naming ``where``.
Parser = Callable[[Any, str], Any]


@dataclass(frozen=True)
class Needed:
    """What a dependent setting reads, given the settings resolved before it: the variables
    that set it in this case (in place of :attr:`Setting.env`), and the error when nothing sets
    it (``None``: its default applies)."""

    env: tuple[str, ...]
    missing: str | None = None


@dataclass(frozen=True)
class Setting:
    """One setting: where it is read from and how its value is checked.

    ``key`` is the dotted ``runvil.toml`` key (``fetch.robots`` is ``robots`` in the
    ``[fetch]`` table); a Pack's key starts with its Pack id (``notes.prefix`` for
    ``acme/notes``). ``env`` are the variables that set it (the first set and not blank wins).
    ``parse(value, where)`` checks a value (see the module docstring). ``default`` is the value
    when nothing sets it: a Pack is handed the settings that were set, and the defaults apart.

    ``flag`` is the name under which the command line hands the value over (``None``: no
    flag); ``option`` the option itself (``--robots``, or ``--robots/--no-robots`` for a
    switch), added to every command that reads the configuration, or to those ``commands``
    names; ``multiple`` makes it repeatable, its values together one list (each may hold names
    separated by commas). ``metavar`` and ``help`` are what ``--help`` shows. ``show(value)``
    is how ``runvil config`` shows a value (mask a password here), ``None`` leaving it out; by
    default as it is.

    Some settings depend on others (which key a search provider needs depends on the
    provider). ``implied_by`` are ``(variable, value)`` pairs: when nothing sets the setting,
    the first variable set (and not blank) gives it that value, and is its source.
    ``needs(values)``, given the values of the settings resolved before it (by key), says what
    it reads here (:class:`Needed`), or ``None`` when it is not read at all (its default
    applies); such a setting has a source only when something sets it. ``env`` then lists every
    variable it may read, so none is refused as unknown. ``listed=False`` marks a key that only
    helps another setting's ``needs`` (``search.api_key_env`` names a variable): ``runvil
    config`` neither shows it nor gives its source, and no Pack is handed it.
    """

    key: str
    env: tuple[str, ...]
    parse: Parser
    default: Any = None
    flag: str | None = None
    option: str | None = None
    metavar: str = "VALUE"
    help: str = ""
    commands: tuple[str, ...] | None = None
    multiple: bool = False
    show: Callable[[Any], Any] | None = None
    implied_by: tuple[tuple[str, Any], ...] = ()
    needs: Callable[[Mapping[str, Any]], Needed | None] | None = None
    listed: bool = True

    @property
    def table(self) -> str:
        """The ``runvil.toml`` table the key is in (``fetch``), or ``""`` for a top-level key."""
        return self.key.rsplit(".", 1)[0] if "." in self.key else ""

    @property
    def name(self) -> str:
        """The key's last part (``robots``)."""
        return self.key.rsplit(".", 1)[-1]


# -- the common parsers ------------------------------------------------------------------------

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def as_bool(value: Any, where: str) -> bool:
    """true/false in the file; 1, true, yes, on / 0, false, no, off in a variable."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE:
        return True
    if isinstance(value, str) and value.strip().lower() in _FALSE:
        return False
    raise ValueError(f"{where} must be true or false, not {value!r}")


def choice(choices: tuple[str, ...]) -> Parser:
    """A parser for one of ``choices`` (any case, trimmed)."""

    def parse(value: Any, where: str) -> str:
        if isinstance(value, str) and value.strip().lower() in choices:
            return value.strip().lower()
        raise ValueError(f"{where} must be one of {', '.join(choices)}, not {value!r}")

    return parse


def whole_number(unit: str) -> Parser:
    """A parser for a whole number of ``unit`` (``"pages"``), 1 or more: an integer in the
    file, digits in a variable."""

    def parse(value: Any, where: str) -> int:
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        raise ValueError(f"{where} must be a whole number of {unit}, 1 or more, not {value!r}")

    return parse


def positive_number(unit: str) -> Parser:
    """A parser for a number above 0 (a number in the file, a decimal number in a variable),
    whose error names ``unit`` (``"seconds"``, ``"searches per second"``)."""

    def parse(value: Any, where: str) -> float:
        number: Any = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        if (
            isinstance(number, int | float) and not isinstance(number, bool)
            and 0 < number < float("inf")
        ):
            return float(number)
        raise ValueError(f"{where} must be a number of {unit} above 0, not {value!r}")

    return parse


def as_str(value: Any, where: str) -> str:
    """A non-empty string, trimmed."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError(f"{where} must be a non-empty string, not {value!r}")


def as_names(value: Any, where: str) -> tuple[str, ...]:
    """A list of names: a TOML array of strings, or (from a variable or a flag) one string of
    names separated by commas or spaces."""
    if isinstance(value, str):
        return tuple(part for part in value.replace(",", " ").split() if part)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise ValueError(f"{where} must be a list of names, not {value!r}")
