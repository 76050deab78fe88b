"""Exceptions shared by the scenario loader, the runner and the CLI."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tcplab.results import RunResult


class ScenarioError(ValueError):
    """A scenario (or a value given for one) is invalid.

    The message is one line: ``<field path>: <rule> (got <value>)``, e.g.
    ``flows[0].mss: must be between 64 and 65495 (got 10)``. ``source`` names the
    file (or ``<built-in p2p-bulk>``) when the error is tied to one.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.source = source

    def __str__(self) -> str:
        return self.message

    def located(self) -> str:
        """The message prefixed with the scenario source, if known."""
        return f"{self.source}: {self.message}" if self.source else self.message


class InvariantError(RuntimeError):
    """The simulator reported that a run broke one of its invariants.

    ``result`` holds the run's :class:`~tcplab.results.RunResult` when the run finished.
    """

    def __init__(self, violations: list[str], result: RunResult | None = None) -> None:
        self.violations = list(violations)
        self.result = result
        super().__init__(
            f"{len(self.violations)} invariant violation(s): " + "; ".join(self.violations)
        )


#: The most characters of a user-supplied key or value an error message repeats.
ECHO_MAX = 160


def cut(text: str) -> str:
    """``text`` if short; else its start and end around how much was left out (an error line
    once repeated a 240 KB key)."""
    if len(text) <= ECHO_MAX:
        return text
    head, tail = text[: ECHO_MAX - 40], text[-24:]
    return f"{head}...[{len(text) - len(head) - len(tail)} more characters]...{tail}"


def field_error(field: str, rule: str) -> ScenarioError:
    """``ScenarioError("<field>: <rule>")``, the field cut to :data:`ECHO_MAX` characters."""
    return ScenarioError(f"{cut(field)}: {rule}" if field else rule)


def show(value: object) -> str:
    """Render a user-supplied value the way it would be written in TOML (cut to
    :data:`ECHO_MAX` characters)."""
    return cut(_show(value))


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        return repr(value)
    except RecursionError:
        return f"a {type(value).__name__} nested too deeply"
