// An ES module using the entry points that need neither @hapi/hapi nor OpenTelemetry.
import { client, errors, problemDetails, staticFiles } from 'tracewire';
import { type RequestUri, type ResponseErrorData, client as sameClient } from 'tracewire/client';
import { type HttpError, notFound, type ProblemDetails, readProblem, toProblem } from 'tracewire/errors';

const api = client.defaults({ baseUrl: 'https://api.example.com/', json: true, events: true });
api.events?.on('preRequest', (uri: RequestUri) => uri.headers);
export async function user(id: string): Promise<unknown> {
    const { payload } = await api.get<{ name: string }>(`users/${id}`);
    return payload.name;
}

export const failure: HttpError = notFound('gone');
export const same: boolean = sameClient === client && errors.isHttpError(failure);
export const pluginName: string = staticFiles.name;

// Problem details (RFC 9457) without hapi: the fields, the document, the reader and the plugin's name.
export const typed: HttpError = notFound('gone', null, { type: 'https://example.com/probs/gone', cause: failure });
export const document: ProblemDetails = toProblem(typed, { instance: '/users/7' });
export const received: ProblemDetails | undefined = readProblem(JSON.parse('{"status":404}'));
export const problemPlugin: string = problemDetails.name === errors.problemDetails.name ? problemDetails.name : '';
// A helper's rejection of an application/problem+json response carries the document.
export const receivedProblem = (err: HttpError<ResponseErrorData>): ProblemDetails | undefined => err.data.problem;
