"""The README and the design document stay true: the library example runs as written, the
command lines parse, every "DESIGN §n" citation names a section of docs/DESIGN.md, and nothing a
user or a newcomer reads points outside the repository."""

from __future__ import annotations

import re
import shlex

from conftest import ROOT

from bnma_core.datasets import bundled_files

DESIGN = ROOT / "docs" / "DESIGN.md"

# Folders and files whose text must not point outside the repository. tests/ and experiments/
# may *read* the shared data next to the repository (they skip cleanly when it is absent).
SELF_CONTAINED = ["README.md", "Makefile", "pyproject.toml", "app.py", ".ci", "docs",
                  "bnma_core", "bnma_ui", "pages", "benchmarks"]
OUTSIDE = re.compile(r"\.\./shared|/work/shared|/work/main")


def _text_files():
    for name in SELF_CONTAINED:
        path = ROOT / name
        files = [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []
        for f in files:
            if f.is_file() and f.suffix in {"", ".py", ".md", ".toml", ".txt", ".cfg"} \
                    and "__pycache__" not in f.parts:
                yield f


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_python_blocks_run(capsys):
    """Runs from whatever the working directory is: the example reads bundled data only."""
    blocks = re.findall(r"```python\n(.*?)```", _readme(), flags=re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert "nb" in capsys.readouterr().out


def _bnma_lines() -> list[list[str]]:
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", _readme(), flags=re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("bnma "):
                lines.append(shlex.split(line))
    return lines


def test_readme_command_lines_parse():
    from bnma_core.cli import build_parser

    lines = _bnma_lines()
    assert {argv[1] for argv in lines} >= {"cv", "methods", "sample"}
    for argv in lines:
        args = build_parser().parse_args(argv[1:])
        data = getattr(args, "data", None)
        if data is not None:  # a path relative to the repository root, or a bundled name
            assert (ROOT / data).is_file() or f"{data}.csv" in bundled_files(), data


def test_readme_points_to_the_design_document_in_the_repo():
    assert "docs/DESIGN.md" in _readme()
    assert DESIGN.is_file()


def _design_sections() -> set[int]:
    return {int(m) for m in re.findall(r"^## (\d+)\. ", DESIGN.read_text(encoding="utf-8"),
                                       flags=re.M)}


def test_design_citations_name_existing_sections():
    """Docstrings cite "DESIGN §n" (meaning docs/DESIGN.md section n, see bnma_core's
    docstring); each cited n must be a section heading "## n." of docs/DESIGN.md."""
    sections = _design_sections()
    assert set(range(1, 10)) <= sections  # the numbering the citations were written against
    cited: dict[int, list[str]] = {}
    for f in _text_files():
        for cite in re.findall(r"DESIGN(?:\.md)? (§[\d§\-, ]+)", f.read_text(encoding="utf-8")):
            for a, b in re.findall(r"(\d+)(?:-(\d+))?", cite):
                for n in range(int(a), int(b or a) + 1):
                    cited.setdefault(n, []).append(str(f.relative_to(ROOT)))
    assert len(cited) >= 6, cited
    missing = {n: files for n, files in cited.items() if n not in sections}
    assert not missing, f"citations of sections absent from docs/DESIGN.md: {missing}"


def test_design_has_glossary_and_formula_table():
    text = DESIGN.read_text(encoding="utf-8")
    for heading in ("Glossary", "Formula table", "Module map"):
        assert re.search(rf"^##+ .*{heading}", text, flags=re.M), heading


def test_no_pointer_outside_the_repository():
    hits = [f"{f.relative_to(ROOT)}: {ln.strip()}" for f in _text_files()
            for ln in f.read_text(encoding="utf-8", errors="replace").splitlines()
            if OUTSIDE.search(ln)]
    assert not hits, "pointers outside the repository:\n" + "\n".join(hits)


def test_readme_names_every_registered_method_and_the_default():
    from bnma_core.classifiers.registry import DEFAULT_METHOD, available_methods

    methods = _readme().split("## Methods", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([a-z0-9_]+)`", methods))
    assert set(available_methods()) <= named, set(available_methods()) - named
    assert f"The recommended one is `{DEFAULT_METHOD}`" in methods
