import type { HttpError } from '../../errors/index.js';
import { isStream, type PreparedPayload } from '../bodies/payload.js';
import { PayloadReplay, streamReplayLimit } from '../bodies/payload-replay.js';
import type { EffectiveOptions } from '../contract/types.js';
import { mayBeRefusedUnprocessed } from '../wire/transport-choice.js';

/**
 * A call's stream payload across its hops (README "Payloads"): the replay that sends it, keeping a
 * copy only when a hop may need to send it again. Made with the call's first stream.
 */
export class StreamPayload {
    private replay: PayloadReplay | undefined;

    constructor(
        /** True when the call may retry: a copy is kept for the retry. */
        private readonly retries: boolean,
        private readonly onError: (err: Error) => void
    ) {}

    /** The replay that sends this hop's payload, or why it cannot be sent; undefined for a payload that is not a stream. */
    for(payload: PreparedPayload, options: EffectiveOptions): PayloadReplay | HttpError | undefined {
        const replay = this.replay;
        if (!isStream(payload)) {
            if (replay !== undefined) {
                // A redirect that drops the payload: the stream is no longer ours to read.
                replay.dispose();
                this.replay = undefined;
            }

            return undefined;
        }

        if (replay !== undefined && replay.source === payload) {
            return replay.replayProblem() ?? replay;
        }

        replay?.dispose();
        // A copy is kept only when something may need to re-send the stream: a redirect, a retry, or a
        // server that refuses it before processing it.
        const resent =
            (typeof options.redirects === 'number' && options.redirects > 0) ||
            this.retries ||
            mayBeRefusedUnprocessed(options);
        const limit = resent ? streamReplayLimit : 0;
        const made = new PayloadReplay(payload, limit, this.onError);
        this.replay = made;
        return made.replayProblem() ?? made;
    }

    /** True when the stream of `payload` can be sent again (what was read of it was kept). */
    replayable(): boolean {
        return this.replay?.replayProblem() === undefined;
    }

    /** The stream goes to the next hop, not to the finished one. */
    detach(): void {
        this.replay?.detach();
    }

    /** The call is over: a send under way carries on to its end; only the copy and the error listener go. */
    dispose(): void {
        this.replay?.dispose();
    }
}
