// docs/testing.md, "With node:test": the same tests with Node's own runner (`node --test`); the mock
// given to the client under test would do as well, here it is installed for the process.
// test/common/testing-examples.test.ts runs this file.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { MockNetwork } from 'tracewire/testing';
import { forecast } from './weather.js';

let mock;
beforeEach(() => {
    mock = new MockNetwork().install();
});

afterEach(() => {
    mock.close();
});

test('reads the forecast over HTTP/2', async () => {
    mock.origin('https://weather.example.com')
        .get('/v1/forecast', { query: { city: 'Oslo' } })
        .reply(200, { city: 'Oslo', summary: 'snow' });
    assert.equal(await forecast('Oslo'), 'Oslo: snow');
    mock.assertNoPending();
});

test('is retried once when the upstream sends GOAWAY', async () => {
    const weather = mock.origin('https://weather.example.com');
    weather.get('/v1/forecast').fault('goaway');
    weather.get('/v1/forecast').reply(200, { city: 'Rome', summary: 'sun' });
    assert.equal(await forecast('Rome'), 'Rome: sun');
});

test('fails with the error of a request no interceptor answers', async () => {
    await assert.rejects(
        forecast('Nowhere'),
        /No mocked reply for GET https:\/\/weather\.example\.com\/v1\/forecast\?city=Nowhere/
    );
});
