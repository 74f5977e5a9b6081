// The same from CommonJS (require(esm), checked by TypeScript under module nodenext).
import { client, errors } from 'tracewire';
import { notFound } from 'tracewire/errors';

export const failed: boolean = errors.isHttpError(notFound('gone'));
export const api = client.defaults({ json: true });
