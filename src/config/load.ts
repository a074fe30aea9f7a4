import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Problem } from "../util/problem.js";
import { parseConfig } from "./parse.js";
import { CONFIG_PATH, type Config } from "./types.js";

export type ConfigLoad = { ok: true; config: Config } | { ok: false; problems: Problem[] };

export async function loadConfig(root: string): Promise<ConfigLoad> {
  let source: string;
  try {
    source = await readFile(join(root, CONFIG_PATH), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      return { ok: false, problems: [{ file: CONFIG_PATH, message: "not found; run `factory init` to write one" }] };
    }
    throw error;
  }
  return parseConfig(source, CONFIG_PATH);
}
