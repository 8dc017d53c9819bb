"""The Rust crates' module structure (docs/design.md, "Architecture map"): no import cycle
between source files, and no file over 800 lines of non-test code.

A file *imports* another when it names an item of the other's module: a `use` of it, or a path
through it in code (`crate::net::link::Link`, `super::Event`, a child module's `mesh::Layout`).
A `mod child;` declaration alone is structure, not an import. Test modules (`#[cfg(test)] mod
… { … }`) and comments are left out: they run only under `cargo test` and cannot tie the
library's layers together. A cycle between two files means neither can be understood, tested
or replaced alone; a parent `mod.rs` that uses its child's item while the child uses the
parent's is such a cycle, so shared types live in a leaf file that imports neither.

    .venv/bin/python -m pytest -q tests/test_architecture_rust.py
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATES = ROOT / "crates"
MAX_LINES = 800

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_PATH = re.compile(rf"\b((?:crate|super|self)(?:::{_IDENT})+|(?:{_IDENT})(?:::{_IDENT})+)")
_USE = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.DOTALL)
_MOD = re.compile(rf"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+({_IDENT})\s*;", re.MULTILINE)


def strip_comments(text: str) -> str:
    """Source without comments and string literals (their text names no item)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif re.match(r'(?:b?r#*|b)?"', text[i:i + 8]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(b?r)(#*)"|b?"', text[i:i + 8])
            assert m is not None
            if m.group(1):  # a raw string: no escapes, ends at '"' and as many '#'
                end = text.find('"' + m.group(2), i + m.end())
                i = n if end < 0 else end + 1 + len(m.group(2))
            else:
                j = i + m.end()
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                i = j + 1
            out.append('""')
        elif c == "'" and i + 2 < n and (text[i + 2] == "'" or (text[i + 1] == "\\" and "'" in text[i + 2:i + 12])):
            # a char literal ('x', '\n', '\u{..}'); lifetimes ('a) pass through
            j = text.find("'", i + 2)
            i = j + 1
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_test_modules(text: str) -> str:
    """Source without `#[cfg(test)]` items (test modules and test-only functions)."""
    out, pos = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        j = text.find("{", m.end())
        semi = text.find(";", m.end())
        if semi >= 0 and (j < 0 or semi < j):  # `#[cfg(test)] mod tests;` or a test-only `use`
            pos = semi + 1
            continue
        depth, k = 0, j
        while k < len(text):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        pos = k + 1
    out.append(text[pos:])
    return "".join(out)


def expand_use(tree: str) -> list[list[str]]:
    """`a::{b, c::{d, e}}` → [[a, b], [a, c, d], [a, c, e]] (aliases and globs kept as the path)."""
    tree = re.sub(r"\s+", "", re.sub(rf"\s+as\s+{_IDENT}", "", tree))  # `path as alias` names path

    def parse(s: str) -> list[list[str]]:
        if "{" not in s:
            return [[p for p in s.split("::") if p and p != "*"]]
        head, _, rest = s.partition("{")
        inner = rest[: rest.rfind("}")]
        parts, depth, cur = [], 0, ""
        for ch in inner:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "{"
            depth -= ch == "}"
            cur += ch
        if cur:
            parts.append(cur)
        prefix = [p for p in head.split("::") if p]
        out = []
        for part in parts:
            for sub in parse(part):
                out.append(prefix + [x for x in sub if x != "self"] if sub else prefix)
        return out

    return parse(tree)


class Crate:
    """One crate's modules: module path (tuple of names) ↔ source file."""

    def __init__(self, src: Path):
        self.src = src
        self.files: dict[tuple[str, ...], Path] = {}
        self._walk((), src / "lib.rs" if (src / "lib.rs").exists() else src / "main.rs")

    def _walk(self, path: tuple[str, ...], file: Path) -> None:
        self.files[path] = file
        base = file.parent if file.name in ("lib.rs", "main.rs", "mod.rs") else file.with_suffix("")
        for name in _MOD.findall(strip_test_modules(strip_comments(file.read_text()))):
            for child in (base / f"{name}.rs", base / name / "mod.rs"):
                if child.exists():
                    self._walk(path + (name,), child)
                    break

    def module_of(self, file: Path) -> tuple[str, ...]:
        return next(p for p, f in self.files.items() if f == file)

    def resolve(self, here: tuple[str, ...], segs: list[str]) -> tuple[str, ...] | None:
        """The module (the longest module prefix) a path from module `here` names."""
        if not segs:
            return None
        if segs[0] == "crate":
            absolute = list(segs[1:])
        elif segs[0] in ("super", "self"):
            cur = list(here)
            i = 0
            while i < len(segs) and segs[i] in ("super", "self"):
                if segs[i] == "super":
                    cur = cur[:-1]
                i += 1
            absolute = cur + list(segs[i:])
        elif tuple(here) + (segs[0],) in self.files:
            absolute = list(here) + list(segs)
        else:
            return None  # another crate, std, or an item of this module
        for k in range(len(absolute), -1, -1):
            if tuple(absolute[:k]) in self.files:
                return tuple(absolute[:k])
        return None

    def edges(self) -> dict[Path, set[Path]]:
        out: dict[Path, set[Path]] = {}
        for here, file in self.files.items():
            text = strip_test_modules(strip_comments(file.read_text()))
            paths: list[list[str]] = []
            for m in _USE.finditer(text):
                paths.extend(expand_use(m.group(1)))
            code = _USE.sub(" ", text)
            paths.extend(m.group(1).split("::") for m in _PATH.finditer(code))
            targets = {self.resolve(here, p) for p in paths}
            out[file] = {self.files[t] for t in targets if t is not None and self.files[t] != file}
        return out


def crates() -> list[Crate]:
    return [Crate(c / "src") for c in sorted(CRATES.iterdir()) if (c / "src" / "lib.rs").exists() or (c / "src" / "main.rs").exists()]


def cycles(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """Strongly connected components of more than one file (Tarjan)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on: set[Path] = set()
    out: list[list[Path]] = []
    counter = [0]

    def visit(v: Path) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def non_test_lines(file: Path) -> int:
    return sum(1 for line in strip_test_modules(file.read_text()).splitlines() if line.strip())


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def test_no_import_cycle_between_rust_files():
    found = []
    for crate in crates():
        for comp in cycles(crate.edges()):
            found.append(", ".join(_rel(p) for p in comp))
    assert not found, "import cycles (files that use each other's items):\n  " + "\n  ".join(found)


def test_no_rust_file_over_800_lines_of_non_test_code():
    big = sorted((non_test_lines(f), _rel(f)) for c in crates() for f in c.files.values() if non_test_lines(f) > MAX_LINES)
    assert not big, f"files over {MAX_LINES} non-blank lines outside #[cfg(test)]: {big}"


def test_the_checker_sees_a_cycle_a_parent_and_its_child_make(tmp_path):
    # A parent that uses its child's item while the child uses the parent's: one cycle of two
    # files; a third file used by both is in no cycle.
    src = tmp_path / "src"
    (src / "world").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod world;\npub mod leaf;\n")
    (src / "leaf.rs").write_text("pub struct Leaf;\n")
    (src / "world" / "mod.rs").write_text(
        "mod app;\nuse crate::leaf::Leaf;\npub struct Event;\n"
        "pub fn f(_: Leaf) -> app::App { app::App }\n")
    (src / "world" / "app.rs").write_text(
        "use super::Event; // the parent's item\nuse crate::{leaf::{self, Leaf}};\npub struct App;\n"
        "#[cfg(test)]\nmod tests {\n    use crate::world::f;\n}\n")
    crate = Crate(src)
    assert set(crate.files) == {(), ("world",), ("world", "app"), ("leaf",)}
    comps = cycles(crate.edges())
    assert [[p.relative_to(src).as_posix() for p in c] for c in comps] == [["world/app.rs", "world/mod.rs"]]


def test_the_checker_ignores_comments_strings_and_tests(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "lib.rs").write_text("pub mod a;\npub mod b;\n")
    (src / "a.rs").write_text('//! See [`crate::b::B`].\npub const S: &str = "crate::b::B";\npub struct A;\n')
    (src / "b.rs").write_text("use crate::a::A;\npub struct B(A);\n#[cfg(test)]\nmod t { use crate::a::A; }\n")
    assert cycles(Crate(src).edges()) == []
    (src / "a.rs").write_text("pub struct A(pub crate::b::B);\n")  # now a real use: a cycle
    assert len(cycles(Crate(src).edges())) == 1
