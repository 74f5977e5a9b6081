import type { BoundedCalls } from './redis-calls.js';
import type { RedisCacheClient, RedisSubscriberClient } from './redis-client.js';
import { heartbeatChannel, parseNotice } from './redis-keys.js';

/**
 * The change notices of a `RedisCacheStore` (docs/cache.md "Running as a fleet"): a connection of
 * the store's own (a duplicate of the application's client) subscribed to the changes channel, and
 * whether what it hears can be trusted. Notices are fire-and-forget: one published while the
 * connection is down is lost. So the notices are `live` only while the subscription is confirmed on
 * the current connection and the heartbeat the store publishes to itself every `heartbeat` ms
 * comes back before the next; a heartbeat that does not (a connection silently cut, a server that
 * stopped answering) ends the trust as a lost connection does.
 */
export class ChangeNotices {
    readonly #subscriber: RedisSubscriberClient;
    readonly #heartbeatChannel: string;
    readonly #timer: NodeJS.Timeout;
    readonly #onChange: Set<(id: string) => void> = new Set();
    readonly #onLiveChange: Set<(live: boolean) => void> = new Set();
    #subscribed = false;
    #heartbeatsSent = 0;
    #heartbeatsHeard = 0;
    #live = false;
    #closed = false;

    constructor(
        private readonly client: RedisCacheClient,
        private readonly calls: BoundedCalls,
        private readonly channel: string,
        prefix: string,
        private readonly instance: string,
        heartbeat: number
    ) {
        this.#heartbeatChannel = heartbeatChannel(prefix, instance);
        const subscriber = client.duplicate();
        this.#subscriber = subscriber;
        subscriber.on('message', (from, message) => this.#heard(from, message));
        // The store's own connection: its errors are the store's to count, never an unhandled 'error' event.
        subscriber.on('error', (err) => calls.fail('notices', 'error', `connection: ${err.message}`, err));
        subscriber.on('close', () => {
            this.#subscribed = false;
            this.#update();
        });
        subscriber.on('ready', () => this.#subscribe());
        if (subscriber.status === 'ready' || subscriber.status === 'wait') {
            this.#subscribe();
        }

        this.#timer = setInterval(() => this.#beat(), heartbeat);
        this.#timer.unref();
    }

    /** True while every notice published reaches this process. */
    get live(): boolean {
        return this.#live;
    }

    /**
     * Calls `listener` with the id of each resource another store instance changed (redis-keys.ts
     * `everything` for all). Not this instance's own changes: it drops its own copies as it sends them.
     */
    onChange(listener: (id: string) => void): void {
        this.#onChange.add(listener);
    }

    /** Calls `listener` each time `live` changes. */
    onLiveChange(listener: (live: boolean) => void): void {
        this.#onLiveChange.add(listener);
    }

    /** Ends the connection and the heartbeat. */
    close(): void {
        this.#closed = true;
        clearInterval(this.#timer);
        this.#subscriber.disconnect();
        this.#update();
    }

    #subscribe(): void {
        this.#subscriber.subscribe(this.channel, this.#heartbeatChannel).then(
            () => {
                this.#subscribed = true;
                this.#update();
            },
            (err: Error) => this.calls.fail('notices', 'error', `subscribe failed: ${err.message}`, err)
        );
    }

    #heard(channel: string, message: string): void {
        if (channel === this.channel) {
            const { id, from } = parseNotice(message);
            if (from === this.instance) {
                return;
            }

            for (const listener of this.#onChange) {
                listener(id);
            }
        } else if (channel === this.#heartbeatChannel) {
            this.#heartbeatsHeard = Math.max(this.#heartbeatsHeard, Number(message));
            this.#update();
        }
    }

    // A heartbeat still unheard when the next is due ends the trust until a later one comes back.
    #beat(): void {
        const sent = String(++this.#heartbeatsSent);
        this.#update();
        this.calls
            .run('notices', () => this.client.publish(this.#heartbeatChannel, sent))
            .catch(() => {
                // Counted by the calls; the heartbeat not heard is what matters here.
            });
    }

    #update(): void {
        const live = !this.#closed && this.#subscribed && this.#heartbeatsHeard >= this.#heartbeatsSent - 1;
        if (live !== this.#live) {
            this.#live = live;
            for (const listener of this.#onLiveChange) {
                listener(live);
            }
        }
    }
}
