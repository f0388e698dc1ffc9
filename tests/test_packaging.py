"""The project's promises about itself: environment.yml matches pyproject, the CI entry calls
`make test`, the README's quick start is the two commands."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

# conda-forge names that differ from PyPI's
CONDA_NAMES = {"duckdb": "python-duckdb"}


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].strip().lower()


def _spec(req: str) -> str:
    return req[len(_name(req)):].strip()


def test_environment_yml_in_sync_with_pyproject():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = py["dependencies"] + py["optional-dependencies"]["test"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_name(d): _spec(d) for d in env["dependencies"] if isinstance(d, str)}
    for req in wanted:
        name = CONDA_NAMES.get(_name(req), _name(req))
        assert name in conda, f"environment.yml lacks {name} (pyproject: {req})"
        assert conda[name] == _spec(req), f"{name}: environment.yml {conda[name]!r} != pyproject {_spec(req)!r}"
    extra = set(conda) - {CONDA_NAMES.get(_name(r), _name(r)) for r in wanted} - {"python", "pip"}
    assert not extra, f"environment.yml has packages pyproject does not: {sorted(extra)}"
    assert conda["python"] == ">=" + py["requires-python"].lstrip(">=")


def test_ci_runs_make_test():
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_readme_quick_start_is_two_commands():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick start.*?```(?:sh|bash)?\n(.*?)```", text, re.S)
    assert block, "README has no Quick start code block"
    cmds = [l for l in block.group(1).splitlines() if l.strip() and not l.strip().startswith("#")]
    assert cmds == ["make report", "make test"]


def test_console_script_declared():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert py["scripts"]["perdoc"] == "perdoc.cli:console"
    import perdoc.cli
    assert callable(perdoc.cli.console) and callable(perdoc.cli.main)
