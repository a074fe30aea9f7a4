import { describe, expect, it } from "vitest";
import { checkScope } from "../../src/guards/scope.js";
import { addedSecrets } from "../../src/guards/secrets.js";

describe("secret-shaped strings a change adds", () => {
  const lines = (...texts: string[]) => [{ path: "src/config.js", added: texts.map((text, index) => ({ line: index + 1, text })) }];

  it("are refused, naming file, line and what they look like, never the secret", () => {
    const found = addedSecrets(
      lines(
        `const token = "ghp_${"a1B2".repeat(9)}";`,
        "AWS_KEY=AKIAIOSFODNN7EXAMPLE",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        'url = "https://x-access-token:s3cr3tvalue1@github.com/o/r.git"',
        "extraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hz",
        `key = "sk-ant-api03-${"x".repeat(40)}"`,
        "hooks.slack.com/services/T000/B000/XXXXXXXX",
      ),
    );
    expect(found.map((finding) => [finding.line, finding.message.split(":")[0]])).toEqual([
      [1, "adds what looks like a GitHub token"],
      [2, "adds what looks like an AWS access key id"],
      [3, "adds what looks like a private key"],
      [4, "adds what looks like a credential inside a URL"],
      [5, "adds what looks like an authorisation header with its value"],
      [6, "adds what looks like an Anthropic API key"],
      [7, "adds what looks like a Slack webhook"],
    ]);
    expect(found.some((finding) => finding.message.includes("a1B2"))).toBe(false);
  });

  it("stay quiet on code that only talks about them", () => {
    expect(
      addedSecrets(
        lines(
          "const token = process.env.GITHUB_TOKEN;",
          'headers.Authorization = "Bearer " + token;',
          "// see https://docs.github.com/en/authentication",
          'const url = "https://example.com/path?user=a&b=c";',
          "const ghp = 'ghp_short';",
          "BEGIN PUBLIC KEY",
        ),
      ),
    ).toEqual([]);
  });
});

describe("CI and automation configuration in a change", () => {
  const base = { deletable: [], planted: [] };
  const changes = [
    { kind: "modified" as const, path: ".github/workflows/ci.yml" },
    { kind: "added" as const, path: ".pre-commit-config.yaml" },
    { kind: "modified" as const, path: "src/a.js" },
  ];

  it("is refused unless allowed_paths names it; a glob such as ** does not", () => {
    const report = checkScope({ ...base, changes, allowed: ["**"] });
    expect(report.status).toBe("fail");
    expect(report.findings.map((finding) => finding.file)).toEqual([".github/workflows/ci.yml", ".pre-commit-config.yaml"]);
    expect(report.findings[0]?.message).toMatch(/CI or automation configuration \(\.github\).*allowed only where the packet's allowed_paths names it/);
  });

  it("named, passes the scope gate and goes to a person", () => {
    const report = checkScope({ ...base, changes, allowed: [".github/workflows/ci.yml", ".pre-commit-config.yaml", "src/**"] });
    expect(report.status).toBe("pass");
    expect(report.forPerson).toMatch(/edits CI or automation configuration \(\.github\/workflows\/ci\.yml, \.pre-commit-config\.yaml\).*a person rules on it/);
  });

  it("is no concern of a change that leaves it alone", () => {
    const report = checkScope({ ...base, changes: [{ kind: "modified", path: "src/a.js" }], allowed: undefined });
    expect(report.status).toBe("pass");
    expect(report.forPerson).toBeUndefined();
  });
});
