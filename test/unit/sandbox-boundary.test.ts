import { describe, expect, it } from "vitest";
import { hostSocketFiles } from "../../src/process/bwrap-args.js";
import { credentialFreeConfig, withoutUserInfo } from "../../src/process/git-config-view.js";
import { unixSocketFilter } from "../../src/process/seccomp.js";

describe("git's configuration as the sandbox shows it", () => {
  const config = `[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
\tsshCommand = ssh -i ~/.ssh/deploy
\thooksPath = /opt/hooks
[extensions]
\tworktreeConfig = true
[http "https://github.com/"]
\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX1NFQ1JFVA==
[remote "origin"]
\turl = https://x-access-token:ghs_SECRET@github.com/o/r.git
\tfetch = +refs/heads/*:refs/remotes/origin/*
[credential]
\thelper = store --file /home/me/.creds
[include]
\tpath = ~/.gitconfig-tokens
[url "https://token@github.com/"]
\tinsteadOf = https://github.com/
[branch "main"]
\tremote = origin
\tmerge = refs/heads/main
[filter "lfs"]
\tclean = git-lfs clean -- %f \\
\t  --more
[user]
\tname = Someone
`;

  it("keeps what git needs to read a worktree, with no credential: no extraheader, helper, include, rewrite; a URL without its user", () => {
    expect(credentialFreeConfig(config)).toBe(`[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
[extensions]
\tworktreeconfig = true
[remote "origin"]
\turl = https://github.com/o/r.git
\tfetch = +refs/heads/*:refs/remotes/origin/*
[branch "main"]
\tremote = origin
\tmerge = refs/heads/main
[user]
\tname = Someone
`);
  });

  it("removes a URL's user information, quoted or not, and leaves other values alone", () => {
    expect(withoutUserInfo("https://user:pass@host/r.git")).toBe("https://host/r.git");
    expect(withoutUserInfo('"https://tok@host/r.git"')).toBe('"https://host/r.git"');
    expect(withoutUserInfo("git@github.com:o/r.git")).toBe("git@github.com:o/r.git");
    expect(withoutUserInfo("/srv/git/r.git")).toBe("/srv/git/r.git");
  });
});

describe("the host's unix sockets a call would see", () => {
  const procNetUnix = `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 1001 /run/docker.sock
0000000000000000: 00000002 00000000 00010000 0001 01 1002 /var/lib/postgresql/.s.PGSQL.5432
0000000000000000: 00000002 00000000 00010000 0001 01 1003 @/tmp/.X11-unix/X0
0000000000000000: 00000002 00000000 00010000 0001 01 1004 /home/me/dev.sock
0000000000000000: 00000003 00000000 00000000 0001 03 1005
0000000000000000: 00000002 00000000 00010000 0001 01 1006 /srv/app/with space.sock
`;
  it("are the socket files outside what the call does not see as the host has it; an abstract one is no file", () => {
    expect(hostSocketFiles(procNetUnix, ["/run", "/home/me", "/tmp"])).toEqual(["/srv/app/with space.sock", "/var/lib/postgresql/.s.PGSQL.5432"]);
    // A directory shown again inside one that is not seen (a tool's node_modules under HOME or /tmp) shows its sockets too.
    expect(hostSocketFiles(procNetUnix, ["/run", "/home/me", "/tmp"], ["/home/me"])).toContain("/home/me/dev.sock");
  });
});

describe("the agents' seccomp filter", () => {
  /** Runs the BPF program on one system call, as the kernel would. */
  function verdict(program: Buffer, call: { arch: number; nr: number; arg0: number }): number {
    const data = Buffer.alloc(24);
    data.writeUInt32LE(call.nr, 0);
    data.writeUInt32LE(call.arch, 4);
    data.writeUInt32LE(call.arg0, 16);
    let accumulator = 0;
    for (let pc = 0; pc < program.length / 8; ) {
      const code = program.readUInt16LE(pc * 8);
      const jt = program.readUInt8(pc * 8 + 2);
      const jf = program.readUInt8(pc * 8 + 3);
      const k = program.readUInt32LE(pc * 8 + 4);
      if (code === 0x20) accumulator = data.readUInt32LE(k);
      else if (code === 0x06) return k;
      else if (code === 0x15) pc += accumulator === k ? jt : jf;
      else if (code === 0x35) pc += accumulator >= k ? jt : jf;
      else throw new Error(`unknown instruction ${code}`);
      pc += 1;
    }
    throw new Error("ran off the end");
  }
  const ALLOW = 0x7fff0000;
  const EACCES = 0x00050000 | 13;

  it("refuses socket(AF_UNIX) and another ABI's calls; allows socket(AF_INET) and everything else", () => {
    for (const [arch, audit, socket] of [
      ["x64", 0xc000003e, 41],
      ["arm64", 0xc00000b7, 198],
    ] as const) {
      const program = unixSocketFilter(arch);
      if (!program) throw new Error(`no filter for ${arch}`);
      expect(verdict(program, { arch: audit, nr: socket, arg0: 1 })).toBe(EACCES);
      expect(verdict(program, { arch: audit, nr: socket, arg0: 2 })).toBe(ALLOW);
      expect(verdict(program, { arch: audit, nr: 0, arg0: 1 })).toBe(ALLOW);
      expect(verdict(program, { arch: 0x40000003, nr: 102, arg0: 1 })).toBe(EACCES);
    }
    const x64 = unixSocketFilter("x64") as Buffer;
    expect(verdict(x64, { arch: 0xc000003e, nr: 0x40000000 + 41, arg0: 1 })).toBe(EACCES);
    expect(unixSocketFilter("mips")).toBeUndefined();
  });
});
