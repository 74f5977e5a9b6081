import type { Request } from '@hapi/hapi';

/** A request header as a string; Node joins repeated ones, so anything else means absent. */
export function headerOf(request: Request, name: string): string | undefined {
    const value: unknown = request.headers[name];
    return typeof value === 'string' ? value : undefined;
}
