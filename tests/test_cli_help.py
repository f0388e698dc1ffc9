"""Every command-line option and argument says what it does: the parser is walked, not listed by hand,
so a flag added without help fails here."""

import argparse

import pytest

from perdoc.cli import build_parser, main


def _parsers(parser, prog="perdoc"):
    """(prog, parser) for the top-level parser and every subcommand, recursively."""
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{prog} {name}")


def _undocumented(parser):
    missing = []
    for prog, p in _parsers(parser):
        for action in p._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if isinstance(action, argparse._SubParsersAction):
                helps = {a.dest: a.help for a in action._choices_actions}
                missing += [f"{prog} {name} (subcommand)" for name in action.choices
                            if not (helps.get(name) or "").strip()]
                continue
            text = action.help
            if text is None or text == argparse.SUPPRESS or not str(text).strip():
                missing.append(f"{prog} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_option_and_subcommand_has_help():
    parser = build_parser()
    progs = [prog for prog, _ in _parsers(parser)]
    for command in ("estimate", "compare", "plan", "simulate", "report"):
        assert f"perdoc {command}" in progs
    assert _undocumented(parser) == []


def test_the_walk_finds_an_option_without_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub.choices["compare"].add_argument("--undocumented-flag")
    sub.choices["plan"].add_argument("--blank", help="  ")
    assert _undocumented(parser) == ["perdoc compare --undocumented-flag", "perdoc plan --blank"]


@pytest.mark.parametrize("command", ["estimate", "compare", "plan", "simulate", "report"])
def test_help_prints_and_exits_cleanly(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: perdoc {command}")
    if command in ("compare", "estimate"):
        assert "confidence level (default 0.95)" in out
