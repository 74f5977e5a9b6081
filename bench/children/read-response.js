// Reads one large response and reports how much this process's RSS grew meanwhile:
//   node --expose-gc bench/children/read-response.js <tracewire|node:http> <url>
// The body is consumed as a stream, as an application reading a large download would.
import http from 'node:http';
import { RssProbe } from '../lib/processes.js';

const [implementation, url] = process.argv.slice(2);

async function requestWith(target) {
    if (implementation === 'tracewire') {
        const { client } = await import('tracewire');
        return client.request('GET', target);
    }

    return new Promise((resolve, reject) => http.get(target, resolve).on('error', reject));
}

async function consume(res) {
    let bytes = 0;
    for await (const chunk of res) {
        bytes += chunk.length;
    }

    return bytes;
}

async function main() {
    // A small request first, so that loading the modules does not count as growth.
    await consume(await requestWith(url.replace(/bytes=\d+/, 'bytes=1024')));
    const probe = new RssProbe();
    probe.start();
    const bytes = await consume(await requestWith(url));
    process.send({ ready: true, bytes, ...probe.stop() });
}

main().catch((error) => process.send({ error: error.stack ?? String(error) }));
