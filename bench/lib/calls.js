/**
 * Runs `count` calls of `call` with `concurrency` in flight; returns calls per second and this
 * process's CPU µs per call (a client's side only when its server runs in another process). On a
 * shared machine the CPU figure moves less than the rate, which also waits for the other processes.
 */
export async function runCalls(call, count, concurrency) {
    let issued = 0;
    const worker = async () => {
        while (issued < count) {
            issued++;
            await call();
        }
    };
    const start = process.hrtime.bigint();
    const cpuStart = process.cpuUsage();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const cpu = process.cpuUsage(cpuStart);
    return {
        rate: count / (Number(process.hrtime.bigint() - start) / 1e9),
        cpuPerOperation: (cpu.user + cpu.system) / count
    };
}
