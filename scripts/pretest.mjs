/**
 * The checks `npm test` runs before the tests (package.json "pretest"): the type check, the lint, and the build
 * followed by the package check, which reads what the build wrote. One after the other they took ~19 s, one
 * process at a time on a machine of two cores; they are independent otherwise, so the three lanes run at once.
 * Each step's output is printed whole when it ends (not interleaved with the others'), and the run fails when
 * any step fails, after the others have ended.
 */
import { spawn } from 'node:child_process';

/** Each lane's npm scripts, run in turn; a lane stops at its first failure. */
const lanes = [['typecheck'], ['lint'], ['build', 'check:package']];

const npm = process.env.npm_execpath;

/** Runs `npm run <script>` with its output kept; resolves to whether it passed. */
function run(script) {
    return new Promise((resolve) => {
        // Under npm, npm_execpath is its CLI, run by this Node.js; by hand, the npm on the PATH.
        const [command, args] = npm ? [process.execPath, [npm, 'run', script]] : ['npm', ['run', script]];
        const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        const output = [];
        child.stdout.on('data', (chunk) => output.push(chunk));
        child.stderr.on('data', (chunk) => output.push(chunk));
        child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
        child.on('close', (code) => {
            process.stdout.write(Buffer.concat(output));
            if (code !== 0) {
                process.stdout.write(`\n${script} failed (exit code ${code})\n`);
            }

            resolve(code === 0);
        });
    });
}

const passed = await Promise.all(
    lanes.map(async (lane) => {
        for (const script of lane) {
            if (!(await run(script))) {
                return false;
            }
        }

        return true;
    })
);
process.exitCode = passed.every(Boolean) ? 0 : 1;
