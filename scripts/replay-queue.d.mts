export interface ReplayStep {
  label: string;
  subject: string;
  /** A change's new content, or no text for a deleted file. */
  changes: { path: string; text?: string }[];
}

export interface ReplayedStep {
  id: string;
  label: string;
  subject: string;
  planted: number;
  written: number;
}

export function writeReplayQueue(input: {
  target: string;
  spec: string;
  specPath: string;
  scriptFile: string;
  steps: readonly ReplayStep[];
  isTest: (path: string) => boolean;
  isSupport: (path: string) => boolean;
}): ReplayedStep[];
