// Every kind of call a user's tests make through a mock, with tracewire's events and diagnostics
// channels listened to: what came back, and how many messages each fired.
import { subscribe } from 'node:diagnostics_channel';
import { client, errors } from 'tracewire';

export const origin = 'http://api.mocked.test';

export async function makeCalls() {
    const fired = { preRequest: 0, request: 0, response: 0 };
    const published = { preRequest: 0, request: 0, response: 0 };
    for (const name of Object.keys(published)) {
        subscribe(`tracewire:client:${name}`, () => {
            published[name] += 1;
        });
    }

    const api = client.defaults({ baseUrl: `${origin}/`, events: true, redirects: 2, gunzip: true });
    for (const name of Object.keys(fired)) {
        api.events.on(name, () => {
            fired[name] += 1;
        });
    }

    const results = {};
    results.json = (await api.get('json', { json: true })).payload;
    results.redirect = (await api.get('old', { json: true })).payload;
    results.gzip = String((await api.get('gzip')).payload);
    results.post = (await api.post('echo', { payload: { name: 'tracewire' }, json: true })).payload;
    try {
        await api.get('unavailable', { json: true });
        results.errorStatus = 'resolved';
    } catch (err) {
        results.errorStatus = {
            isHttpError: errors.isHttpError(err),
            status: err.output?.statusCode,
            payload: err.data?.payload
        };
    }

    return { results, fired, published };
}
