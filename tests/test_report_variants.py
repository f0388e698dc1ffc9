"""Report variants: params overrides (perdoc report --set KEY=VALUE), --name for a second folder, and
the line that says a report replaced an earlier one made with other parameters."""

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from perdoc.cli import main
from perdoc.params import OverrideError, load_params, parse_overrides

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "fixtures" / "tiny" / "tiny.yaml"     # name: tiny, intervals.level 0.9


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


def _subtitle(folder: Path) -> str:
    """The report's subtitle as HTML (between its tags), from report.html."""
    found = re.findall(r'<p class="perdoc-subtitle">(.*?)</p>', (folder / "report.html").read_text(encoding="utf-8"),
                       flags=re.S)
    assert len(found) == 1
    return found[0]


def _files(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module", autouse=True)
def _one_kernel(shared_kernel):
    """The module's reports share one notebook kernel (tests/conftest.py)."""


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """The tiny study rendered as its params file says, with no override."""
    out = tmp_path_factory.mktemp("variants")
    assert main(["report", str(TINY), "--out", str(out)]) == 0
    return out


# ------------------------------------------------------------------------------- the params layer
def test_overrides_change_the_validated_study():
    plain = load_params(TINY)
    study = load_params(TINY, overrides=["intervals.level=0.8", "intervals.replicates=0", "report.language=es",
                                         "title=2026"])
    assert plain.intervals.level == 0.9 and plain.overrides == {}
    assert study.intervals.level == 0.8 and study.intervals.replicates == 0 and study.language == "es"
    assert study.title == "2026"   # a string key keeps the text as written, not the YAML integer
    assert study.overrides == {"intervals.level": 0.8, "intervals.replicates": 0, "report.language": "es",
                               "title": "2026"}
    assert study.to_dict()["intervals"]["level"] == 0.8 and "overrides" not in study.to_dict()
    assert load_params(TINY, overrides={"intervals.level": 0.8}).intervals.level == 0.8


@pytest.mark.parametrize("text, named", [
    ("intervals.levle=0.8", "did you mean 'intervals.level'"),
    ("interval.level=0.8", "unknown key 'interval'"),
    ("intervals.level.low=0.8", "key 'intervals.level' is a number, not a mapping"),
    ("intervals.level", "expected KEY=VALUE"),
    ("intervals.level=1.5", "key 'intervals.level' must be strictly between 0 and 1"),
    ("intervals.level=high", "key 'intervals.level' must be a number, got str 'high'"),
    ("intervals.replicates=0.5", "key 'intervals.replicates' must be an integer"),
    ("report.language=fr", "key 'report.language' must be one of en, es"),
    ("name=../elsewhere", "key 'name' must be a folder name"),
])
def test_a_bad_override_is_one_line_naming_the_key(text, named):
    with pytest.raises(OverrideError) as err:
        load_params(TINY, overrides=[text])
    message = str(err.value)
    assert named in message and "\n" not in message
    assert text.split("=")[0].split(".")[0] in message


def test_a_broken_file_is_reported_as_the_file_not_as_the_override(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(TINY.read_text().replace("kind: macro", "kind: mean"))
    with pytest.raises(Exception) as err:
        load_params(broken, overrides=["intervals.level=0.8"])
    assert type(err.value) is not OverrideError and "estimand.kind" in str(err.value)


def test_a_later_override_of_the_same_key_wins():
    assert parse_overrides(["intervals.level=0.8", "intervals.level=0.7"]) == {"intervals.level": 0.7}


# ------------------------------------------------------------------------------- perdoc report
def test_plain_report_records_no_override(base):
    s = _summary(base / "tiny")
    assert s["params_overrides"] == {} and s["params"]["intervals"]["level"] == 0.9


def test_override_and_name_write_a_second_folder_beside_the_first(base, capsys):
    before = _files(base / "tiny")
    assert main(["report", str(TINY), "--out", str(base), "--set", "intervals.level=0.5", "--name", "tiny_50",
                 "--language", "es"]) == 0
    captured = capsys.readouterr()
    assert "replaced" not in captured.err
    assert _files(base / "tiny") == before                      # the first report is untouched
    first, second = _summary(base / "tiny"), _summary(base / "tiny_50")
    assert second["params_overrides"] == {"intervals.level": 0.5, "report.language": "es", "name": "tiny_50"}
    assert second["params"]["intervals"]["level"] == 0.5 and second["params"]["name"] == "tiny_50"
    assert second["params"]["language"] == "es"
    assert second["level"] == 0.5 and first["level"] == 0.9
    lo1, hi1 = first["macro"]["t"]["ci"]
    lo2, hi2 = second["macro"]["t"]["ci"]
    assert first["macro"]["estimate"] == second["macro"]["estimate"]
    assert hi2 - lo2 < hi1 - lo1                                 # a lower level: a narrower interval
    assert "Contenido" in (base / "tiny_50" / "report.html").read_text(encoding="utf-8")   # in Spanish
    assert html.unescape(_subtitle(base / "tiny_50")).endswith(
        "estimando declarado: media macro; cambios respecto al archivo: intervals.level=0.5, report.language=es, "
        "name=tiny_50.")


def test_the_subtitle_shows_the_overrides_as_text(base, tmp_path):
    hostile = '<script>alert(1)</script> [x](javascript:alert(2)) **b** & "q"'
    out = tmp_path / "out"
    assert main(["report", str(TINY), "--out", str(out), "--set", "intervals.level=0.8", "--set",
                 f"description={hostile}", "--name", "tiny_80"]) == 0
    sub = _subtitle(out / "tiny_80")
    assert sub.startswith("perdoc ") and "declared estimand: macro mean; overrides: intervals.level=0.8, " in html.unescape(sub)
    assert html.unescape(sub).endswith(
        '; overrides: intervals.level=0.8, description=<script>alert(1)</script> [x](javascript:alert(2)) **b** & "q", '
        'name=tiny_80.')
    # escaped as the title is: shown literally, never parsed as HTML or Markdown
    assert "&#60;script&#62;alert&#40;1&#41;&#60;&#47;script&#62; &#91;x&#93;&#40;javascript&#58;" in sub
    assert "<" not in sub
    assert _summary(out / "tiny_80")["params_overrides"]["description"] == hostile
    # a report without overrides keeps the subtitle it always had
    plain = html.unescape(_subtitle(base / "tiny"))
    assert "overrides" not in plain and plain.endswith("; declared estimand: macro mean.")


def test_subtitle_without_overrides_is_unchanged(tmp_path, monkeypatch):
    """No override: the subtitle handed to the notebook is the one perdoc always wrote (byte-identical reports)."""
    import perdoc.report.build as report
    from perdoc import __version__
    seen = {}

    def fake(**kw):
        seen.update(kw)
        raise RuntimeError("stop")

    monkeypatch.setattr(report, "combined_notebook", fake)
    study = load_params(TINY)
    analysis = type("A", (), {"study": study, "input": {"file": "tiny.csv", "sha256": "ab" * 32}})()
    with pytest.raises(RuntimeError):
        report.render(TINY, analysis)
    assert seen["subtitle"] == (f"perdoc {__version__} report of params file tiny.yaml; data tiny.csv "
                                f"(SHA-256 {'ab' * 6}...); declared estimand: macro mean.")
    analysis.study = load_params(TINY, overrides=["report.language=es"])
    with pytest.raises(RuntimeError):
        report.render(TINY, analysis)
    assert seen["subtitle"].endswith("estimando declarado: media macro; cambios respecto al archivo: "
                                     "report.language=es.")


@pytest.mark.parametrize("args, named", [
    (["--set", "intervals.levle=0.5"], "intervals.levle"),
    (["--set", "intervals.level=2"], "intervals.level"),
    (["--set", "simulation.reps=500"], "simulation"),          # tiny.yaml has no census to simulate on
    (["--name", "a/b"], "--name"),
    (["--language", "es", "--set", "report.language=en"], "report.language"),
])
def test_bad_overrides_write_nothing(tmp_path, capsys, args, named):
    out = tmp_path / "out"
    earlier = out / "tiny"
    earlier.mkdir(parents=True)
    (earlier / "summary.json").write_text('{"versions": {"perdoc": "0"}, "params": {}}')
    before = _files(out)
    assert main(["report", str(TINY), "--out", str(out), *args]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and captured.out == ""
    assert _files(out) == before and sorted(p.name for p in out.iterdir()) == ["tiny"]


def test_name_with_several_params_files_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", str(TINY), str(TINY), "--out", str(out), "--name", "both"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--name" in lines[0] and "one params file" in lines[0]
    assert not out.exists()


def test_a_broken_file_with_name_leaves_its_error_page_under_that_name(tmp_path, capsys):
    broken = tmp_path / "broken.yaml"
    broken.write_text(TINY.read_text().replace("kind: macro", "kind: mean"))
    out = tmp_path / "out"
    assert main(["report", str(broken), "--out", str(out), "--name", "try2"]) == 2
    assert (out / "try2" / "error.txt").read_text().startswith("perdoc report failed")
    assert not (out / "tiny").exists()


def test_replacing_a_report_made_with_other_parameters_says_so(base, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(base / "tiny", out / "tiny")
    s = _summary(out / "tiny")
    s["params"]["intervals"]["level"] = 0.95          # as if the earlier run had another level
    (out / "tiny" / "summary.json").write_text(json.dumps(s))
    assert main(["report", str(TINY), "--out", str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"perdoc: replaced {out / 'tiny'} (its parameters differed: intervals.level 0.95 -> 0.9); "
                   "give --name to keep both"]
    assert _summary(out / "tiny")["params"]["intervals"]["level"] == 0.9
    # the same parameters again: a plain rerun, nothing to say
    assert main(["report", str(TINY), "--out", str(out)]) == 0
    assert "replaced" not in capsys.readouterr().err


def test_keys_an_older_report_did_not_write_are_not_changes():
    from perdoc.report.build import _param_changes
    old = {"intervals": {"level": 0.95}, "name": "x"}
    assert _param_changes(old, {"intervals": {"level": 0.95}, "name": "x", "language": "en"}) == ""
    assert _param_changes(old, {"intervals": {"level": 0.9}, "name": "x", "language": "en"}) == \
        "intervals.level 0.95 -> 0.9"
    assert _param_changes({**old, "language": "en"}, {**old, "language": "es"}) == "language en -> es"
