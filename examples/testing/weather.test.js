// docs/testing.md, "With vitest": the mock installed for the process in each test, so the root
// client and the clients derived from it (weather.js's) answer from it; `npm test` runs this file.

import { MockNetwork } from 'tracewire/testing';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { forecast } from './weather.js';

let mock;
beforeEach(() => {
    mock = new MockNetwork().install();
});

afterEach(() => {
    mock.close();
});

it('reads the forecast over HTTP/2', async () => {
    mock.origin('https://weather.example.com')
        .get('/v1/forecast', { query: { city: 'Oslo' } })
        .reply(200, { city: 'Oslo', summary: 'snow' });
    expect(await forecast('Oslo')).toBe('Oslo: snow');
    expect(mock.requests[0].httpVersion).toBe('2.0');
    mock.assertNoPending();
});

it('is retried once when the upstream resets the connection', async () => {
    const weather = mock.origin('https://weather.example.com');
    weather.get('/v1/forecast').fault('connection-reset');
    weather.get('/v1/forecast').reply(200, { city: 'Rome', summary: 'sun' });
    expect(await forecast('Rome')).toBe('Rome: sun');
});

it('fails with a 504 when the upstream answers too late', async () => {
    mock.origin('https://weather.example.com').get('/v1/forecast').reply(200, {}).delay(2000).persist();
    await expect(forecast('Lima')).rejects.toMatchObject({ output: { statusCode: 504 } });
});
