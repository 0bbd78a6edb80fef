"""The generated pages (segflow.reference) match the code: each is regenerated and
compared with the committed one, and, apart from the generator, every CLI option, CRD
field, Helm value and metric the code defines is checked to be named on its page (a
generator that dropped some would otherwise pass its own comparison)."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys

import pytest
import yaml

from segflow.reference import benchmarks, cli, helm_values
from segflow.reference.__main__ import main
from segflow.reference.pages import CRD, VALUES, bench_methods, cli_parser, differing, pages

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REGENERATE = "`make docs-reference` (python -m segflow.reference --write) regenerates them"


def page(path: str, root: str = ROOT) -> str:
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def test_every_generated_page_is_what_the_code_generates():
    stale = differing(ROOT)
    assert not stale, f"generated pages differ from the code: {', '.join(stale)}; {REGENERATE}"


def test_the_check_fails_on_a_page_edited_by_hand(tmp_path):
    for part in ("charts", "bench", "docs", "CHANGELOG.md", "pyproject.toml"):
        source = os.path.join(ROOT, part)
        (shutil.copytree if os.path.isdir(source) else shutil.copy)(source, tmp_path / part)
    with open(tmp_path / "docs/reference/cli.md", "a", encoding="utf-8") as f:
        f.write("| `--made-up` | | | typed by hand |\n")
    assert list(differing(str(tmp_path))) == ["docs/reference/cli.md"]
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert main(["--write", "--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    assert "--made-up" not in page("docs/reference/cli.md", str(tmp_path))


def test_every_cli_option_is_in_its_commands_section():
    text = page("docs/reference/cli.md")
    sections = dict(zip(re.findall(r"^#+ `(segflow[^`]*)`$", text, re.M),
                        re.split(r"^#+ `segflow[^`]*`$", text, flags=re.M)[1:]))
    for path, _, parser in cli.commands(cli_parser()):
        name = " ".join(("segflow", *path))
        assert name in sections, f"no section for {name!r}; {REGENERATE}"
        for option in cli.option_strings(parser):
            assert f"`{option}`" in sections[name], f"{name} {option} is not on the CLI page; {REGENERATE}"


def crd_properties(schema: dict, path: str = ""):
    """Every property's path, walked here apart from the generator's own walk."""
    for name, prop in schema.get("properties", {}).items():
        yield f"{path}.{name}" if path else name
        yield from crd_properties(prop, f"{path}.{name}" if path else name)
    if isinstance(schema.get("items"), dict):
        yield from crd_properties(schema["items"], path + "[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from crd_properties(schema["additionalProperties"], path + "{}")


def test_every_crd_field_is_on_the_streamjob_page():
    text = page("docs/reference/streamjob.md")
    with open(os.path.join(ROOT, CRD), encoding="utf-8") as f:
        crd = yaml.safe_load(f)
    for version in crd["spec"]["versions"]:
        root = version["schema"]["openAPIV3Schema"]["properties"]
        fields = [f for part in ("spec", "status") for f in crd_properties(root[part])]
        assert len(fields) > 50
        missing = [f for f in fields if f"| `{f}` |" not in text]
        assert not missing, f"CRD fields missing from the StreamJob page: {missing}; {REGENERATE}"


def test_every_helm_value_is_on_its_page():
    with open(os.path.join(ROOT, VALUES), encoding="utf-8") as f:
        data = yaml.safe_load(f)
    text = page("docs/reference/helm-values.md")

    def paths(mapping, prefix=""):
        for key, value in mapping.items():
            yield prefix + key
            if isinstance(value, dict):
                yield from paths(value, prefix + key + ".")
    missing = [p for p in paths(data) if f"| `{p}` |" not in text]
    assert not missing, f"Helm values missing from their page: {missing}; {REGENERATE}"


METRIC = re.compile(r"(?:Counter|Gauge|Histogram|Summary|Enum|Info|MetricFamily)\(\s*\"(\w+)\"")


def test_every_metric_defined_in_the_code_is_on_the_metrics_page():
    """Found by reading the sources, so a metric defined in a module the generator does
    not know also fails here."""
    defined = set()
    for top in ("services/segflow", "operator/segflow_operator"):
        for directory, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith(".py"):
                    with open(os.path.join(directory, name), encoding="utf-8") as f:
                        defined |= set(METRIC.findall(f.read()))
    assert len(defined) > 20
    text = page("docs/reference/metrics.md")
    missing = sorted(m for m in defined if not re.search(rf"`{m}(_total)?`", text))
    assert not missing, f"metrics missing from the metrics page: {missing}; {REGENERATE}"


def test_a_helm_comment_describes_the_key_below_it_until_a_blank_line():
    text = ("# Not about a.\n\n# About a,\n# on two lines.\na:\n  b: 1   # about b\n  c: \"#not\"\n"
            "# about d\nd: []\n")
    assert helm_values.comments(text) == {"a": "About a, on two lines.", "a.b": "about b", "d": "about d"}


def run(bench: str, date: str, **result) -> tuple[str, dict]:
    return (f"bench/results/{bench}/{date}.json",
            {"bench": bench, "date": date, "commit": "abc1234", "machine": None, "argv": [], "result": result})


def test_the_benchmarks_page_shows_each_benchs_newest_run_and_lists_every_run():
    runs = [run("b", "2026-11-01", x=1.5), run("b", "2026-12-01", x=2.5, rows=[{"k": "p", "v": 3}]),
            run("a", "2026-10-01", y=7)]
    text = benchmarks.benchmarks_markdown(runs, {"a": "Method of a.", "b": "Method of b.", "c": ""})
    b = text.split("## b")[1]
    assert "| `x` | `2.5` |" in b and "`1.5`" not in b.split("### Every run")[0]
    assert "2026-11-01" in b.split("### Every run")[1] and "| `p` | `3` |" in b
    assert "Method of a." in text and "| `y` | `7` |" in text
    assert "## c" in text and "No run recorded yet." in text.split("## c")[1]


def test_runs_of_one_day_are_ordered_by_when_they_were_recorded_then_by_their_number():
    later_recorded, earlier_recorded = run("b", "2026-12-02", x=1), run("b", "2026-12-02", x=2)
    later_recorded[1]["recorded"], earlier_recorded[1]["recorded"] = "2026-12-02T20:00", "2026-12-02T09:00"
    second = (later_recorded[0].replace(".json", "-2.json"), dict(later_recorded[1], result={"x": 3}))
    text = benchmarks.benchmarks_markdown([second, earlier_recorded, later_recorded], {"b": ""})
    assert "| `x` | `3` |" in text
    history = text.split("### Every run")[1]
    assert history.index("-2.json") < history.index("2026-12-02.json`")


def test_every_bench_writes_its_results_through_common_report():
    """A bench whose last line bypasses the results files would be missing from the page."""
    for name in sorted(bench_methods(ROOT)):
        with open(os.path.join(ROOT, "bench", f"{name}.py"), encoding="utf-8") as f:
            assert f'report("{name}", ' in f.read(), f"bench/{name}.py does not end with common.report"


@pytest.fixture
def common(monkeypatch, tmp_path):
    """bench/common.py, loaded under a name of its own (as tests/packaging does: plain
    ``common`` could be another module), its results directory a temporary one."""
    spec = importlib.util.spec_from_file_location("bench_common", os.path.join(ROOT, "bench", "common.py"))
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)       # its dataclasses look it up there
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "RESULTS", str(tmp_path))
    return module


def test_report_prints_the_result_and_keeps_one_file_per_run(common, tmp_path, capsys):
    first = common.report("demo", {"x": 1}, ["--rounds", "1"])
    second = common.report("demo", {"x": 2}, [])
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"x": 2}
    assert first != second and os.path.dirname(first) == str(tmp_path / "demo")
    with open(first, encoding="utf-8") as f:
        record = json.load(f)
    assert record["result"] == {"x": 1} and record["argv"] == ["--rounds", "1"] and record["bench"] == "demo"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["date"])
    assert os.path.basename(first).startswith(record["date"][:10] + "-" + record["commit"])
    assert set(record["machine"]) == {"cpu_count", "cpu_model", "memory_gb", "python", "system"}
    assert os.uname().nodename not in json.dumps(record["machine"])


def test_pages_cover_the_sites_nav():
    assert set(pages(ROOT)) >= {"docs/reference/cli.md", "docs/reference/streamjob.md",
                                "docs/reference/helm-values.md", "docs/reference/metrics.md",
                                "docs/benchmarks/index.md", "docs/changelog.md"}


def test_a_strict_bound_is_shown_as_strict():
    from segflow.reference.streamjob import constraints
    assert constraints({"type": "number", "minimum": 0, "exclusiveMinimum": True}, False) == ["> `0`"]
    assert constraints({"type": "integer", "minimum": 1, "maximum": 9}, True) == ["required", ">= `1`", "<= `9`"]
