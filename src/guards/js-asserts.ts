import { createRequire } from "node:module";
import type * as TS from "typescript";
import type { AssertFacts, TestAsserts } from "./assert-facts.js";

/**
 * The assertions of each test of a JavaScript or TypeScript test file, read
 * by TypeScript's own parser (a dependency already; loaded only when such a
 * file changes): `test("name", fn)` and `it("name", fn)` of node:test,
 * vitest, jest and mocha, with `describe` titles before the name. An
 * assertion is a statement that calls `expect(…)…`, `assert(…)`,
 * `assert.*(…)` or `t.assert.*(…)`. Parsing runs nothing of the file.
 */
const JS_TEST_FILE = /\.(?:[cm]?[jt]sx?)$/;

export function isJsFile(path: string): boolean {
  return JS_TEST_FILE.test(path);
}

let loaded: typeof TS | undefined;
function typescript(): typeof TS {
  loaded ??= createRequire(import.meta.url)("typescript") as typeof TS;
  return loaded;
}

/** Facts for one file's text (undefined text, or a file that does not parse: undefined). */
export function jsAssertFacts(path: string, text: string | undefined): AssertFacts {
  if (text === undefined) return undefined;
  const ts = typescript();
  const kind = /\.tsx$/.test(path) ? ts.ScriptKind.TSX : /\.[cm]?ts$/.test(path) ? ts.ScriptKind.TS : /\.jsx$/.test(path) ? ts.ScriptKind.JSX : ts.ScriptKind.JS;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  if ((file as unknown as { parseDiagnostics?: unknown[] }).parseDiagnostics?.length) return undefined;
  return testsOf(ts, file);
}

/** Each `test`/`it` call of the file, keyed by its `describe` titles and its own, with its body's facts. */
function testsOf(ts: typeof TS, file: TS.SourceFile): Map<string, TestAsserts> {
  const tests = new Map<string, TestAsserts>();
  const titles: string[] = [];
  const walk = (node: TS.Node): void => {
    if (ts.isCallExpression(node)) {
      const name = calleeName(ts, node.expression).replace(/\.(only|concurrent|sequential)$/, "");
      const [title, second, third] = node.arguments;
      const fn = [second, third].find((argument) => argument !== undefined && (ts.isArrowFunction(argument) || ts.isFunctionExpression(argument))) as
        | TS.ArrowFunction
        | TS.FunctionExpression
        | undefined;
      const text = title && (ts.isStringLiteral(title) || ts.isNoSubstitutionTemplateLiteral(title)) ? title.text : undefined;
      if (text !== undefined && fn && /^(describe|suite|context)$/.test(name)) {
        titles.push(text);
        ts.forEachChild(fn.body, walk);
        titles.pop();
        return;
      }
      if (text !== undefined && fn && /^(test|it|t\.test)$/.test(name)) {
        const key = [...titles, text].join(" > ");
        tests.set(tests.has(key) ? `${key} #${tests.size}` : key, bodyFacts(ts, file, fn.body, lineOf(file, node)));
        return;
      }
    }
    ts.forEachChild(node, walk);
  };
  walk(file);
  return tests;
}

function lineOf(file: TS.SourceFile, node: TS.Node): number {
  return file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
}

function calleeName(ts: typeof TS, expression: TS.Expression): string {
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression)) return `${calleeName(ts, expression.expression)}.${expression.name.text}`;
  if (ts.isCallExpression(expression)) return `${calleeName(ts, expression.expression)}()`;
  return "";
}

/** The assertion call of a statement, if it is one: `expect(x).toBe(y)`, `assert.equal(…)`, `await expect(p).rejects…`. */
function assertion(ts: typeof TS, statement: TS.Statement): TS.CallExpression | undefined {
  if (!ts.isExpressionStatement(statement)) return undefined;
  let expression = statement.expression;
  if (ts.isAwaitExpression(expression)) expression = expression.expression;
  if (!ts.isCallExpression(expression)) return undefined;
  const name = calleeName(ts, expression.expression);
  return /^(expect\(\)|assert\b|t\.assert\b|expect\.|chai\.expect\(\))/.test(name) || /(^|\.)(should)\b/.test(name) ? expression : undefined;
}

/** `expect(<literal>)…`, `assert(<literal>)`, `assert.ok(<literal>)`: nothing of the code under test is asserted. */
function constant(ts: typeof TS, call: TS.CallExpression): boolean {
  let inner: TS.Expression = call;
  while (ts.isCallExpression(inner) || ts.isPropertyAccessExpression(inner)) {
    if (ts.isCallExpression(inner) && ts.isIdentifier(inner.expression) && /^(expect|assert)$/.test(inner.expression.text)) break;
    if (
      ts.isCallExpression(inner) &&
      ts.isPropertyAccessExpression(inner.expression) &&
      ts.isIdentifier(inner.expression.expression) &&
      inner.expression.expression.text === "assert" &&
      inner.expression.name.text === "ok"
    )
      break;
    inner = ts.isCallExpression(inner) ? inner.expression : inner.expression;
  }
  if (!ts.isCallExpression(inner)) return false;
  const first = inner.arguments[0];
  return first !== undefined && (ts.isLiteralExpression(first) || first.kind === ts.SyntaxKind.TrueKeyword || ts.isArrayLiteralExpression(first) || ts.isObjectLiteralExpression(first));
}

/** Whether a statement of `kind` lies inside `node`, not counting nested functions (their returns and throws are theirs). */
function holds(ts: typeof TS, node: TS.Node, kind: (inner: TS.Node) => boolean): boolean {
  let found = false;
  const walk = (inner: TS.Node): void => {
    if (found || ts.isFunctionLike(inner)) return;
    if (kind(inner)) found = true;
    else ts.forEachChild(inner, walk);
  };
  ts.forEachChild(node, walk);
  return found;
}

/** The assertions of one test's body: plain, conditional (under a branch, a loop, a callback or after an early return), swallowed by a catch, or of a constant. */
function bodyFacts(ts: typeof TS, file: TS.SourceFile, body: TS.Node, line: number): TestAsserts {
  const out: TestAsserts = { line, plain: 0, conditional: 0, swallowed: [], constant: [] };
  const leaves = (node: TS.Node): boolean => holds(ts, node, ts.isReturnStatement);
  const visit = (statements: readonly TS.Statement[], conditional: boolean, swallowed: boolean): void => {
    let under = conditional;
    for (const statement of statements) {
      one(statement, under, swallowed);
      if ((ts.isIfStatement(statement) || ts.isIterationStatement(statement, false) || ts.isTryStatement(statement) || ts.isSwitchStatement(statement)) && leaves(statement)) under = true;
    }
  };
  const block = (node: TS.Statement | undefined, conditional: boolean, swallowed: boolean): void => {
    if (!node) return;
    visit(ts.isBlock(node) ? node.statements : [node], conditional, swallowed);
  };
  const one = (statement: TS.Statement, conditional: boolean, swallowed: boolean): void => {
    const call = assertion(ts, statement);
    if (call) {
      if (constant(ts, call)) out.constant.push(lineOf(file, statement));
      if (swallowed) out.swallowed.push(lineOf(file, statement));
      if (conditional || swallowed) out.conditional++;
      else out.plain++;
      return;
    }
    if (ts.isIfStatement(statement)) {
      block(statement.thenStatement, true, swallowed);
      block(statement.elseStatement, true, swallowed);
    } else if (ts.isIterationStatement(statement, false)) {
      block(statement.statement, true, swallowed);
    } else if (ts.isTryStatement(statement)) {
      const swallows = statement.catchClause !== undefined && !holds(ts, statement.catchClause, ts.isThrowStatement);
      visit(statement.tryBlock.statements, conditional, swallowed || swallows);
      if (statement.catchClause) visit(statement.catchClause.block.statements, true, swallowed);
      if (statement.finallyBlock) visit(statement.finallyBlock.statements, conditional, swallowed);
    } else if (ts.isBlock(statement)) {
      visit(statement.statements, conditional, swallowed);
    } else if (ts.isSwitchStatement(statement)) {
      for (const clause of statement.caseBlock.clauses) visit(clause.statements, true, swallowed);
    } else {
      // A callback inside the test (forEach, a timer, a promise's then) may never run: its assertions are conditional.
      const walk = (inner: TS.Node): void => {
        if (ts.isFunctionLike(inner) && "body" in inner && inner.body) {
          const fnBody = inner.body as TS.Node;
          if (ts.isBlock(fnBody)) visit(fnBody.statements, true, swallowed);
          return;
        }
        ts.forEachChild(inner, walk);
      };
      ts.forEachChild(statement, walk);
    }
  };
  if (ts.isBlock(body)) visit(body.statements, false, false);
  return out;
}
