#!/usr/bin/env node
// Writes the transition table (src/gates/transitions.ts, as built in dist/) into its block in docs/concepts/how-tests-are-judged.md.
// Run after `npm run build`; test/unit/transitions.test.ts fails while the two differ.
import { readFileSync, writeFileSync } from "node:fs";
import { transitionTableMarkdown } from "../dist/gates/transitions.js";

const file = new URL("../docs/concepts/how-tests-are-judged.md", import.meta.url);
const readme = readFileSync(file, "utf8");
const begin = readme.match(/<!-- transitions:begin[^>]*-->/);
const end = readme.indexOf("<!-- transitions:end -->");
if (!begin || begin.index === undefined || end < begin.index) {
  console.error("docs/concepts/how-tests-are-judged.md: no <!-- transitions:begin … --> … <!-- transitions:end --> block to write the table into");
  process.exit(2);
}
const head = readme.slice(0, begin.index + begin[0].length);
writeFileSync(file, `${head}\n${transitionTableMarkdown()}\n${readme.slice(end)}`);
console.log("docs/concepts/how-tests-are-judged.md: transition table written");
