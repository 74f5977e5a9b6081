// The server of the client benchmark: plain node:http with keep-alive, in its own process.
//   GET  /small          100 B
//   GET  /large          1 MiB
//   POST /json           reads the body, replies with a JSON document of about 1 KiB
//   GET  /stream?bytes=N streams N bytes (with backpressure) for the memory benchmark
//   GET  /cached         100 B, fresh for an hour; /revalidated: 100 B, stale at once, 304 to If-None-Match
//   GET  /stampede/<id>  100 B after 100 ms (an origin at work), fresh for a minute; GET /stampede-count/<id>:
//                        how many requests /stampede/<id> got
import http from 'node:http';

const small = Buffer.alloc(100, 'a');
const large = Buffer.alloc(1024 * 1024, 'b');
const chunk = Buffer.alloc(64 * 1024, 'c');
const items = Array.from({ length: 16 }, (_, index) => ({ id: index, name: `item-${index}`, tags: ['x', 'y'] }));

function replyJson(req, res) {
    let received = 0;
    req.on('data', (data) => {
        received += data.length;
    });
    req.on('end', () => {
        const body = JSON.stringify({ ok: true, received, items });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
    });
}

function stream(res, bytes) {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes });
    let left = bytes;
    const write = () => {
        while (left > 0) {
            const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
            left -= part.length;
            if (!res.write(part)) {
                res.once('drain', write);
                return;
            }
        }

        res.end();
    };
    write();
}

// The requests each stampede path got.
const stampedes = new Map();

const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/json') {
        return replyJson(req, res);
    }

    if (req.url === '/small' || req.url === '/large') {
        const body = req.url === '/small' ? small : large;
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
        return res.end(body);
    }

    // The cache rows of the client section: fresh for an hour, or stale at once and revalidated with a 304.
    if (req.url === '/cached' || req.url === '/revalidated') {
        const fresh = req.url === '/cached';
        if (!fresh && req.headers['if-none-match'] === '"v1"') {
            res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=0' });
            return res.end();
        }

        res.writeHead(200, {
            'content-type': 'text/plain',
            'content-length': small.length,
            etag: '"v1"',
            'cache-control': fresh ? 'max-age=3600' : 'max-age=0'
        });
        return res.end(small);
    }

    // The stampede rows of the cache-redis section: what reaches the origin is what the cache let through.
    if (req.url.startsWith('/stampede/')) {
        stampedes.set(req.url, (stampedes.get(req.url) ?? 0) + 1);
        setTimeout(() => {
            res.writeHead(200, { 'content-length': small.length, 'cache-control': 'max-age=60' });
            res.end(small);
        }, 100);
        return;
    }

    if (req.url.startsWith('/stampede-count/')) {
        const body = String(stampedes.get(`/stampede/${req.url.slice('/stampede-count/'.length)}`) ?? 0);
        res.writeHead(200, { 'content-length': body.length });
        return res.end(body);
    }

    if (req.url.startsWith('/stream?bytes=')) {
        return stream(res, Number(req.url.slice('/stream?bytes='.length)));
    }

    res.writeHead(404, { 'content-length': 0 });
    res.end();
});

// Connections stay open between rounds; the defaults would close idle sockets after 5 s.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 125_000;
server.listen(0, '127.0.0.1', () => {
    process.send({ ready: true, port: server.address().port });
});
process.on('SIGTERM', () => process.exit(0));
