export function interpreterFirstOnPath(): string | undefined;
export function installedPytestPluginsOff(parent: string): { dir: string; plugins: string[] } | undefined;
