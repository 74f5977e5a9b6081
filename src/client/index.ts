// Placeholder until the client component lands (issue 3).
export const client: Record<string, never> = {};
