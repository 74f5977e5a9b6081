import { createRequire } from 'node:module';
import { client } from 'tracewire';
import { instrumentClient } from 'tracewire/instrumentation';

const { run } = createRequire(import.meta.url)('./calls.cjs');
await run({ client, instrumentClient });
