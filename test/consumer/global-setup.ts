import { pack } from './scratch.js';

/** The consumer tests run against the packed package; the current OpenTelemetry SDK needs Node 22.15+. */
export default function setup(): void {
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 15)) {
        throw new Error(
            `the consumer tests need Node.js 22.15 or later (the engines of OpenTelemetry SDK 3), not ${process.version}: .ci/run runs them with the Node 24 binary`
        );
    }

    pack();
}
