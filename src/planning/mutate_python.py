"""Mutants of the given lines of one Python file, for `factory run`'s mutation check.

python3 mutate_python.py <file> '<json list of line numbers>' <most> [sites | '<json list of site numbers>']
python3 mutate_python.py --sites <most> < '[{"path": …, "lines": […]}, …]'

Prints a JSON list of {"line", "description", "source"}: each the whole file
with one simple change on one of the lines (a comparison or operator
flipped, a constant changed, a returned value dropped, a statement
dropped). The file is parsed, never run. With `sites`, only the line and
description of each (no source: writing the whole file out is the slow
part); with a list of site numbers, the mutants of those sites alone.
`--sites` lists the sites of many files in one start ([] for a file that
does not parse).
"""

import ast
import copy
import json
import sys

COMPARISONS = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
               ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
OPERATORS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult, ast.Mod: ast.Mult}
BOOLEANS = {ast.And: ast.Or, ast.Or: ast.And}
DROPPABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise)


def sites(tree, lines):
    """(node index in ast.walk order, what to do, description) for every change on the lines."""
    found = []
    for index, node in enumerate(ast.walk(tree)):
        line = getattr(node, "lineno", None)
        if isinstance(node, ast.Compare) and line in lines:
            for at, op in enumerate(node.ops):
                if type(op) in COMPARISONS:
                    found.append((index, ("compare", at), line, f"{type(op).__name__} -> {COMPARISONS[type(op)].__name__}"))
        elif isinstance(node, ast.BinOp) and line in lines and type(node.op) in OPERATORS:
            found.append((index, ("binop",), line, f"{type(node.op).__name__} -> {OPERATORS[type(node.op)].__name__}"))
        elif isinstance(node, ast.BoolOp) and line in lines:
            found.append((index, ("boolop",), line, f"{type(node.op).__name__} -> {BOOLEANS[type(node.op)].__name__}"))
        elif isinstance(node, ast.Constant) and line in lines and type(node.value) in (int, float, bool):
            found.append((index, ("constant",), line, f"{node.value!r} -> {mutated_constant(node.value)!r}"))
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for at, statement in enumerate(body):
                if not isinstance(statement, DROPPABLE) or statement.lineno not in lines:
                    continue
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    continue  # a docstring: dropping it changes nothing
                if isinstance(statement, ast.Return) and statement.value is not None:
                    found.append((index, ("return", field, at), statement.lineno, "return value -> None"))
                found.append((index, ("drop", field, at), statement.lineno, f"{type(statement).__name__} statement dropped"))
    return found


def mutated_constant(value):
    if isinstance(value, bool):
        return not value
    return value + 1


def apply(tree, index, action):
    node = list(ast.walk(tree))[index]
    kind = action[0]
    if kind == "compare":
        node.ops[action[1]] = COMPARISONS[type(node.ops[action[1]])]()
    elif kind == "binop":
        node.op = OPERATORS[type(node.op)]()
    elif kind == "boolop":
        node.op = BOOLEANS[type(node.op)]()
    elif kind == "constant":
        node.value = mutated_constant(node.value)
    elif kind == "return":
        getattr(node, action[1])[action[2]].value = ast.Constant(value=None)
    elif kind == "drop":
        body = getattr(node, action[1])
        body[action[2]] = ast.Pass()
    return ast.fix_missing_locations(tree)


def all_sites(most):
    listed = []
    for entry in json.load(sys.stdin):
        try:
            with open(entry["path"], encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), filename=entry["path"])
        except (OSError, SyntaxError, ValueError):
            listed.append([])
            continue
        listed.append([{"line": line, "description": description} for _, _, line, description in sites(tree, set(entry["lines"]))[:most]])
    json.dump(listed, sys.stdout)


def main():
    if sys.argv[1] == "--sites":
        all_sites(int(sys.argv[2]))
        return
    path, lines, most = sys.argv[1], set(json.loads(sys.argv[2])), int(sys.argv[3])
    wanted = sys.argv[4] if len(sys.argv) > 4 else None
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    tree = ast.parse(source, filename=path)
    found = sites(tree, lines)[:most]
    if wanted == "sites":
        json.dump([{"line": line, "description": description} for _, _, line, description in found], sys.stdout)
        return
    chosen = range(len(found)) if wanted is None else json.loads(wanted)
    mutants = []
    for at in chosen:
        index, action, line, description = found[at]
        mutated = apply(copy.deepcopy(tree), index, action)
        mutants.append({"line": line, "description": description, "source": ast.unparse(mutated) + "\n"})
    json.dump(mutants, sys.stdout)


if __name__ == "__main__":
    main()
