// The code under test of the testing examples (docs/testing.md): a service that asks an upstream
// for a forecast through tracewire, over HTTP/2 as in production, with a timeout and one retry.
import { client } from 'tracewire';

const upstream = client.defaults({
    baseUrl: 'https://weather.example.com',
    http2: true,
    json: true,
    timeout: 500,
    retry: { limit: 1, backoff: () => 0 }
});

/** The forecast of `city` in a line, e.g. `Oslo: snow`. */
export async function forecast(city) {
    const { payload } = await upstream.get(`/v1/forecast?city=${encodeURIComponent(city)}`);
    return `${payload.city}: ${payload.summary}`;
}
