"""The `agentrt` entry point, and the error handling every console command shares.

The commands themselves (:mod:`agentrt._commands`) need the ``cli`` extra
(typer, rich); without it `agentrt` says in one line what to install.
User errors (:class:`~agentrt._errors.UserError`) print one line to stderr
and exit 2; no traceback reaches the user for something they can fix.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from agentrt._errors import UserError

if TYPE_CHECKING:
    import typer

__all__ = ["CLI_MODULES", "first_user_error", "main", "printable", "run_app"]

# what the `cli` extra brings; a missing one of these means the extra is missing
CLI_MODULES = frozenset({"typer", "rich", "click"})


def first_user_error(exc: BaseException) -> UserError | None:
    """The user error inside ``exc``, looking through task-group exception groups.

    A task group wraps a failed child's error; the user still needs only
    the one line that names what to fix.
    """
    if isinstance(exc, UserError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            found = first_user_error(sub)
            if found is not None:
                return found
    return None


def printable(text: str) -> str:
    """``text`` on one line with each character that is not printable shown as its escape.

    An error can name what a user's input holds (a file name, a command's
    output); an ESC, a newline or a bidi override in it is shown as ``\\x1b``,
    ``\\n``, ``\\u202e`` instead of reaching the terminal.
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def run_app(typer_app: typer.Typer, argv: list[str] | None = None) -> None:
    """Run a typer app, turning user errors into one-line messages and exit 2.

    Shared by every console entry point of the project, so all of them
    treat bad input the same way.
    """
    try:
        typer_app(args=argv, standalone_mode=True)
    except (UserError, BaseExceptionGroup) as exc:
        user = first_user_error(exc)
        if user is None:
            raise
        from rich.console import Console
        from rich.markup import escape

        Console(stderr=True, emoji=False).print(
            f"[red]error:[/] {escape(printable(str(user)))}", highlight=False, soft_wrap=True
        )
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)


def main(argv: list[str] | None = None) -> None:
    """Entry point of `agentrt`."""
    try:
        from agentrt._commands import app
    except ModuleNotFoundError as exc:
        if exc.name not in CLI_MODULES:
            raise
        print(
            f"error: the agentrt command line needs the 'cli' extra ({exc.name} is not "
            "installed): pip install 'agentrt[cli]'",
            file=sys.stderr,
        )
        sys.exit(2)
    run_app(app, argv)
