import { Readable } from 'node:stream';
import type { Client, RequestAndReadOptions, TransferProgress } from '../../../src/client/index.js';
import { errOf, type Outcome, okOf, outcomeOf } from './outcome.js';
import type { Scenario } from './script.js';

/**
 * The parity scenarios (test/testing/parity.test.ts): each an origin's script and the calls made to
 * it, covering what a test of code that calls an upstream asks of a mock — replies, errors, bodies,
 * redirects, retries, faults, delays and timeouts, decoding, progress, the cache, connection reuse,
 * and HTTP/2's own faults.
 */

function get(api: Client, url: string, options?: RequestAndReadOptions): Promise<Outcome> {
    return outcomeOf(api.get(url, options));
}

const text = { 'content-type': 'text/plain' };

/**
 * A Cache-Status without its ttl: the ttl counts from the response's `date`, a whole second, so two
 * runs a few milliseconds apart may straddle one.
 */
function cacheStatus(outcome: Outcome): string | undefined {
    return (outcome.ok?.headers['cache-status'] as string | undefined)?.replace(/ttl=-?\d+/, 'ttl=N');
}

export const scenarios: Scenario[] = [
    // Replies.
    {
        name: 'a JSON reply, parsed',
        steps: [{ path: '/user', answer: { status: 200, body: { id: 1, name: 'Ada' } } }],
        run: (api, origin) => get(api, `${origin}/user`, { json: true })
    },
    {
        name: 'a text reply with headers of its own, a repeated one included',
        steps: [
            {
                path: '/text',
                answer: {
                    status: 200,
                    body: 'hello',
                    headers: { ...text, 'x-trace': 'abc', 'set-cookie': ['a=1', 'b=2'] }
                }
            }
        ],
        run: (api, origin) => get(api, `${origin}/text`)
    },
    {
        name: 'a 404 becomes the helper error carrying the payload',
        steps: [{ path: '/missing', answer: { status: 404, body: 'no such thing', headers: text } }],
        run: (api, origin) => get(api, `${origin}/missing`)
    },
    {
        name: 'a 500 problem document is read into the error',
        steps: [
            {
                path: '/problem',
                answer: {
                    status: 500,
                    body: { type: 'https://example.com/broken', title: 'Broken', status: 500, detail: 'it broke' },
                    headers: { 'content-type': 'application/problem+json' }
                }
            }
        ],
        run: async (api, origin) => {
            try {
                await api.get(`${origin}/problem`);
                return 'resolved';
            } catch (err) {
                return { ...errOf(err as never), problem: (err as { data: { problem?: unknown } }).data.problem };
            }
        }
    },
    {
        name: 'a 204 has no body',
        steps: [{ method: 'DELETE', path: '/user/1', answer: { status: 204 } }],
        run: (api, origin) => outcomeOf(api.delete(`${origin}/user/1`))
    },
    {
        name: 'a HEAD has the length of the body it does not carry',
        steps: [{ method: 'HEAD', path: '/file', answer: { status: 200, body: 'twelve bytes' } }],
        run: async (api, origin) => {
            const res = await api.request('HEAD', `${origin}/file`);
            return okOf(res, await api.read(res));
        }
    },
    {
        name: 'a POST of JSON, echoed',
        steps: [{ method: 'POST', path: '/echo', answer: { status: 201, echo: true } }],
        run: (api, origin) => outcomeOf(api.post(`${origin}/echo`, { payload: { a: [1, 2] } }))
    },
    {
        name: 'a PUT of a stream, echoed',
        steps: [{ method: 'PUT', path: '/echo', answer: { status: 200, echo: true } }],
        run: (api, origin) =>
            outcomeOf(api.put(`${origin}/echo`, { payload: Readable.from(['part one, ', 'part two']) }))
    },
    // Redirects.
    {
        name: 'a 301 followed to its target',
        steps: [
            { path: '/old', answer: { status: 301, body: '', headers: { location: '/new' } } },
            { path: '/new', answer: { status: 200, body: 'moved here' } }
        ],
        run: (api, origin) => get(api, `${origin}/old`, { redirects: 3 })
    },
    {
        name: 'a 302 not followed without the redirects option',
        steps: [{ path: '/old', answer: { status: 302, body: '', headers: { location: '/new' } } }],
        run: (api, origin) => get(api, `${origin}/old`)
    },
    {
        name: 'a redirect loop past the limit',
        steps: [{ path: '/loop', answer: { status: 302, body: '', headers: { location: '/loop' } }, times: 3 }],
        run: (api, origin) => get(api, `${origin}/loop`, { redirects: 2 })
    },
    {
        name: 'a 303 after a POST followed with a GET (redirect303)',
        steps: [
            { method: 'POST', path: '/form', answer: { status: 303, body: '', headers: { location: '/done' } } },
            { path: '/done', answer: { status: 200, body: 'done' } }
        ],
        run: (api, origin) => outcomeOf(api.post(`${origin}/form`, { payload: 'x=1', redirects: 1, redirect303: true }))
    },
    // Retries.
    {
        name: 'a 503 retried after its Retry-After of 0, then a 200',
        steps: [
            { path: '/flaky', answer: { status: 503, body: 'busy', headers: { 'retry-after': '0' } } },
            { path: '/flaky', answer: { status: 200, body: 'ok now' } }
        ],
        run: (api, origin) => get(api, `${origin}/flaky`, { retry: true })
    },
    {
        name: 'a 503 past the retry limit fails with its attempts',
        steps: [{ path: '/down', answer: { status: 503, body: 'down', headers: { 'retry-after': '0' } }, times: 2 }],
        run: (api, origin) => get(api, `${origin}/down`, { retry: { limit: 1 } })
    },
    {
        name: "a 429's Retry-After of 1 s is waited for",
        steps: [
            { path: '/limited', answer: { status: 429, body: 'slow down', headers: { 'retry-after': '1' } } },
            { path: '/limited', answer: { status: 200, body: 'welcome back' } }
        ],
        run: async (api, origin) => {
            const start = Date.now();
            const outcome = await get(api, `${origin}/limited`, { retry: true });
            return { outcome, waited: Date.now() - start >= 950 };
        }
    },
    // Faults.
    {
        name: 'the connection reset before the headers',
        steps: [{ path: '/reset', answer: { fault: 'connection-reset' } }],
        run: (api, origin) => get(api, `${origin}/reset`)
    },
    {
        name: 'a reset retried, then a 200',
        steps: [
            { path: '/reset', answer: { fault: 'connection-reset' } },
            { path: '/reset', answer: { status: 200, body: 'recovered' } }
        ],
        run: (api, origin) => get(api, `${origin}/reset`, { retry: { backoff: () => 0 } })
    },
    {
        name: 'a body cut short after 10 of its 100 bytes',
        steps: [{ path: '/cut', answer: { status: 200, body: 'x'.repeat(100), cutAfter: 10 } }],
        run: (api, origin) => get(api, `${origin}/cut`)
    },
    {
        name: 'a body cut right after the headers, read with request() and read()',
        steps: [{ path: '/cut', answer: { status: 200, body: 'y'.repeat(100), cutAfter: 0 } }],
        run: async (api, origin) => {
            const res = await api.request('GET', `${origin}/cut`);
            try {
                await api.read(res);
                return 'read whole';
            } catch (err) {
                return { status: res.statusCode, err: errOf(err as never) };
            }
        }
    },
    {
        name: 'a refused connection',
        refused: true,
        steps: [],
        run: (api, origin) => get(api, `${origin}/`)
    },
    {
        name: 'a refused connection, retried to the limit',
        refused: true,
        steps: [],
        run: (api, origin) => get(api, `${origin}/`, { retry: { limit: 2, backoff: () => 0 } })
    },
    {
        name: 'a certificate that does not verify',
        verify: true,
        steps: [{ path: '/', answer: { status: 200, body: 'never' } }],
        run: (api, origin) => get(api, `${origin}/`)
    },
    // Delays and timeouts.
    {
        name: 'headers later than the timeout',
        steps: [{ path: '/slow', answer: { status: 200, body: 'late', delay: 400 } }],
        run: (api, origin) => get(api, `${origin}/slow`, { timeout: 100 })
    },
    {
        name: 'headers later than the response phase bound',
        steps: [{ path: '/slow', answer: { status: 200, body: 'late', delay: 400 } }],
        run: (api, origin) => get(api, `${origin}/slow`, { timeouts: { response: 100 } })
    },
    {
        name: 'a body later than the read timeout',
        steps: [{ path: '/stall', answer: { status: 200, body: 'stalled', bodyDelay: 400 } }],
        run: (api, origin) => get(api, `${origin}/stall`, { timeout: 100 })
    },
    {
        name: 'a caller that aborts while the headers are awaited',
        steps: [{ path: '/slow', answer: { status: 200, body: 'late', delay: 400 } }],
        run: (api, origin) => get(api, `${origin}/slow`, { signal: AbortSignal.timeout(100) })
    },
    {
        name: 'a deadline that outlasts no retry wait',
        steps: [{ path: '/busy', answer: { status: 503, body: 'busy', headers: { 'retry-after': '5' } } }],
        run: (api, origin) => get(api, `${origin}/busy`, { retry: true, deadline: 1000 })
    },
    // Bodies.
    {
        name: 'a gzip body decoded with gunzip',
        steps: [{ path: '/gz', answer: { status: 200, body: 'compressed '.repeat(20), gzip: true, headers: text } }],
        run: (api, origin) => get(api, `${origin}/gz`, { gunzip: true })
    },
    {
        name: 'a gzip body left as it came without gunzip',
        steps: [{ path: '/gz', answer: { status: 200, body: 'compressed '.repeat(20), gzip: true } }],
        run: async (api, origin) => {
            const { res, payload } = await api.get(`${origin}/gz`);
            return { encoding: res.headers['content-encoding'], bytes: (payload as Buffer).length };
        }
    },
    {
        name: 'a body over maxBytes',
        steps: [{ path: '/big', answer: { status: 200, body: 'z'.repeat(5000) } }],
        run: (api, origin) => get(api, `${origin}/big`, { maxBytes: 1000 })
    },
    {
        name: "json: 'strict' refusing a text body",
        steps: [{ path: '/text', answer: { status: 200, body: 'not json', headers: text } }],
        run: (api, origin) => get(api, `${origin}/text`, { json: 'strict' })
    },
    {
        name: 'a JSON content-type whose body does not parse',
        steps: [
            { path: '/bad', answer: { status: 200, body: '{"a":', headers: { 'content-type': 'application/json' } } }
        ],
        run: (api, origin) => get(api, `${origin}/bad`, { json: true })
    },
    {
        name: 'download and upload progress',
        steps: [{ method: 'POST', path: '/up', answer: { status: 200, body: 'd'.repeat(200_000) } }],
        run: async (api, origin) => {
            let up: TransferProgress | undefined;
            let down: TransferProgress | undefined;
            const outcome = await outcomeOf(
                api.post(`${origin}/up`, {
                    payload: Buffer.alloc(150_000, 'u'),
                    onUploadProgress: (progress) => {
                        up = progress;
                    },
                    onDownloadProgress: (progress) => {
                        down = progress;
                    }
                })
            );
            return { status: outcome.ok?.status, up, down };
        }
    },
    // The cache.
    {
        name: 'a fresh response answered from the cache the second time',
        steps: [
            { path: '/cached', answer: { status: 200, body: 'cache me', headers: { 'cache-control': 'max-age=60' } } }
        ],
        run: async (api, origin) => {
            const first = await get(api, `${origin}/cached`, { cache: true });
            const second = await get(api, `${origin}/cached`, { cache: true });
            return [cacheStatus(first), cacheStatus(second), second.ok?.body];
        }
    },
    {
        // Over HTTP/1.1 the 301's empty body comes with its head, so the redirect's response is stored even
        // though the flow destroys it at once; over HTTP/2 its end comes after, and it is not.
        name: 'a cacheable 301 followed twice, through the cache',
        steps: [
            {
                path: '/moved',
                answer: { status: 301, body: '', headers: { location: '/target', 'cache-control': 'max-age=60' } },
                times: 2
            },
            { path: '/target', answer: { status: 200, body: 'target', headers: { 'cache-control': 'max-age=60' } } }
        ],
        run: async (api, origin) => {
            const cached = api.defaults({ cache: true, redirects: 1 });
            const first = await get(cached, `${origin}/moved`);
            const second = await get(cached, `${origin}/moved`);
            return [cacheStatus(first), second.ok?.body, cacheStatus(second)];
        }
    },
    {
        name: 'concurrent calls coalesced into one fetch',
        steps: [
            {
                path: '/hot',
                answer: { status: 200, body: 'shared', headers: { 'cache-control': 'max-age=60' }, delay: 100 }
            }
        ],
        run: async (api, origin) => {
            const cached = api.defaults({ cache: true });
            const results = await Promise.all([1, 2, 3].map(() => get(cached, `${origin}/hot`)));
            return results.map((result) => [result.ok?.body, cacheStatus(result)]);
        }
    },
    {
        name: 'a stale response revalidated with a 304',
        steps: [
            {
                path: '/etag',
                answer: { status: 200, body: 'version 1', headers: { etag: '"v1"', 'cache-control': 'no-cache' } }
            },
            { path: '/etag', answer: { status: 304, headers: { etag: '"v1"', 'cache-control': 'no-cache' } } }
        ],
        run: async (api, origin) => {
            const cached = api.defaults({ cache: true });
            const first = await get(cached, `${origin}/etag`);
            const second = await get(cached, `${origin}/etag`);
            return [cacheStatus(first), second.ok?.status, second.ok?.body, cacheStatus(second)];
        }
    },
    // Connections.
    {
        name: 'a second call on the kept-alive connection (or session)',
        steps: [{ path: '/again', answer: { status: 200, body: 'same connection' }, times: 2 }],
        run: async (api, origin) => [await get(api, `${origin}/again`), await get(api, `${origin}/again`)]
    },
    {
        name: 'a reset on a kept-alive connection',
        steps: [
            { path: '/first', answer: { status: 200, body: 'first' } },
            { path: '/second', answer: { fault: 'connection-reset' } },
            { path: '/second', answer: { status: 200, body: 'second, sent again' } }
        ],
        run: async (api, origin) => [await get(api, `${origin}/first`), await get(api, `${origin}/second`)]
    },
    // HTTP/2's own faults.
    {
        name: 'HTTP/2: a GOAWAY leaves a later stream unprocessed: it is sent again on a new session',
        only: '2',
        // The held stream fails as the session closes, the re-sent one succeeds on another: either may end first.
        unordered: true,
        steps: [
            { path: '/held', answer: { status: 200, body: 'held', delay: 300 } },
            { path: '/later', answer: { fault: 'goaway' } },
            { path: '/later', answer: { status: 200, body: 'on a new session' } }
        ],
        run: async (api, origin) => {
            const held = get(api, `${origin}/held`);
            await new Promise((resolve) => setTimeout(resolve, 50));
            const later = get(api, `${origin}/later`);
            return [await held, await later];
        }
    },
    {
        name: 'HTTP/2: REFUSED_STREAM, sent again',
        only: '2',
        steps: [
            { method: 'POST', path: '/refused', answer: { fault: 'refused-stream' } },
            { method: 'POST', path: '/refused', answer: { status: 200, echo: true } }
        ],
        run: (api, origin) => outcomeOf(api.post(`${origin}/refused`, { payload: 'once more' }))
    }
];
