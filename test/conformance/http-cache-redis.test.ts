import { describe } from 'vitest';
import { redisConformanceRun } from './http-cache/same-as-memory.js';

// The two runs at once, as in http-cache-memory.test.ts.
describe.concurrent('the HTTP caching suite on RedisCacheStore, the runs at once', () => {
    redisConformanceRun('private');
    redisConformanceRun('shared');
});
