import { Duplex, PassThrough } from 'node:stream';
import * as tls from 'node:tls';

/*
 * What this Node.js adds to the message of a certificate error that a locally installed root CA could
 * fix (since Node.js 24.x and 25: '; if the root CA is installed locally, try running Node.js with
 * --use-system-ca', unless the process already trusts the system's CAs). A mocked TLS fault must fail
 * with the message the running Node.js gives, so it is learnt once from a real handshake, held in
 * memory (no socket), against the throwaway self-signed certificate below.
 */

// A self-signed certificate made for this probe alone (CN probe.invalid); its key protects nothing.
const probeKey = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgkHDwfTd2x707hoUj
ZRzJC5LRBn3GDBLhXs+FdvgBDXWhRANCAARPu8mGvRUFpzAaP3Skb3SYYOrcbWbq
ixNhazNcN/HHOQ6FS/Ic7PIi/ykYmOgyFbeFIwTEbGGl28Oa5Mi0ENdP
-----END PRIVATE KEY-----`;
const probeCertificate = `-----BEGIN CERTIFICATE-----
MIIBhzCCAS2gAwIBAgIUZIoHQbFDNauOd7eVe/N8dJekadAwCgYIKoZIzj0EAwIw
GDEWMBQGA1UEAwwNcHJvYmUuaW52YWxpZDAgFw0yNjExMjkwMTU2NDdaGA8yMTI2
MTEwNTAxNTY0N1owGDEWMBQGA1UEAwwNcHJvYmUuaW52YWxpZDBZMBMGByqGSM49
AgEGCCqGSM49AwEHA0IABE+7yYa9FQWnMBo/dKRvdJhg6txtZuqLE2FrM1w38cc5
DoVL8hzs8iL/KRiY6DIVt4UjBMRsYaXbw5rkyLQQ10+jUzBRMB0GA1UdDgQWBBSl
/7sPY7m5pOQWX8LXTeoSTu8itDAfBgNVHSMEGDAWgBSl/7sPY7m5pOQWX8LXTeoS
Tu8itDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQDAxy5cg1WC
avqrOdYAYhnBwoJ3Cy+5ddfJMqTNlAOsMAIgRICm6JNfsjpTcP/3t+f/KtdUIbz0
XOhgM2EBqCVS/9Q=
-----END CERTIFICATE-----`;
const selfSigned = 'self-signed certificate';

let learnt: Promise<string> | undefined;

/** The text this Node.js appends to a self-signed certificate's error ('' where it appends none). */
export function systemCaHint(): Promise<string> {
    learnt ??= probe();
    return learnt;
}

function probe(): Promise<string> {
    return new Promise((resolve) => {
        const toServer = new PassThrough();
        const toClient = new PassThrough();
        const serverSide = Duplex.from({ readable: toServer, writable: toClient });
        const clientSide = Duplex.from({ readable: toClient, writable: toServer });
        const server = new tls.TLSSocket(serverSide, {
            isServer: true,
            secureContext: tls.createSecureContext({ key: probeKey, cert: probeCertificate })
        });
        server.on('error', () => {});
        const client = tls.connect({ socket: clientSide, servername: 'probe.invalid' });
        const done = (hint: string) => {
            client.destroy();
            server.destroy();
            resolve(hint);
        };
        client.on('secureConnect', () => done(''));
        client.on('error', (err) =>
            done(err.message.startsWith(selfSigned) ? err.message.slice(selfSigned.length) : '')
        );
    });
}
