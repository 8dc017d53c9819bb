"""The Python package's shape (CONTRIBUTING.md, "Python code"): no import cycles, no private names
imported across modules, layers that import only downward, no module over 800 lines.

Read from the sources with `ast` (nothing is imported), so that an import hidden inside a function
counts as much as one at the top: a cycle broken only by importing late is still a cycle.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "coaplab"

#: The layers, lowest first: a module may import its own layer's modules and lower layers' only.
#: "" is the package's root modules (errors, files, names: what every layer uses).
LAYERS = ["", "describe", "analyse", "execute", "present", "stacks", "suites", "cli"]
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package (packages by their __init__)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_shipped" in path.relative_to(PACKAGE).parts:
            continue  # a wheel build's staged copies (examples/), not the package's code (build_backend/)
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    # The Rust extension (pyproject.toml: module-name): a module too, though it has no source here.
    out["coaplab._core"] = PACKAGE / "_core"
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]):
    """(imported module, imported name or None, line) for every import in the module, at any
    depth; and (module, attribute, line) for every attribute read through a module imported
    whole (``figures._style``), which reaches into it as much as importing the name does."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    aliases: dict[str, str] = {}  # local name → module, for modules imported whole
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules:
                    aliases[alias.asname] = alias.name
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                # The package a relative import starts from: a package's own name, a module's parent.
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                pkg = ".".join(base + ([node.module] if node.module else []))
            else:
                pkg = node.module or ""
            for alias in node.names:
                sub = f"{pkg}.{alias.name}"
                if sub in modules:
                    aliases[alias.asname or alias.name] = sub
                    yield sub, None, node.lineno
                else:
                    yield pkg, alias.name, node.lineno
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            yield aliases[node.value.id], node.attr, node.lineno


def _graph():
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    private = []
    for name, path in modules.items():
        if not path.suffix:
            continue
        for target, imported, line in _imports(name, path, modules):
            if target in modules and target != name:
                edges[name].add(target)
                if imported and imported.startswith("_") and not (imported.startswith("__") and imported.endswith("__")):
                    private.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {imported} from {target}")
    return modules, edges, private


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    return 0


def test_no_import_cycles():
    _, edges, _ = _graph()
    cycles = _cycles(edges)
    assert not cycles, "import cycles (strongly connected components):\n" + "\n".join(" ↔ ".join(c) for c in cycles)


def test_no_private_names_across_modules():
    _, _, private = _graph()
    assert not private, "private names imported from another module:\n" + "\n".join(private)


def test_layers_import_only_downward():
    _, edges, _ = _graph()
    upward = [f"{a} → {b}" for a in sorted(edges) for b in sorted(edges[a])
              if a != "coaplab" and _layer(b) > _layer(a)]
    assert not upward, "imports of a higher layer:\n" + "\n".join(upward)


def test_no_module_over_max_lines():
    modules = _modules()
    long = {str(p.relative_to(PACKAGE.parent)): n for p in modules.values()
            if p.suffix and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them along their concerns): {long}"
