"""The architecture's figures (issue 34) against their targets: ``python benchmarks/structure.py``.

- the largest folder of the product (``sim/``, ``strategies/`` and each subfolder, counted
  apart: a folder's own ``.py`` files, not its subfolders') as a share of all its Python lines
  (target <= 20%);
- the modules over 800 lines (target: none), and the largest module of the command-line
  package (target <= 600);
- the longest function (target <= 150 lines);
- function-level imports of project modules (``sim``, ``strategies``) outside the
  command-line package (target <= 60).

Lines are physical lines of the files. Exit status 1 when a target is missed (so a script or
CI step can hold the line), 0 otherwise.
"""

from __future__ import annotations

import ast
import os
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("sim", "strategies")
CLI = os.path.join("sim", "cli")


def python_files() -> list[str]:
    out = []
    for pkg in PACKAGES:
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, pkg)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            out += [os.path.relpath(os.path.join(dirpath, f), ROOT) for f in sorted(files)
                    if f.endswith(".py")]
    return out


def lines_of(path: str) -> int:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return sum(1 for _ in f)


def function_lengths(tree: ast.AST) -> list[tuple[int, str]]:
    return [(n.end_lineno - n.lineno + 1, n.name) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno]


def local_project_imports(tree: ast.AST) -> int:
    """Imports of sim/strategies modules inside function bodies."""
    count = 0
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                count += node.module.split(".")[0] in PACKAGES
            elif isinstance(node, ast.Import):
                count += sum(a.name.split(".")[0] in PACKAGES for a in node.names)
    return count


def figures() -> dict[str, object]:
    files = python_files()
    size = {f: lines_of(f) for f in files}
    total = sum(size.values())
    folders: Counter[str] = Counter()
    for f, n in size.items():
        folders[os.path.dirname(f)] += n
    folder, folder_lines = folders.most_common(1)[0]
    longest = (0, "", "")
    local = 0
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for n, name in function_lengths(tree):
            if n > longest[0]:
                longest = (n, f, name)
        if not (f == CLI + ".py" or f.startswith(CLI + os.sep)):
            local += local_project_imports(tree)
    cli = {f: n for f, n in size.items() if f == CLI + ".py" or f.startswith(CLI + os.sep)}
    return {"total_lines": total, "largest_folder": folder, "largest_folder_lines": folder_lines,
            "largest_folder_share": folder_lines / total,
            "over_800": sorted(((n, f) for f, n in size.items() if n > 800), reverse=True),
            "largest_cli_module": max(cli.values()) if cli else 0,
            "longest_function": longest, "local_imports": local}


def main() -> int:
    fig = figures()
    rows = [
        (f"largest folder {fig['largest_folder']}/: {fig['largest_folder_lines']:,} of "
         f"{fig['total_lines']:,} lines ({fig['largest_folder_share']:.0%})", "<= 20%",
         fig["largest_folder_share"] <= 0.20),
        (f"modules over 800 lines: {len(fig['over_800'])} "
         f"({', '.join(f'{f} {n}' for n, f in fig['over_800']) or 'none'})", "none",
         not fig["over_800"]),
        (f"largest module of the command line: {fig['largest_cli_module']:,} lines", "<= 600",
         fig["largest_cli_module"] <= 600),
        (f"longest function: {fig['longest_function'][0]} lines "
         f"({fig['longest_function'][1]}:{fig['longest_function'][2]})", "<= 150",
         fig["longest_function"][0] <= 150),
        (f"function-level imports of sim/strategies outside the command line: "
         f"{fig['local_imports']}", "<= 60", fig["local_imports"] <= 60),
    ]
    for text, target, ok in rows:
        print(f"{'ok  ' if ok else 'MISS'} {text}  (target {target})")
    return 0 if all(ok for _, _, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
