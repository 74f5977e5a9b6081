// One variant of the tracing-cost benchmark (bench/lib/traced-variants.js), in its own process: a
// context manager and a patched `http` module are process-wide.
//   node bench/children/traced-client.js <variant> [origin port] [baseline build directory]
// Run by hand (no IPC channel) it starts its own origin, runs 20,000 GETs and prints the CPU per
// request, for profiling: node --cpu-prof bench/children/traced-client.js tracewire+otel
// The parent asks `{ type: 'run', count, concurrency }` and gets back the CPU time this process spent
// (process.cpuUsage, user + system) and the wall time of `count` GETs of /small.
import { answerParent, startChild, stopChild } from '../lib/processes.js';
import { isTracedVariant, setUpVariant, TRACED_VARIANTS } from '../lib/traced-variants.js';

const standalone = typeof process.send !== 'function';
const [variant, givenPort, baselineDirectory] = process.argv.slice(2);
// Checked before an origin is started, which an unknown variant would leave running.
if (!isTracedVariant(variant)) {
    throw new Error(`unknown variant ${variant}: ${TRACED_VARIANTS.join(', ')}`);
}

const origin = standalone ? await startChild('../servers/origin.js') : null;
const port = givenPort === undefined || givenPort === '' ? origin?.port : givenPort;
const url = `http://127.0.0.1:${port}/small`;

async function run(get, count, concurrency) {
    let issued = 0;
    const worker = async () => {
        while (issued < count) {
            issued++;
            const body = await get();
            if (body.length !== 100) {
                throw new Error(`expected 100 bytes, got ${body.length}`);
            }
        }
    };
    const cpuBefore = process.cpuUsage();
    const started = process.hrtime.bigint();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = process.cpuUsage(cpuBefore);
    return { cpuMicros: cpu.user + cpu.system, seconds };
}

const { get, sdk } = await setUpVariant(variant, url, baselineDirectory);
if (standalone) {
    const count = 20_000;
    await run(get, 2000, 50);
    const { cpuMicros, seconds } = await run(get, count, 50);
    console.log(`${variant}: ${(count / seconds).toFixed(0)} req/s, ${(cpuMicros / count).toFixed(1)} µs CPU/req`);
    await sdk?.tracerProvider.shutdown();
    await sdk?.meterProvider.shutdown();
    await stopChild(origin);
    process.exit(0);
}

answerParent({
    run: ({ count, concurrency }) => run(get, count, concurrency),
    // How many spans reached the exporter: proof that the instrumentation traced the requests.
    spans: async () => {
        await sdk?.tracerProvider.forceFlush();
        return { spans: sdk?.exported.spans ?? 0 };
    }
});
process.send({ ready: true });
process.on('SIGTERM', () => process.exit(0));
