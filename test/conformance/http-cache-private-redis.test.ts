import { redisConformanceRun } from './http-cache/same-as-memory.js';

redisConformanceRun('private');
