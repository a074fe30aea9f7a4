/**
 * A seccomp filter for agent calls (issue 55 §4): an agent has the host's network (it must reach its
 * provider), so it shares the host's network namespace, where abstract unix sockets live (a D-Bus bus, a
 * desktop session's, a development server's). The filter refuses to create unix sockets at all
 * (`socket(AF_UNIX, …)` fails with EACCES), so none can be reached; socket pairs, pipes and TCP are
 * untouched. Socket files on disk are hidden separately (bind mounts over them). bubblewrap installs it
 * (`--seccomp FD`) after building the sandbox.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EACCES = 13;
const AF_UNIX = 1;
/** Offsets into struct seccomp_data: nr, arch, args[0] (its low 32 bits on a little-endian machine). */
const NR = 0;
const ARCH = 4;
const ARG0 = 16;

/** Per architecture Node runs on here: its audit number, socket(2)'s number, and whether x32 numbers (≥ 0x40000000) must be refused too. */
const ARCHES: Record<string, { audit: number; socket: number; x32: boolean }> = {
  x64: { audit: 0xc000003e, socket: 41, x32: true },
  arm64: { audit: 0xc00000b7, socket: 198, x32: false },
};

type Instruction = [code: number, jt: number, jf: number, k: number];

/**
 * Pure: the BPF program for `arch` (Node's `process.arch`), or undefined for one it does not know. A call
 * made through another ABI than the machine's (32-bit `int 0x80`, x32) is refused whole: through it,
 * `socketcall` would reach the same sockets.
 */
export function unixSocketFilter(arch: string = process.arch): Buffer | undefined {
  const target = ARCHES[arch];
  if (!target) return undefined;
  const deny = SECCOMP_RET_ERRNO | EACCES;
  // Labels as indexes; jumps are relative to the next instruction.
  const program: Instruction[] = target.x32
    ? [
        [BPF_LD_W_ABS, 0, 0, ARCH],
        [BPF_JEQ_K, 0, 5, target.audit], // 1: another ABI → deny (7)
        [BPF_LD_W_ABS, 0, 0, NR],
        [BPF_JGE_K, 3, 0, 0x40000000], // 3: an x32 number → deny (7)
        [BPF_JEQ_K, 0, 3, target.socket], // 4: not socket → allow (8)
        [BPF_LD_W_ABS, 0, 0, ARG0],
        [BPF_JEQ_K, 0, 1, AF_UNIX], // 6: AF_UNIX → deny (7), else allow (8)
        [BPF_RET_K, 0, 0, deny], // 7
        [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW], // 8
      ]
    : [
        [BPF_LD_W_ABS, 0, 0, ARCH],
        [BPF_JEQ_K, 0, 4, target.audit], // 1: another ABI → deny (6)
        [BPF_LD_W_ABS, 0, 0, NR],
        [BPF_JEQ_K, 0, 3, target.socket], // 3: not socket → allow (7)
        [BPF_LD_W_ABS, 0, 0, ARG0],
        [BPF_JEQ_K, 0, 1, AF_UNIX], // 5: AF_UNIX → deny (6), else allow (7)
        [BPF_RET_K, 0, 0, deny], // 6
        [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW], // 7
      ];
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jt, index * 8 + 2);
    bytes.writeUInt8(jf, index * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return bytes;
}
