import { type StandInTransport, setStandInForProcess, standInForProcess } from '../client/wire/transport.js';

/**
 * The process's one stand-in for the network (docs/testing.md, "For the whole process"): every client
 * without a `mock` option of its own — the root `client`, the clients derived from it, any other —
 * sends its hops to it while it is installed.
 */

/** Installs `standIn` for the process; throws when another one is installed (one test's mock must not answer another's requests). */
export function installForProcess(standIn: StandInTransport, name: string): void {
    const current = standInForProcess();
    if (current !== undefined && current !== standIn) {
        throw new Error(
            `Cannot install this ${name} for the process: another mock or recorder is installed; uninstall it first`
        );
    }

    setStandInForProcess(standIn);
}

/** Removes `standIn` if it is the one installed (removing another is a no-op). */
export function uninstallFromProcess(standIn: StandInTransport): void {
    if (standInForProcess() === standIn) {
        setStandInForProcess(undefined);
    }
}
