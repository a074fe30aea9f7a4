import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitHub } from "../../src/forge/github.js";
import { type GitHubStub, type RecordedRequest, startGitHubStub } from "../helpers/github-stub.js";
import { publishedFile } from "../helpers/published.js";

/**
 * The scripted GitHub the pull-request tests run against, checked against
 * GitHub's own published OpenAPI description (@octokit/openapi, downloaded at
 * test time and cached): every request the factory's client makes is an
 * operation GitHub has, with a body GitHub declares, and every answer the stub
 * gives has only fields GitHub declares for that operation and status, of the
 * declared types. So the stub cannot drift from the real API unseen.
 */
const OPENAPI_VERSION = "23.0.2";
const spec = publishedFile("@octokit/openapi", OPENAPI_VERSION, "generated/api.github.com.json");
if (!spec.ok) console.warn(`skipping the GitHub stub's OpenAPI check: ${spec.reason}`);

type Schema = Record<string, unknown>;
interface OpenApi {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema: Schema }> }; responses: Record<string, Schema> }>>;
  components: Record<string, Record<string, Schema>>;
}

let api: OpenApi;
let stub: GitHubStub;
let dir: string;
const TOKEN = "t0ken";

beforeAll(async () => {
  if (!spec.ok) return;
  api = JSON.parse(readFileSync(spec.file, "utf8")) as OpenApi;
  dir = mkdtempSync(join(tmpdir(), "factory-stub-openapi-"));
  const bare = join(dir, "w.git");
  execFileSync("git", ["init", "--quiet", "--bare", "-b", "main", bare]);
  const work = join(dir, "work");
  execFileSync("git", ["clone", "--quiet", bare, work]);
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@t", ...args], { cwd: work, encoding: "utf8" });
  git("commit", "--quiet", "--allow-empty", "-m", "base");
  git("push", "--quiet", "origin", "HEAD:main");
  git("commit", "--quiet", "--allow-empty", "-m", "work");
  git("push", "--quiet", "origin", "HEAD:factory/P01");
  for (const id of ["P02", "P03", "P04"]) {
    git("commit", "--quiet", "--allow-empty", "-m", `work ${id}`);
    git("push", "--quiet", "origin", `HEAD:factory/${id}`);
  }
  stub = await startGitHubStub({ bare, owner: "acme", repo: "w", token: TOKEN, http: true });
});
afterAll(async () => {
  await stub?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!spec.ok)("the scripted GitHub against GitHub's OpenAPI description", () => {
  it("serves only operations GitHub has, answering in its shapes, for every call the factory's client makes", async () => {
    const client = new GitHub({ api: stub.api, repo: "acme/w", tokenEnv: "GITHUB_TOKEN" }, TOKEN);
    const created = await client.createPull({ head: "factory/P01", base: "main", title: "Add double", body: "body" });
    expect(await client.openPullFrom("factory/P01", "main")).toMatchObject({ number: created.number });
    await client.updatePull(created.number, { body: "new body" });
    await client.pull(created.number);
    expect(await client.checkRuns(created.head.sha)).toEqual([]); // the check suite is registered after the first read, as GitHub does after a push
    expect(await client.checkRuns(created.head.sha)).toEqual([expect.objectContaining({ name: "ci", app: expect.objectContaining({ slug: "github-actions" }) })]);
    stub.statuses = () => [{ context: "ci", state: "success", description: "ok", creator: "github-actions[bot]" }];
    expect(await client.statuses(created.head.sha)).toEqual([expect.objectContaining({ context: "ci", creator: expect.objectContaining({ login: "github-actions[bot]" }) })]);
    stub.writers.add("alice");
    expect(await client.permission("alice")).toBe("write");
    expect(await client.permission("mallory")).toBe("read");
    await client.reviews(created.number);
    await client.reviewComments(created.number);
    expect(await client.protection("main")).toEqual({ kind: "none" });
    stub.protection = { url: "u", required_status_checks: { url: "u", strict: true, contexts: ["ci"], contexts_url: "u", checks: [{ context: "ci", app_id: null }] } };
    expect(await client.protection("main")).toMatchObject({ kind: "protected", strict: true });
    stub.protection = undefined;
    stub.rules = [
      {
        type: "required_status_checks",
        ruleset_source_type: "Repository",
        ruleset_source: "acme/w",
        ruleset_id: 1,
        parameters: { strict_required_status_checks_policy: true, required_status_checks: [{ context: "ci", integration_id: 15368 }] },
      },
    ];
    expect(await client.protection("main")).toEqual({ kind: "protected", strict: true, contexts: ["ci"], checks: [{ context: "ci", appId: 15368 }], from: ["rulesets"] });
    // A forge without the asynchronous merge (404): the synchronous one, its 405 and 409 answers.
    stub.asyncMerge = false;
    stub.mergeAnswers = [405, 409];
    const merge = (pull: { number: number; head: { sha: string } }) => client.merge(pull.number, { sha: pull.head.sha, title: "t", message: "m" });
    expect((await merge(created)).kind).toBe("not-mergeable");
    expect((await merge(created)).kind).toBe("head-moved");
    expect((await merge(created)).kind).toBe("merged");

    // The asynchronous merge: accepted (202), still running after three reads, then found running (409) and read until it merged.
    stub.asyncMerge = true;
    stub.asyncPending = 4;
    const second = await client.createPull({ head: "factory/P02", base: "main", title: "second", body: "" });
    expect(await merge(second)).toMatchObject({ kind: "merging", message: expect.stringContaining("in the background") });
    expect(await merge(second)).toMatchObject({ kind: "merged", sha: stub.pulls.get(second.number)?.merge_commit_sha });
    // An asynchronous merge that failed falls back to the synchronous merge, which says why or merges.
    stub.asyncPending = 0;
    stub.asyncFailures = ["Merge conflict: the pull request could not be merged."];
    const third = await client.createPull({ head: "factory/P03", base: "main", title: "third", body: "" });
    expect((await merge(third)).kind).toBe("merged");
    // A closed PR: 400, not mergeable.
    const fourth = await client.createPull({ head: "factory/P04", base: "main", title: "fourth", body: "" });
    stub.close(fourth.number);
    expect(await merge(fourth)).toMatchObject({ kind: "not-mergeable", message: "Pull request is closed." });
    const calls = stub.requests.map((request) => `${request.method} ${request.path.replace(/^\/repos\/acme\/w/, "")} ${request.response?.status}`);
    expect(calls.filter((call) => call.includes("/merge"))).toEqual([
      ...Array(3)
        .fill(["PUT /pulls/1/merge-async 404", expect.stringMatching(/^PUT \/pulls\/1\/merge (405|409|200)$/)])
        .flat(),
      "PUT /pulls/2/merge-async 202",
      ...Array(3).fill(expect.stringMatching(/^GET \/pulls\/2\/merge-async\/[0-9a-f-]+ 200$/)),
      "PUT /pulls/2/merge-async 409",
      ...Array(2).fill(expect.stringMatching(/^GET \/pulls\/2\/merge-async\/[0-9a-f-]+ 200$/)),
      "PUT /pulls/3/merge-async 202",
      expect.stringMatching(/^GET \/pulls\/3\/merge-async\/[0-9a-f-]+ 200$/),
      "PUT /pulls/3/merge 200",
      "PUT /pulls/4/merge-async 400",
    ]);

    // Issues (factory intake, and the comment a landing leaves).
    stub.issues.set(7, { number: 7, title: "An issue", body: "text", user: { login: "alice" }, labels: ["factory:close"], state: "open", created_at: "2026-12-01T10:00:00Z", comments: [] });
    expect(await client.issue(7)).toMatchObject({ number: 7, labels: [{ name: "factory:close" }] });
    await client.commentOnIssue(7, "landed");
    expect(await client.issueComments(7)).toEqual([expect.objectContaining({ body: "landed" })]);
    await client.closeIssue(7);
    expect(stub.issues.get(7)?.state).toBe("closed");

    const problems = stub.requests.flatMap((request) => checkExchange(api, request));
    expect(problems).toEqual([]);
    expect(stub.requests.length).toBeGreaterThanOrEqual(25);
  });

  it("the check finds a field GitHub does not declare (it would catch a drifting stub)", () => {
    const request: RecordedRequest = {
      method: "GET",
      path: "/repos/acme/w/pulls/1",
      body: undefined,
      authorization: undefined,
      at: 0,
      response: { status: 200, body: { number: 1, mergeable_by_magic: true } },
    };
    expect(checkExchange(api, request)).toEqual(["GET /repos/{owner}/{repo}/pulls/{pull_number} 200: $.mergeable_by_magic is not declared"]);
    expect(checkExchange(api, { ...request, path: "/repos/acme/w/pulls/1/teleport" })).toEqual(["GET /repos/acme/w/pulls/1/teleport is not an operation of GitHub's REST API"]);
  });
});

/** Every way one request and its answer do not fit GitHub's description. */
function checkExchange(spec: OpenApi, request: RecordedRequest): string[] {
  const path = request.path.split("?")[0] as string;
  const template = Object.keys(spec.paths).find((candidate) => new RegExp(`^${candidate.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path));
  const operation = template ? spec.paths[template]?.[request.method.toLowerCase()] : undefined;
  if (!template || !operation) return [`${request.method} ${path} is not an operation of GitHub's REST API`];
  const where = `${request.method} ${template}`;
  const problems: string[] = [];
  if (request.body !== undefined) {
    const schema = operation.requestBody?.content?.["application/json"]?.schema;
    if (!schema) problems.push(`${where}: GitHub takes no JSON body here`);
    else problems.push(...fits(spec, request.body, schema, "$").map((problem) => `${where} request: ${problem}`));
  }
  const status = request.response?.status ?? 0;
  const declared = operation.responses[String(status)];
  if (!declared) return [...problems, `${where}: GitHub never answers ${status}`];
  const content = (resolve(spec, declared) as { content?: Record<string, { schema: Schema }> }).content;
  const schema = content?.["application/json"]?.schema;
  if (schema) problems.push(...fits(spec, request.response?.body, schema, "$").map((problem) => `${where} ${status}: ${problem}`));
  return problems;
}

function resolve(spec: OpenApi, schema: Schema): Schema {
  let current = schema;
  while (typeof current.$ref === "string") {
    const [, , group = "", name = ""] = current.$ref.split("/");
    current = spec.components[group]?.[name] as Schema;
  }
  return current;
}

/** Pure but for reading the description: where `value` does not fit `schema` (OpenAPI 3.0: nullable, allOf, anyOf, oneOf). */
function fits(spec: OpenApi, value: unknown, raw: Schema, at: string): string[] {
  const schema = resolve(spec, raw);
  if (value === null) return schema.nullable === true || schema.type === undefined ? [] : [`${at} is null, which GitHub does not allow here`];
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key] as Schema[] | undefined;
    if (options) return options.some((option) => fits(spec, value, option, at).length === 0) ? [] : [`${at} fits none of its ${key} shapes`];
  }
  const parts = schema.allOf as Schema[] | undefined;
  if (parts) {
    const merged: Schema = { type: "object", properties: {}, additionalProperties: false };
    for (const part of parts.map((piece) => resolve(spec, piece))) Object.assign(merged.properties as Schema, part.properties ?? {});
    return fits(spec, value, merged, at);
  }
  const type = schema.type as string | undefined;
  if (type === "object" || (type === undefined && schema.properties)) {
    if (typeof value !== "object" || Array.isArray(value)) return [`${at} is not an object`];
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const open = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
    return Object.entries(value as Record<string, unknown>).flatMap(([key, item]) => {
      const property = properties[key];
      if (!property) return open ? [] : [`${at}.${key} is not declared`];
      return fits(spec, item, property, `${at}.${key}`);
    });
  }
  if (type === "array") return Array.isArray(value) ? value.flatMap((item, index) => fits(spec, item, (schema.items ?? {}) as Schema, `${at}[${index}]`)) : [`${at} is not an array`];
  if (type === "integer") return Number.isInteger(value) ? [] : [`${at} is not an integer`];
  if (type === "number") return typeof value === "number" ? [] : [`${at} is not a number`];
  if (type === "string") return typeof value === "string" ? enumProblem(schema, value, at) : [`${at} is not a string`];
  if (type === "boolean") return typeof value === "boolean" ? [] : [`${at} is not a boolean`];
  return [];
}

function enumProblem(schema: Schema, value: string, at: string): string[] {
  const allowed = schema.enum as string[] | undefined;
  return allowed && !allowed.includes(value) ? [`${at} is ${JSON.stringify(value)}, not one of ${allowed.join(", ")}`] : [];
}
