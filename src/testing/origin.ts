import type { MockInterceptor } from './interceptor.js';
import type { InterceptOptions, TextMatcher } from './types.js';

/** What makes an interceptor: the mock. */
export interface InterceptorMaker {
    intercept(options: InterceptOptions): MockInterceptor;
}

/** The body an interceptor of `post()`, `put()`, `patch()`... compares (see `InterceptOptions.body`). */
type BodyMatcher = InterceptOptions['body'];

/** Everything an interceptor matches but the origin and method, which the helpers say. */
export type RouteOptions = Omit<InterceptOptions, 'origin' | 'method'>;

/**
 * The interceptors of one origin (`mock.origin('https://api.example.com')`), in the style nock and
 * undici's MockAgent users know: `.get('/users/1').reply(200, { id: 1 })`.
 */
export class MockOrigin {
    constructor(
        private readonly mock: InterceptorMaker,
        /** The origin, as requests to it have it: `https://api.example.com`. */
        readonly origin: string
    ) {}

    /** An interceptor of this origin; `method` defaults to GET. */
    intercept(options: Omit<InterceptOptions, 'origin'>): MockInterceptor {
        return this.mock.intercept({ ...options, origin: this.origin });
    }

    get(path?: TextMatcher, options?: RouteOptions): MockInterceptor {
        return this.route('GET', path, undefined, options);
    }

    head(path?: TextMatcher, options?: RouteOptions): MockInterceptor {
        return this.route('HEAD', path, undefined, options);
    }

    options(path?: TextMatcher, options?: RouteOptions): MockInterceptor {
        return this.route('OPTIONS', path, undefined, options);
    }

    delete(path?: TextMatcher, options?: RouteOptions): MockInterceptor {
        return this.route('DELETE', path, undefined, options);
    }

    post(path?: TextMatcher, body?: BodyMatcher, options?: RouteOptions): MockInterceptor {
        return this.route('POST', path, body, options);
    }

    put(path?: TextMatcher, body?: BodyMatcher, options?: RouteOptions): MockInterceptor {
        return this.route('PUT', path, body, options);
    }

    patch(path?: TextMatcher, body?: BodyMatcher, options?: RouteOptions): MockInterceptor {
        return this.route('PATCH', path, body, options);
    }

    private route(method: string, path: TextMatcher | undefined, body: BodyMatcher, options: RouteOptions | undefined) {
        return this.intercept({ ...options, method, path: path ?? options?.path, body: body ?? options?.body });
    }
}
