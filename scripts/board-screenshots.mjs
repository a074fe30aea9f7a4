#!/usr/bin/env node
// Screenshots of `factory board` for the README: the demo's night (four
// packets: merged, merged on a retry, held for a person, blocked), its board
// and the blocked packet's page, taken in headless Chromium.
//   node scripts/board-screenshots.mjs [out-dir=docs]
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const BIN = fileURLToPath(new URL("../bin/factory.js", import.meta.url));
const out = resolve(process.argv[2] ?? "docs");
const browserPath = ["chromium", "chromium-browser"]
  .map((name) => {
    try {
      return execFileSync("which", [name], { encoding: "utf8" }).trim();
    } catch {
      return "";
    }
  })
  .find(Boolean);
if (!browserPath) throw new Error("chromium is not installed");

const base = mkdtempSync(join(tmpdir(), "factory-screenshots-"));
const dir = join(base, "sample");
const env = { ...process.env, NO_COLOR: "1" };
let board;
try {
  execFileSync(process.execPath, [BIN, "demo", "--dir", dir], { env, stdio: "ignore" });
  board = spawn(process.execPath, [BIN, "board"], { cwd: dir, env });
  const url = await new Promise((done, fail) => {
    let printed = "";
    board.stdout.on("data", (chunk) => {
      printed += chunk;
      const found = /board: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(printed)?.[1];
      if (found) done(found);
    });
    board.on("exit", (code) => fail(new Error(`factory board exited ${code}`)));
  });
  const browser = await chromium.launch({ executablePath: browserPath, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 420 } });
    mkdirSync(out, { recursive: true });
    await page.goto(url);
    await page.screenshot({ path: join(out, "board.png"), fullPage: true });
    await page.goto(`${url}packet/D04`);
    await page.setViewportSize({ width: 1100, height: 900 });
    await page.screenshot({ path: join(out, "board-packet.png") });
    console.log(`written: ${join(out, "board.png")}, ${join(out, "board-packet.png")}`);
  } finally {
    await browser.close();
  }
} finally {
  board?.kill("SIGINT");
  rmSync(base, { recursive: true, force: true });
}
