import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHttp, type TestServer } from '../helpers.js';

/**
 * An origin whose paths hold their answers until the test opens their gate, and count what reached them:
 * what request coalescing let through (coalescing.test.ts, redis-coalescing.test.ts).
 */

export interface GatedPath {
    url: string;
    /** The requests that reached the origin, as they arrived. */
    requests: IncomingMessage[];
    /** The most requests the origin held at once. */
    mostAtOnce: number;
    /** Lets the held answers go, and every later one at once. */
    open(): void;
    /** Holds the next answers again, until `open()`. */
    close(): void;
}

/** How a path answers its `index`-th request once its gate is open. */
export type Answer = (req: IncomingMessage, res: ServerResponse, index: number) => void;

interface Route {
    path: GatedPath;
    answer: Answer;
    gate: Promise<void>;
    held: number;
}

export interface GatedOrigin {
    /** A new path answered by `answer` once its gate opens (`open`: open from the start). */
    serve(answer: Answer, open?: boolean): GatedPath;
    close(): Promise<void>;
}

export async function startGatedOrigin(): Promise<GatedOrigin> {
    const routes = new Map<string, Route>();
    const server: TestServer = await startHttp((req, res) => {
        const route = routes.get(new URL(req.url!, 'http://x').pathname)!;
        const index = route.path.requests.push(req) - 1;
        route.held++;
        route.path.mostAtOnce = Math.max(route.path.mostAtOnce, route.held);
        req.resume();
        route.gate.then(() => {
            route.held--;
            route.answer(req, res, index);
        });
    });
    let count = 0;
    return {
        serve(answer, open = false) {
            const name = `/g${++count}`;
            let release = () => {};
            const route: Route = { path: undefined as never, answer, gate: Promise.resolve(), held: 0 };
            const close = () => {
                route.gate = new Promise<void>((resolve) => {
                    release = resolve;
                });
            };
            route.path = { url: server.url + name, requests: [], mostAtOnce: 0, open: () => release(), close };
            close();
            routes.set(name, route);
            if (open) {
                release();
            }

            return route.path;
        },
        close: () => server.close()
    };
}

/** Waits until `path` has received `n` requests. */
export async function received(path: GatedPath, n: number): Promise<void> {
    while (path.requests.length < n) {
        await sleep(2);
    }
}

/** Fresh for a minute. */
export function fresh(body = 'shared body'): Answer {
    return (_req, res) => {
        res.writeHead(200, { 'cache-control': 'max-age=60' });
        res.end(body);
    };
}

/** Never stored, each answer its own. */
export const uncacheable: Answer = (_req, res, index) => {
    res.writeHead(200, { 'cache-control': 'no-store' });
    res.end(`answer ${index}`);
};
