import type { Finding } from "../gates/types.js";

/**
 * Secret-shaped strings (issue 55 §4): a change that adds one would put a credential into the repository,
 * where every clone keeps it. An agent could have read one where it runs (a token in an environment or a
 * configuration file it was shown); code under test could print one into a file the change commits. The
 * shapes are the providers' own published formats, and a few generic ones (a credential inside a URL, an
 * authorisation header with its value, a private key block); no entropy guess.
 */
const SHAPES: [RegExp, string][] = [
  [/\bgh[pousr]_[A-Za-z0-9]{36,}\b/, "a GitHub token"],
  [/\bgithub_pat_[A-Za-z0-9_]{22,}\b/, "a GitHub fine-grained token"],
  [/\bglpat-[A-Za-z0-9_-]{20,}\b/, "a GitLab token"],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, "an AWS access key id"],
  [/\baws_secret_access_key\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}\b/i, "an AWS secret access key"],
  [/\bAIza[0-9A-Za-z_-]{35}\b/, "a Google API key"],
  [/-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY( BLOCK)?-----/, "a private key"],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}\b/, "a Slack token"],
  [/\bhooks\.slack\.com\/services\/T[A-Za-z0-9]+\/B[A-Za-z0-9]+\/[A-Za-z0-9]+/, "a Slack webhook"],
  [/\b(?:sk|rk)_live_[0-9A-Za-z]{24,}\b/, "a Stripe key"],
  [/\bsk-ant-[A-Za-z0-9_-]{20,}/, "an Anthropic API key"],
  [/\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}/, "an OpenAI API key"],
  [/\bnpm_[A-Za-z0-9]{36}\b/, "an npm token"],
  [/\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@"'`]+:[^/\s@"'`]{8,}@[^\s"'`]+/i, "a credential inside a URL"],
  [/\b(?:authorization|extraheader)\b["']?\s*[:=]\s*["']?\s*(?:authorization:\s*)?(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{16,}/i, "an authorisation header with its value"],
];

/** Pure: the secret-shaped strings the added lines hold, one finding per line, naming what it looks like (never the secret). */
export function addedSecrets(files: readonly { path: string; added: readonly { line: number; text: string }[] }[]): Finding[] {
  const findings: Finding[] = [];
  for (const file of files) {
    for (const added of file.added) {
      const shape = SHAPES.find(([pattern]) => pattern.test(added.text));
      if (shape)
        findings.push({
          file: file.path,
          line: added.line,
          message: `adds what looks like ${shape[1]}: a credential must never enter the repository (remove it; a test fixture that must look like one is planted with the packet)`,
        });
    }
  }
  return findings;
}
