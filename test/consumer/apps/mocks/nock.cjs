// The same as nock.mjs, from a CommonJS app.
const { gzipSync } = require('node:zlib');
// nock 15 is an ES module: require() gives its namespace.
const nock = require('nock').default;
const { makeCalls, origin } = require('./calls.mjs');

nock.disableNetConnect();
const scope = nock(origin)
    .get('/json')
    .reply(200, { ok: true })
    .get('/old')
    .reply(302, '', { location: '/json' })
    .get('/json')
    .reply(200, { ok: true })
    .get('/gzip')
    .reply(200, gzipSync('zipped body'), { 'content-encoding': 'gzip', 'content-type': 'text/plain' })
    // Matched on its body, so the reply says the body arrived. (A reply function hangs a POST
    // with nock 15.0.6 whatever sends it, raw node:http included.)
    .post('/echo', { name: 'tracewire' })
    .reply(200, { got: { name: 'tracewire' } })
    .get('/unavailable')
    .reply(503, { message: 'down' });
makeCalls().then((report) => {
    console.log(JSON.stringify({ ...report, handled: scope.isDone() ? 6 : scope.pendingMocks() }));
});
