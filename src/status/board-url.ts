import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { STATE_DIR } from "../ledger/scan.js";

/** Where an open `factory board` says its URL, for the run's notifications: beside the ledger. */
export function boardUrlFile(root: string): string {
  return join(root, STATE_DIR, "board.url.json");
}

/**
 * Says where the board is, for the notifications of runs meanwhile; returns how to unsay it. Only where the
 * factory keeps state already (a repository it has never run in has no run to notify), and never fatal.
 */
export function announceBoard(root: string, url: string): () => void {
  const file = boardUrlFile(root);
  if (!existsSync(dirname(file))) return () => undefined;
  try {
    writeFileSync(file, JSON.stringify({ url, pid: process.pid }));
  } catch {
    return () => undefined;
  }
  return () => rmSync(file, { force: true });
}

/** The URL of a board open on this repository now (its process alive), or undefined. */
export function openBoardUrl(root: string, alive: (pid: number) => boolean = pidAlive): string | undefined {
  try {
    const { url, pid } = JSON.parse(readFileSync(boardUrlFile(root), "utf8")) as { url?: unknown; pid?: unknown };
    return typeof url === "string" && typeof pid === "number" && alive(pid) ? url : undefined;
  } catch {
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
