// The same as msw.mjs, from a CommonJS app.
const { gzipSync } = require('node:zlib');
const { HttpResponse, http } = require('msw');
const { setupServer } = require('msw/node');
const { makeCalls, origin } = require('./calls.mjs');

const server = setupServer(
    http.get(`${origin}/json`, () => HttpResponse.json({ ok: true })),
    http.get(`${origin}/old`, () => new HttpResponse(null, { status: 302, headers: { location: '/json' } })),
    http.get(
        `${origin}/gzip`,
        () =>
            new HttpResponse(gzipSync('zipped body'), {
                headers: { 'content-encoding': 'gzip', 'content-type': 'text/plain' }
            })
    ),
    http.post(`${origin}/echo`, async ({ request }) => HttpResponse.json({ got: await request.json() })),
    http.get(`${origin}/unavailable`, () => HttpResponse.json({ message: 'down' }, { status: 503 }))
);
let handled = 0;
server.events.on('request:match', () => {
    handled += 1;
});
// Anything not mocked fails the call rather than reaching the network.
server.listen({ onUnhandledRequest: 'error' });
makeCalls().then((report) => {
    server.close();
    console.log(JSON.stringify({ ...report, handled }));
});
