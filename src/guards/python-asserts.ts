import type { AssertFacts, TestAsserts } from "./assert-facts.js";
import { parsedByPython } from "./python-parse.js";

/**
 * What Python's own parser says about the assertions of each test function of a file (pytest's `assert`,
 * unittest's `self.assert*()` calls). Parsed with `ast.parse`, which runs nothing of the file.
 */
const SCRIPT = `
import ast, json, sys

CATCH_ALL = {"AssertionError", "Exception", "BaseException"}

def catches(handler):
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in CATCH_ALL or isinstance(n, ast.Attribute) and n.attr in CATCH_ALL for n in names)

def reraises(handler):
    return any(isinstance(node, ast.Raise) for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])))

def suppresses(item):
    call = item.context_expr
    if not isinstance(call, ast.Call):
        return False
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    return name == "suppress" and any(isinstance(a, ast.Name) and a.id in CATCH_ALL for a in call.args)

def is_assert_call(node):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.startswith("assert")

def constant(test):
    if isinstance(test, ast.Tuple) and test.elts:
        return True
    if isinstance(test, ast.Constant) and bool(test.value):
        return True
    return False

def cases(fn):
    count = 1
    for deco in fn.decorator_list:
        if isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "parametrize" and len(deco.args) >= 2 and isinstance(deco.args[1], (ast.List, ast.Tuple)):
            count *= max(1, len(deco.args[1].elts))
    return count

def facts(fn):
    out = {"line": fn.lineno, "plain": 0, "conditional": 0, "swallowed": [], "constant": []}
    def leaves(node):
        # a return, a skip or an exit inside it: what follows it in the block runs only sometimes
        for inner in ast.walk(node):
            if isinstance(inner, ast.Return):
                return True
            if isinstance(inner, ast.Call) and getattr(inner.func, "attr", getattr(inner.func, "id", "")) in ("skip", "exit", "_exit", "skipTest", "xfail"):
                return True
        return False
    def visit(nodes, conditional, swallowed):
        for node in nodes:
            one(node, conditional, swallowed)
            if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith)) and leaves(node):
                conditional = True
    def one(node, conditional, swallowed):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                return
            found = isinstance(node, ast.Assert) or (isinstance(node, ast.Expr) and is_assert_call(node.value))
            if found:
                if isinstance(node, ast.Assert) and constant(node.test):
                    out["constant"].append(node.lineno)
                if swallowed:
                    out["swallowed"].append(node.lineno)
                if conditional or swallowed:
                    out["conditional"] += 1
                else:
                    out["plain"] += 1
                return
            if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While)):
                visit(node.body, True, swallowed)
                visit(node.orelse, True, swallowed)
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                swallows = any(catches(h) and not reraises(h) for h in node.handlers)
                visit(node.body, conditional, swallowed or swallows)
                for h in node.handlers:
                    visit(h.body, True, swallowed)
                visit(node.orelse, True, swallowed)
                visit(node.finalbody, conditional, swallowed)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                visit(node.body, conditional, swallowed or any(suppresses(item) for item in node.items))
            elif type(node).__name__ == "Match":
                for case in node.cases:
                    visit(case.body, True, swallowed)
    visit(fn.body, False, False)
    out["plain"] *= cases(fn)
    return out

def tests(tree):
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found[node.name] = facts(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    found[node.name + "::" + item.name] = facts(item)
    return found

result = []
for text in json.load(sys.stdin):
    try:
        result.append(tests(ast.parse(text)) if text is not None else None)
    except (SyntaxError, ValueError, RecursionError):
        result.append(None)
json.dump(result, sys.stdout)
`;

/**
 * Facts for each of `texts` (a file's content, or undefined when it does not exist), in order; all
 * undefined when python3 cannot run here (the line-based rules still apply).
 */
export function pythonAssertFacts(texts: readonly (string | undefined)[]): AssertFacts[] {
  if (texts.length === 0) return [];
  const parsed = parsedByPython<(Record<string, TestAsserts> | null)[]>(
    SCRIPT,
    texts.map((text) => text ?? null),
  );
  if (!parsed) return texts.map(() => undefined);
  return parsed.map((file) => (file ? new Map(Object.entries(file)) : undefined));
}
