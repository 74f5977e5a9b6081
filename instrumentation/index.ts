// Placeholder until the instrumentation lands (issue 5).
export {};
