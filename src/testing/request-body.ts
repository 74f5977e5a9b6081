import { Writable } from 'node:stream';
import type { PayloadReplay } from '../client/bodies/payload-replay.js';
import { trackUpload, type UploadOwner } from '../client/bodies/progress.js';
import type { ProgressCallback } from '../client/contract/types.js';

/** The body a hop hands its exchange: none, a string or Buffer, or a stream payload's replay. */
export type PendingBody =
    | {
          readonly stream: false;
          readonly body: string | Buffer | undefined;
          readonly onProgress: ProgressCallback | undefined;
      }
    | { readonly stream: true; readonly replay: PayloadReplay; readonly onProgress: ProgressCallback | undefined };

/**
 * Takes a request's body as a server would read it: written to a `Writable` as a request's is (so
 * `onUploadProgress` counts it chunk by chunk, bodies/progress.ts), kept whole for the matching and
 * the reply; `done` gets it once it has all come.
 */
export function receiveBody(
    pending: PendingBody,
    declared: number | undefined,
    owner: UploadOwner,
    done: (body: Buffer) => void
): void {
    const chunks: Buffer[] = [];
    const sink = new Writable({
        write(chunk: Buffer, _encoding, callback) {
            chunks.push(chunk);
            callback();
        }
    });
    sink.once('finish', () => done(Buffer.concat(chunks)));
    if (pending.stream) {
        if (pending.onProgress !== undefined) {
            trackUpload(sink, declared, pending.onProgress, owner);
        }

        pending.replay.sendTo(sink);
    } else if (pending.onProgress === undefined) {
        sink.end(pending.body);
    } else {
        trackUpload(sink, declared, pending.onProgress, owner).send(pending.body);
    }
}

/** The headers a request sends, as the matching reads them: lower-case names, a repeated one's values joined, no pseudo-header fields. */
export function sentHeaders(
    sent: Record<string, string | number | readonly string[] | undefined>
): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const name in sent) {
        const value = sent[name];
        if (name.charCodeAt(0) !== 58 && value !== undefined) {
            headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
        }
    }

    return headers;
}
