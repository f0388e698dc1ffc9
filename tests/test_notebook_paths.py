"""The notebooks' default params file (``../params/example.yaml``, relative to notebooks/) is found
wherever a notebook is run from: analyse() tries the working directory, then the notebooks folder."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from perdoc.params import ParamsError
from perdoc.report.build import _params_path, notebook_dir

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "03_intervals.ipynb"
DEFAULT = "../params/example.yaml"     # the notebooks' parameters cell


def test_the_notebooks_default_is_the_one_resolved_here():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert f'params_file = "{DEFAULT}"' in cell.source


def test_relative_path_falls_back_to_the_notebooks_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not Path(DEFAULT).exists()
    assert _params_path(DEFAULT).resolve() == (ROOT / "params" / "example.yaml").resolve()
    mine = tmp_path / "mine.yaml"          # a path that exists where it is run from wins
    mine.write_text("name: mine\n")
    assert _params_path("mine.yaml") == Path("mine.yaml")


def test_neither_place_names_both(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParamsError) as err:
        _params_path("../params/nothere.yaml")
    msg = str(err.value)
    assert "params file not found: ../params/nothere.yaml" in msg
    assert str(tmp_path) in msg and str(notebook_dir()) in msg and "\n" not in msg


def _papermill(cwd: Path, notebook: str, out: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PERDOC_NOTEBOOKS", "PERDOC_CACHE_DIR")}
    run = subprocess.run([sys.executable, "-m", "papermill", notebook, str(out), "--no-progress-bar"],
                         cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert outputs and not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "params file not found" not in text


def test_papermill_from_the_repository_root(tmp_path):
    _papermill(ROOT, "notebooks/03_intervals.ipynb", tmp_path / "out.ipynb")


@pytest.mark.slow
def test_papermill_from_another_folder(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _papermill(elsewhere, str(NOTEBOOK), elsewhere / "out.ipynb")
