import { MemoryCacheStore } from '../../src/client/cache/stores/memory-store.js';
import { conformanceRun } from './http-cache/run.js';

conformanceRun('private', 'MemoryCacheStore', () => new MemoryCacheStore());
