import { matchesAny } from "../gates/paths.js";

/**
 * CI and automation configuration (issue 55 §4): what runs on the forge with its secrets, on every push and
 * pull request, outside any sandbox of the factory's. A change to it is forbidden unless the packet names it
 * in allowed_paths (a glob such as `**` does not), and a packet that names it goes to a person.
 */
export const AUTOMATION_PATHS = [
  ".github/**",
  ".gitea/**",
  ".forgejo/**",
  ".gitlab-ci.yml",
  ".gitlab/**",
  ".circleci/**",
  "Jenkinsfile",
  "**/Jenkinsfile",
  ".travis.yml",
  "azure-pipelines.yml",
  ".azure-pipelines/**",
  "bitbucket-pipelines.yml",
  ".buildkite/**",
  ".drone.yml",
  ".woodpecker.yml",
  ".woodpecker/**",
  "appveyor.yml",
  ".appveyor.yml",
  ".pre-commit-config.yaml",
  ".pre-commit-hooks.yaml",
  "renovate.json",
  ".renovaterc",
  ".renovaterc.json",
  "cloudbuild.yaml",
  "cloudbuild.yml",
  ".husky/**",
];

/** Pure: the top of the automation configuration a path belongs to (`.github`, `Jenkinsfile`), or undefined. */
export function automationPart(path: string): string | undefined {
  if (!matchesAny(path, AUTOMATION_PATHS)) return undefined;
  const top = path.split("/")[0] ?? path;
  return path.includes("/") && !path.endsWith("Jenkinsfile") ? top : path;
}
