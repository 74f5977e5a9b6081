import { startChild, stopChild } from './lib/processes.js';
import { runCacheRows } from './sections/client-cache.js';
const origin = await startChild('../servers/origin.js');
try { const r = await runCacheRows({ port: origin.port, quick: true, log: console.log }); console.log(r.markdown); } finally { await stopChild(origin); }
