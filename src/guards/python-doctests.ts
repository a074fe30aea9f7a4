import type { Finding } from "../gates/types.js";
import { parsedByPython } from "./python-parse.js";

/**
 * Doctests are the team's tests written inside the source (pytest's `--doctest-modules`, issue 55 §2): a
 * module with them is the code under test and a test file at once, so it cannot be put back as the tip has
 * it. Its examples are compared instead: one whose expected output the change rewrote, or that it removed,
 * is the change editing what judges it. Read with Python's own `ast` and `doctest` parsers, which run
 * nothing of the file.
 */
const SCRIPT = `
import ast, doctest, json, sys

def docstrings(tree):
    found = {}
    doc = ast.get_docstring(tree, clean=False)
    if doc:
        found[""] = (doc, tree.body[0].lineno)
    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                doc = ast.get_docstring(child, clean=False)
                if doc:
                    found[name] = (doc, child.body[0].lineno)
                visit(child, name + ".")
    visit(tree, "")
    return found

parser = doctest.DocTestParser()
out = []
for text in json.load(sys.stdin):
    try:
        tree = ast.parse(text or "")
    except (SyntaxError, ValueError):
        out.append(None)
        continue
    entry = {}
    for name, (doc, line) in docstrings(tree).items():
        try:
            examples = parser.get_examples(doc)
        except ValueError:
            continue
        if examples:
            entry[name] = [[e.source, e.want, line + e.lineno] for e in examples]
    out.append(entry)
json.dump(out, sys.stdout)
`;

/** Per docstring (its qualified name; "" for the module's), its examples: source, expected output, line. */
export type DoctestExamples = Record<string, [source: string, want: string, line: number][]>;

/** The doctest examples of each text (undefined for one Python cannot parse, or when python3 cannot run). */
export function doctestExamples(texts: readonly (string | undefined)[]): (DoctestExamples | undefined)[] {
  if (texts.length === 0) return [];
  const parsed = parsedByPython<(DoctestExamples | null)[]>(SCRIPT, texts);
  return parsed ? parsed.map((entry) => entry ?? undefined) : texts.map(() => undefined);
}

/**
 * Pure: the findings for a change to a module's doctests: an example of the tip whose expected output changed,
 * or that is gone, unless its docstring's doctest failed at the tip (`failing`, by qualified name: fixing a
 * wrong example is work, not tampering).
 */
export function rewrittenDoctests(file: string, before: DoctestExamples, after: DoctestExamples, failing: ReadonlySet<string> = new Set()): Finding[] {
  const findings: Finding[] = [];
  for (const [name, examples] of Object.entries(before)) {
    if (failing.has(name)) continue;
    const now = after[name] ?? [];
    const where = name === "" ? "the module's docstring" : `the docstring of ${name}`;
    for (const [source, want] of examples) {
      const kept = now.find(([text]) => text === source);
      const shown = source.trim().split("\n")[0] ?? "";
      if (!kept) findings.push({ file, message: `removes the doctest example \`${shown}\` from ${where}: the team's doctests judge the work` });
      else if (kept[1].trimEnd() !== want.trimEnd())
        findings.push({ file, line: kept[2], message: `changes what the doctest example \`${shown}\` in ${where} expects: the team's doctests judge the work` });
    }
  }
  return findings;
}
