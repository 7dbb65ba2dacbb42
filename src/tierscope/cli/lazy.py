"""Commands loaded when they run: the top-level group lists every command from a table and
imports a command's module (and builds its options) only when that command is invoked.

``tierscope --help`` then imports no command module, and ``tierscope summary`` none but
:mod:`tierscope.cli.analysis`: typer builds a command's click options from its signature, which
costs as much as importing the module, so it is done for the command that runs alone.
"""

from __future__ import annotations

import copy
import functools
import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import Any

import typer.main
from typer.core import TyperGroup


def summary(help_text: str | None) -> str:
    """A command's line in its group's ``--help``: the first paragraph of its help, on one line
    (click's plain help cuts it at the first sentence and the terminal's width; rich's showed it whole)."""
    return " ".join((help_text or "").split("\n\n")[0].split())


@contextmanager
def _stop_says_so() -> Iterator[None]:
    """Ctrl-C or SIGTERM as :func:`tierscope.cli.common.interrupted`'s line and exit code."""
    try:
        yield
    except KeyboardInterrupt as exc:
        from tierscope.cli.common import interrupted

        raise typer.Exit(interrupted(exc)) from None


class Group(TyperGroup):
    """A typer group whose ``--help`` lists each command with its whole :func:`summary`, and
    which stops on Ctrl-C with :func:`tierscope.cli.common.interrupted`'s line and exit code."""

    def list_commands(self, ctx: Any) -> list[str]:
        # The names alone (typer's own reads the commands too, which would build every one).
        return list(self.commands)

    #: Headings over the commands (heading -> names); a command under none is listed under "Commands".
    sections: Mapping[str, tuple[str, ...]] = {}

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        names = self.list_commands(ctx)
        placed = {name for listed in self.sections.values() for name in listed}
        groups = [(title, [n for n in listed if n in names]) for title, listed in self.sections.items()]
        rest = [n for n in names if n not in placed]
        if rest:
            groups = [("Commands", rest)] if not groups else [*groups, ("Other commands", rest)]
        for title, listed in groups:
            rows = [(name, self.command_summary(ctx, name)) for name in listed]
            rows = [(name, text) for name, text in rows if text is not None]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    # Ctrl-C or SIGTERM before a command's body (reading the options, which imports pydantic,
    # importing the command's module) says so too: typer would exit 130 without a word, for
    # SIGTERM as well. A command's own body: tierscope.cli.common.guarded.
    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        with _stop_says_so():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: Any) -> Any:
        with _stop_says_so():
            return super().invoke(ctx)

    def get_command(self, ctx: Any, name: str) -> Any:
        # every command's number options say in the project's words what to give (tierscope.cli.number_options)
        from tierscope.cli.number_options import word_numbers

        command = super().get_command(ctx, name)
        return None if command is None else word_numbers(command)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        # `tierscope collect logs/train.log` (the README's `collect files` left out): a path where a command of a
        # group with a `files` command is asked for names the command it meant, not only "No such command"
        if args and "files" in self.commands and args[0] not in self.commands and _looks_like_path(args[0]):
            ctx.fail(
                f"No such command {args[0]!r}: to collect log files, name the command: "
                f"tierscope {ctx.info_name} files {' '.join(args)}"
            )
        return super().resolve_command(ctx, args)

    def command_summary(self, ctx: Any, name: str) -> str | None:
        """``name``'s line in the help; None for a hidden command."""
        command = self.get_command(ctx, name)
        return None if command is None or command.hidden else summary(command.help or command.short_help)


def _looks_like_path(word: str) -> bool:
    """Whether a word given as a command is a path (a folder in it, a suffix, or a file or folder there)."""
    import os

    return "/" in word or os.sep in word or "." in word.lstrip(".") or os.path.exists(word)


@functools.cache
def _module_app(module: str) -> Any:
    """An app holding what ``tierscope.cli.<module>`` registers (its ``register(app)``)."""
    from tierscope.cli.common import App

    app = App()
    importlib.import_module(f"tierscope.cli.{module}").register(app)
    return app


@functools.cache
def _command(module: str, name: str) -> Any:
    """The click command (or group) ``name`` of ``tierscope.cli.<module>``, built alone, once per
    process, as typer builds a group's commands (its others' options are not built)."""
    app = _module_app(module)
    for info in app.registered_commands:
        if info.name == name:
            return typer.main.get_command_from_info(
                info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode
            )
    for group in app.registered_groups:
        if group.name == name:
            return _group(group, app)
    raise KeyError(f"tierscope.cli.{module} registers no command {name!r}")


def _group(info: Any, app: Any) -> Any:
    """The click group of ``info`` (a typer group of ``app``), each of its commands built on first lookup:
    typer builds them all, and ``collect files`` spent ~4 ms of CPU building ``collect cloud``'s options."""
    settings = {"pretty_exceptions_short": app.pretty_exceptions_short, "rich_markup_mode": app.rich_markup_mode}
    listed = info.typer_instance.registered_commands
    if any(command.name is None for command in listed):  # named by its function: typer's to find
        return typer.main.get_group_from_info(info, suggest_commands=app.suggest_commands, **settings)
    bare = copy.copy(info)
    bare.typer_instance = copy.copy(info.typer_instance)
    bare.typer_instance.registered_commands = []
    group = typer.main.get_group_from_info(bare, suggest_commands=app.suggest_commands, **settings)
    builders = {c.name: functools.partial(typer.main.get_command_from_info, c, **settings) for c in listed}
    commands = LazyCommands(builders)
    for name, command in group.commands.items():  # its groups, built
        commands[name] = command
    group.commands = commands
    return group


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands, by name, in the order of ``listed`` (name -> what builds it): a command is
    built on first lookup, once. Commands added later (typer adds none to a group without registered
    commands) are kept after the listed ones."""

    def __init__(self, listed: Mapping[str, Callable[[], Any]]) -> None:
        self._listed = listed
        self._added: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name in self._added:
            return self._added[name]
        if name not in self._listed:
            raise KeyError(name)
        built = self._listed[name]()
        self._added[name] = built
        return built

    def __setitem__(self, name: str, command: Any) -> None:
        self._added[name] = command

    def __delitem__(self, name: str) -> None:
        del self._added[name]

    def __iter__(self) -> Iterator[str]:
        yield from self._listed
        yield from (name for name in self._added if name not in self._listed)

    def __len__(self) -> int:
        return len(self._listed) + sum(name not in self._listed for name in self._added)


def lazy_group(
    listed: Mapping[str, tuple[str, str]], sections: Mapping[str, tuple[str, ...]] | None = None
) -> type[Group]:
    """A :class:`Group` class (for ``typer.Typer(cls=...)``) whose commands are ``listed``:
    name -> (the module of :mod:`tierscope.cli` that registers it, its :func:`summary`), shown in
    ``--help`` under the headings of ``sections`` (:attr:`Group.sections`)."""

    class LazyGroup(Group):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            commands = LazyCommands(
                {name: functools.partial(_command, module, name) for name, (module, _) in listed.items()}
            )
            for name, command in self.commands.items():
                commands[name] = command
            self.commands = commands

        def command_summary(self, ctx: Any, name: str) -> str | None:
            # From the table: listing the commands must not import them.
            return listed[name][1] if name in listed else super().command_summary(ctx, name)

    LazyGroup.sections = dict(sections or {})
    return LazyGroup
