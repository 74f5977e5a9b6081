// Placeholder until the static plugin lands (issue 4).
export const staticFiles: Record<string, never> = {};
