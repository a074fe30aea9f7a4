import { execFile } from "node:child_process";

/** Copies a directory tree with its modes and links (`cp -a`), copy-on-write where the file system can; false when it failed. */
export function copyTree(from: string, to: string): Promise<boolean> {
  return new Promise((done) => execFile("cp", ["-a", "--reflink=auto", "--", from, to], (error) => done(!error)));
}
