// An ES module using the entry points that need neither @hapi/hapi nor OpenTelemetry.
import { client, errors, staticFiles } from 'tracewire';
import { type RequestUri, client as sameClient } from 'tracewire/client';
import { type HttpError, notFound } from 'tracewire/errors';

const api = client.defaults({ baseUrl: 'https://api.example.com/', json: true, events: true });
api.events?.on('preRequest', (uri: RequestUri) => uri.headers);
export async function user(id: string): Promise<unknown> {
    const { payload } = await api.get<{ name: string }>(`users/${id}`);
    return payload.name;
}

export const failure: HttpError = notFound('gone');
export const same: boolean = sameClient === client && errors.isHttpError(failure);
export const pluginName: string = staticFiles.name;
