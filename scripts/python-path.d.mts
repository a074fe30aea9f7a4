export function interpreterFirstOnPath(): string | undefined;
