// The server of the HTTP/2 benchmark: node:http2 over TLS (a self-signed certificate), also answering
// HTTP/1.1 (ALPN), in its own process.
//   GET /small   100 B
//   GET /large   8 MiB
import http2 from 'node:http2';
import { selfSignedCertificate } from '../lib/certificate.js';

const small = Buffer.alloc(100, 'a');
const large = Buffer.alloc(8 * 1024 * 1024, 'b');

const server = http2.createSecureServer({ ...selfSignedCertificate(), allowHTTP1: true }, (req, res) => {
    const body = req.url === '/large' ? large : req.url === '/small' ? small : undefined;
    if (body === undefined) {
        res.writeHead(404);
        res.end();
        return;
    }

    // The protocol the request came over, for the runner to check that each client speaks what it should.
    res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': body.length,
        'x-protocol': req.httpVersion
    });
    res.end(body);
});
// A client that resets its streams or goes away must not stop the benchmark.
server.on('sessionError', () => {});
server.listen(0, '127.0.0.1', () => process.send({ ready: true, port: server.address().port }));
process.on('SIGTERM', () => process.exit(0));
