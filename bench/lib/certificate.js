// A self-signed certificate for 127.0.0.1, made with the openssl CLI (as the tests make theirs), for the
// benchmark servers that speak TLS.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function selfSignedCertificate() {
    const directory = mkdtempSync(join(tmpdir(), 'tracewire-bench-cert-'));
    try {
        const key = join(directory, 'key.pem');
        const cert = join(directory, 'cert.pem');
        execFileSync(
            'openssl',
            ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1']
                .concat(['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'])
                .concat(['-keyout', key, '-out', cert]),
            { stdio: 'ignore' }
        );
        return { key: readFileSync(key), cert: readFileSync(cert) };
    } finally {
        rmSync(directory, { recursive: true, force: true });
    }
}
